"""`prefrag index`: read files, chunk, embed new chunks and write one local source.

The order is what keeps the store whole: every input is parsed and validated first (a
bad line raises `IngestError` before anything is touched), then the source's lock is
taken, new chunks are embedded, a Qdrant server's collection (with `QDRANT_URL`) is
upserted (idempotent: ids come from content), and finally a new generation of the
docstore is swapped in atomically.

In process the generation's files are the one copy of every chunk: no store of record
is written beside them. The Qdrant Edge shard earlier versions kept in `qdrant/` (or
their embedded qdrant-client store) serves one last time to repair a damaged source,
and is removed once the write is published.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from prefrag.errors import ConfigurationError
from prefrag.index import docstore
from prefrag.index.chunking import Chunking
from prefrag.index.ingest_steps import (
    IndexReport,
    _announce,
    _id_clashes,
    _large_documents,
    _new_chunks,
    _read_inputs,
    _report,
    _source_authority,
    _vectors,
    source_chunking,
    source_embedding_settings,
)

if TYPE_CHECKING:
    from prefrag.config import Settings
    from prefrag.index.dense import PointStore

# A source of at least this many rows takes an add's rows in a delta part beside hard
# links to its unchanged files, until the delta would pass this share of its base rows;
# then the next add writes everything again (and folds the delta in).
DELTA_MIN_ROWS = 5_000
DELTA_MAX_SHARE = 0.1
# A full write extends a large source's sparse shard while the mean length it was weighted
# with stays within this share of the source's mean; past it the shard is built again.
_MEAN_DRIFT = 0.05


logger = logging.getLogger(__name__)


def index_paths(
    paths: Iterable[str | Path] | str | Path,
    source: str,
    *,
    settings: Settings | None = None,
    progress: bool = False,
    authority: float | None = None,
    description: str | None = None,
    rebuild: bool = False,
) -> IndexReport:
    """Index JSONL, Markdown and text files (or folders of them) into local source `source`.

    Re-indexing the same input adds nothing. `authority` sets the source's authority
    (kept for later runs; records with their own `authority` keep theirs).

    A damaged source is repaired on the way from what it still holds (see
    `prefrag.index.repair`): no record is dropped. `rebuild=True` instead replaces the
    source with exactly the chunks of `paths`.

    Raises:
        IngestError: A path is missing, unreadable, or has a malformed line (the message
            names the file and line); the store is left exactly as it was.
        StoreLockedError: Another process holds the source's store.
        RecordsLostError: Records of the source are unreadable and cannot be restored
            (the message says how to rebuild it); the store is left as it was.
        ConfigurationError: Bad source name, authority, chunking or a different embedding
            model than the one the source was built with.
    """
    from prefrag.config import get_settings
    from prefrag.index.repair import Salvage, salvage

    started = time.perf_counter()
    settings = settings or get_settings()
    docstore.check_source_name(source)
    if authority is not None and not 0.0 <= authority <= 1.0:
        raise ConfigurationError(f"Authority must be in [0, 1]; got {authority}.")
    if isinstance(paths, str | Path):
        paths = [paths]
    files, raws = _read_inputs(list(paths))

    folder = settings.sources_dir / source
    if settings.qdrant_url is not None:  # records and vectors only in the server's collection
        from prefrag.index.server_ingest import ServerWrite, index_on_server

        return index_on_server(
            ServerWrite(
                files,
                raws,
                source,
                settings,
                progress=progress,
                authority=authority,
                description=description,
                rebuild=rebuild,
                started=started,
            )
        )
    with docstore.writer_lock(folder, source), _open_store(source, folder) as opened:
        _refuse_server_source(folder, source, rebuild)
        store, store_problem, retired = opened
        contents = Salvage(None) if rebuild else salvage(folder, source, store, settings)
        manifest = contents.manifest
        old_records = contents.records
        source_authority = _source_authority(authority, manifest)
        chunking = source_chunking(manifest, settings)
        new_records, chunk_total, largest = _new_chunks(
            raws, source, settings, chunking, source_authority, old_records
        )
        # Records lost from the files come back with the input, or nothing is written.
        restored = contents.restore_lost(new_records)
        skipped = chunk_total - len(new_records) + restored
        migrated = ""
        if manifest is not None and _lexical_outdated(manifest, settings) and not contents.damaged:
            migrated = _migration(source, manifest, settings)
        problems = [*contents.problems, *([store_problem] if store_problem else [])]
        repairs = list(contents.repairs)
        notes = []
        if retired and manifest is not None:
            notes.append(_RETIRED.format(source=source, size=retired))
        if not new_records and manifest is not None and not contents.damaged and not migrated:
            if not _manifest_current(manifest, source_authority, description):
                manifest.authority = source_authority
                manifest.description = manifest.description if description is None else description
                docstore.write_manifest(folder, manifest)
            report = _report(source, folder, files, raws, 0, skipped, manifest, started)
            return dataclasses.replace(
                report, rebuilt="; ".join(problems), repairs=tuple(repairs), warnings=tuple(notes)
            )

        if progress:
            _announce(source, len(new_records), len(raws), largest)
        large = _large_documents(raws, new_records)
        embedding_started = time.perf_counter()
        old_vectors, new_vectors, dimension = _vectors(
            contents, new_records, manifest, settings, progress, source
        )
        embedding_seconds = time.perf_counter() - embedding_started
        if rebuild:
            problems.append("rebuilt on request from the files given")
        if contents.damaged:
            repairs.append("rebuilt its lexical index")
        # A sound source's rows come first and unchanged: its HNSW shard is extended, and
        # a large one takes the new rows in its delta part instead of being rewritten.
        extend = manifest is not None and not rebuild and not contents.damaged
        previous = folder / manifest.generation if extend and manifest is not None else None
        if (
            previous is not None
            and manifest is not None
            and not migrated  # a lexical index of an older format is rebuilt whole
            and _appendable(
                previous, old_records, len(new_records), settings, manifest.lexical_store
            )
        ):
            manifest = _write_delta(
                folder, previous, old_records, new_records, new_vectors, manifest
            )
        else:
            records = [*old_records, *new_records]
            vectors = np.vstack([old_vectors, new_vectors]) if old_records else new_vectors
            manifest = _write(
                folder,
                source,
                records,
                vectors,
                manifest,
                settings,
                chunking,
                dimension,
                previous,
            )
        manifest.authority = source_authority
        if description is not None:
            manifest.description = description
        docstore.write_manifest(folder, manifest)
    added = len(new_records) - restored
    report = _report(source, folder, files, raws, added, skipped, manifest, started)
    warnings = [*_id_clashes(raws), *([migrated] if migrated else []), *notes]
    if large:
        warnings.extend(large)
        warnings.append(
            f"Embedding the {len(new_records):,} new chunks took {embedding_seconds:.0f} s; "
            "split very large files into smaller documents if one big one is not what you meant."
        )
    return dataclasses.replace(
        report, rebuilt="; ".join(problems), repairs=tuple(repairs), warnings=tuple(warnings)
    )


def _refuse_server_source(folder: Path, source: str, rebuild: bool) -> None:
    """Refuse to add in process to a source whose chunks live only on a Qdrant server.

    Raises:
        ConfigurationError: It does, and this is not a `--rebuild`.
    """
    from prefrag.errors import DamagedStoreError

    try:
        manifest = docstore.read_manifest(folder)
    except DamagedStoreError:
        return  # salvage reports it
    if manifest is not None and manifest.records_store == "collection" and not rebuild:
        raise ConfigurationError(
            f"Source '{source}' keeps its chunks in its Qdrant server collection; set "
            "QDRANT_URL to that server to add to it (or index it with --rebuild to keep "
            "it in this machine's files instead)."
        )


_RETIRED = (
    "'{source}' no longer keeps a second copy of its chunks in a store of record: its "
    "generation's files are the one copy ({size} of qdrant/ freed)."
)
_MIGRATED = (
    "The lexical index of '{source}' was {old}; it was rebuilt over titles and texts as "
    "Qdrant BM25 sparse vectors. Nothing was re-embedded."
)
_OLD_LEXICAL = {1: "bm25s over chunk texts only", 2: "bm25s"}
_MOVED_LEXICAL = (
    "The lexical index of '{source}' moved {where}; it was rebuilt as Qdrant BM25 sparse "
    "vectors. Nothing was re-embedded."
)


def _lexical_store(settings: Settings) -> str:
    """Where `prefrag index` keeps a source's lexical index under these settings."""
    return "collection" if settings.qdrant_url is not None else "generation"


