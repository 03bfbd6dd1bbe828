"""A follow-up that keeps the earlier question asks for the value its own words point to.

"And for people with liver disease?" after "What is the usual adult dose of X?" is rewritten
to the earlier question plus ", and what about for people with liver disease?": the dose the
note gives for that group answers, not the adult dose the first turn already gave. Through
the API on a thread. The notes are invented.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from indexed_notes import index_notes, thread_graph

import prefrag

RUN = {"preferred_source": "clinic", "fallback_sources": [], "max_reflections": 0}

NOTES = [
    {
        "id": "dernalide",
        "title": "Dernalide dosing",
        "text": "Dernalide is an invented tablet for Tollard's cough. The usual adult dose of "
        "dernalide is 40 mg twice a day, and people with liver disease take 10 mg twice a day. "
        "Take it with food.",
    },
    {
        "id": "quistrel",
        "title": "Quistrel dosing",
        "text": "Quistrel is an invented syrup for night cramps, 5 ml at bedtime.",
    },
]


@pytest.fixture
def clinic(tmp_path: Path) -> None:
    index_notes(tmp_path / "clinic", NOTES, "clinic")


def test_a_kept_ellipsis_is_answered_with_the_value_for_its_own_words(clinic):
    graph = thread_graph()
    first = prefrag.ask(
        "What is the usual adult dose of dernalide?", graph=graph, thread_id="f1", **RUN
    )
    assert "40 mg" in first["answer"], first["answer"]
    result = prefrag.ask("and for people with liver disease?", graph=graph, thread_id="f1", **RUN)
    assert "what about" in result["standalone_question"], result["standalone_question"]
    assert not result["abstained"], result["answer"]
    assert "10 mg" in result["answer"], result["answer"]
