"""The PrefRAG graph: its whole shape, every branch included, in this one file.

Topology (routing functions below decide the branches)::

    START → new_question → condense_question → think ─┬→ plan_sources ─┐
                                                      └→ filter_evidence → answer → …
    plan_sources ─┬→ retrieve_local → mog_select ─┐
                  └→ (a plan retrieved) ──────────┴→ polyview_rerank → compare
    compare ─┬→ think               (local documents kept)
             └→ switch_to_web → think (switcher said False, or preference off)
    answer → self_reflect ─┬→ END
                           └→ supplement → think

`condense_question` rewrites a follow-up on a thread into a standalone question from the
thread's `history` (a first question passes unchanged); every later node works on it.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from prefrag.graphs import nodes
from prefrag.graphs.condense import condense_question
from prefrag.graphs.context import Context
from prefrag.graphs.filtering import filter_evidence
from prefrag.graphs.planning import plan_sources
from prefrag.graphs.resources import ResourceProvider
from prefrag.graphs.state import InputState, OutputState, PrefRAGState
from prefrag.graphs.tool_nodes import mog_select, polyview_rerank
from prefrag.reasoners.base import Reasoner
from prefrag.sources.base import SourceRegistry

GRAPH_NAME = "prefrag"

PrefRAGGraph = CompiledStateGraph[PrefRAGState, Context, InputState, OutputState]


def after_think(state: PrefRAGState) -> Literal["plan_sources", "filter_evidence"]:
    """Search with the sub-query `think` chose, or answer (also when the budget is spent)."""
    return "filter_evidence" if state.get("action") == "answer" else "plan_sources"


def after_plan(state: PrefRAGState) -> Literal["retrieve_local", "polyview_rerank"]:
    """A plan that retrieved documents goes on to reranking; else the preferred source."""
    return "polyview_rerank" if state.get("planned") else "retrieve_local"


def after_compare(state: PrefRAGState) -> Literal["switch_to_web", "think"]:
    """The switcher's verdict: a step handed to the fallback sources, or back to thinking."""
    return "switch_to_web" if state.get("pending_step") else "think"


def after_reflection(state: PrefRAGState) -> Literal["supplement", "__end__"]:
    """A negative self-reflection (within `max_reflections`) buys one supplement."""
    return "supplement" if state.get("supplement_requested") else "__end__"


def build_graph(
    *,
    reasoner: Reasoner | None = None,
    sources: SourceRegistry | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
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
    builder.add_node("retrieve_local", bound(nodes.retrieve_local))
    builder.add_node("mog_select", bound(mog_select))
    builder.add_node("polyview_rerank", bound(polyview_rerank))
    builder.add_node("compare", bound(nodes.compare))
    builder.add_node("switch_to_web", bound(nodes.switch_to_web))
    builder.add_node("filter_evidence", bound(filter_evidence))
    builder.add_node("answer", bound(nodes.answer))
    builder.add_node("self_reflect", bound(nodes.self_reflect))
    builder.add_node("supplement", bound(nodes.supplement))

    builder.add_edge(START, "new_question")
    builder.add_edge("new_question", "condense_question")
    builder.add_edge("condense_question", "think")
    builder.add_conditional_edges("think", after_think)
    builder.add_conditional_edges("plan_sources", after_plan)
    builder.add_edge("retrieve_local", "mog_select")
    builder.add_edge("mog_select", "polyview_rerank")
    builder.add_edge("polyview_rerank", "compare")
    builder.add_conditional_edges("compare", after_compare)
    builder.add_edge("switch_to_web", "think")
    builder.add_edge("filter_evidence", "answer")
    builder.add_edge("answer", "self_reflect")
    builder.add_conditional_edges("self_reflect", after_reflection)
    builder.add_edge("supplement", "think")
    return builder.compile(checkpointer=checkpointer, name=GRAPH_NAME)
