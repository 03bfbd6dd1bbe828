"""A thing described by a clause with no relative pronoun, as a user meets it: `prefrag
index` on their own notes, then `prefrag ask --json`.

"the yard Jory Tallack founded": the named person's note names the thing (the Saltcote
Yard), and what is asked is read in the thing's own note, not in the person's. The notes
are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "fenwold/wilhelmina-crake.txt": (
        "Wilhelmina Crake\n\nWilhelmina Crake (1850 to 1921) was a glass engraver who came"
        " from Ottery Marsh. She worked for forty years in the glasshouses of Pellingford,"
        " where she trained eleven apprentices.\n"
    ),
    "fenwold/jory-tallack.txt": (
        "Jory Tallack\n\nJory Tallack (1862 to 1930) was a boat builder from Pellingford. In"
        " 1889 he founded the Saltcote Yard, which built eel punts for the fen fishermen.\n"
    ),
    "fenwold/ottery-marsh.txt": (
        "Ottery Marsh\n\nOttery Marsh is a hamlet of 90 people on the edge of the Fenwold"
        " levels, reached by a causeway from Pellingford.\n"
    ),
    "fenwold/pellingford.txt": (
        "Pellingford\n\nPellingford is a market town of 6,400 people on the River Wend. Its"
        " glasshouses closed in 1954.\n"
    ),
    "fenwold/saltcote-yard.txt": (
        "Saltcote Yard\n\nThe Saltcote Yard is a boatyard on the River Wend below"
        " Pellingford. It has built flat-bottomed punts since 1889 and has been run by the"
        " Fenwold Boat Trust since 1978.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("fenwold",)) as home:
        yield home


def cited(record: dict) -> set[str]:
    return {Path(c["url"].removeprefix("file://")).stem for c in record["citations"]}


def test_the_thing_a_named_person_founded_is_read_in_its_own_note() -> None:
    record = ask_json("Which river is the yard Jory Tallack founded on?", "fenwold")
    assert not record["abstained"], record["answer"]
    assert "River Wend" in record["answer"], record["answer"]
    assert "saltcote-yard" in cited(record), record["citations"]
