"""BM25 lexical search over chunk titles and texts with bm25s and an English Snowball stemmer.

Each chunk is indexed as its title followed by its text (the PrefRAG authors' BM25 ranks
title + content too), so a query naming a document's subject finds its chunks even when the
text never repeats the name. Stores written before titles were indexed keep working with
their text-only index until the next `prefrag index` rebuilds it (`FORMAT`).

An add to a large source does not rebuild the index: the new chunks' tokens go to a small
delta (`DeltaTerms`, a generation's `delta/terms.jsonl`) searched together with the main
index under one global IDF. bm25s stores each (term, chunk) score as idf(term) x tf part;
a search with a delta rescales the main index's scores of each query term to the IDF of
the whole source (main + delta document counts and frequencies) and scores the delta's
chunks with the same IDF and the main index's average length. Only the average length
differs from a rebuild (the delta's chunks do not move it), until the next full write.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from prefrag.shared import shared

# What a source's lexical index is: 1 = bm25s over chunk texts only (early stores), 2 =
# bm25s over title + text (this module; still read), 3 = title + text as Qdrant BM25 sparse
# vectors (`prefrag.index.sparse_lexical`, what `prefrag index` writes).
FORMAT = 3
_STOPWORDS = "en"
# bm25s' default token pattern; queries are split exactly as the corpus was.
_WORDS = re.compile(r"(?u)\b\w\w+\b").findall
DELTA_TERMS = "terms.jsonl"  # a delta part's tokens: one JSON list of terms per chunk
_STATS = "prefrag.stats.json"  # what bm25s does not save: the average document length


def _stemmer() -> Any:
    """This thread's Snowball stemmer (`prefrag.shared`: PyStemmer's are not thread-safe)."""
    return shared().stemmer()


def tokenize(texts: Sequence[str], stemmer: Any = None) -> list[list[str]]:
    """Lower-cased, stop-word-free, stemmed tokens of each text (bm25s' own tokenizer)."""
    import bm25s

    return bm25s.tokenize(
        list(texts),
        stopwords=_STOPWORDS,
        stemmer=stemmer or _stemmer(),
        return_ids=False,
        show_progress=False,
    )


# bm25s' English stop words (`bm25s.stopwords.STOPWORDS_EN`), here so that tokenizing an
# add's few chunks does not import bm25s (and scipy); a test keeps the two equal.
STOPWORDS_EN = (
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with",
)  # fmt: skip


def terms(texts: Sequence[str]) -> list[list[str]]:
    """The tokens `tokenize` gives each text, without importing bm25s (for a delta part)."""
    stemmer = _stemmer()
    stopwords = frozenset(STOPWORDS_EN)
    tokens = []
    for text in texts:
        words = [w for w in _WORDS(text.lower()) if w not in stopwords]
        tokens.append(stemmer.stemWords(words) if words else [])
    return tokens


def searchable_text(title: str | None, text: str) -> str:
    """What the lexical index holds for one chunk: its title, then its text."""
    title = (title or "").strip()
    return f"{title}\n{text}" if title else text


def record_texts(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """`searchable_text` of every stored chunk record, in row order."""
    return [searchable_text(record.get("title"), record["text"]) for record in records]


class LexicalIndex:
    """A bm25s index whose document numbers are the store's chunk rows."""

    def __init__(
        self,
        retriever: Any,
        size: int,
        average_length: float | None = None,
        delta: DeltaTerms | None = None,
    ) -> None:
        self._retriever = retriever
        self._stopwords = frozenset(STOPWORDS_EN)
        self.average_length = average_length
        self.delta = delta
        self.size = size

    def query_terms(self, query: str) -> list[str]:
        """The stemmed terms of `query`, as `tokenize` would give them."""
        words = [w for w in _WORDS(query.lower()) if w not in self._stopwords]
        return _stemmer().stemWords(words) if words else []

    @classmethod
    def build(cls, texts: Sequence[str], *, method: str = "lucene") -> LexicalIndex:
        """Index `texts`; row `i` of the store is document `i` here.

        Pass `record_texts(records)` to index a store's chunks with their titles.
        """
        import bm25s

        stemmer = _stemmer()
        tokens = bm25s.tokenize(
            list(texts), stopwords=_STOPWORDS, stemmer=stemmer, show_progress=False
        )
        retriever = bm25s.BM25(method=method)
        retriever.index(tokens, show_progress=False)
        lengths = [len(ids) for ids in tokens.ids]
        average = float(np.mean(lengths)) if lengths else None
        return cls(retriever, len(texts), average)

    @classmethod
    def load(cls, folder: Path, size: int, delta: Path | None = None) -> LexicalIndex:
        """The index saved in `folder` (for a store of `size` chunks in all).

        `delta`, when given, is a delta part's `terms.jsonl` searched with it. The score
        arrays are memory-mapped, so opening reads only the vocabulary.
        """
        import bm25s

        retriever = bm25s.BM25.load(str(folder), show_progress=False, mmap=True)
        return cls(
            retriever,
            size,
            _read_average_length(folder),
            DeltaTerms.load(delta) if delta is not None else None,
        )

    def save(self, folder: Path) -> None:
        """Write the index into `folder`."""
        self._retriever.save(str(folder), show_progress=False)
        if self.average_length is not None:
            stats = {"average_length": self.average_length}
            (folder / _STATS).write_text(json.dumps(stats), encoding="utf-8")

    @property
    def appendable(self) -> bool:
        """Whether new chunks can go to a delta (a lucene index that knows its mean length)."""
        params = getattr(self._retriever, "method", None)
        return self.average_length is not None and params == "lucene"

    @property
    def documents(self) -> int:
        """How many documents the index holds (the bm25s index's, then its delta's)."""
        main = int(self._retriever.scores["num_docs"])
        return main + (len(self.delta) if self.delta is not None else 0)

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Up to `k` (row, score) pairs, best first; rows sharing no term are left out.

        bm25s' `retrieve` raises when `k` exceeds the corpus and pads results with score-0
        rows for unknown words, so `k` is clipped and zero scores are dropped here too.
        """
        k = min(k, self.size)
        if k <= 0 or not query.strip():
            return []
        if self.delta is not None and len(self.delta):
            scores = self._scores_with_delta(self.query_terms(query))
        else:
            # Scoring straight from term ids skips `retrieve`'s per-call threads and
            # progress bars, which cost more than the scoring itself at this size.
            ids = self._retriever.get_tokens_ids(self.query_terms(query))
            if not ids:
                return []
            scores = self._retriever.get_scores_from_ids(ids)
        if not len(scores):
            return []
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.lexsort((top, -scores[top]))]
        return [(int(row), float(scores[row])) for row in top if scores[row] > 0]

    def _scores_with_delta(self, terms: Sequence[str]) -> np.ndarray:
        """BM25 scores of every row (main index, then delta) under the source's global IDF."""
        assert self.delta is not None and self.average_length is not None
        retriever = self._retriever
        data, indices, indptr = (retriever.scores[key] for key in ("data", "indices", "indptr"))
        main = int(retriever.scores["num_docs"])
        documents = main + len(self.delta)
        k1, b = float(retriever.k1), float(retriever.b)
        scores = np.zeros(documents, dtype=np.float32)
        for term in terms:
            token = retriever.vocab_dict.get(term)
            start, end = (0, 0) if token is None else (int(indptr[token]), int(indptr[token + 1]))
            rows, counts = self.delta.postings(term)
            frequency = (end - start) + len(rows)
            if frequency == 0:
                continue
            idf = _lucene_idf(frequency, documents)
            if end > start:  # the stored scores carry the main index's own IDF: rescale
                rescale = idf / _lucene_idf(end - start, main)
                scores[indices[start:end]] += data[start:end] * rescale
            if len(rows):
                lengths = self.delta.lengths[rows]
                norm = k1 * ((1 - b) + b * lengths / self.average_length)
                scores[main + rows] += idf * counts / (norm + counts)
        return scores


def _lucene_idf(frequency: int, documents: int) -> float:
    """bm25s' Lucene IDF of a term found in `frequency` of `documents` documents."""
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


def average_length(folder: Path) -> float | None:
    """The mean document length a saved index was built with (None when not recorded)."""
    return _read_average_length(folder)


def _read_average_length(folder: Path) -> float | None:
    try:
        stats = json.loads((folder / _STATS).read_text(encoding="utf-8"))
        average = float(stats["average_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return average if average > 0 else None


class DeltaTerms:
    """The tokens of the chunks added since the main index was built, with their postings."""

    def __init__(self, documents: Sequence[Sequence[str]]) -> None:
        from collections import Counter

        from prefrag.index.sparse_lexical import build_postings

        self.lengths = np.array([len(tokens) for tokens in documents], dtype=np.float32)
        self._postings = build_postings(
            ((term, float(count)) for term, count in Counter(tokens).items())
            for tokens in documents
        )

    @classmethod
    def load(cls, path: Path) -> DeltaTerms:
        """The delta in `path` (one JSON list of terms per line).

        Raises:
            ValueError: A line is not a list of terms.
        """
        documents = []
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                tokens = json.loads(line)
                if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
                    raise ValueError(f"{path}:{number} is not a list of terms")
                documents.append(tokens)
        return cls(documents)

    def __len__(self) -> int:
        return len(self.lengths)

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """(rows, counts) of the delta's chunks holding `term`."""
        return self._postings.get(term, (_NO_ROWS, _NO_COUNTS))


_NO_ROWS = np.zeros(0, dtype=np.int64)
_NO_COUNTS = np.zeros(0, dtype=np.float32)
