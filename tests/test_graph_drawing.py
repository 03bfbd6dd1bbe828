"""The graph's shape, as Studio draws it, is a reviewed snapshot."""

from __future__ import annotations

from pathlib import Path

from prefrag import build_graph
from prefrag.sources.base import SourceRegistry

SNAPSHOT = Path(__file__).parent / "snapshots" / "graph.mmd"


def test_graph_drawing_matches_snapshot() -> None:
    drawing = build_graph(sources=SourceRegistry()).get_graph().draw_mermaid()
    assert SNAPSHOT.exists(), f"No reviewed snapshot; write this drawing to {SNAPSHOT}."
    assert drawing == SNAPSHOT.read_text()


def test_graph_has_the_papers_nodes_and_typed_edges() -> None:
    graph = build_graph(sources=SourceRegistry()).get_graph()
    assert set(graph.nodes) >= {
        "new_question",
        "condense_question",
        "think",
        "plan_sources",
        "retrieve_local",
        "mog_select",
        "polyview_rerank",
        "compare",
        "switch_to_web",
        "filter_evidence",
        "answer",
        "self_reflect",
        "supplement",
    }
    conditional = {(e.source, e.target) for e in graph.edges if e.conditional}
    assert conditional == {
        ("think", "plan_sources"),
        ("think", "filter_evidence"),
        ("plan_sources", "retrieve_local"),
        ("plan_sources", "polyview_rerank"),
        ("compare", "think"),
        ("compare", "switch_to_web"),
        ("self_reflect", "supplement"),
        ("self_reflect", "__end__"),
    }
