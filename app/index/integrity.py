"""Integrity of a local source on disk: is the manifest sound, do its parts agree?

A generation is sound when `chunks.jsonl` parses, `vectors.npy` loads with one row per
record and the manifest's dimension, and the bm25s index counts the same documents (the
embedded Qdrant store of record too, when `check_source(..., qdrant=True)` opens it). A
damaged source is reported with one sentence naming the source, the file and the fix; it
never stops other sources from being used. `prefrag index FILES --source NAME` rebuilds a
damaged source from the files it is given.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from prefrag.errors import DamagedStoreError, IngestError
from prefrag.index import docstore
from prefrag.jsonl import iter_jsonl

if TYPE_CHECKING:
    from prefrag.config import Settings


@dataclass
class StoreCheck:
    """What `check_source` found: the problems (empty when sound) and the counts seen."""

    name: str
    problems: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    kind: str = "text"
    unchecked: list[str] = field(default_factory=list)  # parts that could not be looked at

    @property
    def sound(self) -> bool:
        """True when nothing is wrong."""
        return not self.problems

    def error(self) -> DamagedStoreError:
        """The one-sentence error a user sees for this damaged source."""
        problem = "; ".join(self.problems)
        if self.kind == "graph":
            return DamagedStoreError(docstore.graph_damage_message(self.name, problem), problem)
        return DamagedStoreError(docstore.damage_message(self.name, problem), problem)


def check_graph(name: str, settings: Settings) -> StoreCheck:
    """Check graph source `name`: SQLite's own check, then every table the lookup reads."""
    import sqlite3

    from prefrag.index.graph_store import graph_path

    check = StoreCheck(name, kind="graph")
    path = graph_path(name, settings)
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            verdict = connection.execute("PRAGMA quick_check").fetchone()[0]
            if verdict != "ok":
                check.problems.append(f"{path} fails SQLite's check ({_short(verdict)})")
            for table in ("triples", "concepts", "names", "names_fts", "definitions"):
                rows = connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                check.counts[table] = int(rows)
            check.counts["relations"] = int(
                connection.execute("SELECT COUNT(*) FROM relations").fetchone()[0]
            )
        finally:
            connection.close()
    except sqlite3.DatabaseError as error:
        check.problems.append(f"{path} cannot be read ({_short(error)})")
    if check.sound and check.counts.get("triples") and not check.counts.get("concepts"):
        check.problems.append(f"{path} holds triples but no concepts")
    return check


def check_generation(
    folder: Path,
    manifest: docstore.Manifest,
    *,
    thorough: bool = False,
    line_ends: bool = False,
) -> StoreCheck:
    """Check the generation `manifest` points at: records = vectors = lexical documents.

    Each part's records are counted from its offsets file, whose last offset must be the
    size of its `chunks.jsonl` (a cut or changed file shows without reading it). With
    `line_ends`, every line must also start a JSON object where its offset says and end
    one before a newline (one vectorised look at two bytes per line: a line cut, merged
    or overwritten across its ends shows without parsing it); with `thorough`, and for
    generations written before offsets files, every line is parsed.
    """
    from prefrag.index.rows import DELTA, parts

    check = StoreCheck(manifest.name or folder.name)
    generation = folder / manifest.generation
    if manifest.records_store == "collection" and generation.is_dir():
        return check  # every chunk lives in the server's collection (`check_source`)
    if not generation.is_dir():
        check.problems.append(f"{generation} is missing")
        return check
    total_records: int | None = 0
    total_vectors = 0
    lexical_total: int | None = 0
    for part in parts(generation):
        records = _count_part_records(part, check, thorough, line_ends)
        vectors = _vector_shape(part / docstore.VECTORS, check)
        if manifest.lexical_store == "collection":
            lexical = None  # on the Qdrant server: counted with its points (`qdrant`)
        elif part == generation:
            lexical = _lexical_documents(generation / docstore.LEXICAL, check)
        else:
            lexical = _delta_terms(part, check)
        if records is None or total_records is None:
            total_records = None
        else:
            total_records += records
        if vectors is not None:
            rows, dimension = vectors
            total_vectors += rows
            if records is not None and rows != records:
                check.problems.append(
                    f"{part / docstore.VECTORS} has {rows} vectors for {records} records"
                )
            if dimension != manifest.dimension:
                check.problems.append(
                    f"{part / docstore.VECTORS} holds {dimension}-d vectors, "
                    f"the manifest says {manifest.dimension}"
                )
        if lexical is not None and records is not None and lexical != records:
            where = generation / docstore.LEXICAL if part == generation else part / DELTA
            check.problems.append(f"{where} indexes {lexical} documents for {records} records")
        if lexical is None or lexical_total is None:
            lexical_total = None
        else:
            lexical_total += lexical
    if total_records is not None:
        check.counts["records"] = total_records
        if total_records != manifest.chunks:
            chunks = generation / docstore.CHUNKS
            check.problems.append(
                f"{chunks} has {total_records} records, the manifest {manifest.chunks}"
            )
    check.counts["vectors"] = total_vectors
    if lexical_total is not None:
        check.counts["lexical"] = lexical_total
    return check


