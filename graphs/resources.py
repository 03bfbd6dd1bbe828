"""What the nodes work with, resolved per run: reasoner, sources, rerankers, MoG selectors.

`build_graph` may be given a reasoner and sources; otherwise they are built from process
settings and the run's `Context` (so Studio can switch models per run). Everything built
is cached here, per provider (one per compiled graph), never in module-level state: two
graphs in one process (e.g. an evaluation's and an application's) never see each other's
MoG folders or rerankers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document

from prefrag.errors import ConfigurationError, UnknownSourceError
from prefrag.graphs.context import Context
from prefrag.reasoners.base import Reasoner
from prefrag.reasoners.roles import models_of
from prefrag.sources.base import Source, SourceRegistry

if TYPE_CHECKING:
    from prefrag.tools.polyview import PolyviewResult


@dataclass
class RunResources:
    """The reasoner and sources one run uses, plus how the sources are ordered."""

    reasoner: Reasoner
    sources: SourceRegistry
    preferred: Source
    fallbacks: list[Source]
    notes: list[str] = field(default_factory=list)


class ResourceProvider:
    """Resolves `RunResources` for a run's context, caching what it builds.

    Args:
        reasoner: A ready reasoner for every run; default: built per run's models.
        sources: Named sources; default: every indexed local source plus the web.
        reasoner_factory: Builds the reasoner of a context (when `reasoner` is None).
        sources_factory: Builds the sources (when `sources` is None).
        rerankers: Polyview rerankers by name, chosen by `Context.polyview_profile`
            (e.g. a subset of views for an ablation, or a reranker with its own embedder).
        mog_indexes: MoG index folder per local source name; default: the folder under
            the source's own data directory (`<sources_dir>/<source>/mog`).
        relevance_scorer: Scores documents against the question for balanced retrieval
            (a `RelevanceScorer`); default one over the configured embedder.
        snippet_filter: The `filter_evidence` node's `SnippetFilter`; default: loaded from
            `PREFRAG_EVIDENCE_FILTER` when set, else the relevance filter.
        embedder: The text encoder everything this provider builds uses (MoG indexes,
            balanced retrieval's scorer, the relevance filter, polyview's views): anything
            with `encode`, `encode_one` and `dimension`; default: the process's configured
            embedder (`prefrag.shared`).
    """

    def __init__(
        self,
        *,
        reasoner: Reasoner | None = None,
        sources: SourceRegistry | None = None,
        reasoner_factory: Callable[[Context], Reasoner] | None = None,
        sources_factory: Callable[[], SourceRegistry] | None = None,
        rerankers: Mapping[str, Any] | None = None,
        mog_indexes: Mapping[str, Path] | None = None,
        relevance_scorer: Any = None,
        snippet_filter: Any = None,
        embedder: Any = None,
    ) -> None:
        self._reasoner = reasoner
        self._sources = sources
        self._reasoner_factory = reasoner_factory or _default_reasoner
        self._sources_factory = sources_factory or _default_sources
        self._reasoners: dict[tuple[Any, ...], Reasoner] = {}
        self._reading_stored: set[int] = set()  # reasoners given the sources' vectors
        self._named_rerankers: dict[str, Any] = dict(rerankers or {})
        self._rerankers: dict[tuple[Any, ...], Any] = {}
        self._mog_indexes = {name: Path(folder) for name, folder in (mog_indexes or {}).items()}
        self._selectors: dict[tuple[str, float], Any] = {}
        self._scorer: Any = relevance_scorer
        self._snippet_filter: Any = snippet_filter
        self._embedder: Any = embedder
        self._lock = threading.RLock()

    def sources(self) -> SourceRegistry:
        """The configured sources (built from settings on first use)."""
        with self._lock:
            if self._sources is None:
                self._sources = self._sources_factory()
            return self._sources

    def reasoner(self, context: Context) -> Reasoner:
        """The injected reasoner, or one built from settings and this run's models.

        A trained switcher behind it reads documents' vectors from the sources' indexes
        (`StoredVectors`) instead of embedding them again.
        """
        with self._lock:
            if self._reasoner is not None:
                reasoner = self._reasoner
            else:
                key = (context.reasoner, *models_of(context).values())
                if key not in self._reasoners:
                    self._reasoners[key] = self._reasoner_factory(context)
                reasoner = self._reasoners[key]
            if id(reasoner) not in self._reading_stored:
                self._reading_stored.add(id(reasoner))
                use = getattr(getattr(reasoner, "switcher", None), "use_stored_vectors", None)
                if use is not None:
                    from prefrag.sources.stored_vectors import StoredVectors

                    use(StoredVectors(self.sources()))
            return reasoner

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
        reasoner = self.reasoner(context)
        notes.extend(unused_model_notes(context, reasoner, injected=self._reasoner is not None))
        return RunResources(reasoner, sources, preferred, fallbacks, notes)

    def multi_source(self, source: Source, context: Context, question: str) -> Source:
        """`source` as a run searches it: a combined source balanced, unless stacked.

        With `multi_source_mode == "balanced"`, a source made of several members (the
        combined `local` source) takes the same top-k from each member and reranks the
        pool by `question` (RAG²); otherwise it keeps its own stacked ranking.
        """
        members = getattr(source, "members", None)
        if context.multi_source_mode != "balanced" or not members or len(members) < 2:
            return source
        from prefrag.sources.balanced import BalancedSource

        return BalancedSource(members, self.relevance_scorer(), name=source.name, question=question)

    def embedder(self) -> Any:
        """The given embedder, else the process's configured one (loaded on first encode)."""
        if self._embedder is not None:
            return self._embedder
        from prefrag.index.embeddings import get_embedder

        return get_embedder()

    def relevance_scorer(self) -> Any:
        """The shared `RelevanceScorer` of balanced retrieval (its vectors are cached)."""
        from prefrag.sources.balanced import RelevanceScorer

        with self._lock:
            if self._scorer is None:
                self._scorer = RelevanceScorer(self.embedder())
            return self._scorer

    # --- polyview -----------------------------------------------------------------------

    def add_reranker(self, name: str, reranker: Any) -> None:
        """Make `Context.polyview_profile == name` use `reranker` (a `PolyviewReranker`)."""
        with self._lock:
            self._named_rerankers[name] = reranker

    def chat_model(self, context: Context) -> Any:
        """The run's general chat model (the `think` role's), or None without a model.

        Polyview's LLM views (utility, supplement, LLM relevance) use it.
        """
        models = getattr(self.reasoner(context), "models", None)
        return models.get("think") if isinstance(models, Mapping) else None

    def reranker(self, context: Context) -> Any:
        """The polyview reranker of a run (a `PolyviewReranker`, shared and cached).

        A reranker added under `context.polyview_profile` is returned as it is; otherwise
        one is built for that profile with the run's allowed views, coverage constraint
        and chat model (which turns on the U, S and LLM-relevance views).

        Raises:
            ConfigurationError: The profile is neither known nor an added reranker.
        """
        from prefrag.tools.polyview import VIEWS, PolyviewReranker

        profile = context.polyview_profile
        with self._lock:
            if profile in self._named_rerankers:
                return self._named_rerankers[profile]
        allowed = tuple(v for v in VIEWS if v in context.polyview_views)
        chat_model = self.chat_model(context) if {"R", "U", "S"} & set(allowed) else None
        key = (profile, allowed, context.polyview_coverage, id(chat_model))
        with self._lock:
            if key not in self._rerankers:
                try:
                    self._rerankers[key] = PolyviewReranker(
                        profile=profile,
                        views=allowed,
                        coverage=context.polyview_coverage,
                        chat_model=chat_model,
                        embedder=self.embedder(),
                    )
                except ValueError as error:
                    raise ConfigurationError(str(error)) from None
            return self._rerankers[key]

    def rerank(self, query: str, documents: list[Document], context: Context) -> PolyviewResult:
        """Top `context.top_k` of `documents` by polyview score, with notes and model usage.

        Used by the `polyview_rerank` node for local documents and by `rerank_fallback` for
        a fallback's documents, so both sources are ranked by the same views.
        """
        if not documents:
            from prefrag.tools.polyview import PolyviewResult

            return PolyviewResult([])
        result: PolyviewResult = self.reranker(context).rerank(query, documents, context.top_k)
        return result

    # --- evidence filter ------------------------------------------------------------------

    def snippet_filter(self) -> Any:
        """The `SnippetFilter` of `filter_evidence` (built once, then cached)."""
        with self._lock:
            if self._snippet_filter is None:
                from prefrag.config import get_settings
                from prefrag.tools.evidence_filter import RelevanceSnippetFilter
                from prefrag.tools.trained_filter import load_snippet_filter

                folder = get_settings().evidence_filter
                self._snippet_filter = (
                    load_snippet_filter(folder)
                    if folder
                    else RelevanceSnippetFilter(self.embedder())
                )
            return self._snippet_filter

    # --- Mix-of-Granularity ---------------------------------------------------------------

    def mog_folder(self, source: str) -> Path:
        """The folder the `mog_select` node reads source `source`'s MoG index from."""
        from prefrag.tools.granularity_index import mog_index_dir

        if source in self._mog_indexes:
            return self._mog_indexes[source]
        found = self.sources().get(source) if source in self.sources() else None
        return mog_index_dir(source, getattr(found, "settings", None))

    def mog_selector(self, source: str) -> Any:
        """The MoG selector over `source`'s granularity index, or None without an index.

        Cached per folder and its files' modification time, so a rebuilt index or a newly
        trained router is picked up.
        """
        from prefrag.tools.granularity_index import GranularityIndex
        from prefrag.tools.mog import MoGSelector, load_router

        folder = self.mog_folder(source)
        if not (folder / "index.json").exists():
            return None
        key = (str(folder), _mtime(folder))
        with self._lock:
            if key not in self._selectors:
                index = GranularityIndex.load(folder, encoder=self.embedder())
                self._selectors[key] = MoGSelector(index, router=load_router(folder))
            return self._selectors[key]


