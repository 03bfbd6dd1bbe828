"""A question naming a section's heading is answered by that section, never by the heading.

Through `prefrag index` on a user's own notes and `prefrag ask --json`, with chunks small
enough that a chunk opens at the "## Side effects" heading: the heading is what the
sentences below it are about, not the first words of an answer, and "what side effects
can X cause?" is answered by the section's opening sentences. The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "drugs/morvastin.md": (
        "# Morvastin\n\n"
        "Morvastin is an invented tablet for raised eye pressure. It is taken at night, one"
        " drop-free tablet at the same time each evening, with or without food, and it is"
        " checked by the eye clinic after the first month and then every six months.\n\n"
        "## Side effects\n\n"
        "Dizziness and dry eyes are common in the first fortnight. Hair thinning affects 1 in"
        " 20 people and stops when the tablet is stopped. Vivid dreams are rare.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PREFRAG_CHUNK_SIZE", "60")  # a chunk opens at the section heading
        with indexed_home(tmp_path_factory, NOTES, ("drugs",)) as home:
            yield home


def test_a_question_naming_a_heading_is_answered_by_its_section() -> None:
    record = ask_json("what side effects can morvastin cause", "drugs")
    answer = record["answer"].lower()
    assert "dizziness" in answer and "hair thinning" in answer, record["answer"]
    assert not answer.startswith("side effects"), record["answer"]
