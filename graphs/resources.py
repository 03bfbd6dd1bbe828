"""What the nodes work with: the reasoner and the sources, resolved per run.

`build_graph` may be given both; otherwise they are built from process settings and the
run's `Context` (so Studio can switch models per run) and cached.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from langchain_core.documents import Document

from prefrag.errors import UnknownSourceError
from prefrag.graphs.context import Context
from prefrag.reasoners.base import Reasoner
from prefrag.sources.base import Source, SourceRegistry


@dataclass
class RunResources:
    """The reasoner and sources one run uses, plus how the sources are ordered."""

    reasoner: Reasoner
    sources: SourceRegistry
    preferred: Source
    fallbacks: list[Source]
    notes: list[str] = field(default_factory=list)


class ResourceProvider:
    """Resolves `RunResources` for a run's context, caching what it builds."""

    def __init__(
        self,
        *,
        reasoner: Reasoner | None = None,
        sources: SourceRegistry | None = None,
        reasoner_factory: Callable[[Context], Reasoner] | None = None,
        sources_factory: Callable[[], SourceRegistry] | None = None,
    ) -> None:
        self._reasoner = reasoner
        self._sources = sources
        self._reasoner_factory = reasoner_factory or _default_reasoner
        self._sources_factory = sources_factory or _default_sources
        self._reasoners: dict[tuple, Reasoner] = {}
        self._lock = threading.Lock()

    def sources(self) -> SourceRegistry:
        """The configured sources (built from settings on first use)."""
        with self._lock:
            if self._sources is None:
                self._sources = self._sources_factory()
            return self._sources

    def reasoner(self, context: Context) -> Reasoner:
        """The injected reasoner, or one built from settings and this run's models."""
        if self._reasoner is not None:
            return self._reasoner
        key = (
            context.reasoner,
            context.think_model,
            context.compare_model,
            context.answer_model,
            context.reflect_model,
        )
        with self._lock:
            if key not in self._reasoners:
                self._reasoners[key] = self._reasoner_factory(context)
            return self._reasoners[key]

    def resolve(self, context: Context) -> RunResources:
        """Reasoner, preferred source and fallback order for a run."""
        sources = self.sources()
        notes: list[str] = []
        if context.preferred_source:
            preferred = sources.get(context.preferred_source)
        else:
            found = sources.first_of_kind("local") or next(iter(sources), None)
            if found is None:
                raise UnknownSourceError("No sources are configured; index documents first.")
            preferred = found
        fallbacks: list[Source] = []
        for name in context.fallback_sources:
            if name == preferred.name:
                continue
            if name in sources:
                fallbacks.append(sources.get(name))
            else:
                notes.append(f"Fallback source '{name}' is not configured; skipped.")
        return RunResources(self.reasoner(context), sources, preferred, fallbacks, notes)

    def rerank(
        self, query: str, documents: list[Document], context: Context
    ) -> tuple[list[Document], list[str]]:
        """Top `context.top_k` of `documents` by polyview score, with conflict notes."""
        from prefrag.graphs.tool_nodes import rerank_with_polyview

        return rerank_with_polyview(query, documents, context)


def _default_reasoner(context: Context) -> Reasoner:
    from prefrag.reasoners.factory import build_reasoner

    models = {
        "think": context.think_model,
        "compare": context.compare_model,
        "answer": context.answer_model,
        "reflect": context.reflect_model,
    }
    return build_reasoner(reasoner=context.reasoner, models=models)


def _default_sources() -> SourceRegistry:
    from prefrag.sources.defaults import default_sources

    return default_sources()
