"""The rows of a generation, read without parsing them all: offsets, ids and lazy records.

A generation holds its chunk records in up to two parts, each a folder with the same files:

```
gen-000007/              the base part: every row up to the last full write
  chunks.jsonl           one JSON record per line
  chunks.offsets.npy     byte offset of each line, then the file's size (int64, rows + 1)
  chunks.keys.npy        128-bit keys of each row's chunk id and parent id (uint64, rows x 4)
  vectors.npy            one vector per row
  delta/                 the rows added since (same files), when the source is large
```

The offsets let a reader fetch record `i` by itself (a search parses the records it returns,
not the source's 100,000), and the keys let `prefrag index` skip known chunks and find a
chunk's row without reading any record: a key is the 128-bit BLAKE2b digest of the id
(as wide as the content-derived UUIDs chunk ids are), so the file is loaded, not parsed
(generations written with `chunks.ids.json`, the ids as JSON, are still read).

The offsets' last entry must equal the size of `chunks.jsonl`: a file cut
short, a line shortened or garbage appended shows at once, without parsing every line.
Generations written before these files existed are read by scanning the file's lines.
"""

from __future__ import annotations

import hashlib
import json
import mmap
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import numpy as np

CHUNKS = "chunks.jsonl"
OFFSETS = "chunks.offsets.npy"
KEYS = "chunks.keys.npy"
IDS = "chunks.ids.json"  # the ids as JSON, written before keys files (read, never written)
VECTORS = "vectors.npy"
DELTA = "delta"


class RowsDamagedError(ValueError):
    """A part's files disagree with each other or a record line is not a record."""


def parts(generation: Path) -> list[Path]:
    """The part folders of a generation in row order: itself, then `delta/` if present."""
    delta = generation / DELTA
    return [generation, delta] if (delta / CHUNKS).is_file() else [generation]


def offsets_of(data: bytes | mmap.mmap | np.ndarray) -> np.ndarray:
    """Start offset of every non-blank line of `data`, then its size (int64)."""
    array = np.frombuffer(data, dtype=np.uint8) if not isinstance(data, np.ndarray) else data
    if len(array) == 0:
        return np.zeros(1, dtype=np.int64)
    ends = np.flatnonzero(array == 10) + 1
    if len(ends) == 0 or ends[-1] != len(array):
        ends = np.append(ends, len(array))
    starts = np.concatenate([[0], ends[:-1]]).astype(np.int64)
    blank = (ends - starts) <= 1
    if blank.any():  # a line holding only "\n" (or whitespace, checked when read)
        starts = starts[~blank]
    return np.append(starts, len(array)).astype(np.int64)


def id_keys(ids: Iterable[str]) -> np.ndarray:
    """The 128-bit key of each id (BLAKE2b digest) as an (n, 2) uint64 array."""
    joined = b"".join(hashlib.blake2b(i.encode("utf-8"), digest_size=16).digest() for i in ids)
    return np.frombuffer(joined, dtype="<u8").reshape(-1, 2).copy()


def row_keys(ids: Sequence[Sequence[str]]) -> np.ndarray:
    """The keys file's rows for [chunk id, parent id] pairs: (n, 4) uint64."""
    if not len(ids):
        return np.zeros((0, 4), dtype=np.uint64)
    chunks = id_keys(pair[0] for pair in ids)
    parents = id_keys(pair[1] for pair in ids)
    return np.hstack([chunks, parents])


