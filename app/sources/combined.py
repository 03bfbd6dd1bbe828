"""Several local sources searched as one (the default preferred source when many exist)."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.documents import Document

from prefrag.sources.base import Source, SourceKind

RRF_K = 60  # the usual reciprocal-rank-fusion constant


class CombinedSource:
    """Searches every member and fuses their rankings by reciprocal rank.

    Ranks, not raw scores, are fused because each member scores on its own scale. Each
    document keeps its member's `source` name, so citations say where it really came from.
    """

    kind: SourceKind = "local"

    def __init__(self, members: Sequence[Source], *, name: str = "local") -> None:
        if not members:
            raise ValueError("A combined source needs at least one member.")
        self.members = list(members)
        self.name = name
        self.description = "All local sources: " + ", ".join(m.name for m in self.members)
        self.authority = max(m.authority for m in self.members)
        self._note: str | None = None

    @property
    def member_names(self) -> set[str]:
        """Source names its documents may carry."""
        return {member.name for member in self.members}

    @property
    def last_note(self) -> str | None:
        """Notes of members that returned nothing, if any."""
        return self._note

    def search(self, query: str, k: int) -> list[Document]:
        """Top-`k` over all members by reciprocal-rank fusion (ties: member order)."""
        fused: dict[str, tuple[float, int, Document]] = {}
        for position, member in enumerate(self.members):
            for rank, document in enumerate(member.search(query, k)):
                key = str(document.metadata.get("id"))
                score = 1.0 / (RRF_K + rank + 1)
                if key not in fused or fused[key][0] < score:
                    fused[key] = (score, position, document)
        notes = [m.last_note for m in self.members if m.last_note]
        self._note = "; ".join(notes) or None
        best = sorted(fused.values(), key=lambda item: (-item[0], item[1]))[: max(k, 0)]
        return [
            Document(page_content=d.page_content, metadata={**d.metadata, "score": s}, id=d.id)
            for s, _, d in best
        ]