def _count_part_records(
    part: Path, check: StoreCheck, thorough: bool, line_ends: bool
) -> int | None:
    from prefrag.index.rows import misplaced_line, part_offsets

    path = part / docstore.CHUNKS
    try:
        offsets, state = part_offsets(part)
    except OSError as error:
        check.problems.append(f"{path} cannot be read ({_short(error)})")
        return None
    if state == "mismatch":
        check.problems.append(f"{path} was changed or cut after it was written")
        return None
    if state == "stored" and not thorough:
        row = misplaced_line(part, offsets) if line_ends else None
        if row is not None:
            check.problems.append(f"{path}: line {row + 1} is not where its offsets say")
            return None
        return len(offsets) - 1
    return _count_records(path, check)


def _delta_terms(part: Path, check: StoreCheck) -> int | None:
    from prefrag.index.lexical import DELTA_TERMS
    from prefrag.index.sparse_lexical import DELTA_SPARSE, delta_problem

    if (part / DELTA_SPARSE).is_file():
        rows = delta_problem(part / DELTA_SPARSE)
        if isinstance(rows, str):
            check.problems.append(rows)
            return None
        return rows
    path = part / DELTA_TERMS
    try:
        with path.open(encoding="utf-8") as handle:
            lines = 0
            for line in handle:
                if not isinstance(json.loads(line), list):
                    raise ValueError(f"line {lines + 1} is not a list of terms")
                lines += 1
        return lines
    except (OSError, ValueError) as error:
        check.problems.append(f"{path} cannot be read ({_short(error)})")
        return None


def check_source(
    name: str, settings: Settings, *, qdrant: bool = False, thorough: bool = False
) -> StoreCheck:
    """Check local source `name`; with `qdrant`, also count its Qdrant server's points.

    Records are checked by their offsets and line ends (`check_generation`), not parsed;
    `thorough` parses every one.
    """
    folder = settings.sources_dir / name
    try:
        manifest = docstore.read_manifest(folder)
    except DamagedStoreError as error:
        return StoreCheck(name, [error.problem])
    if manifest is None:
        return StoreCheck(name, [f"{folder / docstore.MANIFEST} is missing"])
    check = check_generation(folder, manifest, thorough=thorough, line_ends=True)
    on_server = manifest.records_store == "collection"
    if on_server and settings.qdrant_url is None:
        check.unchecked.append(
            "its chunks live in its Qdrant server collection, not checked without QDRANT_URL"
        )
    elif qdrant and check.sound and settings.qdrant_url is None:
        where = folder / docstore.QDRANT
        if where.exists():
            check.unchecked.append(
                f"it still holds the second copy earlier versions kept ({where}); the next "
                f"`prefrag index ... --source {name}` removes it"
            )
    elif qdrant and check.sound and not on_server and manifest.lexical_store != "collection":
        check.unchecked.append(
            "it is indexed on this machine; the next `prefrag index ... --source "
            f"{name}` with QDRANT_URL set moves it into its Qdrant server collection"
        )
    elif qdrant and check.sound:
        from prefrag.index.dense import QdrantStore

        try:
            with QdrantStore(name, folder / docstore.QDRANT, settings) as store:
                points = store.count()
        except Exception as error:  # a lost server, a malformed reply...
            check.problems.append(f"its Qdrant store cannot be read ({_short(error)})")
        else:
            check.counts["qdrant"] = points
            if points != manifest.chunks:
                check.problems.append(
                    f"its Qdrant store holds {points} points for {manifest.chunks} records"
                )
    return check


