"""The PrefRAG graph: its whole shape, every branch included, in this one file.

Nodes do one thing each; the routing functions below decide every branch, from what the
nodes wrote and the run's `Context`. One retrieval round::

    START → new_question → condense_question → think
    think ─┬→ plan_sources ─┬→ retrieve_planned ──────────────────┐
           │                └→ retrieve_local → mog_select ─────┴→ polyview_rerank → open_step
           ├→ retrieve_local (planning off)
           └→ filter_evidence → answer → self_reflect ─┬→ END
                                                       └→ supplement → think
    open_step ─┬→ compare ─┬→ use_local → think       (switcher kept the local documents)
               │           └→ search_fallback        (switcher said False)
               └→ search_fallback                    (preference off: every source used)
    search_fallback ─┬→ rerank_fallback → use_fallback → think   (documents, polyview on)
                     ├→ use_fallback → think                     (documents)
                     ├→ search_fallback                          (nothing: the next fallback)
                     └→ use_local → think                        (every fallback empty)

`condense_question` rewrites a follow-up on a thread into a standalone question from the
thread's `history` (a first question passes unchanged); every later node works on it.
The Mermaid drawing (`tests/snapshots/graph.mmd`) is generated from this file.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from prefrag.graphs import nodes
from prefrag.graphs.condense import condense_question
from prefrag.graphs.context import Context, context_of
from prefrag.graphs.filtering import filter_evidence
from prefrag.graphs.planning import plan_sources, retrieve_planned
from prefrag.graphs.resources import ResourceProvider
from prefrag.graphs.state import InputState, OutputState, PrefRAGState
from prefrag.graphs.tool_nodes import mog_select, polyview_rerank, rerank_fallback
from prefrag.reasoners.base import Reasoner
from prefrag.sources.base import SourceRegistry

GRAPH_NAME = "prefrag"

PrefRAGGraph = CompiledStateGraph[PrefRAGState, Context, InputState, OutputState]


def after_think(
    state: PrefRAGState, runtime: Runtime[Context]
) -> Literal["plan_sources", "retrieve_local", "filter_evidence"]:
    """Answer (also when the budget is spent), or search: planned first when planning is on."""
    if state.get("action") == "answer":
        return "filter_evidence"
    return "plan_sources" if context_of(runtime, state).use_planning else "retrieve_local"


def after_plan(state: PrefRAGState) -> Literal["retrieve_planned", "retrieve_local"]:
    """A plan that searches some source is run; otherwise the preferred source is searched."""
    return "retrieve_planned" if state.get("plan") else "retrieve_local"


def after_open_step(
    state: PrefRAGState, runtime: Runtime[Context]
) -> Literal["compare", "search_fallback"]:
    """Preference-driven retrieval asks the switcher; off, every round also searches a fallback."""
    every_source = not context_of(runtime, state).preference_driven
    return "search_fallback" if every_source and state.get("fallbacks_left") else "compare"


def after_compare(state: PrefRAGState) -> Literal["search_fallback", "use_local"]:
    """The switcher's verdict: False hands the step to the fallback sources (if any)."""
    verdict = (state.get("step") or {}).get("verdict")
    return "search_fallback" if verdict is False and state.get("fallbacks_left") else "use_local"


def after_fallback_search(
    state: PrefRAGState, runtime: Runtime[Context]
) -> Literal["rerank_fallback", "use_fallback", "search_fallback", "use_local"]:
    """Documents found are used (reranked first with polyview on); else the next fallback.

    When every fallback source returned nothing, the round keeps its local documents.
    """
    if state.get("fallback"):
        polyview = context_of(runtime, state).use_polyview
        return "rerank_fallback" if polyview else "use_fallback"
    return "search_fallback" if state.get("fallbacks_left") else "use_local"


def after_reflection(state: PrefRAGState) -> Literal["supplement", "__end__"]:
    """A negative self-reflection (within `max_reflections`) buys one supplement."""
    return "supplement" if state.get("supplement_requested") else "__end__"


def build_graph(
    *,
    reasoner: Reasoner | None = None,
    sources: SourceRegistry | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    resources: ResourceProvider | None = None,
) -> PrefRAGGraph:
    """Compile the PrefRAG graph.

    Args:
        reasoner: The model seam; default: built per run from settings and the run's
            `Context` (extractive when no model endpoint is configured).
        sources: Named sources; default: every indexed local source plus the web.
        checkpointer: Persist runs (e.g. SQLite) so a thread can be resumed or inspected.
        resources: A ready `ResourceProvider` (then `reasoner` and `sources` are ignored).
    """
    provider = resources or ResourceProvider(reasoner=reasoner, sources=sources)

    def bound(node: Any) -> Any:
        return partial(node, resources=provider)

    builder = StateGraph(
        PrefRAGState, context_schema=Context, input_schema=InputState, output_schema=OutputState
    )
    builder.add_node("new_question", bound(nodes.new_question))
    builder.add_node("condense_question", bound(condense_question))
    builder.add_node("think", bound(nodes.think))
    builder.add_node("plan_sources", bound(plan_sources))
    builder.add_node("retrieve_planned", bound(retrieve_planned))
    builder.add_node("retrieve_local", bound(nodes.retrieve_local))
    builder.add_node("mog_select", bound(mog_select))
    builder.add_node("polyview_rerank", bound(polyview_rerank))
    builder.add_node("open_step", bound(nodes.open_step))
    builder.add_node("compare", bound(nodes.compare))
    builder.add_node("use_local", bound(nodes.use_local))
    builder.add_node("search_fallback", bound(nodes.search_fallback))
    builder.add_node("rerank_fallback", bound(rerank_fallback))
    builder.add_node("use_fallback", bound(nodes.use_fallback))
    builder.add_node("filter_evidence", bound(filter_evidence))
    builder.add_node("answer", bound(nodes.answer))
    builder.add_node("self_reflect", bound(nodes.self_reflect))
    builder.add_node("supplement", bound(nodes.supplement))

    builder.add_edge(START, "new_question")
    builder.add_edge("new_question", "condense_question")
    builder.add_edge("condense_question", "think")
    builder.add_conditional_edges("think", after_think)
    builder.add_conditional_edges("plan_sources", after_plan)
    builder.add_edge("retrieve_planned", "polyview_rerank")
    builder.add_edge("retrieve_local", "mog_select")
    builder.add_edge("mog_select", "polyview_rerank")
    builder.add_edge("polyview_rerank", "open_step")
    builder.add_conditional_edges("open_step", after_open_step)
    builder.add_conditional_edges("compare", after_compare)
    builder.add_conditional_edges("search_fallback", after_fallback_search)
    builder.add_edge("rerank_fallback", "use_fallback")
    builder.add_edge("use_local", "think")
    builder.add_edge("use_fallback", "think")
    builder.add_edge("filter_evidence", "answer")
    builder.add_edge("answer", "self_reflect")
    builder.add_conditional_edges("self_reflect", after_reflection)
    builder.add_edge("supplement", "think")
    return builder.compile(checkpointer=checkpointer, name=GRAPH_NAME)
