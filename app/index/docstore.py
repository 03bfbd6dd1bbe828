"""The on-disk layout of one local source: a manifest pointing at an immutable generation.

```
<sources_dir>/<name>/
  manifest.json          what is indexed, and which generation folder holds it
  gen-000002/            chunks.jsonl (text + metadata) with its offsets and id keys,
                         vectors.npy, lexical/ (bm25s), hnsw/ (a Qdrant Edge shard, for
                         sources past the HNSW size), delta/ (rows added since the last
                         full write, in large sources: see `prefrag.index.rows`)
  qdrant/                the store of record (a Qdrant Edge shard; unused with QDRANT_URL)
```

A write builds a new generation folder beside the current one and then swaps
`manifest.json` atomically, so readers and a failed run always see a complete store. An
add to a large source writes only a `delta/` beside hard links to the previous
generation's unchanged files (`write_delta_generation`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.documents import Document

from prefrag.errors import (
    ConfigurationError,
    DamagedStoreError,
    StoreLockedError,
    StoreMissingError,
)
from prefrag.file_lock import hold_file_lock
from prefrag.jsonl import read_rows

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
CHUNKS = "chunks.jsonl"
VECTORS = "vectors.npy"
LEXICAL = "lexical"
HNSW = "hnsw"  # `prefrag.index.hnsw.HNSW`
QDRANT = "qdrant"
DEFAULT_AUTHORITY = 0.8
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")  # matched whole (no trailing "\n")
_KEEP_GENERATIONS = 2  # the current one and the one a slow reader may still be opening


@dataclass
class Manifest:
    """What a source holds; stored as `manifest.json`."""

    name: str
    generation: str
    documents: int
    chunks: int
    dimension: int
    embedding_model: str
    authority: float = DEFAULT_AUTHORITY
    # The embedder's arithmetic ("fp32" or "int8"); manifests written before it were fp32.
    embedding_precision: str = "fp32"
    description: str = ""
    chunk_size: int = 200
    chunk_overlap: int = 0
    # "tokens" (word pieces of the embedder); manifests written before it cut by words.
    chunk_unit: str = "words"
    collection: str = ""
    updated: str = ""
    format: int = FORMAT_VERSION
    # What the lexical index covers (`prefrag.index.lexical.FORMAT`); manifests written
    # before this field existed indexed chunk texts only.
    lexical_format: int = 1
    # Where the lexical index lives: "generation" (its `lexical/` folder, in process) or
    # "collection" (the BM25 sparse vectors of the source's Qdrant server collection).
    lexical_store: str = "generation"
    # Where the chunk records and vectors live: "generation" (the generation's files) or
    # "collection" (only the Qdrant server collection; the generation folder is empty).
    records_store: str = "generation"


def check_source_name(name: str) -> str:
    """`name` if it is usable as a folder and collection name.

    Raises:
        ConfigurationError: The name is empty or has characters other than letters,
            digits, '.', '_' and '-'.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigurationError(
            f"Source name {name!r} must start with a letter or digit and use only letters, "
            "digits, '.', '_' and '-' (at most 64 characters)."
        )
    return name


def read_manifest(folder: Path) -> Manifest | None:
    """The manifest in `folder`, or None when the source has never been indexed."""
    path = folder / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise _damaged(folder, f"{path} is not valid JSON: {error}") from error
    known = Manifest.__dataclass_fields__
    try:
        manifest = Manifest(**{key: value for key, value in data.items() if key in known})
    except (TypeError, AttributeError) as error:
        raise _damaged(folder, f"{path} lacks required fields") from error
    if not _manifest_types_ok(manifest):
        raise _damaged(folder, f"{path} has fields of the wrong type")
    return manifest


def _manifest_types_ok(manifest: Manifest) -> bool:
    return (
        isinstance(manifest.generation, str)
        and manifest.generation.startswith("gen-")
        and "/" not in manifest.generation
        and all(
            isinstance(v, int) for v in (manifest.documents, manifest.chunks, manifest.dimension)
        )
        and isinstance(manifest.authority, int | float)
    )


def damage_message(name: str, problem: str) -> str:
    """`Source 'x' is damaged (...)` plus how to repair or remove it."""
    return (
        f"Source '{name}' is damaged ({problem}). Rebuild it with `prefrag index FILES "
        f"--source {name}` (the files it was built from), or delete it with `prefrag sources "
        f"remove {name}`."
    )