def verify_before_publishing(
    folder: Path, records: int, vectors: np.ndarray, lexical_documents: int
) -> None:
    """Refuse to publish a generation whose parts disagree (nothing is swapped in).

    Raises:
        DamagedStoreError: The counts differ; the message says which.
    """
    problems = []
    if len(vectors) != records:
        problems.append(f"{len(vectors)} vectors for {records} records")
    if lexical_documents != records:
        problems.append(f"a lexical index of {lexical_documents} documents for {records} records")
    if problems:
        raise DamagedStoreError(
            f"Refusing to write a misaligned index into {folder} ({'; '.join(problems)}); "
            "the current index is unchanged."
        )


def _count_records(path: Path, check: StoreCheck) -> int | None:
    try:
        count = 0
        for number, record in iter_jsonl(path):
            if not isinstance(record, dict) or "id" not in record or "text" not in record:
                raise ValueError(f"line {number} is not a chunk record")
            count += 1
        return count
    except (OSError, IngestError, ValueError) as error:
        check.problems.append(f"{path} cannot be read ({_short(error)})")
        return None


def _vector_shape(path: Path, check: StoreCheck) -> tuple[int, int] | None:
    try:
        vectors = np.load(path, mmap_mode="r")
    except (OSError, ValueError, EOFError) as error:
        check.problems.append(f"{path} cannot be read ({_short(error)})")
        return None
    if vectors.ndim != 2:
        check.problems.append(f"{path} is not a matrix of vectors")
        return None
    return int(vectors.shape[0]), int(vectors.shape[1])


def _lexical_documents(path: Path, check: StoreCheck) -> int | None:
    problem = lexical_problem(path)
    if isinstance(problem, str):
        check.problems.append(problem)
        return None
    return problem


LEXICAL_FILES = (
    "params.index.json",
    "vocab.index.json",
    "data.csc.index.npy",
    "indices.csc.index.npy",
    "indptr.csc.index.npy",
)


def lexical_problem(path: Path) -> int | str:
    """The documents a saved lexical index holds, or what is wrong with one of its files.

    Every file is read and the parts are checked against each other (for bm25s: word
    ids within the score matrix, document numbers within `num_docs`), so an index that
    would fail at the first query fails here instead.
    """
    from prefrag.index import sparse_lexical

    if sparse_lexical.is_sparse_index(path):
        return sparse_lexical.problem(path)
    where = path / LEXICAL_FILES[0]
    try:
        params = json.loads(where.read_text(encoding="utf-8"))
        documents = params.get("num_docs") if isinstance(params, dict) else None
        if not isinstance(documents, int) or isinstance(documents, bool) or documents < 0:
            raise ValueError("no document count 'num_docs'")
        where = path / LEXICAL_FILES[1]
        vocab = json.loads(where.read_text(encoding="utf-8"))
        if not isinstance(vocab, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in vocab.values()
        ):
            raise ValueError("not a map of words to ids")
        arrays = []
        for name in LEXICAL_FILES[2:]:
            where = path / name
            array = np.load(where, mmap_mode="r")
            if array.ndim != 1 or array.dtype.kind not in "iuf":
                raise ValueError("not a flat numeric array")
            arrays.append(array)
        data, indices, indptr = arrays
        where = path
        if len(indptr) == 0 or len(data) != len(indices) or int(indptr[-1]) != len(data):
            raise ValueError("its score matrix parts disagree in length")
        if len(indptr) > 1 and bool(np.any(np.diff(indptr) < 0)):
            raise ValueError("its score matrix offsets are not ordered")
        if len(indices) and (int(indices.min()) < 0 or int(indices.max()) >= documents):
            raise ValueError(f"it names documents outside 0..{documents - 1}")
        if vocab and (min(vocab.values()) < 0 or max(vocab.values()) >= len(indptr)):
            raise ValueError("its vocabulary names words outside the score matrix")
    except (OSError, ValueError, EOFError, KeyError, TypeError) as error:
        return f"{where} cannot be read ({_short(error)})"
    return documents


def _short(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return (text[:160] + "…" if len(text) > 160 else text) or type(error).__name__


def describe(check: StoreCheck) -> dict[str, Any]:
    """A JSON-able summary of a check (for `prefrag sources check --json` and tests)."""
    return {
        "name": check.name,
        "kind": check.kind,
        "sound": check.sound,
        "problems": check.problems,
        "unchecked": check.unchecked,
        **check.counts,
    }
