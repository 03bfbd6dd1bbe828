"""Comparison systems built from the same components as PrefRAG: a `Reasoner` and `Source`s.

Every system has `invoke({"question": q}, context=Context(...))` and returns the PrefRAG
graph's output shape (answer, citations, route, counters, model_calls, tokens, notes), so
the evaluation scores them all the same way. Counters follow the paper's appendix A.6: each
search of a local source is one local retrieval, each web search one web retrieval, and a
retrieval is "used" when its documents entered the context.

| method | what it does |
|---|---|
| `prefrag` | the PrefRAG graph |
| `prefrag-no-reflection` | the graph with `max_reflections=0` |
| `prefrag-no-pref` | the graph with `preference_driven=False`: both sources every step |
| `prefrag-prompt` | one source per step chosen by the model, preference stated in the tool list |
| `no-retrieval` | answer from the question alone |
| `vanilla-local` / `vanilla-web` / `vanilla-both` | one retrieval with the question |
| `react-both` | reason-and-retrieve loop, both sources every step (paper: ReAct w/ LR WR) |
| `react-choose` | reason-and-retrieve loop, the model picks one source per step |
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from langchain_core.documents import Document

from prefrag.errors import ConfigurationError, EmptyQuestionError
from prefrag.graphs.context import Context
from prefrag.graphs.nodes import retrieval_steps, scratchpad_of
from prefrag.graphs.resources import ResourceProvider
from prefrag.graphs.retrieval import (
    add_search,
    answer_update,
    new_step,
    search,
    usage_update,
    use_documents,
)
from prefrag.graphs.state import Step, add_counts, episode_start, merge_update
from prefrag.reasoners.base import Reasoner
from prefrag.sources.base import Source, SourceRegistry

GRAPH_METHODS = ("prefrag", "prefrag-no-reflection", "prefrag-no-pref")
LOOP_METHODS = (
    "no-retrieval",
    "vanilla-local",
    "vanilla-web",
    "vanilla-both",
    "react-both",
    "react-choose",
    "prefrag-prompt",
)
METHODS = (*GRAPH_METHODS, *LOOP_METHODS)

# Appendix A.4: the preference travels only as words in the tool descriptions.
PREFERRED_NOTE = "(preferred: search this source first)"
FALLBACK_NOTE = "(use only when the preferred source lacks the information)"


class System(Protocol):
    """Anything evaluated like the PrefRAG graph."""

    def invoke(self, input: dict[str, Any], context: Context | None = None, **kwargs: Any) -> Any:
        """Run one question; returns the PrefRAG output shape."""
        ...


@dataclass
class Method:
    """A named system with the context preset it runs under."""

    name: str
    system: System
    context: Context
    is_graph: bool = False


def method_context(name: str, base: Context | None = None) -> Context:
    """The run context of method `name` (ablations that are context presets live here)."""
    base = base or Context()
    if name == "prefrag-no-reflection":
        return dataclasses.replace(base, max_reflections=0)
    if name == "prefrag-no-pref":
        return dataclasses.replace(base, preference_driven=False)
    return base


def build_method(
    name: str,
    *,
    reasoner: Reasoner,
    sources: SourceRegistry,
    context: Context | None = None,
    graph: Any = None,
    resources: ResourceProvider | None = None,
) -> Method:
    """Build method `name` on `reasoner` and `sources`.

    Args:
        name: One of `METHODS`.
        reasoner: The reasoner every method shares.
        sources: The sources every method shares.
        context: The base run context (ablations change it).
        graph: A prebuilt PrefRAG graph for the graph-backed methods.
        resources: The provider of rerankers and MoG indexes (and of `reasoner` and
            `sources`, which it should hold); default: one over `reasoner` and `sources`.
    """
    if name not in METHODS:
        raise ConfigurationError(f"Unknown method '{name}' (known: {', '.join(METHODS)}).")
    ctx = method_context(name, context)
    resources = resources or ResourceProvider(reasoner=reasoner, sources=sources)
    if name in GRAPH_METHODS:
        if graph is None:
            from prefrag.graphs.graph import build_graph

            graph = build_graph(resources=resources)
        return Method(name, graph, ctx, is_graph=True)
    return Method(name, LoopSystem(name, reasoner, sources, resources=resources), ctx)


@dataclass
class _Run:
    """Mutable trace of one question: the graph's state (merged as the graph merges it)."""

    question: str
    state: dict[str, Any] = field(default_factory=dict)
    timings: list[tuple[str, float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        merge_update(self.state, episode_start() | {"question": self.question})

    @property
    def route(self) -> list[Step]:
        """The steps recorded so far."""
        return list(self.state["route"])

    @property
    def evidence(self) -> list[Document]:
        """The evidence held so far."""
        return list(self.state["evidence"])

    def apply(self, update: dict[str, Any]) -> None:
        """Merge a kernel update with the graph's reducers."""
        merge_update(self.state, update)

    def timed(self, node: str, call: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        try:
            return call()
        finally:
            self.timings.append((node, time.perf_counter() - start))


class LoopSystem:
    """The non-graph methods as plain loops over the shared reasoner, sources and kernel."""

    def __init__(
        self,
        method: str,
        reasoner: Reasoner,
        sources: SourceRegistry,
        *,
        resources: ResourceProvider | None = None,
    ) -> None:
        if method not in LOOP_METHODS:
            raise ConfigurationError(f"'{method}' is not a loop method.")
        self.method = method
        self.reasoner = reasoner
        self.sources = sources
        self._resources = resources or ResourceProvider(reasoner=reasoner, sources=sources)

    def invoke(
        self, input: dict[str, Any], context: Context | None = None, **_: Any
    ) -> dict[str, Any]:
        """Answer `input["question"]`; returns the PrefRAG output shape plus `timings`."""
        context = context or Context()
        question = str(input.get("question") or "").strip()
        if not question:
            raise EmptyQuestionError("The question is empty; ask something.")
        run = _Run(question)
        resolved = self._resources.resolve(context)
        run.apply({"notes": resolved.notes})
        fallbacks = resolved.fallbacks
        local = self._resources.multi_source(resolved.preferred, context, question)
        web = fallbacks[0] if fallbacks else None
        method = self.method
        if method == "vanilla-local":
            self._retrieve(run, [local], question, context.top_k)
        elif method == "vanilla-web":
            self._retrieve(run, [web] if web else [], question, context.top_k)
        elif method == "vanilla-both":
            self._retrieve(run, [local, *fallbacks[:1]], question, context.top_k)
        elif method != "no-retrieval":
            self._loop(run, context, local, fallbacks)
            return self._output(run)
        self._answer(run)
        return self._output(run)

    def _loop(self, run: _Run, context: Context, local: Source, fallbacks: list[Source]) -> None:
        both = [local, *fallbacks[:1]]
        names = self._tool_names(local, fallbacks)
        while retrieval_steps(run.route) < context.max_iterations:
            decision = run.timed(
                "think",
                lambda: self.reasoner.think(run.question, scratchpad_of(run.route), sources=names),
            )
            run.apply(usage_update("think", decision.usage))
            if decision.action == "answer":
                break
            query = decision.query.strip() or run.question
            if self.method == "react-both":
                chosen = both
            else:
                chosen = [self._chosen(decision.source, local, fallbacks, run)]
            self._retrieve(run, chosen, query, context.top_k, thought=decision.thought)
        self._answer(run)

    def _tool_names(self, local: Source, fallbacks: list[Source]) -> list[str]:
        if self.method == "prefrag-prompt":
            return [
                f"{local.name} {PREFERRED_NOTE}",
                *(f"{s.name} {FALLBACK_NOTE}" for s in fallbacks),
            ]
        return [local.name, *(s.name for s in fallbacks)]

    def _chosen(
        self, requested: str | None, local: Source, fallbacks: list[Source], run: _Run
    ) -> Source:
        for source in [local, *fallbacks]:
            if requested and requested.strip().lower().startswith(source.name.lower()):
                return source
        # The model named no (known) source: ReAct's tool call fails over to the first tool.
        run.apply({"notes": [f"No source chosen ({requested!r}); searched '{local.name}'."]})
        return local

    def _retrieve(
        self, run: _Run, sources: Sequence[Source], query: str, k: int, *, thought: str = ""
    ) -> None:
        """One step through the shared kernel: search each source, use all they return."""
        step = new_step(index=len(run.route), thought=thought, query=query)
        counts: dict[str, int] = {}
        uses: list[tuple[Source, list[Document]]] = []
        for source in sources:
            node = "search_fallback" if source.kind == "web" else "retrieve_local"
            found = run.timed(node, partial(search, source, query, k))
            step = add_search(step, found)
            counts = add_counts(counts, found.counts)
            uses.append((source, found.documents))
        run.apply(use_documents(step, uses, run.evidence, counts=counts))

    def _answer(self, run: _Run) -> None:
        draft = run.timed(
            "answer",
            lambda: self.reasoner.answer(run.question, scratchpad_of(run.route), run.evidence),
        )
        run.apply(answer_update(draft, run.evidence) | usage_update("answer", draft.usage))

    def _output(self, run: _Run) -> dict[str, Any]:
        state = run.state
        return {
            "question": state["question"],
            "answer": state["answer"],
            "abstained": state["abstained"],
            "confidence": state.get("confidence"),
            "short_answer": state.get("short_answer", ""),
            "citations": state["citations"],
            "route": state["route"],
            "reflections": [],
            "counters": state["counters"],
            "model_calls": state["model_calls"],
            "tokens": state["tokens"],
            "notes": state["notes"],
            "history": [],
            "timings": run.timings,
        }
