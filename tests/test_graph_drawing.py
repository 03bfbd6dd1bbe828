"""The graph's shape, as Studio draws it, is a reviewed snapshot."""

from __future__ import annotations

import itertools
from pathlib import Path

from graph_helpers import ListSource
from test_graph_flow import QUESTION, ScriptedReasoner, _sources

from prefrag import build_graph
from prefrag.graphs.context import Context
from prefrag.sources.base import SourceRegistry

SNAPSHOT = Path(__file__).parent / "snapshots" / "graph.mmd"


def test_graph_drawing_matches_snapshot() -> None:
    drawing = build_graph(sources=SourceRegistry()).get_graph().draw_mermaid()
    assert SNAPSHOT.exists(), f"No reviewed snapshot; write this drawing to {SNAPSHOT}."
    assert drawing == SNAPSHOT.read_text()


def test_graph_has_the_papers_nodes_and_typed_edges() -> None:
    graph = build_graph(sources=SourceRegistry()).get_graph()
    assert set(graph.nodes) == {
        "__start__",
        "new_question",
        "condense_question",
        "think",
        "plan_sources",
        "retrieve_planned",
        "retrieve_local",
        "mog_select",
        "polyview_rerank",
        "open_step",
        "compare",
        "use_local",
        "search_fallback",
        "rerank_fallback",
        "use_fallback",
        "filter_evidence",
        "answer",
        "self_reflect",
        "supplement",
        "__end__",
    }
    conditional = {(e.source, e.target) for e in graph.edges if e.conditional}
    assert conditional == {
        ("think", "plan_sources"),
        ("think", "retrieve_local"),
        ("think", "filter_evidence"),
        ("plan_sources", "retrieve_local"),
        ("plan_sources", "retrieve_planned"),
        ("open_step", "compare"),
        ("open_step", "search_fallback"),
        ("compare", "use_local"),
        ("compare", "search_fallback"),
        ("search_fallback", "rerank_fallback"),
        ("search_fallback", "use_fallback"),
        ("search_fallback", "search_fallback"),
        ("search_fallback", "use_local"),
        ("self_reflect", "supplement"),
        ("self_reflect", "__end__"),
    }


def _visited(context: Context, sources: list[ListSource]) -> list[str]:
    graph = build_graph(reasoner=ScriptedReasoner(), sources=SourceRegistry(sources))
    chunks = graph.stream({"question": QUESTION}, context=context, stream_mode="updates")
    return [next(iter(chunk)) for chunk in chunks]


def test_each_route_runs_the_nodes_drawn_for_it() -> None:
    """The drawing is what runs: the preference-off, fallback and rerank paths are nodes."""
    local, web = _sources()
    default = _visited(Context(), [local, web])
    assert "compare" in default and "search_fallback" in default
    assert "rerank_fallback" not in default
    reranked = _visited(Context(use_polyview=True), [local, web])
    assert "rerank_fallback" in reranked
    no_pref = _visited(Context(preference_driven=False), [local, web])
    assert "compare" not in no_pref and "search_fallback" in no_pref
    down = ListSource("down", "web", fail=True)
    failing = _visited(Context(fallback_sources=["down", "web"]), [local, down, web])
    pairs = list(itertools.pairwise(failing))
    assert ("search_fallback", "search_fallback") in pairs  # 'down' empty: the next one
