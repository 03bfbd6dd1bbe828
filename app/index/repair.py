"""What a local source still holds before a write, and how its damaged parts are rebuilt.

`prefrag index` never drops a record the user did not ask to drop. Before it adds new
chunks it salvages the current contents of the source:

- a lost or unreadable `manifest.json` is rebuilt from the newest generation folder;
- records lost from `chunks.jsonl` (cut short, garbage lines) are restored from the files
  being indexed when they hold every lost chunk: the generation's keys file
  (`chunks.keys.npy`, a key of each row's chunk id) names the lost chunks without their
  records (`Salvage.restore_lost`). A Qdrant store that keeps the records as payload (a
  server's collection, or the store of record an earlier version kept in `qdrant/`)
  restores them itself when it can name exactly the lost ones;
- vectors that are missing, cut short or unreadable are taken from such a store by chunk
  id when there is one, and the other chunks are embedded again (`Salvage.to_embed`);
- the lexical index (and a server's collection) is rebuilt from the salvaged records.

When records are lost and nothing restores them, `RecordsLostError` refuses the write and
says how to rebuild the source from its files (`prefrag index ... --rebuild`).
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from prefrag.errors import DamagedStoreError
from prefrag.index import docstore

if TYPE_CHECKING:
    from prefrag.config import Settings
    from prefrag.index.dense import PointStore

logger = logging.getLogger(__name__)

_ID = re.compile(rb'"id":\s*"([^"\\]{1,200})"')


class RecordsLostError(DamagedStoreError):
    """Records of a source are unreadable and its Qdrant store cannot restore them."""


@dataclass
class Salvage:
    """The contents a write starts from.

    Attributes:
        manifest: The sound (or rebuilt) manifest; None for a source never indexed.
        records: Every chunk record kept, in row order.
        vectors: One vector per record when all are known, else None.
        recovered: Vectors taken back from Qdrant, by chunk id (when `vectors` is None).
        problems: What was damaged (empty when the source is sound).
        repairs: What the salvage did about it, in words for the report.
        lost: Records lost that no store restored (the files indexed must hold them).
        lost_keys: The keys of the lost chunks' ids, when the keys file names them.
        lost_message: Why the write is refused when the files do not hold them.
    """

    manifest: docstore.Manifest | None
    records: list[dict[str, Any]] = field(default_factory=list)
    vectors: np.ndarray | None = None
    recovered: dict[str, np.ndarray] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    lost: int = 0
    lost_keys: np.ndarray | None = None
    lost_message: str = ""

    @property
    def damaged(self) -> bool:
        """True when some part had to be rebuilt."""
        return bool(self.problems)

    def restore_lost(self, new_records: Sequence[dict[str, Any]]) -> int:
        """Check that the chunks being indexed hold every lost record; how many they restore.

        Raises:
            RecordsLostError: Records are lost and `new_records` lack some of them (or
                the keys file cannot name them); nothing has been written.
        """
        if not self.lost:
            return 0
        if self.lost_keys is not None:
            from prefrag.index.rows import id_keys

            given = {tuple(key) for key in id_keys(r["id"] for r in new_records).tolist()}
            if all(tuple(key) in given for key in self.lost_keys.tolist()):
                self.repairs.append(f"restored {self.lost} lost records from the files given")
                return self.lost
        raise RecordsLostError(self.lost_message)

    def to_embed(self) -> list[int]:
        """Rows of `records` whose vectors are lost (to embed again)."""
        if self.vectors is not None:
            return []
        recovered = self.recovered
        return [row for row, record in enumerate(self.records) if record["id"] not in recovered]


def salvage(folder: Path, source: str, store: PointStore | None, settings: Settings) -> Salvage:
    """What source `source` in `folder` still holds, with damaged parts marked for rebuilding.

    `store` is a Qdrant store holding the records as payload (a server's collection, or
    the store of record an earlier version kept), else None. Records lost that it does
    not restore are counted in `Salvage.lost`: the caller checks that the files being
    indexed hold them (`Salvage.restore_lost`) before writing anything.
    """
    from prefrag.index.integrity import check_generation

    problems: list[str] = []
    try:
        manifest = docstore.read_manifest(folder)
    except DamagedStoreError as error:
        manifest = None
        problems.append(error.problem)
    generation: Path | None = None
    if manifest is not None:
        check = check_generation(folder, manifest)
        current = folder / manifest.generation
        if check.sound:
            from prefrag.index.rows import Records, VectorRows

            # Read lazily: an add to a large source parses none of its records.
            return Salvage(manifest, Records(current), VectorRows.of(current))  # type: ignore[arg-type]
        problems.extend(check.problems)
        generation = current if current.is_dir() else newest_generation(folder)
    else:
        generation = newest_generation(folder)
        if generation is not None and not problems:
            problems.append(f"{folder / docstore.MANIFEST} is missing")
    if generation is None and not problems:
        return Salvage(None)  # a new source
    result = Salvage(manifest, problems=problems)
    rows, line_count = _salvage_records(result, generation, store, source)
    _salvage_vectors(result, generation, store, rows, line_count)
    if result.manifest is None and result.records:
        result.manifest = _rebuilt_manifest(source, result, generation, settings)
        result.repairs.append(f"rebuilt its manifest from {generation}")
    return result


def newest_generation(folder: Path) -> Path | None:
    """The highest generation of `folder` that holds chunk records (None if none does)."""
    generations = [p for p in folder.glob("gen-*") if (p / docstore.CHUNKS).is_file()]
    return max(generations, key=lambda p: p.name, default=None)


def _read_lines(generation: Path) -> tuple[list[tuple[int, dict[str, Any]]], list[bytes], int]:
    """(row, record) of each readable line of every part, the unreadable lines, the rows."""
    from prefrag.index.rows import parts

    good: list[tuple[int, dict[str, Any]]] = []
    bad: list[bytes] = []
    raw = b""
    for part in parts(generation):
        try:
            data = (part / docstore.CHUNKS).read_bytes()
        except OSError:
            continue
        raw += data if not raw or raw.endswith(b"\n") else b"\n" + data
    if not raw:
        return good, bad, 0
    rows = 0
    for line in raw.split(b"\n"):
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8"))
        except ValueError:
            record = None
        if isinstance(record, dict) and isinstance(record.get("id"), str) and "text" in record:
            good.append((rows, record))
        else:
            bad.append(line)
        rows += 1
    return good, bad, rows


def _salvage_records(
    result: Salvage, generation: Path | None, store: PointStore | None, source: str
) -> tuple[dict[str, int], int]:
    """Keep every readable record and restore lost ones; (row of each kept id, lines)."""
    good, bad, rows = _read_lines(generation) if generation else ([], [], 0)
    result.records = [record for _, record in good]
    kept = {record["id"]: row for row, record in good}
    expected = result.manifest.chunks if result.manifest is not None else None
    if expected is None:
        expected = rows if generation is not None else None
    lost = None if expected is None else expected - len(good)
    if lost is not None and lost <= 0:
        return kept, rows
    known = {record["id"] for record in result.records}
    try:
        pool = {
            point_id: (payload, vector)
            for point_id, payload, vector in (store.points() if store is not None else [])
            if point_id not in known and isinstance(payload.get("text"), str)
        }
    except Exception as error:  # an unreadable store restores nothing
        logger.warning("Qdrant store of '%s' unreadable (%s).", source, error)
        pool = {}
    named = [m.group(1).decode("utf-8", "replace") for line in bad if (m := _ID.search(line))]
    if lost is None:
        chosen = list(pool)  # no generation left: Qdrant is all the source holds
    elif len(named) == lost and all(i in pool for i in named):
        chosen = named
    elif len(pool) == lost:
        chosen = list(pool)
    else:
        result.lost = lost
        result.lost_message = _lost_message(source, lost, expected or 0, result.problems)
        if generation is not None:
            result.lost_keys = _lost_keys(generation, list(known), lost)
        return kept, rows
    for point_id in chosen:
        payload, vector = pool[point_id]
        result.records.append({**payload, "id": point_id})
        if vector is not None:
            result.recovered[point_id] = vector
    if chosen:
        result.repairs.append(f"restored {len(chosen)} lost records from its Qdrant store")
    return kept, rows


def _stored_keys(generation: Path) -> np.ndarray | None:
    """The key of each row's chunk id from the keys files of every part (None: unreadable)."""
    from prefrag.index.rows import KEYS, parts

    stored = []
    for part in parts(generation):
        try:
            keys = np.load(part / KEYS)
        except (OSError, ValueError, EOFError):
            return None
        if keys.ndim != 2 or keys.shape[1] != 4 or keys.dtype != np.dtype("<u8"):
            return None
        stored.append(keys[:, :2])
    return np.vstack(stored) if stored else None


