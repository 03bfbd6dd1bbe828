"""SPO source planning: the plan parser, the planners, and the plan_sources node in a run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from graph_helpers import ListSource, doc, run_node
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langgraph.runtime import Runtime
from test_graph_flow import ScriptedReasoner

from prefrag import ask, build_graph
from prefrag.graphs.context import Context
from prefrag.graphs.graph import after_plan, after_think
from prefrag.graphs.planning import plan_queries, plannable_sources, run_plan
from prefrag.reasoners.extractive import ExtractiveReasoner
from prefrag.reasoners.llm import LLMReasoner
from prefrag.reasoners.plans import SourceBrief, parse_graph_query, parse_plan
from prefrag.reasoners.source_planner import route_question
from prefrag.sources.base import SourceRegistry
from prefrag.sources.combined import CombinedSource

FIXTURE = Path(__file__).parent / "fixtures" / "malformed_plans.json"


def _fixture() -> tuple[list[SourceBrief], list[dict]]:
    data = json.loads(FIXTURE.read_text())
    return [SourceBrief(**s) for s in data["sources"]], data["plans"]


def _queries(plan) -> dict[str, list[str]]:
    return {name: plan.query_texts(name) for name in plan.queries}


@pytest.mark.parametrize("case", _fixture()[1], ids=lambda case: case["case"])
def test_every_fixture_plan_is_read_as_intended_and_never_crashes(case: dict) -> None:
    sources, _ = _fixture()
    plan = parse_plan(case["text"], sources)
    if case["expected"] is None:
        assert plan is None  # nothing readable: the reasoner repairs or falls back
        return
    assert plan is not None
    assert _queries(plan) == case["expected"]
    assert plan.strict is case.get("strict", False)
    assert plan.missing == case.get("missing", [])
    if "note" in case:
        assert any(case["note"] in note for note in plan.notes), plan.notes
    if plan.strict:
        assert plan.notes == []


def test_a_missing_tag_is_recorded_not_silently_dropped() -> None:
    sources, _ = _fixture()
    plan = parse_plan("<book>x</book><guideline></guideline><graph></graph>", sources)
    assert plan is not None and plan.missing == ["wiki"]
    assert any("no tag for wiki" in note for note in plan.notes)
    assert plan.searched() == ["book"]


def test_graph_terms_keep_their_commas() -> None:
    query, note = parse_graph_query("Leukemia, Acute Lymphoblastic , relapse rates, by age")
    assert (query.term, query.text, note) == (
        "Leukemia, Acute Lymphoblastic",
        "relapse rates, by age",
        None,
    )
    query, note = parse_graph_query("Carcinoma, Squamous Cell,staging")
    assert (query.term, query.text) == ("Carcinoma, Squamous Cell", "staging")
    assert note and "last comma" in note


def test_extractive_routing_sends_the_question_to_the_matching_description() -> None:
    sources = [
        SourceBrief(name="cancer", description="Cancer types, tumour staging and chemotherapy."),
        SourceBrief(name="genes", description="Genetic conditions, inheritance and mutations."),
        SourceBrief(name="kidney", description="Kidney disease, dialysis and urinary problems."),
    ]
    plan = route_question("How is polycystic kidney disease treated with dialysis?", sources)
    assert plan.searched() == ["kidney"]
    assert plan.query_texts("cancer") == [] and plan.query_texts("genes") == []
    plan = route_question("Is this condition inherited through a gene mutation?", sources)
    assert plan.searched() == ["genes"]
    assert "extractive routing" in plan.notes[0]
    assert ExtractiveReasoner(use_embeddings=False).plan(
        "Which chemotherapy for tumour staging III?", sources
    ).searched() == ["cancer"]


def test_extractive_routing_without_any_match_sends_the_question_everywhere() -> None:
    sources = [
        SourceBrief(name="a", description="alpha"),
        SourceBrief(name="b", description="beta"),
    ]
    plan = route_question("What time is it?", sources)
    assert plan.searched() == ["a", "b"] and "no description matches" in plan.notes[0]


def test_graph_sources_get_a_term_from_the_extractive_router() -> None:
    sources = [SourceBrief(name="concepts", description="Disease concepts", kind="graph")]
    plan = route_question("What are the symptoms of Crohn Disease?", sources)
    (query,) = plan.queries["concepts"]
    assert query.term == "Crohn Disease" and query.text.startswith("What are")


def _llm(*replies: str) -> LLMReasoner:
    return LLMReasoner(
        {
            "default": FakeListChatModel(responses=["unused"]),
            "plan": FakeListChatModel(responses=list(replies)),
        },
        structured=False,
    )


def test_llm_planner_reads_a_tolerant_plan_and_repairs_an_unreadable_one() -> None:
    sources, _ = _fixture()
    plan = _llm("```\n<Book>asthma ; inhalers\n<wiki></wiki><graph>asthma , drugs</graph>```").plan(
        "asthma?", sources
    )
    assert plan.searched() == ["book", "graph"] and not plan.strict and not plan.fallback
    assert plan.usage.calls == 1
    repaired = _llm(
        "no tags here", "<book>a</book><guideline></guideline><wiki></wiki><graph></graph>"
    )
    plan = repaired.plan("q", sources)
    assert plan.searched() == ["book"] and plan.strict and plan.usage.calls == 2


def test_llm_planner_falls_back_to_the_question_for_every_source() -> None:
    sources, _ = _fixture()
    plan = _llm("nothing", "still nothing").plan("What causes gout?", sources)
    assert plan.fallback and plan.searched() == [s.name for s in sources]
    assert plan.query_texts("book") == ["What causes gout?"]
    assert "could not be read" in plan.notes[0]


def test_llm_plan_prompt_lists_descriptions_and_query_formats() -> None:
    seen: list[str] = []

    class Recording(FakeListChatModel):
        def invoke(self, messages, *args, **kwargs):  # type: ignore[override]
            seen.append(messages[0].content)
            return super().invoke(messages, *args, **kwargs)

    source = ListSource("guidelines")
    source.description = "Clinical practice guidelines from health agencies."
    source.query_format = "a short keyword phrase"  # type: ignore[attr-defined]
    graph = ListSource("concepts", kind="graph")
    reasoner = LLMReasoner(
        {
            "default": FakeListChatModel(responses=["x"]),
            "plan": Recording(responses=["<guidelines>a</guidelines>"]),
        },
        structured=False,
    )
    plan_queries(reasoner, "q", [source, graph])
    (prompt,) = seen
    assert "guidelines: Clinical practice guidelines from health agencies." in prompt
    assert "Each query: a short keyword phrase" in prompt
    assert "<concepts>{term0} , {query_for_term0}" in prompt
    assert "0 to 3 queries" in prompt


def _kidney_registry() -> tuple[ListSource, ListSource, ListSource, SourceRegistry]:
    cancer = ListSource("cancer", default=[doc("c1", "Chemotherapy regimens.", "cancer")])
    cancer.description = "Cancer types, tumour staging and chemotherapy."
    kidney = ListSource(
        "kidney", default=[doc(f"k{i}", f"Dialysis fact {i}.", "kidney") for i in range(25)]
    )
    kidney.description = "Kidney disease, dialysis and urinary problems."
    web = ListSource("web", "web", default=[doc("w1", "web page", "web", "web")])
    return cancer, kidney, web, SourceRegistry([cancer, kidney, web])


class QuestionSearcher(ScriptedReasoner):
    """Searches with the question itself, then answers."""

    def think(
        self, question, scratchpad, *, sources, force_answer=False, feedback=None, rationale=False
    ):
        decision = super().think(question, scratchpad, sources=sources, force_answer=force_answer)
        if decision.action == "search":
            decision.query = question
        return decision


def test_planning_on_searches_the_planned_sources_off_only_the_preferred() -> None:
    question = "How long does dialysis for kidney failure take?"
    cancer, kidney, _web, registry = _kidney_registry()
    common: dict[str, Any] = {
        "max_reflections": 0,
        "max_iterations": 1,
        "preferred_source": "cancer",
    }
    off = ask(question, reasoner=QuestionSearcher(), sources=registry, **common)
    assert cancer.queries and not kidney.queries
    assert off["route"][0]["searched"][0] == "cancer"

    cancer.queries.clear()
    on = ask(question, reasoner=QuestionSearcher(), sources=registry, use_planning=True, **common)
    first = on["route"][0]
    assert first["searched"][0] == "kidney" and "cancer" not in first["searched"]
    assert kidney.queries and not cancer.queries
    assert first["plan"]["queries"] == {"cancer": [], "kidney": [kidney.queries[0]]}
    assert len(first["results"]["kidney"]) == 20  # top-20 retrieved per planned query
    assert len(first["plan"]["kept"]) == 10  # fused to the top 10
    assert any("Planned queries" in note for note in first["notes"])
    assert on["model_calls"]["plan"] == 0  # the scripted planner is model-free


def test_plan_sources_node_records_an_unreadable_plan_and_searches_the_preferred() -> None:
    registry = _kidney_registry()[3]
    reasoner = _llm("", "")
    graph = build_graph(reasoner=reasoner, sources=registry)
    state: Any = {"question": "q", "query": "q"}
    planning = Context(use_planning=True)
    planned = state | run_node(graph, "plan_sources", state, planning)
    assert after_plan(planned) == "retrieve_planned"
    update = run_node(graph, "retrieve_planned", planned, planning)
    assert update["planned"]["plan"]["fallback"] is True
    assert update["planned"]["searched"] == ["cancer", "kidney"]
    assert any("could not be read" in note for note in update["planned"]["notes"])
    assert after_think(state, Runtime(context=Context())) == "retrieve_local"


def test_an_all_empty_plan_hands_the_round_to_the_preferred_source() -> None:
    _, _, _, registry = _kidney_registry()
    reasoner = _llm("<cancer></cancer><kidney></kidney>")
    graph = build_graph(reasoner=reasoner, sources=registry)
    update = run_node(
        graph, "plan_sources", {"question": "q", "query": "q"}, Context(use_planning=True)
    )
    assert update["plan"] is None and after_plan(update) == "retrieve_local"
    assert any("searches no source" in note for note in update["notes"])


def test_plannable_sources_skip_the_web_and_a_combination_of_members() -> None:
    a, b = ListSource("a"), ListSource("b")
    registry = SourceRegistry([CombinedSource([a, b]), a, b, ListSource("web", "web")])
    assert [s.name for s in plannable_sources(registry)] == ["a", "b"]


def test_run_plan_fuses_rankings_and_counts_each_query() -> None:
    a = ListSource("a", answers={"x": [doc("1", "one", "a"), doc("2", "two", "a")]})
    b = ListSource("b", default=[doc("2", "two", "a"), doc("3", "three", "b")])
    sources = [SourceBrief(name="a"), SourceBrief(name="b")]
    plan = parse_plan("<a>x ; y</a><b>z</b>", sources)
    assert plan is not None
    retrieval = run_plan(plan, [a, b], keep=2)
    assert [d.metadata["id"] for d in retrieval.documents] == ["2", "1"]
    assert retrieval.counts == {"local_total": 3}
    assert a.queries == ["x", "y"] and b.queries == ["z"]


def test_graph_queries_reach_the_graph_source_as_term_comma_query() -> None:
    concepts = ListSource(
        "concepts", kind="graph", default=[doc("c", "Gout: arthritis.", "concepts")]
    )
    sources = [SourceBrief(name="concepts", kind="graph")]
    plan = parse_plan("<concepts>Arthritis, Gouty , treatment ; gout</concepts>", sources)
    assert plan is not None
    run_plan(plan, [concepts])
    assert concepts.queries == ["Arthritis, Gouty , treatment", "gout , gout"]


def test_the_routing_planner_has_the_evaluation_planner_shape() -> None:
    from prefrag.graphs.planning import routing_planner

    kidney, concepts = ListSource("kidney"), ListSource("concepts", kind="graph")
    kidney.description = concepts.description = "Kidney failure and dialysis."
    plan = routing_planner("Is dialysis needed for Kidney Failure?", [kidney, concepts])
    assert plan == {
        "kidney": ["Is dialysis needed for Kidney Failure?"],
        "concepts": ["Kidney Failure , Is dialysis needed for Kidney Failure?"],
    }
