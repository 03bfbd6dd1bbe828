"""The `Source` protocol every retrieval source implements, and a registry of them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Literal, Protocol, runtime_checkable

from langchain_core.documents import Document

from prefrag.errors import UnknownSourceError

SourceKind = Literal["local", "web", "graph"]
DEFAULT_QUERY_FORMAT = "a natural-language question"


@runtime_checkable
class Source(Protocol):
    """Something the graph can search.

    `search` returns at most `k` documents, best first, with the metadata described in
    `prefrag.documents`. It never raises for "nothing found"; a source that cannot answer
    (offline web, say) returns `[]` and puts the reason in `last_note`. `description`
    says what the source holds and `query_format` how a query to it should be phrased
    (both are shown to a source planner).
    """

    name: str
    description: str
    query_format: str
    kind: SourceKind
    authority: float

    @property
    def last_note(self) -> str | None:
        """Why the last search returned less than asked (offline, error), if it did."""
        ...

    def search(self, query: str, k: int) -> list[Document]:
        """The top-`k` documents for `query`."""
        ...


class SourceRegistry:
    """Named sources, in the order they were added.

    A source added `on_request` (the demo corpus once a user has sources of their own) is
    found by name (`get`, `in`) but left out of iteration, `names` and `first_of_kind`: a
    run searches it only when it names it.
    """

    def __init__(self, sources: Iterable[Source] = ()) -> None:
        self._sources: dict[str, Source] = {}
        self._on_request: dict[str, Source] = {}
        for source in sources:
            self.add(source)

    def add(self, source: Source, *, on_request: bool = False) -> None:
        """Register `source` under its name (replacing one of the same name)."""
        self._sources.pop(source.name, None)
        self._on_request.pop(source.name, None)
        (self._on_request if on_request else self._sources)[source.name] = source

    def get(self, name: str) -> Source:
        """The source called `name`; `UnknownSourceError` lists the known ones."""
        found = self._sources.get(name) or self._on_request.get(name)
        if found is None:
            known = ", ".join([*self._sources, *self._on_request]) or "none"
            raise UnknownSourceError(f"Unknown source '{name}' (known: {known}).")
        return found

    def on_request_names(self) -> list[str]:
        """Sources searched only when a run names them."""
        return list(self._on_request)

    def __contains__(self, name: object) -> bool:
        return name in self._sources or name in self._on_request

    def __iter__(self) -> Iterator[Source]:
        return iter(self._sources.values())

    def __len__(self) -> int:
        return len(self._sources)

    def names(self) -> list[str]:
        """Source names in registration order."""
        return list(self._sources)

    def first_of_kind(self, kind: SourceKind) -> Source | None:
        """The first registered source of `kind`, if any."""
        return next((s for s in self._sources.values() if s.kind == kind), None)