def _lost_keys(generation: Path, kept_ids: list[str], lost: int) -> np.ndarray | None:
    """The keys of the `lost` chunk ids the keys files list beyond `kept_ids` (else None)."""
    from prefrag.index.rows import id_keys

    stored = _stored_keys(generation)
    if stored is None:
        return None
    kept = {tuple(key) for key in id_keys(kept_ids).tolist()}
    missing = {tuple(key) for key in stored.tolist()} - kept
    if len(missing) != lost:
        return None
    return np.array(sorted(missing), dtype=np.uint64).reshape(-1, 2)


def _lost_message(source: str, lost: int, expected: int, problems: list[str]) -> str:
    return (
        f"Source '{source}' lost {lost} of its {expected} records "
        f"({'; '.join(problems)}) and the files given do not hold them all; nothing was "
        f"changed. Index every file it was built from again (`prefrag index FILES --source "
        f"{source}` restores them), rebuild it from files with `prefrag index FILES "
        f"--source {source} --rebuild` (the source then holds exactly FILES), or delete it "
        f"with `prefrag sources remove {source}`."
    )


def _salvage_vectors(
    result: Salvage,
    generation: Path | None,
    store: PointStore | None,
    rows: dict[str, int],
    line_count: int,
) -> None:
    """Vectors of the kept records: their own rows when aligned, else Qdrant's by id."""
    dimension = result.manifest.dimension if result.manifest is not None else None
    vectors = None
    if generation is not None:
        try:
            vectors = docstore.load_vectors(generation)
        except (OSError, ValueError, EOFError):
            vectors = None
    if (
        vectors is not None
        and vectors.ndim == 2
        and len(vectors) == line_count
        and dimension in (None, vectors.shape[1])
    ):
        # Rows still line up with the lines of chunks.jsonl, even around a garbage line.
        for record in result.records:
            row = rows.get(record["id"])
            if row is not None:
                result.recovered[record["id"]] = np.asarray(vectors[row], dtype=np.float32)
        if len(result.recovered) == len(result.records) and list(rows.values()) == list(
            range(len(result.records))
        ):
            # (Lines lost at the end leave vectors past the kept rows: not theirs.)
            result.vectors = np.asarray(vectors[: len(result.records)], dtype=np.float32)
            result.recovered = {}
            return
    wanted = [r["id"] for r in result.records if r["id"] not in result.recovered]
    if wanted and generation is not None and vectors is not None and vectors.ndim == 2:
        # Rows no longer line up with the lines (records lost): the keys file says which
        # row each kept chunk had, so its vector is kept rather than embedded again.
        _vectors_by_key(result, generation, vectors, wanted, dimension)
        wanted = [r["id"] for r in result.records if r["id"] not in result.recovered]
    taken = 0
    if wanted and store is not None:
        try:
            for point_id, _, vector in store.points(wanted, with_payload=False):
                if vector is not None and dimension in (None, len(vector)):
                    result.recovered[point_id] = vector
                    taken += 1
        except Exception as error:  # an unreadable store: embed again instead
            logger.warning("Qdrant vectors unreadable (%s); embedding again.", error)
    if len(result.recovered) == len(result.records) and result.records:
        result.vectors = np.vstack([result.recovered[r["id"]] for r in result.records])
        result.recovered = {}
    if taken:
        result.repairs.append("took its vectors back from its Qdrant store")
    again = len(result.to_embed())
    if again:
        result.repairs.append(f"embedded {again} chunks again whose vectors were lost")


