"""A list question is answered with the items, not with the line that announces them.

Through `prefrag index` on a user's own notes and `prefrag ask --json`: a sentence counting
the things asked for ("one of three care bands") above a table is read out with the table's
first cells (the bands). The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "ward/leg-ulcer-bands.md": (
        "# Leg ulcer review at Penhallow surgery\n\n"
        "Every leg ulcer is measured at its first visit. The nurse then puts the patient in"
        " one of three care bands, and the band decides who dresses the ulcer.\n\n"
        "| band | what we found | who dresses it |\n"
        "|---|---|---|\n"
        "| green | healing, under 2 cm | practice nurse |\n"
        "| amber | not healing after 4 weeks | district nurse |\n"
        "| crimson | spreading redness or pus | tissue viability team |\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("ward",)) as home:
        yield home


def test_a_sentence_counting_the_items_is_read_out_with_its_table() -> None:
    record = ask_json("What are the care bands for leg ulcers?", "ward")
    answer = record["answer"].lower()
    assert all(band in answer for band in ("green", "amber", "crimson")), record["answer"]
    assert "|" not in answer
