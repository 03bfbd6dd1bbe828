"""What a follow-up's pronoun or "there" points back to, through the API on a thread.

- "Who was Ada Quennell?" asks about a named person: "her" in the next question is that
  person, whatever the earlier answer's short span was.
- "there" after a question set at a named place ("... at Holm Lane?") is that place.
- A continuation gets the earlier question's setting without its closing verb ("When was
  the chapel in Brae built?" + "how many does it seat?" is asked "in Brae", not "in Brae
  built").
- After "Which medicines does X stop ...?", "it" is X, not the kind of thing asked for.

The notes are invented.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from indexed_notes import index_notes, thread_graph

import prefrag
from prefrag.reasoners.base import PriorTurn
from prefrag.reasoners.extractive import ExtractiveReasoner

RUN = {"preferred_source": "notes", "fallback_sources": [], "max_reflections": 0}

NOTES = [
    {
        "id": "ada-quennell",
        "title": "Ada Quennell",
        "text": "Ada Quennell (1870-1944) was a weaver born in Brae. Her blanket cloth won a "
        "silver medal at the Dunmore show of 1908.",
    },
    {
        "id": "brae",
        "title": "Brae",
        "text": "Brae is a village on the Ottery Burn with a population of 520. Its mill "
        "closed in 1961.",
    },
    {
        "id": "holm-lane",
        "title": "Holm Lane Surgery",
        "text": "The practice manager at Holm Lane Surgery is Fenella Rusk. Phone: 01632 "
        "555 014 (8am to 6pm, Monday to Friday).",
    },
    {
        "id": "tarn-road",
        "title": "Tarn Road Clinic",
        "text": "The practice manager at Tarn Road Clinic is Oswin Pryce. Phone: 01632 555 "
        "877 (9am to 5pm).",
    },
]


@pytest.fixture
def notes(tmp_path: Path) -> None:
    index_notes(tmp_path / "notes", NOTES, "notes")


def test_her_after_who_was_a_named_person_is_that_person(notes):
    graph = thread_graph()
    prefrag.ask("Who was Ada Quennell?", graph=graph, thread_id="q1", **RUN)
    result = prefrag.ask("What did her blanket cloth win?", graph=graph, thread_id="q1", **RUN)
    assert result["standalone_question"] == "What did Ada Quennell's blanket cloth win?"
    assert "silver medal" in result["answer"], result["answer"]


def test_there_is_the_place_the_earlier_question_was_set_at(notes):
    graph = thread_graph()
    prefrag.ask("Who is the practice manager at Holm Lane?", graph=graph, thread_id="h1", **RUN)
    result = prefrag.ask("What's the phone number there?", graph=graph, thread_id="h1", **RUN)
    assert "Holm Lane" in result["standalone_question"], result["standalone_question"]
    assert "555 014" in result["answer"], result["answer"]
    assert "555 877" not in result["answer"], result["answer"]


def _condensed(earlier: str, answer: str, follow_up: str) -> str:
    prior = [PriorTurn(question=earlier, answer=answer, short_answer=answer, titles=[])]
    return ExtractiveReasoner(use_embeddings=False).condense(follow_up, prior).question


def test_a_continuation_leaves_the_earlier_verb_out_of_its_setting():
    standalone = _condensed(
        "When was the chapel in Brae built?", "1868", "and how many does it seat?"
    )
    assert "Brae" in standalone and "built" not in standalone, standalone


def test_it_after_a_which_kind_question_is_the_thing_named_not_the_kind():
    standalone = _condensed(
        "Which medicines does omeprazole stop working?",
        "Clopidogrel works less well with it, so pantoprazole is used instead here.",
        "and which level can it lower?",
    )
    assert "omeprazole" in standalone, standalone
    assert "medicines" not in standalone, standalone