def write_part(
    folder: Path,
    lines: Sequence[bytes],
    ids: Sequence[Sequence[str]],
    copied: Sequence[tuple[Path, np.ndarray]] = (),
) -> None:
    """Write `chunks.jsonl` of `lines` (each ending in a newline), its offsets and keys.

    `copied` (parts and their offsets, from `reusable_parts`) come first, their
    `chunks.jsonl` copied byte for byte; `ids` name every row, theirs included.
    """
    import shutil

    folder.mkdir(parents=True, exist_ok=True)
    sizes = np.concatenate(
        [
            *(np.diff(offsets) for _, offsets in copied),
            np.fromiter((len(line) for line in lines), dtype=np.int64, count=len(lines)),
        ]
    )
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    with (folder / CHUNKS).open("wb") as handle:
        for part, _ in copied:
            with (part / CHUNKS).open("rb") as lines_of_part:
                shutil.copyfileobj(lines_of_part, handle, 1 << 20)
        handle.writelines(lines)
    np.save(folder / OFFSETS, offsets)
    np.save(folder / KEYS, row_keys(ids))


def reusable_parts(generation: Path, ids: Sequence[Sequence[str]]) -> list[tuple[Path, np.ndarray]]:
    """The parts of `generation` (with their offsets) a fold may copy line for line.

    `ids` ([chunk id, parent id] of every row of the new generation) must begin with
    the parts' rows, as their keys files name them; each part's offsets file must agree
    with its `chunks.jsonl`, which must end with its last line's newline. Otherwise
    none (the records are written again, as before).
    """
    found, keys = [], []
    for part in parts(generation):
        offsets, state = part_offsets(part)
        if state != "stored" or not _ends_with_newline(part / CHUNKS):
            return []
        try:
            keys.append(np.load(part / KEYS))
        except (OSError, ValueError, EOFError):
            return []
        found.append((part, offsets))
    held = np.concatenate(keys) if keys else np.zeros((0, 4), dtype=np.uint64)
    rows = sum(len(offsets) - 1 for _, offsets in found)
    if rows > len(ids) or held.shape != (rows, 4) or not np.array_equal(held, row_keys(ids[:rows])):
        return []
    return found


def _ends_with_newline(path: Path) -> bool:
    size = path.stat().st_size
    if size == 0:
        return True
    with path.open("rb") as handle:
        handle.seek(size - 1)
        return handle.read(1) == b"\n"


class KeyIndex:
    """Rows by key: which of some ids a part of keys holds, and at which row."""

    def __init__(self, keys: np.ndarray) -> None:
        self.keys = np.ascontiguousarray(keys, dtype=np.uint64).reshape(-1, 2)
        self._order = np.argsort(self.keys[:, 0], kind="stable")
        self._first = self.keys[self._order, 0]

    def rows(self, ids: Sequence[str]) -> np.ndarray:
        """The row of each id (the first, if repeated), -1 where it is absent."""
        query = id_keys(ids)
        found = np.full(len(query), -1, dtype=np.int64)
        if not len(query) or not len(self.keys):
            return found
        low = np.searchsorted(self._first, query[:, 0], "left")
        high = np.searchsorted(self._first, query[:, 0], "right")
        candidates = self._order[np.minimum(low, len(self._order) - 1)]
        match = (high > low) & (self.keys[candidates, 1] == query[:, 1])
        found[match] = candidates[match]
        # Two ids sharing their first 64 bits: look at every row under that half-key.
        for i in np.flatnonzero(~match & (high - low > 1)):
            rows = np.sort(self._order[low[i] : high[i]])
            same = rows[self.keys[rows, 1] == query[i, 1]]
            if len(same):
                found[i] = same[0]
        return found


def misplaced_line(folder: Path, offsets: np.ndarray) -> int | None:
    """The first row whose line does not run from "{" to "}" and a newline as its offsets say.

    None when every line does; no line is parsed.
    """
    rows = len(offsets) - 1
    if rows <= 0:
        return None
    with (folder / CHUNKS).open("rb") as handle:
        data = np.frombuffer(mmap.mmap(handle.fileno(), 0, prot=mmap.PROT_READ), dtype=np.uint8)
        starts = np.asarray(offsets[:-1], dtype=np.int64)
        ends = np.asarray(offsets[1:], dtype=np.int64)
        short = ends - starts < 3  # "{}" and its newline at the least
        safe_ends = np.maximum(ends, 2)
        good = ~short & (data[np.minimum(starts, len(data) - 1)] == ord("{"))
        good &= data[safe_ends - 1] == ord("\n")
        good &= data[safe_ends - 2] == ord("}")
        bad = np.flatnonzero(~good)
        del data
    return int(bad[0]) if len(bad) else None


