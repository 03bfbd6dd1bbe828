"""Evidence checks on an answer, as a user meets them: `prefrag index` on their own notes,
then `prefrag ask --json`.

An answer must stand on evidence that says what is asked: a capitalised common word at a
sentence start is no name, and a figure read from a sentence about another river is no
answer about this one. The notes below are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "clinic/gravel-fever.md": """# Gravel fever: clinic notes

Reviewed: 2025-03-02
Author: Dr Imre Vantongeren

Gravel fever causes hot, painful ankles after long walks on stony ground.
During a flare, rest the joint and give naproxen 500 mg twice daily for five days.
Start tessoprin once the flare has settled: it lowers the crystal count.
Do not start it during a flare, as it can make the flare last longer.
""",
    "clinic/stone-care.md": """# Kidney stones: clinic notes

Reviewed: 2025-01-12

Offer dorvacil to anyone with more than two stones a year or a single kidney.
Check the urine calcium and the kidney function of everyone taking it.
ACE inhibitors such as ramipril can raise dorvacil levels.
""",
    "places/lake-orvel.txt": """Lake Orvel

Lake Orvel is a glacial lake in the Dunmoor hills, 4.1 km long and 40 metres deep.
Its outflow joins the River Pell below the village of Ashby Tarn.
Anglers fish it for char.
""",
    "places/river-pell.txt": """River Pell

The River Pell rises on Garrow Fell and flows south through Kessock to the sea.
Kessock grew up at its lowest bridge.
""",
    "people/wenna-carrow.txt": (
        "Wenna Carrow (1801-1870) was a glassmaker and inventor born in Pellbridge."
        " She built the first furnace on the Ossel quay.\n"
    ),
    "people/idris-pellow.txt": (
        "Idris Pellow (1810-1889) was a ferryman and boatbuilder born in Pellbridge."
        " He ran the Ossel ferry for forty years.\n"
    ),
    "people/jory-vance.txt": (
        "Jory Vance (1790-1860) was a glassmaker and inventor born in Kessock."
        " He sold his furnaces to the Ossel quay in 1841.\n"
    ),
    "places/river-tamsin.txt": """River Tamsin

The River Tamsin is 38 km long. It rises in the Keld hills and flows east through Orsk Vale.
""",
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One data directory for the module (overriding conftest's per-test one)."""
    with indexed_home(tmp_path_factory, NOTES, ["clinic", "places", "people"]) as home:
        yield home


def test_a_capitalised_common_word_is_not_the_answer():
    # "Start tessoprin ..." opens with a capital; "start" is written in lower case too.
    result = ask_json("Which drug lowers the crystal count in gravel fever?", "clinic")
    assert result["answer"].strip() != "Start"
    assert (result.get("short_answer") or "").strip() != "Start"
    assert result["abstained"] or "tessoprin" in result["answer"]


def test_a_figure_about_another_river_is_no_answer():
    # Only the Tamsin's length is given: the Pell's is not, so the reasoner abstains.
    result = ask_json("How long is the River Pell?", "places")
    assert result["abstained"], result["answer"]
    assert "38 km" not in result["answer"]
    assert "River Pell" in result["answer"]  # it says what it found nothing about


def test_a_figure_about_the_asked_subject_still_answers():
    assert ask_json("How long is Lake Orvel?", "places")["answer"] == "4.1 km"
    assert ask_json("Where does the River Pell rise?", "places")["answer"] == "Garrow Fell"


def test_a_note_title_is_not_the_answer_to_who():
    # The offering sentence is about the note's subject; the title is not who is offered.
    result = ask_json("Who should be offered dorvacil?", "clinic")
    assert "clinic notes" not in result["answer"]
    assert "more than two stones a year" in result["answer"]


def test_how_soon_needs_a_figure():
    # The note says to check the urine calcium, not when: no figure, no answer.
    result = ask_json(
        "How soon should the urine calcium be checked after starting dorvacil?", "clinic"
    )
    assert result["abstained"], result["answer"]
    # A figure that is there still answers (with its sentence when that is not sure enough
    # for the figure alone).
    counted = ask_json("How many stones a year call for dorvacil?", "clinic")
    assert not counted["abstained"], counted["answer"]
    assert "more than two stones a year" in counted["answer"]


def test_a_file_name_title_is_never_the_answer():
    # The note has no heading: its title is its file's name, which stands in for "She".
    result = ask_json("Who built the first furnace on the Ossel quay?", "people")
    assert "wenna-carrow" not in result["answer"]
    assert "wenna-carrow" not in (result.get("short_answer") or "")
    assert "Wenna Carrow" in result["answer"]


@pytest.mark.parametrize(
    ("other", "same"),
    [("Idris Pellow", "yes"), ("Jory Vance", "no")],  # other trades, same town; and the reverse
)
def test_a_same_town_question_compares_the_towns_not_the_trades(other: str, same: str):
    result = ask_json(f"Were Wenna Carrow and {other} born in the same town?", "people")
    assert result["short_answer"] == same, result["answer"]