def unused_model_notes(context: Context, reasoner: Reasoner, *, injected: bool) -> list[str]:
    """One note per run setting that names a model the run's reasoner does not use.

    A per-role model (`--plan-model hf:...`) only matters to an LLM reasoner; with the
    extractive one (the default when no endpoint is configured) it would be dropped
    silently. A ready reasoner given to the graph (`injected`) was built by its caller,
    who knows what its models are: no note then.
    """
    named = {role: name for role, name in models_of(context).items() if name}
    if injected or not named or isinstance(getattr(reasoner, "models", None), Mapping):
        return []
    options = ", ".join(f"--{role}-model {name}" for role, name in named.items())
    return [
        f"{options}: no effect, the run's reasoner is {type(reasoner).__name__} (no chat "
        "model); choose the LLM reasoner with --reasoner llm (API: reasoner='llm')."
    ]


def _mtime(folder: Path) -> float:
    return max((p.stat().st_mtime for p in folder.iterdir()), default=0.0)


def _default_reasoner(context: Context) -> Reasoner:
    from prefrag.reasoners.factory import build_reasoner

    return build_reasoner(reasoner=context.reasoner, models=models_of(context))


def _default_sources() -> SourceRegistry:
    from prefrag.sources.defaults import default_sources

    return default_sources()
