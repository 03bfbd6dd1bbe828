"""Answers that hold: the asked attribute, the asked dimension, the deciding clause, the thread.

As a user meets them: `prefrag index` on their own notes, then `prefrag ask --json`, or the
API on a thread. A note on a medicine that never gives its half-life does not answer "what
is its half-life?" with its dose; an article naming a village's schoolmaster does not say
who its vicar was; a canal's width and length do not say how deep it is. A sentence that
warns about a group of foods and allows one of them in brackets answers "is that one ok?"
with yes. On a thread, "and the cargo boats?" after a question about passenger boats asks
the same question of the cargo boats, and "it" after a question about a named fair is the
fair, not the town it is named after. The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home, thread_graph

import prefrag
from prefrag.reasoners._condense import condense_follow_up
from prefrag.reasoners.base import PriorTurn

NOTES = {
    "notes/tolvarin.md": (
        "# Tolvarin\n\n"
        "Tolvarin is a tablet for an overactive bladder.\n\n"
        "Tolvarin is broken down by CYP2C9 in the liver.\n\n"
        "The usual dose of Tolvarin is 40 mg once a day.\n"
    ),
    "notes/nemrocin.md": (
        "# Nemrocin\n\n"
        "Nemrocin is a tablet for gout flares.\n\n"
        "The half-life of Nemrocin is about 20 hours, so one dose a day is enough.\n"
    ),
    "notes/brisden.md": (
        "# Brisden\n\n"
        "Brisden is a village on the Marl estuary with about 600 people.\n\n"
        "Its schoolmaster, Elias Thorne, kept a weather diary from 1871 to 1904.\n"
    ),
    "notes/wendle-cut.md": (
        "# The Wendle Cut\n\n"
        "The Wendle Cut is a canal 14 kilometres long, dug between 1790 and 1796.\n\n"
        "It is 9 metres wide at the lock and carries pleasure boats today.\n"
    ),
    "notes/corvalate.md": (
        "# Corvalate\n\n"
        "Corvalate is an older antidepressant that blocks the breakdown of tyramine.\n\n"
        "Foods to avoid on corvalate: smoked and cured fish (freshly cooked white fish is"
        " fine).\n\n"
        "Liquorice: it raises blood pressure with corvalate; boiled sweets are fine, but not"
        " liquorice ones.\n"
    ),
    "notes/harrow-staithe.md": (
        "# Harrow Staithe\n\n"
        "Harrow Staithe is a river port on the Lune Drain, first recorded in 1086.\n\n"
        "Passenger boats called at Harrow Staithe until 1927; cargo boats kept coming until"
        " 1962.\n\n"
        "The Harrow Staithe Goose Fair is held every September and is first recorded in"
        " 1544.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("notes",)) as home:
        yield home


def test_an_attribute_the_notes_never_give_is_not_answered_with_another() -> None:
    record = ask_json("What's the half-life of Tolvarin?", "notes")
    assert record["abstained"], record["answer"]
    assert "half-life" in record["answer"]


def test_an_attribute_the_notes_give_is_still_answered() -> None:
    record = ask_json("What's the half-life of Nemrocin?", "notes")
    assert not record["abstained"], record["answer"]
    assert "20 hours" in record["answer"]


def test_a_role_nobody_in_the_notes_holds_is_not_answered_with_another_person() -> None:
    record = ask_json("Who was the vicar of Brisden?", "notes")
    assert record["abstained"], record["answer"]
    assert "Thorne" not in record["answer"]
    kept = ask_json("Who was the schoolmaster of Brisden?", "notes")
    assert "Elias Thorne" in kept["answer"], kept["answer"]


def test_another_dimension_does_not_answer_how_deep() -> None:
    record = ask_json("How deep is the Wendle Cut?", "notes")
    assert record["abstained"], record["answer"]
    kept = ask_json("How wide is the Wendle Cut?", "notes")
    assert not kept["abstained"], kept["answer"]
    assert "9 metres" in kept["answer"]


@pytest.mark.parametrize(
    "question",
    ["Is freshly cooked white fish ok on corvalate?", "are boiled sweets safe with corvalate?"],
)
def test_the_clause_about_the_asked_thing_decides_a_yes(question: str) -> None:
    record = ask_json(question, "notes")
    assert not record["abstained"], record["answer"]
    assert record["answer"].startswith("Yes."), record["answer"]


def test_it_on_a_thread_is_the_named_fair_not_its_town() -> None:
    graph = thread_graph()
    prefrag.ask("When is the Harrow Staithe Goose Fair held?", graph=graph, thread_id="b")
    result = prefrag.ask(
        "when was it first recorded?",
        graph=graph,
        thread_id="b",
        preferred_source="notes",
        fallback_sources=[],
        max_reflections=0,
    )
    assert "1544" in result["answer"], result["answer"]
    assert "Goose Fair" in result["standalone_question"], result["standalone_question"]


@pytest.mark.parametrize(
    ("earlier", "follow_up", "standalone"),
    [
        (
            "When did passenger boats stop calling at Harrow Staithe?",
            "and the cargo boats?",
            "When did cargo boats stop calling at Harrow Staithe?",
        ),
        (
            "How often is the Harrow Staithe Goose Fair held?",
            "when was it first recorded?",
            "Harrow Staithe Goose Fair",
        ),
        (
            "Why shouldn't people on corvalate eat smoked fish?",
            "what would happen to them?",
            "corvalate",
        ),
    ],
)
def test_the_rules_replace_the_like_phrase_and_keep_a_name_whole(
    earlier: str, follow_up: str, standalone: str
) -> None:
    prior = [PriorTurn(question=earlier, answer="x", titles=["Harrow Staithe", "Corvalate"])]
    condensed = condense_follow_up(follow_up, prior)
    assert standalone in condensed.question, condensed.question
    assert "shouldn't" not in condensed.question.split("?")[0].split("people")[-1]


def test_an_answer_drafted_when_the_retrieval_budget_is_spent_reads_with_minilm(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from langchain_core.documents import Document

    from prefrag.reasoners.base import ScratchpadStep
    from prefrag.reasoners.extractive import ExtractiveReasoner

    reasoner = ExtractiveReasoner()
    embedded: list[list[str]] = []
    monkeypatch.setattr(reasoner, "_vectors_of", lambda texts: embedded.append(texts))
    note = Document(
        page_content="The usual dose of Tolvarin is 40 mg once a day.",
        metadata={"id": "tolvarin", "title": "Tolvarin", "source": "notes"},
    )
    step = ScratchpadStep(query="Tolvarin dose", source="notes", observation=[note])
    decision = reasoner.think("What is the usual dose of Tolvarin?", [step], force_answer=True)
    assert decision.action == "answer"
    assert embedded, "the budget-spent answer was drafted without MiniLM"
