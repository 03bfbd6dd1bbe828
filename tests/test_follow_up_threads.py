"""A follow-up keeps the thread's subject AND asks its own new thing.

Through the API (`prefrag.ask` on a thread, the notes indexed with `prefrag index`): a
follow-up that names nothing of the thread ("how thick should the pads be") is asked of the
earlier subject; a bare question word with a preposition ("until what time?") asks the
earlier question again with it; "what about X, when do they ...?" asks the new question of
X. The rewrite shows in `standalone_question`. The notes and names are invented.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from indexed_notes import index_notes, thread_graph

import prefrag
from prefrag.config import get_settings
from prefrag.reasoners._condense import condense_follow_up
from prefrag.reasoners.base import PriorTurn

NOTES = {
    "quillan-syndrome": (
        "# Quillan syndrome\n\n"
        "Quillan syndrome is an invented cause of heel pain in teenage runners. It settles"
        " with rest from running for 6 weeks. Soft heel pads 3 to 4 mm thick ease the pain"
        " while it settles.\n"
    ),
    "tarrow-foot": (
        "# Tarrow foot\n\n"
        "Tarrow foot is an invented stiffness of the big toe joint in older adults. A rigid"
        " heel pad 15 mm thick takes the load off the joint.\n"
    ),
    "osbury-clinic": (
        "# Osbury Row clinic\n\n"
        "The Osbury Row clinic is open Monday to Friday 9am to 5pm. The evening clinic at"
        " Osbury Row is on Tuesdays until 8.15pm.\n"
    ),
    "wound-strips": (
        "# Closing small cuts\n\n"
        "A cut closed with skin glue must be kept dry for 5 days. Paper strips are left on"
        " until they fall off, usually after 7 to 10 days.\n"
    ),
}


@pytest.fixture
def ward(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PREFRAG_CALIBRATED_CONFIDENCE", "false")
    get_settings.cache_clear()
    index_notes(tmp_path / "ward", NOTES, "ward")


def _thread(*questions: str) -> dict:
    graph = thread_graph()
    result: dict = {}
    for question in questions:
        result = prefrag.ask(
            question,
            graph=graph,
            thread_id="thread",
            preferred_source="ward",
            fallback_sources=[],
            max_reflections=0,
        )
    return result


def test_a_follow_up_naming_nothing_of_the_thread_keeps_the_earlier_subject(ward):
    result = _thread("What is Quillan syndrome?", "how thick should the heel pads be")
    assert "Quillan" in result["standalone_question"], result["standalone_question"]
    assert "3 to 4 mm" in result["answer"], result["answer"]
    assert "15 mm" not in result["answer"], result["answer"]


def test_a_bare_question_word_asks_the_earlier_question_again(ward):
    result = _thread("Which day is the evening clinic at Osbury Row?", "until what time?")
    assert "evening clinic at Osbury Row" in result["standalone_question"]
    assert "8.15pm" in result["answer"], result["answer"]


def test_what_about_a_named_thing_asks_the_new_question_of_it(ward):
    result = _thread(
        "How long must a glued cut be kept dry?", "what about paper strips, when do they come off?"
    )
    assert result["standalone_question"] == "When do paper strips come off?"
    assert "7 to 10 days" in result["answer"] or "fall off" in result["answer"]


@pytest.mark.parametrize(
    ("earlier", "follow_up", "standalone"),
    [
        # "they" are other people than "it": only the first pronoun's number is the subject.
        (
            "How long do people usually stay on dorvaline?",
            "does it still work if they miss a day?",
            "does dorvaline still work if they miss a day?",
        ),
        # "that" after a yes/no question is the action it asked about.
        (
            "Do you fit toe splints at the clinic?",
            "how old do kids have to be for that",
            "for fit toe splints at the clinic",
        ),
        # A verb after "do you" is no subject; "the same place" points back to nothing.
        (
            "How often do you change a velmic patch?",
            "can I put it in the same place?",
            "can I put velmic patch in the same place?",
        ),
    ],
)
def test_pronouns_point_to_what_the_thread_says(earlier: str, follow_up: str, standalone: str):
    prior = [PriorTurn(question=earlier, answer="An answer sentence.", titles=[])]
    assert standalone in condense_follow_up(follow_up, prior).question
