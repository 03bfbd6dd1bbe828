"""The vectors an index already holds for the documents it returned, looked up by source.

A local source embeds every chunk once, when `prefrag index` builds it; a judge of retrieved
documents (the small switcher) reads those vectors back instead of embedding the documents
again. Documents carry their source's name (`metadata["source"]`) and chunk id
(`metadata["id"]`); a source that can give stored vectors has `vectors_of(documents)`
(`LocalSource`), and a group of sources is searched through its `members`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from langchain_core.documents import Document

__all__ = ["StoredVectors"]


class StoredVectors:
    """`lookup(documents)`: each document's stored vector, or None when no source holds it.

    Args:
        sources: The run's sources (a `SourceRegistry` or any iterable of sources); groups
            are walked down to their members.
    """

    def __init__(self, sources: Iterable[Any]) -> None:
        self._by_name: dict[str, Any] = {}
        pending = list(sources)
        while pending:
            source = pending.pop()
            pending.extend(getattr(source, "members", None) or [])
            if callable(getattr(source, "vectors_of", None)):
                self._by_name.setdefault(str(source.name), source)

    def __bool__(self) -> bool:
        return bool(self._by_name)

    def __call__(self, documents: Sequence[Document]) -> list[np.ndarray | None]:
        """The stored vector of each document (None: not from a source holding vectors)."""
        found: list[np.ndarray | None] = [None] * len(documents)
        by_source: dict[str, list[int]] = {}
        for position, document in enumerate(documents):
            by_source.setdefault(str(document.metadata.get("source")), []).append(position)
        for name, positions in by_source.items():
            source = self._by_name.get(name)
            if source is None:
                continue
            vectors = source.vectors_of([documents[p] for p in positions])
            for position, vector in zip(positions, vectors, strict=True):
                found[position] = vector
        return found
