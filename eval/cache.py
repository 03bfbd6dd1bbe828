"""A retrieval cache in front of any `Source`, shared by every method of a run.

Methods search with the same queries (every method's first search is usually the question
itself), so caching keeps comparisons cheap and identical. Entries persist as JSONL, so a
resumed run sees exactly the documents the first run saw.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from langchain_core.documents import Document

from prefrag.jsonl import jsonl_line, readable_rows
from prefrag.sources.base import Source


class RetrievalCache:
    """Query results keyed by (source, query, k); optionally persisted as JSONL."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path else None
        self._entries: dict[tuple[str, str, int], list[Document]] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        if self.path and self.path.exists():
            self._load(self.path)

    def _load(self, path: Path) -> None:
        for row in readable_rows(path):  # skips a line cut short by an interrupted run
            documents = [
                Document(page_content=d["text"], metadata=d["metadata"], id=d["metadata"].get("id"))
                for d in row["documents"]
            ]
            self._entries[(row["source"], row["query"], int(row["k"]))] = documents

    def get(self, source: str, query: str, k: int) -> list[Document] | None:
        """Cached documents, or None."""
        with self._lock:
            found = self._entries.get((source, query, k))
            if found is None:
                self.misses += 1
            else:
                self.hits += 1
            return found

    def put(self, source: str, query: str, k: int, documents: list[Document]) -> None:
        """Remember (and persist) the documents of one search."""
        with self._lock:
            self._entries[(source, query, k)] = documents
            if self.path:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                row: dict[str, Any] = {
                    "source": source,
                    "query": query,
                    "k": k,
                    "documents": [
                        {"text": d.page_content, "metadata": _jsonable(d.metadata)}
                        for d in documents
                    ],
                }
                with self.path.open("a", encoding="utf-8") as handle:
                    handle.write(jsonl_line(row))


def _jsonable(metadata: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(metadata, default=str))


class CachedSource:
    """A `Source` whose searches go through a `RetrievalCache`.

    Empty results are not cached (they may be a transient web failure); `last_note` is
    the wrapped source's. `key` names the source's cache entries (default: its name); sources
    that share a name but rank differently (one index searched in several modes) need their own.
    """

    def __init__(self, source: Source, cache: RetrievalCache, *, key: str | None = None) -> None:
        self.inner = source
        self.cache = cache
        self.key = key or source.name
        self.name = source.name
        self.description = source.description
        self.query_format = getattr(source, "query_format", "a natural-language question")
        self.kind = source.kind
        self.authority = source.authority

    @property
    def last_note(self) -> str | None:
        """The wrapped source's note about its last search."""
        return self.inner.last_note

    def search(self, query: str, k: int) -> list[Document]:
        """Cached top-`k` documents for `query`."""
        found = self.cache.get(self.key, query, k)
        if found is not None:
            return list(found)
        documents = self.inner.search(query, k)
        if documents:
            self.cache.put(self.key, query, k, documents)
        return documents
