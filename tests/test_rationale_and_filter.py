"""RAG² in the graph: rationale queries and the filter_evidence node."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from graph_helpers import ListSource, doc, run_node
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from test_graph_flow import QUESTION, ScriptedReasoner

from prefrag import ask, build_graph
from prefrag.errors import ConfigurationError
from prefrag.graphs.context import Context
from prefrag.graphs.resources import ResourceProvider
from prefrag.reasoners.base import ThinkDecision
from prefrag.reasoners.llm import LLMReasoner
from prefrag.sources.base import SourceRegistry
from prefrag.tools.evidence_filter import (
    RelevanceSnippetFilter,
    SnippetJudgement,
    filter_snippets,
)
from prefrag.tools.trained_filter import load_snippet_filter

RATIONALE = "Sørensen introduced pH at Carlsberg; the ecologist who assisted him is the answer."


class Rationalising(ScriptedReasoner):
    """Writes a rationale when asked for one (`rationale=True`)."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[bool] = []

    def think(
        self, question, scratchpad, *, sources, force_answer=False, feedback=None, rationale=False
    ):
        self.asked.append(rationale)
        decision = super().think(question, scratchpad, sources=sources, force_answer=force_answer)
        if decision.action == "search" and rationale:
            decision.thought, decision.is_rationale = RATIONALE, True
        return decision


def test_rationale_queries_search_with_the_thought_and_the_trace_says_so() -> None:
    local = ListSource("local", default=[doc("l1", "Carlsberg laboratory history.")])
    common: dict[str, Any] = {"max_reflections": 0, "max_iterations": 1, "fallback_sources": []}
    off = ask(QUESTION, reasoner=Rationalising(), sources=SourceRegistry([local]), **common)
    assert local.queries == ["Danish chemist who introduced the concept of pH"]
    assert off["route"][0]["query_basis"] == "sub-query"

    local.queries.clear()
    reasoner = Rationalising()
    on = ask(
        QUESTION,
        reasoner=reasoner,
        sources=SourceRegistry([local]),
        rationale_queries=True,
        **common,
    )
    assert local.queries == [RATIONALE]
    assert reasoner.asked[0] is True
    step = on["route"][0]
    assert step["query"] == RATIONALE and step["query_basis"] == "rationale"
    assert any(
        "rationale" in note and "Danish chemist who introduced the concept of pH" in note
        for note in step["notes"]
    )


def test_a_reasoner_without_rationales_searches_its_thought_with_the_sub_query() -> None:
    local = ListSource("local", default=[doc("l1", "Carlsberg laboratory history.")])
    ask(
        QUESTION,
        reasoner=ScriptedReasoner(),  # it writes no rationale, even when asked
        sources=SourceRegistry([local]),
        rationale_queries=True,
        max_reflections=0,
        max_iterations=1,
        fallback_sources=[],
    )
    assert local.queries == ["next hop Danish chemist who introduced the concept of pH"]


def test_an_empty_rationale_keeps_the_sub_query() -> None:
    silent = ScriptedReasoner(lambda *_: ThinkDecision(thought="", query="sub query"))
    graph = build_graph(reasoner=silent, sources=SourceRegistry([ListSource("local")]))
    update = run_node(graph, "think", {"question": "q"}, Context(rationale_queries=True))
    assert update["query"] == "sub query" and update["query_basis"] == "sub-query"


def test_llm_think_is_asked_for_a_rationale_which_becomes_the_query() -> None:
    prompts: list[str] = []

    class Recording(FakeListChatModel):
        def invoke(self, messages, *args, **kwargs):  # type: ignore[override]
            prompts.append(messages[0].content)
            return super().invoke(messages, *args, **kwargs)

    reply = (
        "Thought: The question asks for a founding year, so I need the company's history.\n"
        "Action: Search_Engine\nAction Input: Inbios founding"
    )
    reasoner = LLMReasoner(
        {"default": FakeListChatModel(responses=["x"]), "think": Recording(responses=[reply] * 2)},
        structured=False,
    )
    graph = build_graph(reasoner=reasoner, sources=SourceRegistry([ListSource("local")]))
    update = run_node(graph, "think", {"question": "When was Inbios founded?"}, Context())
    assert update["query"] == "Inbios founding"
    assert "step-by-step rationale" not in prompts[-1]
    update = run_node(
        graph, "think", {"question": "When was Inbios founded?"}, Context(rationale_queries=True)
    )
    assert "step-by-step rationale" in prompts[-1]
    assert update["query"].startswith("The question asks for a founding year")
    assert update["sub_query"] == "Inbios founding"


class KeywordFilter:
    """Helpful when the snippet mentions the keyword; the score is the share of mentions."""

    def __init__(self, keyword: str) -> None:
        self.keyword = keyword

    def judge(self, question: str, document: Document) -> SnippetJudgement:
        hits = document.page_content.lower().count(self.keyword)
        return SnippetJudgement(hits > 0, min(hits / 3, 1.0), f"mentions '{self.keyword}' {hits}x")


def _filter_graph(keyword: str, *documents: Document):
    local = ListSource("local", default=list(documents))
    provider = ResourceProvider(
        reasoner=ScriptedReasoner(),
        sources=SourceRegistry([local]),
        snippet_filter=KeywordFilter(keyword),
    )
    return build_graph(resources=provider)


