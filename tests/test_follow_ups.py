"""Follow-up questions on a thread are rewritten to stand alone before retrieval.

Through the API (`prefrag.ask` with a thread), through Studio's graph (langgraph.json's
compiled graph given a checkpointer, as `langgraph dev` does), and through the reasoners'
`condense` role: the extractive rules and a chat model behind the condense prompt.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import pytest
from indexed_notes import index_notes
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langgraph.checkpoint.memory import InMemorySaver
from repo_files import studio_factory
from typer.testing import CliRunner

import prefrag
from prefrag.cli import app
from prefrag.config import get_settings
from prefrag.graphs.graph import build_graph
from prefrag.reasoners.base import PriorTurn
from prefrag.reasoners.extractive import ExtractiveReasoner
from prefrag.reasoners.llm import LLMReasoner
from prefrag.reasoners.roles import ROLE_NAMES

RUN = {"preferred_source": "clinic", "fallback_sources": [], "max_reflections": 0}

# Invented clinic notes: the bare follow-up "What should I take for pain instead?" is
# closer to the gout and migraine notes; only with the earlier turn does it mean warfarin.
NOTES = [
    {
        "id": "warfarin-pain",
        "title": "Painkillers and warfarin",
        "text": "Ibuprofen and other NSAIDs raise the bleeding risk of warfarin. Patients on "
        "warfarin should use paracetamol as their painkiller rather than ibuprofen.",
    },
    {
        "id": "gout-flare",
        "title": "Gout flares",
        "text": "What to take for gout pain: colchicine taken at the first sign of a flare "
        "eases the pain. Allopurinol is started once the flare has settled.",
    },
    {
        "id": "migraine",
        "title": "Migraine attacks",
        "text": "For migraine pain, take sumatriptan early in the attack. Patients who cannot "
        "take triptans may use aspirin with an anti-sickness medicine.",
    },
    {
        "id": "metformin",
        "title": "Metformin",
        "text": "Metformin lowers blood sugar in type 2 diabetes. Its common side effects are "
        "nausea and diarrhoea, which settle within weeks.",
    },
]
FIRST = "Can I take ibuprofen with warfarin?"
FOLLOW_UP = "What should I take for pain instead?"


@pytest.fixture
def clinic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # These tests check the rewrite and the answer it leads to. The answer is read with the
    # hand-weighted confidence: the fitted one declines the paracetamol sentence as unsure
    # (docs/answers.md says which right answers it gives up).
    monkeypatch.setenv("PREFRAG_CALIBRATED_CONFIDENCE", "false")
    get_settings.cache_clear()
    index_notes(tmp_path / "clinic", NOTES, "clinic")


def _graph(checkpointer: InMemorySaver) -> prefrag.graphs.graph.PrefRAGGraph:
    from prefrag.sources.defaults import default_sources

    return build_graph(sources=default_sources(web=False), checkpointer=checkpointer)


def _cited(result: dict) -> list[str]:
    return [c["document"] for c in result["citations"]]


# --- through the API -----------------------------------------------------------------------


def test_a_follow_up_on_a_thread_is_answered_about_the_earlier_subject(clinic):
    graph = _graph(InMemorySaver())
    alone = prefrag.ask(FOLLOW_UP, graph=graph, thread_id="fresh", **RUN)
    assert "warfarin-pain" not in _cited(alone)  # without the thread it means any pain

    prefrag.ask(FIRST, graph=graph, thread_id="t1", **RUN)
    follow = prefrag.ask(FOLLOW_UP, graph=graph, thread_id="t1", **RUN)

    assert follow["question"] == FOLLOW_UP  # the user's words stay the question
    assert "ibuprofen" in follow["standalone_question"]
    assert follow["route"][0]["query"] == follow["standalone_question"]  # searched rewritten
    assert any(FOLLOW_UP in note and "rewritten" in note for note in follow["notes"])
    assert _cited(follow) == ["warfarin-pain"]
    assert "paracetamol" in follow["answer"]
    assert [turn["question"] for turn in follow["history"]] == [FIRST]


def test_a_standalone_question_on_a_thread_passes_unchanged(clinic):
    graph = _graph(InMemorySaver())
    prefrag.ask(FIRST, graph=graph, thread_id="t2", **RUN)
    question = "How long do the side effects of metformin last?"
    result = prefrag.ask(question, graph=graph, thread_id="t2", **RUN)
    assert result["standalone_question"] == question
    assert result["route"][0]["query"] == question
    assert not any("rewritten" in note for note in result["notes"])
    assert "condense" not in result["model_calls"]  # the rules are not a model call


def test_the_rewrite_of_one_follow_up_carries_into_the_next(clinic):
    graph = _graph(InMemorySaver())
    prefrag.ask(FIRST, graph=graph, thread_id="t3", **RUN)
    prefrag.ask(FOLLOW_UP, graph=graph, thread_id="t3", **RUN)
    third = prefrag.ask("What about aspirin?", graph=graph, thread_id="t3", **RUN)
    turns = third["history"]
    assert turns[1]["question"] == FOLLOW_UP
    assert "ibuprofen" in turns[1]["standalone_question"]  # history keeps the rewrite
    assert "instead of ibuprofen with warfarin" in third["standalone_question"]
    assert "aspirin" in third["standalone_question"]


def test_the_cli_shows_the_rewrite(clinic):
    runner = CliRunner()
    args = ["--source", "clinic", "--no-web", "--thread", "cli-1"]
    assert runner.invoke(app, ["ask", FIRST, *args]).exit_code == 0
    shown = runner.invoke(app, ["ask", FOLLOW_UP, *args, "--json"])
    assert shown.exit_code == 0, shown.output
    record = json.loads(shown.stdout)
    assert record["question"] == FOLLOW_UP
    assert "ibuprofen" in record["standalone_question"]
    plain = runner.invoke(app, ["ask", FOLLOW_UP, *args])  # shows the stored run again
    assert "rewritten" in plain.output and "instead of" in " ".join(plain.output.split())


# --- through Studio's graph ----------------------------------------------------------------


def _studio_graph():
    """The graph `langgraph dev` serves (langgraph.json), with a checkpointer as it adds one."""
    factory = studio_factory()
    compiled = factory(SimpleNamespace(context=RUN))  # what the server hands a factory
    return compiled.copy(update={"checkpointer": InMemorySaver()})


def test_a_follow_up_through_studios_graph_and_thread(clinic):
    graph = _studio_graph()
    config = {"configurable": {"thread_id": "studio-1"}}
    graph.invoke({"question": FIRST}, config=config, context=RUN)
    output = graph.invoke({"question": FOLLOW_UP}, config=config, context=RUN)
    assert output["question"] == FOLLOW_UP
    assert "ibuprofen" in output["standalone_question"]
    assert [c["document"] for c in output["citations"]] == ["warfarin-pain"]
    state = graph.get_state(config).values
    assert state["history"][0]["question"] == FIRST


# --- the condense role ---------------------------------------------------------------------


def _prior(question: str, answer: str, *titles: str) -> list[PriorTurn]:
    return [PriorTurn(question=question, answer=answer, titles=list(titles))]


@pytest.mark.parametrize(
    ("earlier", "answer", "follow_up", "standalone"),
    [
        (FIRST, "NSAIDs raise bleeding risk.", FOLLOW_UP, "instead of ibuprofen with warfarin?"),
        ("What is the dose of warfarin?", "5 mg", "How is it monitored?", "How is warfarin"),
        ("Is lisinopril safe in pregnancy?", "No", "Is that safe in pregnancy?", "lisinopril"),
        ("Who founded Brindlemoor?", "Orla Penhallow", "When did she die?", "Orla Penhallow"),
        ("Who founded Brindlemoor?", "Orla Penhallow", "What river runs through it?", "Brindl"),
        ("Which tower is the tallest in Velmark?", "Orrin Spire", "When was it built?", "Orrin"),
    ],
)
def test_the_rules_carry_the_earlier_subject(earlier, answer, follow_up, standalone):
    condensed = ExtractiveReasoner(use_embeddings=False).condense(
        follow_up, _prior(earlier, answer)
    )
    assert condensed.rewritten
    assert standalone in condensed.question
    assert condensed.question != follow_up


@pytest.mark.parametrize(
    ("earlier", "follow_up", "standalone"),
    [
        ("What is the dose of warfarin?", "What about heparin?", "What is the dose of heparin?"),
        ("How long is the River Almsey?", "And the Tesk?", "How long is the River Tesk?"),
        ("Can I take ibuprofen with warfarin?", "What about naproxen?", "Can I take naproxen with"),
        ("What is the dose of warfarin for adults?", "What about children?", "for children?"),
        ("What is the dose of warfarin?", "And in pregnancy?", "of warfarin in pregnancy?"),
    ],
)
def test_what_about_x_asks_the_earlier_question_of_x_alone(earlier, follow_up, standalone):
    condensed = ExtractiveReasoner(use_embeddings=False).condense(
        follow_up, _prior(earlier, "an answer")
    )
    assert condensed.rewritten
    assert standalone in condensed.question
    # Only the subject asked about now: the one it replaces is gone.
    replaced = {"heparin": "warfarin", "Tesk": "Almsey", "naproxen": "ibuprofen"}
    for new, old in replaced.items():
        if new in follow_up:
            assert old not in condensed.question


def test_a_continuation_gets_the_earlier_setting_not_its_contradicting_clause():
    condensed = ExtractiveReasoner(use_embeddings=False).condense(
        "And how long is the course if she is pregnant?",
        _prior("What is the first antibiotic for cystitis in a woman who is not pregnant?", "x"),
    )
    assert condensed.question.startswith("How long is the course if she is pregnant")
    assert "for cystitis in a woman" in condensed.question
    assert "not pregnant" not in condensed.question


def test_what_about_x_after_options_keeps_the_options():
    # "instead of": X is one more option, not a subject to swap in.
    condensed = ExtractiveReasoner(use_embeddings=False).condense(
        "What about aspirin?", _prior("What should I take instead of ibuprofen?", "paracetamol")
    )
    assert "instead of ibuprofen" in condensed.question and "aspirin" in condensed.question


@pytest.mark.parametrize(
    "question",
    [
        "Is it safe to take ibuprofen with warfarin?",  # "it" points at nothing earlier
        "How long does a gout flare last?",
        "What does the Orrin Spire overlook?",
        "Is it true that grapefruit raises simvastatin levels?",
        "Which statins are safe with grapefruit juice?",
    ],
)
def test_standalone_questions_pass_through_the_rules_unchanged(question):
    condensed = ExtractiveReasoner(use_embeddings=False).condense(
        question, _prior("What is the dose of warfarin?", "5 mg", "Warfarin dosing")
    )
    assert not condensed.rewritten
    assert condensed.question == question


def _llm(*replies: str) -> LLMReasoner:
    model = FakeListChatModel(responses=list(replies))
    return LLMReasoner({role: model for role in ROLE_NAMES}, structured=False)


def test_a_model_rewrites_with_the_condense_prompt():
    reasoner = _llm("Standalone question: What should I take for pain instead of ibuprofen?")
    condensed = reasoner.condense(FOLLOW_UP, _prior(FIRST, "No, it raises bleeding risk."))
    assert condensed.rewritten and not condensed.fallback
    assert condensed.question == "What should I take for pain instead of ibuprofen?"
    assert condensed.usage.calls == 1


def test_a_model_that_keeps_the_question_leaves_it_unchanged():
    question = "How long does a gout flare last?"
    condensed = _llm(f"Standalone question: {question}").condense(question, _prior(FIRST, "No."))
    assert not condensed.rewritten and condensed.question == question


def test_an_unreadable_rewrite_falls_back_to_the_question_as_asked():
    essay = "x" * 2000
    condensed = _llm(essay, essay).condense(FOLLOW_UP, _prior(FIRST, "No."))
    assert condensed.fallback and not condensed.rewritten
    assert condensed.question == FOLLOW_UP
    assert condensed.usage.calls == 2  # one repair retry


def test_the_condense_prompt_shows_the_thread():
    seen: list[str] = []

    class Recorder(FakeListChatModel):
        def invoke(self, messages: Sequence, *args, **kwargs):  # type: ignore[override]
            seen.append(str(messages[-1].content))
            return super().invoke(messages, *args, **kwargs)

    model = Recorder(responses=["Standalone question: What is the dose of heparin?"])
    reasoner = LLMReasoner({role: model for role in ROLE_NAMES}, structured=False)
    reasoner.condense("What about heparin?", _prior("What is the dose of warfarin?", "5 mg"))
    assert "Question: What is the dose of warfarin?" in seen[0]
    assert "Answer: 5 mg" in seen[0]
    assert "Follow-up question: What about heparin?" in seen[0]


# Invented dosing notes: "What about X?" must be answered for X alone.
DOSING = [
    {
        "id": "lisinopril-dose",
        "title": "Lisinopril dosing",
        "text": "The starting dose of lisinopril for high blood pressure is 10 mg once a day. "
        "Check kidney function and potassium one to two weeks after starting.",
    },
    {
        "id": "ramipril-dose",
        "title": "Ramipril dosing",
        "text": "The starting dose of ramipril for high blood pressure is 2.5 mg once a day. "
        "It is raised every two weeks to a usual dose of 10 mg.",
    },
]


@pytest.fixture
def dosing(tmp_path: Path) -> None:
    index_notes(tmp_path / "dosing", DOSING, "clinic")


def test_what_about_x_on_a_thread_is_answered_for_x_alone(dosing):
    graph = _graph(InMemorySaver())
    first = prefrag.ask(
        "What is the starting dose of lisinopril?", graph=graph, thread_id="d1", **RUN
    )
    assert "10 mg" in first["answer"]
    result = prefrag.ask("What about ramipril?", graph=graph, thread_id="d1", **RUN)
    assert result["standalone_question"] == "What is the starting dose of ramipril?"
    assert not result.get("abstained"), result["answer"]
    assert "2.5 mg" in result["answer"]
    assert "lisinopril" not in result["answer"].lower()
    assert _cited(result)[0] == "ramipril-dose"


# Invented notes: the first answer is sentences naming their span apart (`short_answer`).
NOVELS = [
    {
        "id": "hollow-mere",
        "title": "The Hollow Mere",
        "text": "The Hollow Mere is a novel of 1894 about a drowned village on the Keld fells. "
        "It was written by Ada Corran after a winter spent in a shepherd's hut.",
    },
    {
        "id": "ada-corran",
        "title": "Ada Corran",
        "text": "Ada Corran (1841-1911) was an English novelist and diarist. "
        "She died in Kessock, at the age of seventy.",
    },
    {
        "id": "tom-vell",
        "title": "Tom Vell",
        "text": "Tom Vell (1852-1920) was an English poet and printer. "
        "He died in Ossel, where he had kept a press for forty years.",
    },
]


@pytest.fixture
def novels(tmp_path: Path) -> None:
    index_notes(tmp_path / "novels", NOVELS, "clinic")


def test_she_after_a_sentence_answer_is_the_name_it_gave(novels):
    graph = _graph(InMemorySaver())
    question = "Who was born first, Ada Corran or Tom Vell?"
    first = prefrag.ask(question, graph=graph, thread_id="n1", **RUN)
    assert first["short_answer"] == "Ada Corran"
    assert first["answer"] != "Ada Corran"  # the option comes with both sides' sentences
    result = prefrag.ask("Where did she die?", graph=graph, thread_id="n1", **RUN)
    assert result["standalone_question"] == "Where did Ada Corran die?"
    assert "Kessock" in result["answer"]


# Invented notes: "What dose?" on a thread about Tessaline asks Tessaline's dose, not
# whichever dose a bare "What dose?" retrieves.
SYRUPS = [
    {
        "id": "mellodine",
        "title": "Mellodine",
        "text": "Mellodine is a cough syrup. The dose of Mellodine is 10 ml three times a day.",
    },
    {
        "id": "tessaline",
        "title": "Tessaline",
        "text": "Tessaline is an antiviral tablet for shingles. The dose of Tessaline is 200 mg "
        "twice a day for seven days.",
    },
    {
        "id": "corvanil",
        "title": "Corvanil",
        "text": "Corvanil is a tablet for gout. The dose of Corvanil is 100 mg once a day.",
    },
]


@pytest.fixture
def syrups(tmp_path: Path) -> None:
    index_notes(tmp_path / "syrups", SYRUPS, "clinic")


def test_a_bare_aspect_is_asked_of_the_earlier_subject(syrups):
    graph = _graph(InMemorySaver())
    first = prefrag.ask("What is Tessaline?", graph=graph, thread_id="s1", **RUN)
    assert "shingles" in first["answer"], first
    result = prefrag.ask("What dose?", graph=graph, thread_id="s1", **RUN)
    assert result["standalone_question"] == "What dose of Tessaline?"
    assert not result.get("abstained"), result["answer"]
    assert "200 mg" in result["answer"]
    assert "10 ml" not in result["answer"] and "100 mg" not in result["answer"]


@pytest.mark.parametrize(
    ("earlier", "answer", "short", "follow_up", "standalone"),
    [
        (
            "Which syrup is safe with Tessaline?",
            "It is mellodine.",
            "mellodine",
            "What dose?",
            "What dose of mellodine?",
        ),
        (
            "What is the dose of warfarin?",
            "5 mg",
            "5 mg",
            "Side effects?",
            "Side effects of warfarin?",
        ),
    ],
)
def test_the_rules_ask_a_bare_aspect_of_the_referent(earlier, answer, short, follow_up, standalone):
    prior = [PriorTurn(question=earlier, answer=answer, short_answer=short)]
    condensed = ExtractiveReasoner(use_embeddings=False).condense(follow_up, prior)
    assert condensed.question == standalone


def test_a_bare_aspect_after_an_unanswered_kind_question_is_left_alone():
    # "Which syrup ...?" answered with no short answer: nothing to ask "What dose?" of.
    answer = "The preferred syrup with Tessaline is the sugar-free one."
    prior = [PriorTurn(question="Which syrup is safe with Tessaline?", answer=answer)]
    condensed = ExtractiveReasoner(use_embeddings=False).condense("What dose?", prior)
    assert condensed.question == "What dose?"
