"""`prefrag index` with `QDRANT_URL`: a source's chunks live only in its server collection.

Each point of the collection holds a chunk's dense vector, its BM25 sparse vector and its
record as payload; nothing of the chunks is written on the machine. The source's folder
keeps its `manifest.json` (name, chunking, embedding model, counts) and an empty
generation folder, so a corpus larger than one machine lives entirely in the cluster.

An add asks the server which of the input's chunk ids it already holds (point ids come
from content, so indexing the same files twice adds nothing), embeds the others and
upserts them; the manifest is written last and counts the collection's points, so a run
killed after its upsert is completed by the next one. A source indexed in process moves
its records and vectors into the collection at its first `prefrag index` with
`QDRANT_URL` (nothing is re-embedded) and its local files are removed.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from prefrag.errors import ConfigurationError, DamagedStoreError
from prefrag.index import docstore

if TYPE_CHECKING:
    from pathlib import Path

    from prefrag.config import Settings
    from prefrag.index.dense import QdrantStore
    from prefrag.index.ingest_steps import IndexReport
    from prefrag.index.loaders import RawDocument

logger = logging.getLogger(__name__)

_LOST_ON_SERVER = (
    "With QDRANT_URL set the files are not read for lost records: unset it and run that "
    "`prefrag index FILES --source {source}` once in process, then index with QDRANT_URL "
    "again to move the repaired source."
)
_FOREIGN = (
    "The Qdrant server's collection for source '{source}' already holds {n} chunks this "
    "source does not have (a source of the same name from another data directory, or one "
    "rebuilt in process since); nothing was changed. Index into another source name, or "
    "delete that collection on the server first."
)
_MOVED = (
    "The chunks of '{source}' moved into its Qdrant server collection (records, dense and "
    "BM25 vectors); its files on this machine were removed. Nothing was re-embedded."
)


def on_server(manifest: docstore.Manifest | None) -> bool:
    """Whether a source's records and vectors live only in its server collection."""
    return manifest is not None and manifest.records_store == "collection"


@dataclasses.dataclass(frozen=True)
class ServerWrite:
    """One `prefrag index` run into a source's server collection: what it adds and how."""

    files: int
    raws: Sequence[RawDocument]
    source: str
    settings: Settings
    progress: bool
    authority: float | None
    description: str | None
    rebuild: bool
    started: float

    @property
    def folder(self) -> Path:
        """The source's folder on this machine (its manifest and lock)."""
        return self.settings.sources_dir / self.source


def index_on_server(write: ServerWrite) -> IndexReport:
    """Add the chunks of `write.raws` to the source's collection on the Qdrant server.

    Raises:
        StoreLockedError: Another process is writing the source.
        RecordsLostError: Moving a damaged local source whose records are lost (they are
            restored in process, from the files, before the move).
        ConfigurationError: A different embedding model than the source was built with, or
            the collection already holds chunks the local source being moved does not.
    """
    from prefrag.index.dense import QdrantStore

    with (
        docstore.writer_lock(write.folder, write.source),
        QdrantStore(write.source, write.folder / docstore.QDRANT, write.settings) as server,
    ):
        return _index(write, server)


def _index(write: ServerWrite, server: QdrantStore) -> IndexReport:
    from prefrag.index.ingest_steps import (
        _announce,
        _id_clashes,
        _new_chunks,
        _report,
        _source_authority,
        source_chunking,
    )
    from prefrag.index.repair import newest_generation

    try:
        manifest = docstore.read_manifest(write.folder)
    except DamagedStoreError:
        manifest = None  # a local source's is rebuilt by salvage; a server source's here
    was_on_server = on_server(manifest)
    problems: list[str] = []
    repairs: list[str] = []
    warnings: list[str] = []
    if write.rebuild:
        manifest = None
    elif not was_on_server and (
        manifest is not None or newest_generation(write.folder) is not None
    ):
        manifest = _move_into_collection(
            write.source, write.folder, write.settings, server, problems, repairs
        )
        warnings.append(_MOVED.format(source=write.source))
    server.drop_strays()  # a collection a killed rebuild or move left half-filled
    source_authority = _source_authority(write.authority, manifest)
    chunking = source_chunking(manifest, write.settings)
    before = 0 if write.rebuild else server.count()
    serving_before = server.target()
    if manifest is not None and before != manifest.chunks:
        problems.append(
            f"its Qdrant collection held {before} points for the manifest's {manifest.chunks}"
        )

    def known(ids: list[str]) -> list[bool]:
        held = set() if write.rebuild else server.existing(ids)
        return [chunk_id in held for chunk_id in ids]

    new_records, chunk_total, largest = _new_chunks(
        write.raws, write.source, write.settings, chunking, source_authority, [], known
    )
    if write.progress and new_records:
        _announce(write.source, len(new_records), len(write.raws), largest)
    vectors, dimension = _embedded(
        new_records, manifest, write.settings, write.progress, write.source
    )
    parents = sorted({str(r.get("parent_id", r["id"])) for r in new_records})
    held = set() if write.rebuild else server.has_parents(parents)
    if write.rebuild:
        server.replace_all(new_records, vectors)
    elif new_records:
        server.ensure_collection(dimension)
        server.upsert(new_records, vectors)
    counted = _documents_before(manifest, before, serving_before)
    if write.rebuild:
        documents = len(parents)
    elif counted is not None:
        documents = counted + len(parents) - len(held)
    else:  # the manifest was lost, or a killed run wrote points it does not count
        documents = server.document_count()
    serving = server.target()
    chunks = server.count()
    if problems and chunks >= (manifest.chunks if manifest is not None else 0):
        repairs.append(f"its collection holds {chunks} points again")
    updated = _manifest(
        write.source,
        write.folder,
        manifest,
        write.settings,
        chunking,
        dimension,
        source_authority,
        write.description,
        documents,
        chunks,
        serving,
    )
    if updated != manifest:
        docstore.write_manifest(write.folder, updated)
    if was_on_server:
        # A generation a move or an earlier version left, kept one write for readers that
        # had opened the manifest naming it (as `write_manifest` keeps the previous one).
        docstore.remove_other_generations(write.folder, updated.generation)
    skipped = chunk_total - len(new_records)
    report = _report(
        write.source,
        write.folder,
        write.files,
        write.raws,
        len(new_records),
        skipped,
        updated,
        write.started,
    )
    return dataclasses.replace(
        report,
        rebuilt="; ".join(problems),
        repairs=tuple(repairs),
        warnings=tuple([*_id_clashes(write.raws), *warnings]),
    )


