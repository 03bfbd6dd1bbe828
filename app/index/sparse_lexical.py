"""BM25 in Qdrant's model: each chunk a sparse vector, the IDF Qdrant's `Modifier.Idf`.

A chunk's lexical text (title + text, `lexical.searchable_text`) becomes Qdrant's `Bm25`
document vector (`qdrant-edge-py`: Qdrant's own tokenizer, English stemmer and stop words;
term-frequency part with k 1.2, b 0.75 and the source's mean length in words, fixed when
the source is first written). A query is Qdrant's `Bm25` query vector (its terms, weight
1) times each term's IDF, ln(1 + (N - n + 0.5) / (n + 0.5)), the formula of Qdrant's IDF
modifier (a test compares the scores with a shard that applies the modifier itself).

- On a Qdrant server (`QDRANT_URL`) the vectors are a named sparse vector of the source's
  collection, beside its dense vector and payload, with `Modifier.IDF`: the server keeps
  the counts and nothing lexical is written or read locally (`prefrag.index.dense`).
- In process a generation's `lexical/` holds a Qdrant Edge shard of the base rows (point
  id = row, written in the staging folder and never changed once published, so any number
  of readers load it) and the document frequency of each term (`frequencies.npy`). Rows
  added since the last full write are the delta part's `sparse.jsonl` (one vector per
  line), scored beside the shard; the IDF of a query's terms counts base and delta
  together, so one add of 12 chunks appends 12 lines and the scores are those of one
  index over every row.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

FORMAT = 3  # `prefrag.index.lexical.FORMAT` of an index in Qdrant's sparse vectors
VECTOR = "bm25"  # the sparse vector's name in a shard or a server collection
DELTA_SPARSE = "sparse.jsonl"  # a delta part's sparse vectors: [[term ids], [weights]] per line
_SHARD = "shard"  # the Qdrant Edge shard inside a generation's `lexical/`
_FREQUENCIES = "frequencies.npy"  # (2, terms) int64: term ids (sorted), documents holding each
_STATS = "prefrag.stats.json"  # mean length in words, documents, format
_BATCH = 1_024
_SEARCH_THREADS = 1  # a sparse query is well under a millisecond: handing it to a pool costs more
_TIE_MARGIN = 16  # extra hits asked of the shard so that tied scores are cut by row


def is_sparse_index(folder: Path) -> bool:
    """Whether a generation's `lexical/` holds Qdrant sparse vectors (not a bm25s index)."""
    return (folder / _SHARD / "edge_config.json").is_file()


def mean_words(texts: Sequence[str]) -> float:
    """The mean length in words of `texts` (Qdrant BM25's `avg_len`; at least 1)."""
    return max(1.0, float(np.mean([len(t.split()) for t in texts]))) if texts else 1.0


def document_embedder(average_length: float) -> Any:
    """Qdrant's BM25 embedder of documents for a source of this mean length."""
    from qdrant_edge import Bm25, Bm25Config

    return Bm25(Bm25Config(avg_len=float(average_length)))


def query_terms(query: str) -> list[int]:
    """The term ids of `query` as Qdrant's BM25 tokenises it (each once)."""
    from qdrant_edge import Bm25

    # A query's vector does not depend on the mean length; the embedder costs ~0.05 ms.
    return list(Bm25().embed_query(query).indices)


def document_vectors(texts: Sequence[str], average_length: float) -> list[Any]:
    """Qdrant's BM25 `SparseVector` of each text."""
    embedder = document_embedder(average_length)
    return [embedder.embed_document(text) for text in texts]


def idf(frequencies: np.ndarray, documents: int) -> np.ndarray:
    """Qdrant's IDF modifier: ln(1 + (N - n + 0.5) / (n + 0.5)) of each term's count n."""
    n = frequencies.astype(np.float64)
    return np.log1p((documents - n + 0.5) / (n + 0.5))


def delta_lines(texts: Sequence[str], average_length: float) -> list[bytes]:
    """One `sparse.jsonl` line per text (its BM25 vector at the base's mean length)."""
    return [
        (json.dumps([list(v.indices), [round(x, 6) for x in v.values]]) + "\n").encode()
        for v in document_vectors(texts, average_length)
    ]


