"""Balanced retrieval over several sources (RAG²): the same top-k from each, one rerank.

A stacked search (`CombinedSource`) fuses the members' rankings into one list, so which
source fills the top-k depends on ranks and member order, not on how well each document
fits the question. Balanced retrieval takes the same number of documents from every
member, pools them and reranks the pool once by dense similarity to the original question
(the embedder every local index is built with; a member's stored vectors are reused, so
only graph or web documents are embedded).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from langchain_core.documents import Document

from prefrag.sources.base import Source
from prefrag.sources.group import SourceGroup

MultiSourceMode = Literal["balanced", "stacked"]
MULTI_SOURCE_MODES = ("balanced", "stacked")


class RelevanceScorer:
    """Cosine similarity of documents to a question, with the configured embedder.

    Args:
        embedder: Encoder with `.encode(texts)` returning unit vectors; default the
            process embedder (loaded on first use).
    """

    def __init__(self, embedder: Any = None) -> None:
        from prefrag.tools.polyview import VectorCache

        self._embedder = embedder
        self.cache = VectorCache()

    @property
    def embedder(self) -> Any:
        """The encoder (the configured one unless given)."""
        if self._embedder is None:
            from prefrag.index.embeddings import get_embedder

            self._embedder = get_embedder()
        return self._embedder

    def scores(
        self,
        questions: Sequence[str],
        documents: Sequence[Document],
        stored: Sequence[np.ndarray | None] | None = None,
    ) -> np.ndarray:
        """Mean cosine of each document to `questions` (stored vectors used when given)."""
        if not documents:
            return np.zeros(0, dtype=np.float32)
        stored = list(stored) if stored is not None else [None] * len(documents)
        missing = [i for i, vector in enumerate(stored) if vector is None]
        vectors: list[Any] = list(stored)
        if missing:
            encoded = self.cache.encode(
                self.embedder,
                [str(documents[i].metadata.get("id", "")) for i in missing],
                [documents[i].page_content for i in missing],
            )
            for i, vector in zip(missing, encoded, strict=True):
                vectors[i] = vector
        matrix = np.stack([np.asarray(v, dtype=np.float32) for v in vectors])
        queries = self.cache.encode(self.embedder, ["query"] * len(questions), list(questions))
        return (matrix @ queries.T).mean(axis=1)


class BalancedSource(SourceGroup):
    """Searches every member for the same top-k and reranks the pool by the question.

    Args:
        members: The sources to balance (local indexes, graphs).
        scorer: The relevance scorer (shared, so its vector cache is reused).
        name: The name runs and traces show (that of the combined source it stands for).
        question: The original question; the pool is reranked by its similarity together
            with the search query's (only the question's when they are the same).
        per_source: Documents taken from each member; default the `k` of the search.
    """

    def __init__(
        self,
        members: Sequence[Source],
        scorer: RelevanceScorer,
        *,
        name: str = "local",
        question: str | None = None,
        per_source: int | None = None,
    ) -> None:
        super().__init__(members, name=name, description="Balanced search over: ")
        self.scorer = scorer
        self.question = question
        self.per_source = per_source

    def search(self, query: str, k: int) -> list[Document]:
        """The top-`k` of the pooled per-member top-k, by similarity to the question."""
        self._note = None
        if k <= 0:
            return []
        depth = self.per_source or k
        pool: list[Document] = []
        stored: list[np.ndarray | None] = []
        seen: set[str] = set()
        notes: list[str] = []
        for member in self.members:
            try:
                found = member.search(query, depth)
            except Exception as error:
                notes.append(f"{member.name} search failed: {error}")
                continue
            if not found and member.last_note:
                notes.append(member.last_note)
            fresh = [d for d in found if str(d.metadata.get("id")) not in seen]
            seen.update(str(d.metadata.get("id")) for d in fresh)
            vectors_of = getattr(member, "vectors_of", None)
            stored.extend(vectors_of(fresh) if vectors_of else [None] * len(fresh))
            pool.extend(fresh)
        self._note = "; ".join(notes) or None
        if not pool:
            return []
        questions = [q for q in dict.fromkeys([self.question or query, query]) if q.strip()]
        scores = self.scorer.scores(questions or [query], pool, stored)
        order = sorted(range(len(pool)), key=lambda i: (-float(scores[i]), i))[:k]
        return [
            Document(
                page_content=pool[i].page_content,
                metadata={
                    **pool[i].metadata,
                    "score": float(scores[i]),
                    "retrieval_score": pool[i].metadata.get("score"),
                },
                id=pool[i].id,
            )
            for i in order
        ]
