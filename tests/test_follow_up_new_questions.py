"""A follow-up is asked and answered as a new question on the thread's subject.

Through the API on a thread, with invented notes: the standalone question keeps the
earlier subject without the earlier question's closing verb, "which days does she work?"
after a who-question for a role asks it of the role, and an answer that only repeats the
earlier turn's answer is no answer to a different question.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from indexed_notes import index_notes, thread_graph

import prefrag

RUN = {"preferred_source": "clinic", "fallback_sources": [], "max_reflections": 0}

NOTES = {
    "pellham-evening-clinic": "# Pellham evening clinic\n\n"
    "The evening clinic opens at 6 pm on Tuesdays. The evening clinic is held at Pellham "
    "Health Centre, in the room beside the pharmacy.",
    "tarnley-implant": "# Tarnley implant\n\nThe Tarnley implant is licensed for 4 years.",
}


@pytest.fixture
def graph(tmp_path: Path):
    index_notes(tmp_path / "clinic", NOTES, "clinic")
    return thread_graph()


def test_a_subject_loses_the_closing_verb_of_the_earlier_question(graph):
    prefrag.ask("What time does the evening clinic open?", graph=graph, thread_id="v", **RUN)
    result = prefrag.ask("is it still at Pellham?", graph=graph, thread_id="v", **RUN)
    assert "evening clinic still" in result["standalone_question"], result["standalone_question"]


def test_she_after_a_who_question_for_a_role_is_that_role(graph):
    prefrag.ask("Who is the duty nurse at Pellham?", graph=graph, thread_id="n", **RUN)
    result = prefrag.ask("which days does she work?", graph=graph, thread_id="n", **RUN)
    assert "the duty nurse at Pellham work" in result["standalone_question"], result[
        "standalone_question"
    ]


def test_the_earlier_answer_is_no_answer_to_a_new_question(graph):
    first = prefrag.ask(
        "How long is the Tarnley implant licensed for?", graph=graph, thread_id="t", **RUN
    )
    assert "4 years" in first["answer"], first["answer"]
    result = prefrag.ask("and how long does taking it out take?", graph=graph, thread_id="t", **RUN)
    assert result["abstained"], result["answer"]