def _frequencies(term_lists: Sequence[Sequence[int]]) -> np.ndarray:
    """(2, terms): sorted term ids and how many documents hold each."""
    flat = [np.asarray(terms, dtype=np.int64) for terms in term_lists if len(terms)]
    if not flat:
        return np.zeros((2, 0), dtype=np.int64)
    ids, counts = np.unique(np.concatenate(flat), return_counts=True)
    return np.stack([ids, counts.astype(np.int64)])


def read_delta(path: Path) -> list[tuple[list[int], list[float]]]:
    """The (term ids, weights) of each row of a delta's `sparse.jsonl`.

    Raises:
        ValueError: A line is not a pair of equally long lists.
    """
    vectors = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            pair = json.loads(line)
            if not (isinstance(pair, list) and len(pair) == 2 and len(pair[0]) == len(pair[1])):
                raise ValueError(f"{path}:{number} is not a sparse vector")
            vectors.append((pair[0], pair[1]))
    return vectors


def _merged(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Two (2, terms) term-count tables added together (term ids sorted)."""
    ids = np.concatenate([first[0], second[0]])
    counts = np.concatenate([first[1], second[1]]).astype(np.int64)
    terms, where = np.unique(ids, return_inverse=True)
    total = np.zeros(len(terms), dtype=np.int64)
    np.add.at(total, where, counts)
    return np.stack([terms.astype(np.int64), total])


def total_words(folder: Path) -> float:
    """The words of every document of a saved index.

    Indexes saved before the total was kept: their mean length times their documents.
    """
    stats = json.loads((folder / _STATS).read_text(encoding="utf-8"))
    words = stats.get("words")
    if isinstance(words, int | float) and not isinstance(words, bool):
        return float(words)
    return float(stats["average_length"]) * int(stats["documents"])


def extend(
    previous: Path,
    rows: Sequence[tuple[Sequence[int], Sequence[float]]],
    folder: Path,
    words: float,
) -> int:
    """Write into `folder` the index saved in `previous` with `rows` appended; its documents.

    `rows` (of `words` words in all) are sparse vectors weighted with `previous`'s mean
    length (`document_vectors`, as `delta_lines` writes them): the
    shard is copied and they are upserted after its points (point id = row), their term
    counts added, and the mean length kept, so this index scores alone exactly as
    `previous` with `rows` as its delta does. Nothing is tokenised again.

    Raises:
        ValueError: `previous` is not a readable sparse index.
    """
    import shutil

    from qdrant_edge import EdgeShard, Point, SparseVector, UpdateOperation

    found = problem(previous)
    if isinstance(found, str):
        raise ValueError(found)
    stats = json.loads((previous / _STATS).read_text(encoding="utf-8"))
    base = int(stats["documents"])
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(previous / _SHARD, folder / _SHARD)
    shard = EdgeShard.load(str(folder / _SHARD))
    try:
        for start in range(0, len(rows), _BATCH):
            points = [
                Point(
                    id=base + row,
                    vector={VECTOR: SparseVector(indices=list(terms), values=list(weights))},
                    payload=None,
                )
                for row, (terms, weights) in enumerate(rows[start : start + _BATCH], start=start)
            ]
            shard.update(UpdateOperation.upsert_points(points))
        shard.optimize()
        shard.flush()
    finally:
        shard.close()
    EdgeShard.load(str(folder / _SHARD)).close()  # settles the files, as `save` does
    counts = _merged(np.load(previous / _FREQUENCIES), _frequencies([t for t, _ in rows]))
    np.save(folder / _FREQUENCIES, counts)
    stats["documents"] = base + len(rows)
    stats["words"] = total_words(previous) + words
    (folder / _STATS).write_text(json.dumps(stats), encoding="utf-8")
    return base + len(rows)


Term = TypeVar("Term", int, str)


def build_postings(
    rows: Iterable[Iterable[tuple[Term, float]]],
) -> dict[Term, tuple[np.ndarray, np.ndarray]]:
    """Per term, (the rows holding it, its value in each) as arrays; row `i` is `rows[i]`.

    The postings of a delta (rows added since the base was written), for both lexical
    formats: `SparseDelta` (term ids, BM25 weights) and `lexical.DeltaTerms` (terms,
    counts).
    """
    rows_of: dict[Term, tuple[list[int], list[float]]] = {}
    for row, pairs in enumerate(rows):
        for term, value in pairs:
            found, values = rows_of.setdefault(term, ([], []))
            found.append(row)
            values.append(value)
    return {
        term: (np.array(found, dtype=np.int64), np.array(values, dtype=np.float32))
        for term, (found, values) in rows_of.items()
    }


class SparseDelta:
    """The sparse vectors of the rows added since the base was written, as postings."""

    def __init__(self, vectors: Sequence[tuple[Sequence[int], Sequence[float]]]) -> None:
        self.size = len(vectors)
        self._postings = build_postings(
            ((int(term), float(weight)) for term, weight in zip(terms, weights, strict=True))
            for terms, weights in vectors
        )

    @classmethod
    def load(cls, path: Path) -> SparseDelta:
        """The delta in `path`.

        Raises:
            ValueError: A line is not a pair of equally long lists.
        """
        return cls(read_delta(path))

    def __len__(self) -> int:
        return self.size

    def frequency(self, term: int) -> int:
        """How many delta rows hold `term`."""
        found = self._postings.get(term)
        return 0 if found is None else len(found[0])

    def postings(self, term: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(rows, weights) of the delta rows holding `term`."""
        return self._postings.get(term)


class SparseLexicalIndex:
    """A generation's BM25 index as Qdrant sparse vectors; document numbers are rows."""

    def __init__(
        self,
        shard: Any,
        frequencies: np.ndarray,
        documents: int,
        average_length: float,
        delta: SparseDelta | None = None,
        vectors: list[Any] | None = None,
    ) -> None:
        self._shard = shard
        self._frequencies = frequencies
        self.base = documents
        self.average_length = average_length
        self.delta = delta
        self._vectors = vectors  # held from `build` until `save` writes them
        self.words = average_length * documents  # the documents' words (exact once built)

    @classmethod
    def build(cls, texts: Sequence[str], average_length: float | None = None) -> SparseLexicalIndex:
        """The index of `texts` (row `i` is document `i`), written by `save`."""
        average = mean_words(texts) if average_length is None else average_length
        vectors = document_vectors(texts, average)
        frequencies = _frequencies([v.indices for v in vectors])
        built = cls(None, frequencies, len(texts), average, vectors=vectors)
        built.words = float(sum(len(t.split()) for t in texts))
        return built

    def save(self, folder: Path) -> None:
        """Write the shard, the term counts and the stats into `folder`."""
        from qdrant_edge import (
            EdgeConfig,
            EdgeShard,
            EdgeSparseVectorParams,
            Point,
            UpdateOperation,
        )

        assert self._vectors is not None, "only a built index is saved"
        folder.mkdir(parents=True, exist_ok=True)
        config = EdgeConfig(
            vectors={},
            sparse_vectors={VECTOR: EdgeSparseVectorParams()},
            # Written once in the staging folder, then read only: no write-ahead log, so
            # any number of processes can load the published shard at once.
            wal_enabled=False,
            max_search_threads=_SEARCH_THREADS,
        )
        shard = EdgeShard.create(str(folder / _SHARD), config)
        try:
            for start in range(0, len(self._vectors), _BATCH):
                points = [
                    Point(id=row, vector={VECTOR: vector}, payload=None)
                    for row, vector in enumerate(self._vectors[start : start + _BATCH], start=start)
                ]
                shard.update(UpdateOperation.upsert_points(points))
            shard.optimize()  # segments indexed now, not by the first reader
            shard.flush()
        finally:
            shard.close()
        # The first load after a build settles the shard's files; later loads change nothing.
        EdgeShard.load(str(folder / _SHARD)).close()
        np.save(folder / _FREQUENCIES, self._frequencies)
        stats = {
            "average_length": self.average_length,
            "documents": self.base,
            "format": FORMAT,
            "words": self.words,
        }
        (folder / _STATS).write_text(json.dumps(stats), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path, delta: Path | None = None) -> SparseLexicalIndex:
        """The index saved in `folder`, with the delta part's `sparse.jsonl` when given.

        Raises:
            ValueError: A file is missing or malformed (see `problem`).
        """
        from qdrant_edge import EdgeShard

        found = problem(folder)
        if isinstance(found, str):
            raise ValueError(found)
        stats = json.loads((folder / _STATS).read_text(encoding="utf-8"))
        frequencies = np.load(folder / _FREQUENCIES)
        shard = EdgeShard.load(str(folder / _SHARD))
        return cls(
            shard,
            frequencies,
            int(stats["documents"]),
            float(stats["average_length"]),
            SparseDelta.load(delta) if delta is not None else None,
        )

    def close(self) -> None:
        """Release the shard."""
        if self._shard is not None:
            self._shard.close()
            self._shard = None

    @property
    def documents(self) -> int:
        """How many documents the index holds (base, then delta)."""
        return self.base + (len(self.delta) if self.delta is not None else 0)

    def weighted_query(self, query: str) -> tuple[list[int], list[float]]:
        """The query's term ids and their IDF over every row (terms no row holds dropped)."""
        terms = query_terms(query)
        if not terms:
            return [], []
        ids = np.asarray(terms, dtype=np.int64)
        known, counts = self._frequencies
        at = np.searchsorted(known, ids)
        hit = at < len(known)
        frequency = np.zeros(len(ids), dtype=np.int64)
        frequency[hit] = np.where(known[at[hit]] == ids[hit], counts[at[hit]], 0)
        if self.delta is not None:
            frequency += np.array([self.delta.frequency(t) for t in terms], dtype=np.int64)
        keep = frequency > 0
        weights = idf(frequency[keep], self.documents)
        return ids[keep].tolist(), weights.tolist()

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Up to `k` (row, BM25 score) pairs, best first; rows sharing no term are left out."""
        k = min(k, self.documents)
        if k <= 0 or not query.strip():
            return []
        terms, weights = self.weighted_query(query)
        if not terms:
            return []
        from qdrant_edge import Query, QueryRequest, SparseVector

        hits: list[tuple[int, float]] = []
        if self.base:
            request = QueryRequest(
                # Qdrant cuts ties at `limit` in no set order: ask past the cut, then
                # break ties by row as every other search here does.
                limit=k + max(k, _TIE_MARGIN),
                query=Query.Nearest(SparseVector(terms, weights), using=VECTOR),
                with_payload=False,
                with_vector=False,
            )
            hits = [(int(p.id), float(p.score)) for p in self._shard.query(request)]
        if self.delta is not None and len(self.delta):
            scores = np.zeros(len(self.delta), dtype=np.float64)
            for term, weight in zip(terms, weights, strict=True):
                found = self.delta.postings(term)
                if found is not None:
                    scores[found[0]] += weight * found[1]
            rows = np.flatnonzero(scores > 0)
            hits.extend((self.base + int(row), float(scores[row])) for row in rows)
        hits = [hit for hit in hits if hit[1] > 0]
        hits.sort(key=lambda hit: (-round(hit[1], 5), hit[0]))
        return hits[:k]


def average_length(folder: Path) -> float | None:
    """The mean length a saved sparse index was built with (None when unreadable)."""
    try:
        return float(json.loads((folder / _STATS).read_text(encoding="utf-8"))["average_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def problem(folder: Path) -> int | str:
    """The documents a saved sparse index holds, or what is wrong with one of its files."""
    where = folder / _STATS
    try:
        stats = json.loads(where.read_text(encoding="utf-8"))
        documents = stats.get("documents") if isinstance(stats, dict) else None
        average = stats.get("average_length") if isinstance(stats, dict) else None
        if not isinstance(documents, int) or isinstance(documents, bool) or documents < 0:
            raise ValueError("no document count")
        if not isinstance(average, int | float) or not math.isfinite(average) or average <= 0:
            raise ValueError("no mean length")
        where = folder / _FREQUENCIES
        frequencies = np.load(where)
        if frequencies.ndim != 2 or frequencies.shape[0] != 2 or frequencies.dtype.kind != "i":
            raise ValueError("not two rows of term ids and counts")
        if frequencies.shape[1] and (
            bool(np.any(np.diff(frequencies[0]) <= 0))
            or int(frequencies[1].min()) < 1
            or int(frequencies[1].max()) > documents
        ):
            raise ValueError("its term counts are out of order or range")
        where = folder / _SHARD / "edge_config.json"
        json.loads(where.read_text(encoding="utf-8"))
    except (OSError, ValueError, EOFError, KeyError, TypeError) as error:
        text = " ".join(str(error).split())[:160] or type(error).__name__
        return f"{where} cannot be read ({text})"
    return documents


def delta_problem(path: Path) -> int | str:
    """The rows a delta's `sparse.jsonl` holds, or what is wrong with it."""
    try:
        return len(SparseDelta.load(path))
    except (OSError, ValueError, TypeError) as error:
        text = " ".join(str(error).split())[:160] or type(error).__name__
        return f"{path} cannot be read ({text})"
