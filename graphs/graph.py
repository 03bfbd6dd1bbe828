"""The PrefRAG graph: its whole shape in one place.

think → retrieve_local → mog_select → polyview_rerank → compare ─┬→ think
│                                                              └→ switch_to_web → think
└→ answer → self_reflect ─┬→ END
└→ supplement → think
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from prefrag.graphs.context import Context
from prefrag.graphs.nodes import make_nodes
from prefrag.graphs.resources import ResourceProvider
from prefrag.graphs.state import InputState, OutputState, PrefRAGState
from prefrag.graphs.tool_nodes import mog_select, polyview_rerank
from prefrag.reasoners.base import Reasoner
from prefrag.sources.base import SourceRegistry

GRAPH_NAME = "prefrag"


def build_graph(
    *,
    reasoner: Reasoner | None = None,
    sources: SourceRegistry | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
) -> CompiledStateGraph:
    """Compile the PrefRAG graph.

    Args:
        reasoner: The model seam; default: built per run from settings and the run's
            `Context` (extractive when no model endpoint is configured).
        sources: Named sources; default: every indexed local source plus the web.
        checkpointer: Persist runs (e.g. SQLite) so a thread can be resumed or inspected.
    """
    provider = ResourceProvider(reasoner=reasoner, sources=sources)
    nodes = make_nodes(provider)
    builder = StateGraph(
        PrefRAGState, context_schema=Context, input_schema=InputState, output_schema=OutputState
    )
    builder.add_node("think", nodes["think"])
    builder.add_node("retrieve_local", nodes["retrieve_local"])
    builder.add_node("mog_select", mog_select)
    builder.add_node("polyview_rerank", polyview_rerank)
    builder.add_node("compare", nodes["compare"])
    builder.add_node("switch_to_web", nodes["switch_to_web"])
    builder.add_node("answer", nodes["answer"])
    builder.add_node("self_reflect", nodes["self_reflect"])
    builder.add_node("supplement", nodes["supplement"])

    builder.add_edge(START, "think")
    builder.add_edge("retrieve_local", "mog_select")
    builder.add_edge("mog_select", "polyview_rerank")
    builder.add_edge("polyview_rerank", "compare")
    builder.add_edge("switch_to_web", "think")
    builder.add_edge("answer", "self_reflect")
    builder.add_edge("supplement", "think")
    return builder.compile(checkpointer=checkpointer, name=GRAPH_NAME)
