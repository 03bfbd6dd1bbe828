"""The `Source` protocol every retrieval source implements, and a registry of them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Literal, Protocol, runtime_checkable

from langchain_core.documents import Document

from prefrag.errors import PrefRAGError, UnknownSourceError

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
        self._unavailable: dict[str, PrefRAGError] = {}
        for source in sources:
            self.add(source)

    def add(self, source: Source, *, on_request: bool = False) -> None:
        """Register `source` under its name (replacing one of the same name)."""
        self._sources.pop(source.name, None)
        self._on_request.pop(source.name, None)
        self._unavailable.pop(source.name, None)
        (self._on_request if on_request else self._sources)[source.name] = source

    def add_unavailable(self, name: str, error: PrefRAGError) -> None:
        """Remember that source `name` exists but cannot be opened (damaged, not built).

        Asking for it by name raises `error`; every other source stays usable.
        """
        if name not in self._sources and name not in self._on_request:
            self._unavailable[name] = error

    @property
    def unavailable(self) -> dict[str, PrefRAGError]:
        """Sources that exist but cannot be opened, with why."""
        return dict(self._unavailable)

    def get(self, name: str) -> Source:
        """The source called `name`; `UnknownSourceError` lists the known ones.

        A source that exists but cannot be opened raises its own error (e.g.
        `DamagedStoreError` naming the fix) instead.
        """
        if name in self._unavailable:
            raise self._unavailable[name]
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