def _documents_before(
    manifest: docstore.Manifest | None, points: int, serving: str | None
) -> int | None:
    """The documents the collection held at the start, by the manifest (None: count them).

    The manifest's count is not trusted after a run killed between its upsert and its
    manifest (more points than it counts), after a rebuild or a move killed after its
    alias switch (the alias names another collection than the manifest's), nor when it
    was lost while the collection holds points.
    """
    if manifest is None:
        return 0 if points == 0 else None
    named = manifest.collection
    trusted = points == manifest.chunks and (not named or named == serving)
    return manifest.documents if trusted else None


def _embedded(
    records: list[dict[str, Any]],
    manifest: docstore.Manifest | None,
    settings: Settings,
    progress: bool,
    source: str,
) -> tuple[np.ndarray, int]:
    """The vectors of `records` (embedded at the source's precision) and the dimension."""
    from prefrag.index.embeddings import get_embedder
    from prefrag.index.ingest_steps import _embed, source_embedding_settings

    dimension = manifest.dimension if manifest is not None else 0
    if not records:
        return np.zeros((0, dimension), dtype=np.float32), dimension
    embedder = get_embedder(source_embedding_settings(manifest, settings))
    if manifest is not None and manifest.dimension not in (0, embedder.dimension):
        raise ConfigurationError(
            f"Source '{source}' was built with {manifest.embedding_model} "
            f"({manifest.dimension}-d vectors); re-index it into a new source name."
        )
    texts = [record["text"] for record in records]
    return _embed(texts, embedder, progress, source), embedder.dimension


def _move_into_collection(
    source: str,
    folder: Path,
    settings: Settings,
    server: QdrantStore,
    problems: list[str],
    repairs: list[str],
) -> docstore.Manifest | None:
    """Make the collection hold every record and vector of a source indexed in process.

    What the source's files hold is salvaged as for any write (a damaged source is
    repaired on the way); the collection is filled from it unless it already holds
    exactly those points with their BM25 vectors (as earlier versions kept it).
    """
    from prefrag.index.ingest_steps import _reconcile_qdrant, _vectors
    from prefrag.index.repair import RecordsLostError, salvage

    contents = salvage(folder, source, server, settings)
    try:
        contents.restore_lost([])  # lost records cannot come back from the files here
    except RecordsLostError as error:
        raise RecordsLostError(f"{error} {_LOST_ON_SERVER.format(source=source)}") from error
    problems.extend(contents.problems)
    repairs.extend(contents.repairs)
    records = list(contents.records)
    foreign = server.ids() - {str(record["id"]) for record in records}
    if foreign:
        raise ConfigurationError(_FOREIGN.format(source=source, n=len(foreign)))
    old, _, _ = _vectors(contents, [], contents.manifest, settings, False, source)
    # Fills a new collection (or completes one a killed move left), or one without BM25
    # vectors: moving is no damage, so what it fills is not reported as a problem.
    _reconcile_qdrant(server, records, np.asarray(old), [], None, [])
    shutil.rmtree(folder / docstore.QDRANT, ignore_errors=True)  # an older local store
    return contents.manifest


def _manifest(
    source: str,
    folder: Path,
    manifest: docstore.Manifest | None,
    settings: Settings,
    chunking: Any,
    dimension: int,
    authority: float,
    description: str | None,
    documents: int,
    chunks: int,
    serving: str | None,
) -> docstore.Manifest:
    """The manifest after this write: the collection's counts, an empty generation."""
    from prefrag.index.dense import collection_name
    from prefrag.index.ingest_steps import source_embedding_settings
    from prefrag.index.lexical import FORMAT

    if on_server(manifest) and manifest is not None and (folder / manifest.generation).is_dir():
        generation = manifest.generation
    else:
        generation = docstore.write_empty_generation(folder)
    base = manifest or docstore.Manifest(
        name=source,
        generation=generation,
        documents=0,
        chunks=0,
        dimension=dimension,
        embedding_model=settings.embedding_model,
        embedding_precision=source_embedding_settings(None, settings).embedding_precision,
        chunk_size=chunking.size,
        chunk_overlap=chunking.overlap,
        chunk_unit=chunking.unit,
    )
    changed = dataclasses.replace(
        base,
        generation=generation,
        documents=documents,
        chunks=chunks,
        dimension=base.dimension or dimension,
        authority=authority,
        description=base.description if description is None else description,
        collection=serving or collection_name(source),
        lexical_format=FORMAT,
        lexical_store="collection",
        records_store="collection",
    )
    if changed == manifest:
        return manifest
    return dataclasses.replace(changed, updated=docstore.now_iso())
