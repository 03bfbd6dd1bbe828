"""The steps `prefrag index` takes in process and on a Qdrant server alike.

Reading and chunking the input (a chunk is new unless the source holds its id), embedding
the new chunks with progress and an estimate, naming very large documents, and the report.
`prefrag.index.ingest` writes a source's generation with them,
`prefrag.index.server_ingest` its server collection.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
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

logger = logging.getLogger(__name__)

_EMBED_STEP = 256  # texts per progress update; the embedder batches inside
_CALIBRATION = 32  # chunks embedded first to time the rest (the longest: a safe estimate)
LARGE_DOCUMENT_CHUNKS = 1_000  # a document cut into more chunks is named before embedding


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


def _known(records: Sequence[dict[str, Any]], chunk_ids: Sequence[str]) -> list[bool]:
    """Whether `records` hold each chunk id, without parsing a stored source's records."""
    from prefrag.index.rows import Records

    if isinstance(records, Records):
        return (records.rows_of(chunk_ids) >= 0).tolist()
    stored = {r["id"] for r in records}
    return [chunk_id in stored for chunk_id in chunk_ids]


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
