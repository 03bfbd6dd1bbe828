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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from prefrag.errors import ConfigurationError, IngestError
from prefrag.index import docstore
from prefrag.index.chunking import Chunking, ChunkUnit, chunk_document
from prefrag.index.loaders import RawDocument, iter_input_files, load_file

if TYPE_CHECKING:
    from prefrag.config import Settings
    from prefrag.index.dense import PointStore
    from prefrag.index.embeddings import Embedder
    from prefrag.index.repair import Salvage

# A source of at least this many rows takes an add's rows in a delta part beside hard
# links to its unchanged files, until the delta would pass this share of its base rows;
# then the next add writes everything again (and folds the delta in).
DELTA_MIN_ROWS = 5_000
DELTA_MAX_SHARE = 0.1
_EMBED_STEP = 256  # texts per progress update; the embedder batches inside
_CALIBRATION = 32  # chunks embedded first to time the rest (the longest: a safe estimate)
LARGE_DOCUMENT_CHUNKS = 1_000  # a document cut into more chunks is named before embedding
# A full write extends a large source's sparse shard while the mean length it was weighted
# with stays within this share of the source's mean; past it the shard is built again.
_MEAN_DRIFT = 0.05


logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class IndexReport:
    """What one indexing run did.

    Attributes:
        source: The source name.
        path: The source's folder under the data directory.
        files: Input files read.
        documents: Documents read from them.
        added: New chunks written.
        skipped: Chunks already in the index (or repeated in the input).
        total_documents: Documents in the source afterwards.
        total_chunks: Chunks in the source afterwards.
        seconds: Wall time of the run.
        rebuilt: What was damaged, when this run repaired the source ("" when sound).
        repairs: What the repair did (records restored, chunks embedded again, ...).
        warnings: What the user should know about the input (e.g. one id, two texts).
    """

    source: str
    path: Path
    files: int
    documents: int
    added: int
    skipped: int
    total_documents: int
    total_chunks: int
    seconds: float
    rebuilt: str = ""
    repairs: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


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
        from prefrag.index.server_ingest import index_on_server

        return index_on_server(
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


def _stacked(old: np.ndarray, new: np.ndarray | None) -> np.ndarray:
    """The kept rows' vectors, then the new ones'."""
    return old if new is None or not len(new) else np.vstack([old, new]) if len(old) else new


def _large_documents(
    raws: Sequence[RawDocument], new_records: Sequence[dict[str, Any]]
) -> list[str]:
    """A sentence for each input document that alone became very many new chunks."""
    from collections import Counter

    from prefrag.index.chunking import parent_id_of

    chunks = Counter(record.get("parent_id") for record in new_records)
    lines = []
    for raw in raws:
        count = chunks.pop(parent_id_of(raw), 0)
        if count >= LARGE_DOCUMENT_CHUNKS:
            name = raw.title or raw.id or raw.origin or "untitled"
            megabytes = len(raw.text.encode("utf-8")) / 1e6
            lines.append(
                f"Document {name!r} ({megabytes:.1f} MB of text) alone becomes {count:,} chunks "
                f"to embed ({count / max(1, len(new_records)):.0%} of this run)."
            )
    return lines


def _vectors(
    contents: Salvage,
    new_records: list[dict[str, Any]],
    manifest: docstore.Manifest | None,
    settings: Settings,
    progress: bool,
    source: str,
) -> tuple[np.ndarray, np.ndarray, int]:
    """(vectors of the kept records, of the new ones, dimension), embedding what is missing."""
    again = contents.to_embed()
    if not new_records and not again:
        assert contents.vectors is not None
        vectors = contents.vectors
        dimension = int(vectors.shape[1]) if vectors.ndim == 2 and len(vectors) else 0
        return vectors, np.zeros((0, dimension), dtype=np.float32), dimension
    from prefrag.index.embeddings import get_embedder

    embedder = get_embedder(source_embedding_settings(manifest, settings))
    if manifest is not None and manifest.dimension not in (0, embedder.dimension):
        raise ConfigurationError(
            f"Source '{source}' was built with {manifest.embedding_model} "
            f"({manifest.dimension}-d vectors); re-index it into a new source name."
        )
    texts = [contents.records[row]["text"] for row in again] + [r["text"] for r in new_records]
    embedded = _embed(texts, embedder, progress, source)
    if contents.vectors is not None:
        old = contents.vectors
    else:
        old = np.zeros((len(contents.records), embedder.dimension), dtype=np.float32)
        for row, record in enumerate(contents.records):
            vector = contents.recovered.get(record["id"])
            if vector is not None:
                old[row] = vector
        old[again] = embedded[: len(again)]
    return old, embedded[len(again) :], embedder.dimension


def _reconcile_qdrant(
    store: PointStore,
    old_records: list[dict[str, Any]],
    old_vectors: np.ndarray,
    new_records: list[dict[str, Any]],
    new_vectors: np.ndarray | None,
    problems: list[str],
) -> str:
    """Make Qdrant hold exactly the source's records; what was rebuilt, if anything.

    Before this run Qdrant should hold exactly `old_records`. Too few points (lost ones, a
    new server) or too many (a run killed between its upsert and its manifest swap), or
    other ids than the records' after damage, and the collection is rebuilt from the
    records and vectors; otherwise only the new points are upserted.
    """
    from prefrag.index.dense import QdrantStore

    points = store.count()
    wrong = points != len(old_records)
    if not wrong and isinstance(store, QdrantStore) and not store.holds_lexical():
        # A collection written before it held BM25 vectors: written again with them.
        store.replace_all([*old_records, *new_records], _stacked(old_vectors, new_vectors))
        return ""
    if not wrong and problems:
        wrong = store.ids() != {record["id"] for record in old_records}
    if wrong:
        records = [*old_records, *new_records]
        parts = [old_vectors] if old_records else []
        if new_records and new_vectors is not None:
            parts.append(new_vectors)
        if parts:
            vectors = np.vstack(parts)
            store.replace_all(records, vectors)
        problems.append(f"its Qdrant store held {points} points for {len(old_records)} records")
        return f"rebuilt its Qdrant store from the {len(records)} records and their vectors"
    if new_records and new_vectors is not None:
        store.ensure_collection(int(new_vectors.shape[1]))
        store.upsert(new_records, new_vectors)
    return ""


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


def _id_clashes(raws: Sequence[RawDocument], shown: int = 5) -> list[str]:
    """Ids given to documents with different texts (both are kept, as separate documents)."""
    texts: dict[str, set[str]] = {}
    for raw in raws:
        if raw.id is not None:
            texts.setdefault(raw.id, set()).add(raw.text)
    clashes = sorted(i for i, variants in texts.items() if len(variants) > 1)
    if not clashes:
        return []
    named = ", ".join(f"'{i}'" for i in clashes[:shown]) + (" ..." if len(clashes) > shown else "")
    return [
        f"{len(clashes)} id(s) name documents with different texts ({named}); both versions "
        "were indexed. Give each document its own id, or remove the outdated version."
    ]


def _read_inputs(paths: Sequence[str | Path]) -> tuple[int, list[RawDocument]]:
    files = list(iter_input_files(paths))
    raws = [raw for path in files for raw in load_file(path)]
    if not raws:
        where = ", ".join(str(p) for p in paths) or "(no paths)"
        raise IngestError(f"Found no text to index in {where}.")
    return len(files), raws


def _source_authority(authority: float | None, manifest: docstore.Manifest | None) -> float:
    if authority is not None:
        return float(authority)
    return manifest.authority if manifest is not None else docstore.DEFAULT_AUTHORITY


def source_embedding_settings(manifest: docstore.Manifest | None, settings: Settings) -> Settings:
    """The settings a source's chunks are embedded with: its recorded precision kept.

    A source never mixes vectors of two precisions: adds to an existing source embed at
    the precision it was built with (`--rebuild`, or a new source, takes the settings').
    """
    from prefrag.index.embeddings import with_precision

    return with_precision(settings, manifest.embedding_precision if manifest else None)


def source_chunking(manifest: docstore.Manifest | None, settings: Settings) -> Chunking:
    """How `index` cuts documents for a source: as it was built, else by word pieces.

    A source keeps the chunking recorded in its manifest (so re-indexing the same files
    adds nothing); a new or rebuilt one takes the settings' size and overlap in word pieces.

    Raises:
        ConfigurationError: The size does not fit the embedder's window.
    """
    from prefrag.index.chunking import SPECIAL_TOKENS
    from prefrag.index.embeddings import MAX_TOKENS

    if manifest is not None:
        unit: ChunkUnit = "tokens" if manifest.chunk_unit == "tokens" else "words"
        return Chunking(unit, manifest.chunk_size, manifest.chunk_overlap)
    window = MAX_TOKENS - SPECIAL_TOKENS
    if settings.chunk_size > window:
        raise ConfigurationError(
            f"PREFRAG_CHUNK_SIZE={settings.chunk_size} is more word pieces than the embedder "
            f"reads ({window}); set it to {window} or less."
        )
    return Chunking("tokens", settings.chunk_size, settings.chunk_overlap)


def _new_chunks(
    raws: Sequence[RawDocument],
    source: str,
    settings: Settings,
    chunking: Chunking,
    authority: float,
    old_records: Sequence[dict[str, Any]],
    known_ids: Callable[[list[str]], list[bool]] | None = None,
) -> tuple[list[dict[str, Any]], int, tuple[int, str]]:
    """(new chunk records, chunks in the input, (chunks, location) of its largest document).

    A chunk is known when `old_records` hold its id, or `known_ids` (given) says so.
    """
    chunks = []
    largest = (0, "")
    for raw in raws:
        cut = chunk_document(
            raw, source=source, chunking=chunking, settings=settings, authority=authority
        )
        chunks.extend(cut)
        largest = max(largest, (len(cut), raw.location))
    ids = [chunk.metadata["id"] for chunk in chunks]
    known = known_ids(ids) if known_ids is not None else _known(old_records, ids)
    seen: set[str] = set()
    fresh: list[dict[str, Any]] = []
    for chunk, stored in zip(chunks, known, strict=True):
        if not stored and chunk.metadata["id"] not in seen:
            seen.add(chunk.metadata["id"])
            fresh.append(docstore.document_to_record(chunk))
    return fresh, len(chunks), largest


def _announce(source: str, chunks: int, documents: int, largest: tuple[int, str]) -> None:
    """Say how much embedding is ahead, and name a document that alone makes much of it."""
    from rich.console import Console
    from rich.markup import escape

    console = Console(stderr=True)
    console.print(f"{escape(source)}: {chunks:,} new chunks to embed from {documents:,} documents.")
    count, location = largest
    if count >= LARGE_DOCUMENT_CHUNKS:
        console.print(
            f"[yellow]note:[/] one document, {escape(location)}, is cut into {count:,} chunks; "
            "if it is several documents, give each its own file or JSONL line."
        )


def _speed_column() -> Any:
    """A progress column showing chunks per second."""
    from rich.progress import ProgressColumn, Task
    from rich.text import Text

    class Speed(ProgressColumn):
        def render(self, task: Task) -> Text:
            return Text(f"{task.speed:.1f} chunks/s" if task.speed else "")

    return Speed()


def _format_duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _embed(texts: list[str], embedder: Embedder, progress: bool, source: str) -> np.ndarray:
    if not texts:
        return np.zeros((0, embedder.dimension), dtype=np.float32)
    # One global length order keeps padding small across the progress steps.
    order = np.argsort([-len(t) for t in texts], kind="stable")
    vectors = np.empty((len(texts), embedder.dimension), dtype=np.float32)
    steps = range(0, len(texts), _EMBED_STEP)
    if not progress:
        for start in steps:
            rows = order[start : start + _EMBED_STEP]
            vectors[rows] = embedder.encode([texts[i] for i in rows])
        return vectors
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    console = Console(stderr=True)
    # Time the longest chunks first: the estimate errs long, and comes before the long work.
    first = order[:_CALIBRATION]
    started = time.perf_counter()
    vectors[first] = embedder.encode([texts[i] for i in first])
    rate = len(first) / max(time.perf_counter() - started, 1e-6)
    remaining = len(texts) - len(first)
    if remaining:
        console.print(
            f"Embedding {len(texts):,} chunks at about {rate:.0f} chunks/s: "
            f"about {_format_duration(remaining / rate)} to go."
        )
    columns = (
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        _speed_column(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task(f"Embedding {source}", total=len(texts), completed=len(first))
        for start in range(len(first), len(texts), _EMBED_STEP):
            rows = order[start : start + _EMBED_STEP]
            vectors[rows] = embedder.encode([texts[i] for i in rows])
            bar.advance(task, len(rows))
    return vectors


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
        folder, records, vectors, save_lexical, _hnsw_writer(vectors, settings, previous)
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


def _known(records: Sequence[dict[str, Any]], chunk_ids: Sequence[str]) -> list[bool]:
    """Whether `records` hold each chunk id, without parsing a stored source's records."""
    from prefrag.index.rows import Records

    if isinstance(records, Records):
        return (records.rows_of(chunk_ids) >= 0).tolist()
    stored = {r["id"] for r in records}
    return [chunk_id in stored for chunk_id in chunk_ids]


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


def _report(
    source: str,
    folder: Path,
    files: int,
    raws: Sequence[RawDocument],
    added: int,
    skipped: int,
    manifest: docstore.Manifest,
    started: float,
) -> IndexReport:
    return IndexReport(
        source=source,
        path=folder,
        files=files,
        documents=len(raws),
        added=added,
        skipped=skipped,
        total_documents=manifest.documents,
        total_chunks=manifest.chunks,
        seconds=time.perf_counter() - started,
    )