def _migration(source: str, manifest: docstore.Manifest, settings: Settings) -> str:
    """The sentence saying how the source's lexical index is brought up to date."""
    wanted = _lexical_store(settings)
    if manifest.lexical_store != wanted:
        where = (
            "into its Qdrant server collection"
            if wanted == "collection"
            else "from the Qdrant server into the source's own files"
        )
        return _MOVED_LEXICAL.format(source=source, where=where)
    old = _OLD_LEXICAL.get(manifest.lexical_format, f"of format {manifest.lexical_format}")
    return _MIGRATED.format(source=source, old=old)


def _lexical_outdated(manifest: docstore.Manifest, settings: Settings) -> bool:
    from prefrag.index.lexical import FORMAT

    return manifest.lexical_format < FORMAT or manifest.lexical_store != _lexical_store(settings)


@contextlib.contextmanager
def _open_store(source: str, folder: Path) -> Iterator[tuple[PointStore | None, str, str]]:
    """The store salvage may read, what was wrong with it, and what a retired one freed.

    In process no store of record is kept: a `qdrant/` folder left by an earlier version
    (a Qdrant Edge shard, or an embedded qdrant-client store) is read by salvage only, and
    removed when the run publishes its write (the third value is its size in words then;
    "" when there was none). With `QDRANT_URL` see `prefrag.index.server_ingest`.
    """
    import shutil

    from prefrag.index.edge_store import EdgeStore, StoreUnreadableError, is_edge_store

    where = folder / docstore.QDRANT
    if not where.exists():
        yield None, "", ""
        return
    size = _folder_size(where)
    old: PointStore | None = None
    if is_edge_store(where):
        try:
            old = EdgeStore(source, where)
        except StoreUnreadableError as error:  # only a copy: nothing to restore from it
            logger.warning("Old store of record of '%s' unreadable (%s).", source, error)
    try:
        yield old, "", size
    finally:
        if old is not None:
            old.close()
    shutil.rmtree(where, ignore_errors=True)


