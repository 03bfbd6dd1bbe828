"""A follow-up that names nothing of its own is asked of the earlier turn's subject.

Through the API on a thread, with invented notes: "how far apart?" and "how many people
are in each group?" have no pronoun to resolve, yet lean on the earlier question; "it"
after "Where is X held?" is X, not the place answered; "the Brindlecombe goose fair" is
one subject even where a note's title is only "Brindlecombe"; the verb after "who" is no
subject; "how much did it cost to replace her passport" has an expletive "it".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from indexed_notes import index_notes, thread_graph

import prefrag

RUN: dict[str, Any] = {"preferred_source": "notes", "fallback_sources": [], "max_reflections": 0}

NOTES = {
    "brindlecombe": "# Brindlecombe\n\n"
    "Brindlecombe is a hill village above the Orrel valley. Its goose fair, held on the "
    "second Saturday of October, is recorded from 1712. The village hall was rebuilt in 1961.",
    "tolland-hearing": "# Tolland hearing clinic\n\n"
    "The Tolland hearing clinic is held at the Marsh Lane Health Centre. The Tolland "
    "hearing clinic runs from 9 am to 1 pm on Tuesdays.",
    "varnexa": "# Varnexa\n\n"
    "Varnexa is a tablet for an overactive bladder. Antacids lower how much Varnexa is "
    "absorbed: leave 3 hours between Varnexa and an antacid.",
    "pendry-walking": "# Pendry walking group\n\n"
    "The Pendry walking group is a weekly guided walk for people recovering from heart "
    "surgery. Each group takes 6 to 10 walkers with two volunteer leaders.",
    "ashcombe-baby": "# Ashcombe baby clinic\n\n"
    "Health visitor Morwenna Trice runs the Ashcombe baby clinic from March 2026. The "
    "Ashcombe baby clinic is on Friday mornings at the Quay Street surgery.",
    "pellow-review": "# Case review: a lost passport\n\n"
    "Mrs Ottilie Pellow lost her passport at the clinic on 3 March. Replacing the passport "
    "cost her £95, which the clinic refunded.",
}


@pytest.fixture
def graph(tmp_path: Path):
    index_notes(tmp_path / "notes", NOTES, "notes")
    return thread_graph()


def _follow_up(graph, thread: str, earlier: str, question: str) -> dict:
    prefrag.ask(earlier, graph=graph, thread_id=thread, **RUN)
    return prefrag.ask(question, graph=graph, thread_id=thread, **RUN)


def test_a_question_word_alone_is_asked_of_the_earlier_question(graph):
    result = _follow_up(graph, "apart", "Can I take antacids with Varnexa?", "how far apart?")
    standalone = result["standalone_question"]
    assert "antacids" in standalone and "Varnexa" in standalone, standalone


def test_a_follow_up_naming_nothing_of_its_own_keeps_the_earlier_subject(graph):
    result = _follow_up(
        graph, "group", "What is the Pendry walking group?", "how many people are in each group?"
    )
    assert "Pendry walking group" in result["standalone_question"], result["standalone_question"]
    assert "6 to 10" in result["answer"], result["answer"]


def test_it_after_a_where_question_is_the_thing_not_the_place(graph):
    result = _follow_up(
        graph, "where", "Where is the Tolland hearing clinic held?", "what times does it run?"
    )
    standalone = result["standalone_question"]
    assert "Tolland hearing clinic run" in standalone, standalone
    assert "Marsh Lane" not in standalone, standalone


def test_a_name_and_its_kind_stay_whole_against_a_shorter_title(graph):
    result = _follow_up(
        graph, "fair", "When is the Brindlecombe goose fair?", "how far back does it go"
    )
    assert "Brindlecombe goose fair" in result["standalone_question"], result["standalone_question"]


def test_the_verb_after_who_is_not_the_subject(graph):
    result = _follow_up(
        graph, "runs", "Who runs the Ashcombe baby clinic now?", "which day is it on?"
    )
    standalone = result["standalone_question"]
    assert "Ashcombe baby clinic" in standalone and "runs" not in standalone, standalone


def test_it_cost_to_is_no_pointer(graph):
    result = _follow_up(
        graph,
        "cost",
        "What happened to Mrs Pellow?",
        "how much did it cost to replace her passport?",
    )
    standalone = result["standalone_question"]
    assert "did it cost" in standalone, standalone
