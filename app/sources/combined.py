"""Several local sources searched as one (the default preferred source when many exist)."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.documents import Document

from prefrag.index.fusion import reciprocal_rank_fusion
from prefrag.sources.base import Source
from prefrag.sources.group import SourceGroup


class CombinedSource(SourceGroup):
    """Searches every member and fuses their rankings by reciprocal rank.

    Ranks, not raw scores, are fused because each member scores on its own scale. Each
    document keeps its member's `source` name, so citations say where it really came from.
    """

    def __init__(self, members: Sequence[Source], *, name: str = "local") -> None:
        super().__init__(members, name=name, description="All local sources: ")

    def search(self, query: str, k: int) -> list[Document]:
        """Top-`k` over all members by reciprocal-rank fusion (ties: member order)."""
        by_id: dict[str, Document] = {}
        rankings: list[list[str]] = []
        for member in self.members:
            ranking = []
            for document in member.search(query, k):
                key = str(document.metadata.get("id"))
                by_id.setdefault(key, document)
                ranking.append(key)
            rankings.append(ranking)
        notes = [m.last_note for m in self.members if m.last_note]
        self._note = "; ".join(notes) or None
        fused = reciprocal_rank_fusion(rankings, limit=max(k, 0))
        return [
            Document(
                page_content=by_id[key].page_content,
                metadata={**by_id[key].metadata, "score": score},
                id=by_id[key].id,
            )
            for key, score in fused
        ]
