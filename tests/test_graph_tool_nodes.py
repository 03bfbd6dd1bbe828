"""The tool nodes sit in the retrieval path and are toggled by the run context."""

from __future__ import annotations

from graph_helpers import ListSource, doc
from test_graph_flow import QUESTION, ScriptedReasoner

from prefrag import ask
from prefrag.sources.base import SourceRegistry


class CountingSource(ListSource):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.ks: list[int] = []

    def search(self, query: str, k: int):
        self.ks.append(k)
        return super().search(query, k)


def _pool(prefix: str, source: str, kind: str, n: int = 12):
    return [
        doc(
            f"{prefix}{i}",
            f"Carsten Olsen note {i}: Danish plant ecologist, pH, soils, 19{70 + i}.",
            source,
            kind,
            date=f"20{10 + i}-01-01",
            authority=0.3 + 0.05 * i,
        )
        for i in range(n)
    ]


def test_polyview_on_fetches_a_pool_and_keeps_top_k_with_view_scores() -> None:
    local = CountingSource("local", default=_pool("l", "local", "local"))
    web = CountingSource("web", "web", default=_pool("w", "web", "web"))
    result = ask(
        QUESTION,
        reasoner=ScriptedReasoner(),
        sources=SourceRegistry([local, web]),
        use_polyview=True,
        top_k=3,
        polyview_pool=4,
        max_reflections=0,
    )
    assert set(local.ks) == {12} and set(web.ks) == {12}
    for step in result["route"]:
        assert len(step["used"]) == 3
        assert all("polyview" in d.metadata for d in step["used"])


def test_tool_nodes_off_pass_documents_through() -> None:
    local = CountingSource("local", default=_pool("l", "local", "local"))
    result = ask(
        QUESTION,
        reasoner=ScriptedReasoner(),
        sources=SourceRegistry([local]),
        top_k=3,
        max_reflections=0,
        fallback_sources=[],
    )
    assert set(local.ks) == {3}
    assert [d.metadata["id"] for d in result["route"][0]["used"]] == ["l0", "l1", "l2"]
    assert all("polyview" not in d.metadata for d in result["route"][0]["used"])


def test_mog_on_without_a_granularity_index_passes_through_and_says_so() -> None:
    local = CountingSource("local", default=_pool("l", "local", "local"))
    result = ask(
        QUESTION,
        reasoner=ScriptedReasoner(),
        sources=SourceRegistry([local]),
        use_mog=True,
        preferred_source="local",
        max_reflections=0,
        fallback_sources=[],
    )
    assert any("no granularity index" in note for note in result["notes"])
    assert result["route"][0]["used"]


def test_polyview_views_and_coverage_are_run_settings() -> None:
    local = CountingSource("local", default=_pool("l", "local", "local"))
    result = ask(
        QUESTION,
        reasoner=ScriptedReasoner(),
        sources=SourceRegistry([local]),
        use_polyview=True,
        polyview_views=["R"],
        polyview_coverage=False,
        top_k=3,
        max_reflections=0,
        fallback_sources=[],
    )
    scores = result["route"][0]["used"][0].metadata["polyview"]
    assert "R" in scores
    assert "A" not in scores and "T" not in scores


def test_polyview_llm_views_count_in_model_calls_on_both_sources() -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    from prefrag import build_graph
    from prefrag.graphs.resources import ResourceProvider
    from prefrag.tools.polyview import PolyviewReranker

    reply = AIMessage(
        content="{}", usage_metadata={"input_tokens": 8, "output_tokens": 2, "total_tokens": 10}
    )
    judge = GenericFakeChatModel(messages=iter([reply] * 100))
    reranker = PolyviewReranker(views=("R", "U", "S"), chat_model=judge)
    provider = ResourceProvider(
        reasoner=ScriptedReasoner(),
        sources=SourceRegistry(
            [
                CountingSource("local", default=_pool("l", "local", "local")),
                CountingSource("web", "web", default=_pool("w", "web", "web")),
            ]
        ),
        rerankers={"judged": reranker},
    )
    result = ask(
        QUESTION,
        graph=build_graph(resources=provider),
        use_polyview=True,
        polyview_profile="judged",
        max_reflections=0,
    )
    # Every step's local documents are reranked (R, U, S: three judge calls), and so are the
    # web documents of every step that switched.
    steps = len(result["route"])
    web_reranks = sum(1 for s in result["route"] if "web" in s["searched"])
    assert web_reranks >= 1
    assert result["model_calls"]["polyview"] == 3 * (steps + web_reranks)
    assert result["tokens"]["polyview"] == 10 * result["model_calls"]["polyview"]
