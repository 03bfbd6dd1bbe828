"""BM25 lexical search over chunk texts with bm25s and an English Snowball stemmer."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

_STOPWORDS = "en"


def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer("english")


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


class LexicalIndex:
    """A bm25s index whose document numbers are the store's chunk rows."""

    def __init__(self, retriever: Any, size: int) -> None:
        self._retriever = retriever
        self._stemmer = _stemmer()
        self.size = size

    @classmethod
    def build(cls, texts: Sequence[str], *, method: str = "lucene") -> LexicalIndex:
        """Index `texts`; row `i` of the store is document `i` here."""
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

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Up to `k` (row, score) pairs, best first; rows sharing no term are left out.

        bm25s raises when `k` exceeds the corpus and pads results with score-0 rows for
        queries of unknown words, so `k` is clipped and zero scores are dropped.
        """
        k = min(k, self.size)
        if k <= 0 or not query.strip():
            return []
        tokens = tokenize([query], self._stemmer)
        if not tokens or not tokens[0]:
            return []
        rows, scores = self._retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        return [
            (int(row), float(score))
            for row, score in zip(rows[0], scores[0], strict=True)
            if score > 0 and np.isfinite(score)
        ]