def test_filter_evidence_drops_an_unhelpful_snippet_and_says_why() -> None:
    evidence = [doc("ph", "pH was introduced by Sørensen. pH pH"), doc("x", "Bananas are yellow.")]
    graph = _filter_graph("ph", *evidence)
    state = {"question": QUESTION, "evidence": evidence}
    assert run_node(graph, "filter_evidence", state, Context()) == {}  # off by default
    update = run_node(graph, "filter_evidence", state, Context(use_evidence_filter=True))
    assert [d.metadata["id"] for d in update["evidence"]] == ["ph"]
    (dropped,) = [entry for entry in update["filtered"] if not entry["kept"]]
    assert dropped["id"] == "x" and dropped["reason"] == "mentions 'ph' 0x"
    assert any("dropped [x]" in note for note in update["notes"])


def test_filter_evidence_keeps_the_best_snippet_when_none_is_helpful() -> None:
    evidence = [doc("a", "Apples."), doc("b", "Bananas.")]
    graph = _filter_graph("zebra", *evidence)
    update = run_node(
        graph,
        "filter_evidence",
        {"question": "q", "evidence": evidence},
        Context(use_evidence_filter=True),
    )
    assert len(update["evidence"]) == 1
    assert any("kept the best scored one" in note for note in update["notes"])


def test_filter_runs_before_the_answer_in_a_whole_run() -> None:
    pool = [doc("l0", "Sørensen and pH at Carlsberg."), doc("l1", "Unrelated cooking notes.")]
    graph = _filter_graph("carlsberg", *pool)
    result = graph.invoke(
        {"question": QUESTION},
        context=Context(use_evidence_filter=True, max_reflections=0, fallback_sources=[]),
    )
    assert [entry["id"] for entry in result["filtered"] if not entry["kept"]] == ["l1"]
    assert all(c["id"] != "l1" for c in result["citations"])


def test_the_default_filter_judges_relevance_with_minilm() -> None:
    judged = filter_snippets(
        RelevanceSnippetFilter(),
        "What is the capital city of France?",
        [
            doc("paris", "Paris is the capital and most populous city of France."),
            doc("atp", "Mitochondria synthesise ATP through oxidative phosphorylation."),
        ],
    )
    assert [d.metadata["id"] for d in judged.kept] == ["paris"]
    (dropped,) = judged.dropped
    assert dropped["id"] == "atp" and "is below" in dropped["reason"]


def test_a_folder_that_is_not_a_trained_filter_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="no such folder"):
        load_snippet_filter(tmp_path / "missing")
    with pytest.raises(ConfigurationError, match="not a trained evidence filter"):
        load_snippet_filter(tmp_path)


@pytest.mark.parametrize("command", ["ask", "eval"])
def test_the_three_switches_are_command_line_options(command: str) -> None:
    from typer.testing import CliRunner

    from prefrag.cli import app

    shown = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"}).stdout
    for option in (
        "--use-planning",
        "--rationale-queries",
        "--use-evidence-filter",
        "--plan-model",
    ):
        assert option in shown, (command, option)


def test_a_chat_model_filter_reads_verdicts_and_keeps_unreadable_ones() -> None:
    from prefrag.tools.evidence_filter import ChatSnippetFilter

    model = FakeListChatModel(
        responses=["On topic. <answer>yes</answer>", "Off topic. <answer>No</answer>", "hmm"]
    )
    outcome = filter_snippets(
        ChatSnippetFilter(model), "q", [doc("a", "A"), doc("b", "B"), doc("c", "C")]
    )
    assert [d.metadata["id"] for d in outcome.kept] == ["a", "c"]
    assert outcome.dropped[0]["reason"] == "the model judged it not helpful"
    assert outcome.judged[2]["reason"].startswith("the model's verdict could not be read")


class ScoredDropAll:
    """A trained filter's shape that judges every snippet not helpful, scoring one higher."""

    def __init__(self, best: str) -> None:
        self.best = best

    def judge(self, question: str, document: Document) -> SnippetJudgement:
        score = 0.3 if self.best in document.page_content else 0.1
        return SnippetJudgement(False, score, "trained filter: P(helpful) low")


@pytest.mark.parametrize(("best", "answered"), [("kiln", False), ("celadon", True)])
def test_an_answer_after_a_filter_that_drops_everything_is_drawn_from_what_it_kept(
    best: str, answered: bool
) -> None:
    from prefrag.reasoners.extractive import ExtractiveReasoner

    pool = [
        doc("glaze", "Ilse Marrow fired a celadon glaze at cone ten in her Vell workshop."),
        doc("kiln", "The Vell workshop kiln was rebuilt in brick in 1970 by local masons."),
    ]
    provider = ResourceProvider(
        reasoner=ExtractiveReasoner(use_embeddings=False),
        sources=SourceRegistry([ListSource("local", default=pool)]),
        snippet_filter=ScoredDropAll(best),
    )
    result = build_graph(resources=provider).invoke(
        {"question": "Which glaze did Ilse Marrow fire at cone ten?"},
        context=Context(use_evidence_filter=True, max_reflections=0, fallback_sources=[]),
    )
    kept = [entry["id"] for entry in result["filtered"] if entry["kept"]]
    cited = [c["id"] for c in result["citations"]]
    assert len(kept) == 1
    if answered:
        assert not result["abstained"] and cited == kept
    else:  # the kept snippet does not answer: an honest abstention, not the dropped text
        assert result["abstained"] and "celadon" not in result["answer"].lower()
    assert result["abstained"] or cited, "an answer must cite what the filter kept"