def _folder_size(folder: Path) -> str:
    """The size of the files under `folder`, in words (e.g. "285 MB")."""
    total = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return f"{total / 1e6:.0f} MB" if total >= 1e6 else f"{total / 1e3:.0f} kB"


def _write(
    folder: Path,
    source: str,
    records: list[dict[str, Any]],
    vectors: np.ndarray,
    manifest: docstore.Manifest | None,
    settings: Settings,
    chunking: Chunking,
    dimension: int,
    previous: Path | None = None,
) -> docstore.Manifest:
    from prefrag.index.dense import collection_name
    from prefrag.index.integrity import verify_before_publishing
    from prefrag.index.lexical import FORMAT, record_texts
    from prefrag.index.sparse_lexical import SparseLexicalIndex

    store = _lexical_store(settings)
    extended = _extended_lexical(previous, records)
    if store == "collection":  # the server's collection holds the BM25 vectors
        save_lexical, lexical_documents = None, len(records)
    elif extended is not None:
        save_lexical, lexical_documents = extended, len(records)
    else:
        lexical = SparseLexicalIndex.build(record_texts(records))
        save_lexical, lexical_documents = lexical.save, lexical.documents
    verify_before_publishing(folder, len(records), vectors, lexical_documents)
    generation = docstore.write_generation(
        folder,
        records,
        vectors,
        save_lexical,
        _hnsw_writer(vectors, settings, previous),
        previous,  # a sound source's rows come first: its record lines are copied
    )
    return docstore.Manifest(
        name=source,
        generation=generation,
        documents=len({record["parent_id"] for record in records}),
        chunks=len(records),
        dimension=dimension,
        embedding_model=settings.embedding_model,
        authority=manifest.authority if manifest else docstore.DEFAULT_AUTHORITY,
        embedding_precision=source_embedding_settings(manifest, settings).embedding_precision,
        description=manifest.description if manifest else "",
        chunk_size=chunking.size,
        chunk_overlap=chunking.overlap,
        chunk_unit=chunking.unit,
        collection=collection_name(source),
        updated=docstore.now_iso(),
        lexical_format=FORMAT,
        lexical_store=store,
    )