def _vectors_by_key(
    result: Salvage,
    generation: Path,
    vectors: np.ndarray,
    wanted: list[str],
    dimension: int | None,
) -> None:
    """Take the vectors of chunk ids `wanted` from the rows the keys file gives them."""
    from prefrag.index.rows import KeyIndex

    keys = _stored_keys(generation)
    if keys is None or len(keys) != len(vectors) or dimension not in (None, vectors.shape[1]):
        return
    for chunk_id, row in zip(wanted, KeyIndex(keys).rows(wanted).tolist(), strict=True):
        if row >= 0:
            result.recovered[chunk_id] = np.asarray(vectors[row], dtype=np.float32)


def _rebuilt_manifest(
    source: str, result: Salvage, generation: Path | None, settings: Settings
) -> docstore.Manifest:
    from prefrag.index.dense import collection_name

    authorities = Counter(
        float(r["authority"]) for r in result.records if isinstance(r.get("authority"), int | float)
    )
    authority = authorities.most_common(1)[0][0] if authorities else docstore.DEFAULT_AUTHORITY
    dimension = int(result.vectors.shape[1]) if result.vectors is not None else 0
    return docstore.Manifest(
        name=source,
        generation=generation.name if generation is not None else "gen-000000",
        documents=len({r.get("parent_id") for r in result.records}),
        chunks=len(result.records),
        dimension=dimension,
        embedding_model=settings.embedding_model,
        authority=authority,
        chunk_size=settings.chunk_size,
        chunk_overlap=settings.chunk_overlap,
        chunk_unit="tokens",  # what `prefrag index` builds new sources with
        collection=collection_name(source),
        embedding_precision=_salvaged_precision(result, settings),
    )