def graph_damage_message(name: str, problem: str) -> str:
    """`Graph source 'x' is damaged (...)` plus how to rebuild or remove it."""
    return (
        f"Graph source '{name}' is damaged ({problem}). Delete it with `prefrag sources remove "
        f"{name}` and index its triples again with `prefrag index --kind graph FILES --source "
        f"{name}`."
    )


def _damaged(folder: Path, problem: str) -> DamagedStoreError:
    return DamagedStoreError(damage_message(folder.name, problem), problem)


def require_manifest(folder: Path, name: str) -> Manifest:
    """The manifest of source `name`, or `StoreMissingError` saying how to create it."""
    manifest = read_manifest(folder)
    if manifest is None or not (folder / manifest.generation).is_dir():
        raise StoreMissingError(
            f"Local source '{name}' has no index yet; run `prefrag index PATH --source {name}`."
        )
    return manifest


def now_iso() -> str:
    """The current UTC time, to the second."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def document_to_record(document: Document) -> dict[str, Any]:
    """The stored form of a chunk: its metadata (without the search score) and text."""
    record = {k: v for k, v in document.metadata.items() if k != "score"}
    record["text"] = document.page_content
    return record


def record_to_document(record: dict[str, Any], score: float) -> Document:
    """A chunk record as a Document with a retrieval `score`."""
    metadata = {k: v for k, v in record.items() if k != "text"}
    metadata["score"] = float(score)
    return Document(page_content=record["text"], metadata=metadata, id=record["id"])


def load_records(generation_dir: Path) -> list[dict[str, Any]]:
    """The chunk records of a generation (every part), in row order, all parsed."""
    from prefrag.index.rows import parts

    return [record for part in parts(generation_dir) for record in read_rows(part / CHUNKS)]


def load_vectors(generation_dir: Path, *, mapped: bool = False) -> np.ndarray:
    """The chunk vectors of a generation, one row per record.

    With `mapped`, the file is memory-mapped read-only instead of read: opening costs
    nothing whatever its size, and processes reading the same source share its pages (a
    generation with a `delta/` part is read into memory instead).
    """
    from prefrag.index.rows import part_vectors

    arrays = part_vectors(generation_dir, mapped=mapped)
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


def write_generation(
    folder: Path,
    records: Sequence[dict[str, Any]],
    vectors: np.ndarray,
    save_lexical: Any,
    save_dense: Any = None,
    previous: Path | None = None,
) -> str:
    """Write records, vectors and the lexical index as a new generation; return its name.

    `save_lexical(path)` writes the lexical index into `path`; `save_dense(folder)`, when
    given, writes more search structures into the generation's `folder` (an HNSW shard).
    `previous`, a sound generation whose rows are the first records (a fold), gives its
    record lines as they are instead of each record being written again. The generation
    is built in a temporary folder and renamed into place, so it is either complete or
    absent.
    """
    folder.mkdir(parents=True, exist_ok=True)
    name = _next_generation_name(folder)
    from prefrag.index.rows import record_line, reusable_parts, write_part

    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=folder))
    try:
        ids = [(r["id"], str(r.get("parent_id", r["id"]))) for r in records]
        copied = reusable_parts(previous, ids) if previous is not None else []
        rows = sum(len(offsets) - 1 for _, offsets in copied)
        write_part(staging, [record_line(record) for record in records[rows:]], ids, copied)
        np.save(staging / VECTORS, np.ascontiguousarray(vectors, dtype=np.float32))
        if save_lexical is not None:  # None: the lexical index lives on the Qdrant server
            save_lexical(staging / LEXICAL)
        if save_dense is not None:
            save_dense(staging)
        os.replace(staging, folder / name)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return name


def _next_generation_name(folder: Path) -> str:
    """The name after the highest generation of `folder` ("gen-000001" for the first)."""
    number = 1 + max((_generation_number(p.name) for p in folder.glob("gen-*")), default=0)
    return f"gen-{number:06d}"


def write_empty_generation(folder: Path) -> str:
    """Write an empty generation (a source whose chunks all live on a Qdrant server)."""
    folder.mkdir(parents=True, exist_ok=True)
    name = _next_generation_name(folder)
    (folder / name).mkdir()
    return name


def remove_other_generations(folder: Path, keep: str) -> None:
    """Delete every generation of `folder` but `keep` (the one the manifest names)."""
    for old in folder.glob("gen-*"):
        if old.name != keep:
            shutil.rmtree(old, ignore_errors=True)


def write_delta_generation(
    folder: Path,
    previous: Path,
    records: Sequence[dict[str, Any]],
    vectors: np.ndarray,
    lexical_lines: Sequence[bytes] | None,
) -> str:
    """Write a generation that is `previous` plus `records` appended; return its name.

    The base part's files (records, offsets, keys, vectors, lexical index) are hard links
    to `previous`'s (copies where the file system has no hard links): nothing of the old
    rows is rewritten. The new rows go to `delta/` after `previous`'s own delta rows,
    with `lexical_lines` (the Qdrant BM25 sparse vector of each new record,
    `prefrag.index.sparse_lexical.delta_lines`); they are searched beside the base's
    lexical shard and HNSW shard.
    """
    from prefrag.index.rows import DELTA, KEYS, OFFSETS, PartRecords, record_line, row_keys

    name = _next_generation_name(folder)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=folder))
    try:
        for part in (CHUNKS, OFFSETS, VECTORS):
            _link(previous / part, staging / part)
        if (previous / KEYS).is_file():
            _link(previous / KEYS, staging / KEYS)
        else:  # a base written with the ids as JSON gets its keys file now, once
            base = PartRecords(previous)
            try:
                np.save(staging / KEYS, base.keys())
            finally:
                base.close()
        # The lexical index and an HNSW shard cover the base rows only: both are linked
        # (readers only load a published shard, which leaves its files unchanged).
        for tree in (LEXICAL, HNSW):
            if (previous / tree).is_dir():
                shutil.copytree(previous / tree, staging / tree, copy_function=_link)
        old, new = previous / DELTA, staging / DELTA
        new.mkdir()
        lines = [record_line(record) for record in records]
        old_lines = (old / CHUNKS).read_bytes() if (old / CHUNKS).is_file() else b""
        with (new / CHUNKS).open("wb") as handle:
            handle.write(old_lines)
            handle.writelines(lines)
        old_offsets = np.load(old / OFFSETS) if old_lines else np.zeros(1, dtype=np.int64)
        sizes = np.fromiter((len(line) for line in lines), dtype=np.int64, count=len(lines))
        offsets = np.concatenate([old_offsets, old_offsets[-1] + np.cumsum(sizes)])
        np.save(new / OFFSETS, offsets.astype(np.int64))
        keys = row_keys([[r["id"], str(r.get("parent_id", r["id"]))] for r in records])
        if old_lines:
            delta = PartRecords(old)
            try:
                keys = np.concatenate([delta.keys(), keys])
            finally:
                delta.close()
        np.save(new / KEYS, keys)
        new_vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if old_lines:
            new_vectors = np.concatenate([np.load(old / VECTORS), new_vectors])
        np.save(new / VECTORS, new_vectors)
        from prefrag.index.sparse_lexical import DELTA_SPARSE

        if lexical_lines is not None:  # None: the lexical index lives on the Qdrant server
            old_sparse = (old / DELTA_SPARSE).read_bytes() if old_lines else b""
            with (new / DELTA_SPARSE).open("wb") as handle:
                handle.write(old_sparse)
                handle.writelines(lexical_lines)
        os.replace(staging, folder / name)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return name


def _link(source: Path | str, target: Path | str) -> None:
    """Hard-link `source` as `target` (a copy where hard links are not possible)."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def write_manifest(folder: Path, manifest: Manifest) -> None:
    """Replace `manifest.json` atomically, then drop generations nobody points at."""
    handle, temporary = tempfile.mkstemp(prefix=".manifest-", dir=folder)
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        json.dump(asdict(manifest), stream, indent=2)
    os.replace(temporary, folder / MANIFEST)
    keep = _generation_number(manifest.generation)
    for old in folder.glob("gen-*"):
        if _generation_number(old.name) <= keep - _KEEP_GENERATIONS:
            shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def writer_lock(folder: Path, name: str) -> Iterator[None]:
    """Hold the source's write lock, or raise `StoreLockedError` if another writer has it."""

    def busy() -> None:
        raise StoreLockedError(
            f"Source '{name}' is being written by another PrefRAG process; "
            "wait for it to finish and try again."
        )

    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(hold_file_lock(folder / ".lock", on_busy=busy))
        except OSError as error:
            raise StoreLockedError(
                f"Cannot write source '{name}' in {folder}: {error.strerror or error}; make the "
                "folder writable or set PREFRAG_HOME to one that is."
            ) from None
        _remove_leftovers(folder)
        yield


def _remove_leftovers(folder: Path) -> None:
    """Staging folders and manifest drafts of a writer that was killed (we hold the lock)."""
    for leftover in [*folder.glob(".staging-*"), *folder.glob(".manifest-*")]:
        if leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            leftover.unlink(missing_ok=True)


def _generation_number(name: str) -> int:
    try:
        return int(name.removeprefix("gen-"))
    except ValueError:
        return 0
