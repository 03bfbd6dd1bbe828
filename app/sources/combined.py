"""Several local sources searched as one (the default preferred source when many exist)."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.documents import Document

from prefrag.sources.base import Source, SourceKind


class CombinedSource:
    """Searches every member and interleaves their results by rank (round robin).

    Ranks, not raw scores, are merged because each member scores on its own scale.
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
    def last_note(self) -> str | None:
        """Notes of members that returned nothing, if any."""
        return self._note

    def search(self, query: str, k: int) -> list[Document]:
        """Top-`k` over all members, taking each member's next best in turn."""
        results = [member.search(query, k) for member in self.members]
        notes = [m.last_note for m in self.members if m.last_note]
        self._note = "; ".join(notes) or None
        merged: list[Document] = []
        seen: set[str] = set()
        for rank in range(k):
            for documents in results:
                if rank < len(documents) and len(merged) < k:
                    key = str(documents[rank].metadata.get("id"))
                    if key not in seen:
                        seen.add(key)
                        merged.append(documents[rank])
        return merged
