"""What local sources exist under the data directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from prefrag.errors import DamagedStoreError
from prefrag.index import docstore

if TYPE_CHECKING:
    from prefrag.config import Settings


@dataclass(frozen=True)
class SourceInfo:
    """One indexed local source.

    Attributes:
        name: The source name (`--source NAME`).
        documents: Documents indexed.
        chunks: Chunks indexed.
        path: Its folder under the data directory.
        updated: When it was last written (ISO 8601, UTC).
        authority: Its authority in [0, 1].
        description: What it holds, if set.
    """

    name: str
    documents: int
    chunks: int
    path: Path
    updated: str
    authority: float = docstore.DEFAULT_AUTHORITY
    description: str = ""


def list_sources(settings: Settings | None = None) -> list[SourceInfo]:
    """Every indexed local source, by name."""
    from prefrag.config import get_settings

    settings = settings or get_settings()
    root = settings.sources_dir
    if not root.is_dir():
        return []
    infos = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        try:
            manifest = docstore.read_manifest(folder)
        except DamagedStoreError:
            continue  # reported by `damaged_sources`; never blocks the healthy ones
        if manifest is None or not (folder / manifest.generation).is_dir():
            continue
        infos.append(
            SourceInfo(
                name=folder.name,
                documents=manifest.documents,
                chunks=manifest.chunks,
                path=folder,
                updated=manifest.updated,
                authority=manifest.authority,
                description=manifest.description,
            )
        )
    return infos


def damaged_sources(settings: Settings | None = None) -> dict[str, DamagedStoreError]:
    """Sources whose manifest is unreadable or points at a missing generation, by name.

    (Damage inside a generation shows when the source is opened or checked.)
    """
    from prefrag.config import get_settings
    from prefrag.index.integrity import damage_message

    settings = settings or get_settings()
    root = settings.sources_dir
    damaged: dict[str, DamagedStoreError] = {}
    if not root.is_dir():
        return damaged
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        try:
            manifest = docstore.read_manifest(folder)
        except DamagedStoreError as error:
            damaged[folder.name] = error
            continue
        if manifest is not None and not (folder / manifest.generation).is_dir():
            problem = f"{folder / manifest.generation} is missing"
            damaged[folder.name] = DamagedStoreError(damage_message(folder.name, problem), problem)
    return damaged


def source_exists(name: str, settings: Settings | None = None) -> bool:
    """Whether local source `name` has an index."""
    from prefrag.config import get_settings

    settings = settings or get_settings()
    folder = settings.sources_dir / name
    try:
        manifest = docstore.read_manifest(folder) if folder.is_dir() else None
    except DamagedStoreError:
        return False
    return manifest is not None and (folder / manifest.generation).is_dir()


def remove_source(name: str, settings: Settings | None = None) -> Path:
    """Delete local source `name`: its folder and, on a Qdrant server, its collection.

    Raises:
        UnknownSourceError: No source of that name is indexed.
        StoreLockedError: Another process is writing the source.
    """
    import shutil

    from prefrag.config import get_settings
    from prefrag.errors import UnknownSourceError

    settings = settings or get_settings()
    folder = settings.sources_dir / name
    known_names = {info.name for info in list_sources(settings)} | set(damaged_sources(settings))
    if not folder.is_dir() or name not in known_names:
        known = ", ".join(info.name for info in list_sources(settings)) or "none"
        raise UnknownSourceError(f"No local source '{name}' to remove (known: {known}).")
    with docstore.writer_lock(folder, name):
        if settings.qdrant_url is not None:
            from prefrag.index.dense import QdrantStore

            with QdrantStore(name, folder / docstore.QDRANT, settings) as store:
                if store.client.collection_exists(store.collection):
                    store.client.delete_collection(store.collection)
        # Drop the manifest first: a crash mid-delete leaves no half-listed source.
        (folder / docstore.MANIFEST).unlink(missing_ok=True)
    shutil.rmtree(folder)
    return folder