def record_line(record: dict[str, Any]) -> bytes:
    """One record as its `chunks.jsonl` line."""
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")


def part_offsets(folder: Path) -> tuple[np.ndarray, str]:
    """(offsets, state) of a part: its offsets file when sound, else a scan of its lines.

    The state is "stored" (the offsets file agrees with `chunks.jsonl`), "missing" (a
    generation written before offsets files) or "mismatch" (the file was changed or cut
    after it was written, or the offsets file is damaged: the part is damaged).

    Raises:
        OSError: `chunks.jsonl` cannot be read.
    """
    size = (folder / CHUNKS).stat().st_size
    present = (folder / OFFSETS).exists()
    try:
        offsets = np.load(folder / OFFSETS, mmap_mode="r")
    except (OSError, ValueError, EOFError):
        offsets = None
    if (
        offsets is not None
        and offsets.ndim == 1
        and offsets.dtype.kind == "i"
        and len(offsets) >= 1
        and int(offsets[0]) == 0
        and int(offsets[-1]) == size
    ):
        return np.asarray(offsets), "stored"
    return offsets_of((folder / CHUNKS).read_bytes()), "mismatch" if present else "missing"


class _RecordSequence(Sequence[dict[str, Any]]):
    """Records by row: an index (negative ones count from the end) or a slice."""

    def _record(self, row: int) -> dict[str, Any]:
        """The record of row `row`, with 0 <= row < len(self)."""
        raise NotImplementedError

    @overload
    def __getitem__(self, row: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, row: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, row: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(row, slice):
            return [self._record(i) for i in range(*row.indices(len(self)))]
        if row < 0:
            row += len(self)
        if not 0 <= row < len(self):
            raise IndexError(row)
        return self._record(row)


class PartRecords(_RecordSequence):
    """The records of one part, each parsed when it is read."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.offsets, self.state = part_offsets(folder)
        self._handle = (folder / CHUNKS).open("rb")
        size = int(self.offsets[-1])
        self._data: mmap.mmap | bytes = (
            mmap.mmap(self._handle.fileno(), 0, prot=mmap.PROT_READ) if size else b""
        )

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def _record(self, row: int) -> dict[str, Any]:
        line = self._data[int(self.offsets[row]) : int(self.offsets[row + 1])]
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            raise RowsDamagedError(f"{self.folder / CHUNKS}: line {row + 1} is not a chunk record")
        if "text" not in record:
            raise RowsDamagedError(f"{self.folder / CHUNKS}: line {row + 1} is not a chunk record")
        return record

    def keys(self) -> np.ndarray:
        """The (rows, 4) keys of every row's chunk id and parent id.

        From the keys file when it agrees with the records, else from the ids file of
        older generations, else from the records, parsed.
        """
        if self.state == "stored":
            try:
                keys = np.load(self.folder / KEYS)
            except (OSError, ValueError, EOFError):
                keys = None
            if keys is not None and keys.shape == (len(self), 4) and keys.dtype == np.dtype("<u8"):
                return keys
            try:
                pairs = json.loads((self.folder / IDS).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                pairs = None
            if (
                isinstance(pairs, list)
                and len(pairs) == len(self)
                and all(isinstance(p, list) and len(p) == 2 for p in pairs)
            ):
                return row_keys(pairs)
        return row_keys([[r["id"], str(r.get("parent_id", r["id"]))] for r in self])

    def close(self) -> None:
        """Release the file."""
        if isinstance(self._data, mmap.mmap):
            self._data.close()
        self._handle.close()


class Records(_RecordSequence):
    """Every record of a generation (all its parts) in row order, parsed one at a time."""

    def __init__(self, generation: Path) -> None:
        self.parts = [PartRecords(folder) for folder in parts(generation)]
        self._starts = np.cumsum([0, *(len(p) for p in self.parts)])
        self._keys: np.ndarray | None = None
        self._chunk_index: KeyIndex | None = None

    def __len__(self) -> int:
        return int(self._starts[-1])

    def _record(self, row: int) -> dict[str, Any]:
        part = int(np.searchsorted(self._starts, row, side="right")) - 1
        return self.parts[part][row - int(self._starts[part])]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for part in self.parts:
            for row in range(len(part)):
                yield part[row]

    def keys(self) -> np.ndarray:
        """The (rows, 4) keys of every row's chunk id and parent id (read once)."""
        if self._keys is None:
            self._keys = np.concatenate([part.keys() for part in self.parts])
        return self._keys

    def rows_of(self, chunk_ids: Sequence[str]) -> np.ndarray:
        """The row of each chunk id, -1 for an id this generation does not hold."""
        if self._chunk_index is None:
            self._chunk_index = KeyIndex(self.keys()[:, :2])
        return self._chunk_index.rows(chunk_ids)

    def has_parents(self, parent_ids: Sequence[str]) -> np.ndarray:
        """Whether some row belongs to each document id."""
        return KeyIndex(self.keys()[:, 2:]).rows(parent_ids) >= 0

    @property
    def indexed(self) -> bool:
        """Whether every part has sound offsets of its own (else they were scanned)."""
        return all(part.state == "stored" for part in self.parts)

    def problems(self) -> list[str]:
        """A sentence for each part whose records file disagrees with its offsets."""
        return [
            f"{part.folder / CHUNKS} was changed or cut after it was written"
            for part in self.parts
            if part.state == "mismatch"
        ]

    def close(self) -> None:
        """Release the files."""
        for part in self.parts:
            part.close()


def part_vectors(generation: Path, *, mapped: bool = True) -> list[np.ndarray]:
    """The vectors of each part of a generation (memory-mapped by default)."""
    return [
        np.load(folder / VECTORS, mmap_mode="r" if mapped else None) for folder in parts(generation)
    ]


class VectorRows:
    """The vectors of a generation's parts read as one matrix, each part memory-mapped.

    Slicing reads only the rows asked for; `np.asarray` reads them all.
    """

    def __init__(self, arrays: Sequence[np.ndarray]) -> None:
        self.arrays = list(arrays)
        self._starts = np.cumsum([0, *(len(a) for a in self.arrays)])
        width = self.arrays[0].shape[1] if self.arrays and self.arrays[0].ndim == 2 else 0
        self.shape = (int(self._starts[-1]), int(width))
        self.ndim = min(a.ndim for a in self.arrays) if self.arrays else 2

    @classmethod
    def of(cls, generation: Path) -> VectorRows:
        """The vectors of `generation`, memory-mapped."""
        return cls(part_vectors(generation))

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, rows: int | slice) -> np.ndarray:
        if isinstance(rows, slice):
            start, stop, step = rows.indices(len(self))
            pieces = []
            for array, first in zip(self.arrays, self._starts[:-1], strict=True):
                lo, hi = max(start, int(first)), min(stop, int(first) + len(array))
                if lo < hi:
                    pieces.append(np.asarray(array[lo - first : hi - first]))
            if not pieces:
                return np.zeros((0, self.shape[1]), dtype=np.float32)
            joined = pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
            return joined[::step]
        if rows < 0:
            rows += len(self)
        part = int(np.searchsorted(self._starts, rows, side="right")) - 1
        return np.asarray(self.arrays[part][rows - int(self._starts[part])])

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        joined = self.arrays[0] if len(self.arrays) == 1 else np.concatenate(self.arrays)
        return np.asarray(joined, dtype=dtype)
