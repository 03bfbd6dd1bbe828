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


def damaged_sources(
    settings: Settings | None = None, *, deep: bool = False
) -> dict[str, DamagedStoreError]:
    """Damaged sources by name (a bad manifest, a missing generation, an orphan folder).

    An orphan is a folder whose `manifest.json` was deleted. With `deep`, every
    generation's files and every knowledge graph are checked too (what `prefrag sources`
    shows); otherwise that damage shows when a source is opened.
    """
    from prefrag.config import get_settings
    from prefrag.index.integrity import check_generation, check_graph

    settings = settings or get_settings()
    root = settings.sources_dir
    damaged: dict[str, DamagedStoreError] = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        try:
            manifest = docstore.read_manifest(folder)
        except DamagedStoreError as error:
            damaged[folder.name] = error
            continue
        if manifest is None:
            if is_orphan(folder):
                problem = f"{folder / docstore.MANIFEST} is missing"
                damaged[folder.name] = DamagedStoreError(
                    docstore.damage_message(folder.name, problem), problem
                )
            continue
        if not (folder / manifest.generation).is_dir():
            problem = f"{folder / manifest.generation} is missing"
            damaged[folder.name] = DamagedStoreError(
                docstore.damage_message(folder.name, problem), problem
            )
        elif deep:
            check = check_generation(folder, manifest)
            if not check.sound:
                damaged[folder.name] = check.error()
    if deep:
        from prefrag.index.graph_store import list_graphs

        for name in list_graphs(settings):
            graph = check_graph(name, settings)
            if not graph.sound:
                damaged.setdefault(name, graph.error())
    return damaged


def is_orphan(folder: Path) -> bool:
    """A source folder without `manifest.json` that still holds generations or Qdrant data."""
    return not (folder / docstore.MANIFEST).exists() and (
        any(folder.glob("gen-*")) or (folder / docstore.QDRANT).is_dir()
    )


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
    """Delete source `name`: a local source's folder or a knowledge graph's SQLite file.

    On a Qdrant server the source's collection is deleted too. Damaged sources can be
    removed as well.

    Raises:
        UnknownSourceError: No source of that name is indexed.
        StoreLockedError: Another process is writing the source.
    """
    import shutil

    from prefrag.config import get_settings
    from prefrag.errors import UnknownSourceError
    from prefrag.index.graph_store import graph_path, list_graphs

    settings = settings or get_settings()
    docstore.check_source_name(name)
    folder = settings.sources_dir / name
    known_names = {info.name for info in list_sources(settings)} | set(damaged_sources(settings))
    if name in list_graphs(settings) and name not in known_names:
        path = graph_path(name, settings)
        for extra in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            extra.unlink(missing_ok=True)
        return path
    if not folder.is_dir() or name not in known_names:
        known = ", ".join(sorted(known_names | set(list_graphs(settings)))) or "none"
        raise UnknownSourceError(f"No source '{name}' to remove (known: {known}).")
    with docstore.writer_lock(folder, name):
        if settings.qdrant_url is not None:
            from prefrag.index.dense import QdrantStore

            with QdrantStore(name, folder / docstore.QDRANT, settings) as store:
                store.drop()
        # Drop the manifest first: a crash mid-delete leaves no half-listed source.
        (folder / docstore.MANIFEST).unlink(missing_ok=True)
    shutil.rmtree(folder)
    return folder