def _salvaged_precision(result: Salvage, settings: Settings) -> str:
    """The precision the salvaged vectors were embedded at: the one that gives them again.

    With the manifest lost, one kept chunk is embedded at both precisions and the closer
    vector names it, so later adds and queries do not mix precisions. Without any kept
    vector everything is embedded again, at the settings' precision.
    """
    from prefrag.errors import ConfigurationError
    from prefrag.index.embeddings import get_embedder, with_precision

    kept = next(
        (
            (record["text"], vector)
            for row, record in enumerate(result.records)
            if (vector := _kept_vector(result, row, record["id"])) is not None
        ),
        None,
    )
    if kept is None:
        return settings.embedding_precision
    text, vector = kept

    def distance(precision: str) -> float:
        embedder = get_embedder(with_precision(settings, precision))
        return float(np.abs(embedder.encode([text])[0] - vector).max())

    fp32 = distance("fp32")
    try:
        int8 = distance("int8")
    except ConfigurationError:
        # No ONNX Runtime: fp32 unless fp32 does not give the vector back (float16 weights
        # move a coordinate by at most ~3e-4, int8 by ~1e-2).
        int8 = 2e-3
    return "int8" if int8 < fp32 else "fp32"


def _kept_vector(result: Salvage, row: int, chunk_id: str) -> np.ndarray | None:
    if result.vectors is not None:
        return np.asarray(result.vectors[row])
    return result.recovered.get(chunk_id)
