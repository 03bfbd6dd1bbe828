"""BM25 lexical search over chunk titles and texts with bm25s and an English Snowball stemmer.

Each chunk is indexed as its title followed by its text (the PrefRAG authors' BM25 ranks
title + content too), so a query naming a document's subject finds its chunks even when the
text never repeats the name. Stores written before titles were indexed keep working with
their text-only index until the next `prefrag index` rebuilds it (`FORMAT`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from prefrag.shared import shared

# What a lexical index covers: 1 = chunk text only (early stores), 2 = title + text.
FORMAT = 2
_STOPWORDS = "en"
# bm25s' default token pattern; queries are split exactly as the corpus was.
_WORDS = re.compile(r"(?u)\b\w\w+\b").findall


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


def searchable_text(title: str | None, text: str) -> str:
    """What the lexical index holds for one chunk: its title, then its text."""
    title = (title or "").strip()
    return f"{title}\n{text}" if title else text


def record_texts(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """`searchable_text` of every stored chunk record, in row order."""
    return [searchable_text(record.get("title"), record["text"]) for record in records]


class LexicalIndex:
    """A bm25s index whose document numbers are the store's chunk rows."""

    def __init__(self, retriever: Any, size: int) -> None:
        from bm25s.stopwords import STOPWORDS_EN

        self._retriever = retriever
        self._stopwords = frozenset(STOPWORDS_EN)
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
        return cls(retriever, len(texts))

    @classmethod
    def load(cls, folder: Path, size: int) -> LexicalIndex:
        """The index saved in `folder` (for a store of `size` chunks)."""
        import bm25s

        retriever = bm25s.BM25.load(str(folder), show_progress=False)
        return cls(retriever, size)

    def save(self, folder: Path) -> None:
        """Write the index into `folder`."""
        self._retriever.save(str(folder), show_progress=False)

    @property
    def documents(self) -> int:
        """How many documents the bm25s index itself holds."""
        return int(self._retriever.scores["num_docs"])

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Up to `k` (row, score) pairs, best first; rows sharing no term are left out.

        bm25s' `retrieve` raises when `k` exceeds the corpus and pads results with score-0
        rows for unknown words, so `k` is clipped and zero scores are dropped here too.
        """
        k = min(k, self.size)
        if k <= 0 or not query.strip():
            return []
        # Scoring straight from term ids skips `retrieve`'s per-call threads and progress
        # bars, which cost more than the scoring itself on a corpus of this size.
        ids = self._retriever.get_tokens_ids(self.query_terms(query))
        if not ids:
            return []
        scores = self._retriever.get_scores_from_ids(ids)
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.lexsort((top, -scores[top]))]
        return [(int(row), float(scores[row])) for row in top if scores[row] > 0]