def _extended_lexical(
    previous: Path | None, records: Sequence[dict[str, Any]]
) -> Callable[[Path], None] | None:
    """What writes the lexical index as `previous`'s sparse shard extended by the new rows.

    A large source's full write (every 10% of growth) extends its base shard by the rows
    past it, weighted with its mean length as its delta rows are, instead of tokenising
    every row again; None (build it again) for a small source, a base of another format,
    or when the rows added since the base was built moved the mean length by more than
    `_MEAN_DRIFT` (then the shard is rebuilt at the new mean).
    """
    from prefrag.index import sparse_lexical
    from prefrag.index.lexical import record_texts

    if previous is None or not sparse_lexical.is_sparse_index(previous / docstore.LEXICAL):
        return None
    folder = previous / docstore.LEXICAL
    base = sparse_lexical.problem(folder)
    mean = sparse_lexical.average_length(folder)
    if isinstance(base, str) or mean is None or not DELTA_MIN_ROWS <= base <= len(records):
        return None
    texts = record_texts(records[base:])
    words = float(sum(len(text.split()) for text in texts))
    overall = (sparse_lexical.total_words(folder) + words) / max(1, len(records))
    if abs(overall - mean) > _MEAN_DRIFT * mean:
        return None
    rows = [(v.indices, v.values) for v in sparse_lexical.document_vectors(texts, mean)]

    def write(target: Path) -> None:
        sparse_lexical.extend(folder, rows, target, words)

    return write


def _new_documents(records: Sequence[dict[str, Any]], added: Sequence[dict[str, Any]]) -> int:
    """How many documents the `added` chunks bring that no chunk of `records` belongs to."""
    from prefrag.index.rows import Records

    parents = sorted({str(r.get("parent_id", r["id"])) for r in added})
    if isinstance(records, Records):
        return int((~records.has_parents(parents)).sum())
    return len(set(parents) - {str(r.get("parent_id", r["id"])) for r in records})


def _appendable(
    previous: Path,
    old_records: Sequence[dict[str, Any]],
    added: int,
    settings: Settings,
    lexical_store: str = "generation",
) -> bool:
    """Whether an add of `added` rows to generation `previous` can go to its delta part.

    The base must be large, the delta stay small, the lexical index be Qdrant sparse
    vectors (an older one is written whole first), and the base have its HNSW shard
    exactly when the source is past the HNSW size (crossing it writes the generation
    whole, shard included).
    """
    from prefrag.index import hnsw
    from prefrag.index.rows import Records
    from prefrag.index.sparse_lexical import average_length, is_sparse_index

    if not isinstance(old_records, Records) or not old_records.indexed:
        return False
    base = len(old_records.parts[0])
    delta = len(old_records) - base
    past_hnsw = len(old_records) + added >= settings.hnsw_min_chunks and hnsw.available()
    return (
        base >= DELTA_MIN_ROWS
        and delta + added <= DELTA_MAX_SHARE * base
        and (
            lexical_store == "collection"
            or (
                is_sparse_index(previous / docstore.LEXICAL)
                and average_length(previous / docstore.LEXICAL) is not None
            )
        )
        and past_hnsw == (previous / hnsw.HNSW).is_dir()
    )


def _write_delta(
    folder: Path,
    previous: Path,
    old_records: Sequence[dict[str, Any]],
    new_records: list[dict[str, Any]],
    new_vectors: np.ndarray,
    manifest: docstore.Manifest,
) -> docstore.Manifest:
    """Publish `previous` plus `new_records` as a generation with a longer delta part."""
    from prefrag.index.lexical import record_texts
    from prefrag.index.sparse_lexical import average_length, delta_lines

    documents = _new_documents(old_records, new_records)
    lines = None  # on a Qdrant server the collection holds the new rows' BM25 vectors
    if manifest.lexical_store != "collection":
        mean = average_length(previous / docstore.LEXICAL)
        assert mean is not None  # `_appendable` checked it
        lines = delta_lines(record_texts(new_records), mean)
    generation = docstore.write_delta_generation(folder, previous, new_records, new_vectors, lines)
    return dataclasses.replace(
        manifest,
        generation=generation,
        documents=manifest.documents + documents,
        chunks=len(old_records) + len(new_records),
        updated=docstore.now_iso(),
    )


def _hnsw_writer(vectors: Any, settings: Settings, previous: Path | None) -> Any:
    """What writes the generation's HNSW shards (int8, rescored), or None below the size."""
    from prefrag.index import hnsw

    if len(vectors) < settings.hnsw_min_chunks or len(vectors) == 0:
        return None
    if not hnsw.available():
        logger.warning(
            "%d chunks are searched exactly: qdrant-edge-py, which builds the HNSW index "
            "past %d chunks, cannot be imported.",
            len(vectors),
            settings.hnsw_min_chunks,
        )
        return None
    shard = previous / hnsw.HNSW if previous is not None else None

    def write(generation: Path) -> None:
        hnsw.build(generation / hnsw.HNSW, vectors, shard, int8=True)

    return write


def _manifest_current(
    manifest: docstore.Manifest, authority: float, description: str | None
) -> bool:
    return manifest.authority == authority and description in (None, manifest.description)
