"""Near misses: an answer about a neighbouring thing is an abstention, not a confident answer.

As a user meets them: `prefrag index` on their own notes, then `prefrag ask --json`. A
comparison reads one measure from both sides (a mere's area against a park's area, not a
count of geese against hectares) and, in a note naming several things, the year written
next to the compared one. A village's note naming the spa town on the way does not give
the town church's bells; the injection's protection is not the oral vaccine's; a viaduct's
height is not its length. The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "notes/tarrow-mere.md": (
        "# Tarrow Mere\n\n"
        "Tarrow Mere is a lake 900 metres long on the Quell Brook, the largest of the moor's"
        " meres.\n\n"
        "About 400 greylag geese winter on it each year.\n\n"
        "It covers 12 hectares and is at most 4 metres deep.\n"
    ),
    "notes/quillon-house.md": (
        "# Quillon House\n\n"
        "Quillon House is a hunting lodge built for the Earls of Brenn in 1702.\n\n"
        "The lodge stands in a walled park of 85 hectares, where a herd of about 60 red deer"
        " is kept.\n"
    ),
    "notes/sallowby.md": (
        "# Sallowby\n\n"
        "Sallowby is a market town on the River Teme.\n\n"
        "A fair charter was granted in 1214, and a Saturday market is still held in the"
        " Butter Cross, a stone market hall of 1788.\n"
    ),
    "notes/moot-hall.md": (
        "# The Moot Hall\n\n"
        "The Moot Hall is a timber-framed courthouse on Church Street, Sallowby, built in"
        " 1650 after the old hall burned down.\n"
    ),
    "notes/lower-brenn.txt": (
        "Lower Brenn\n\n"
        "Lower Brenn is a village in the Cray valley, 4 km downstream of Ashby Wells, where"
        " the old coach road crosses the river by a bridge of three arches.\n\n"
        "Lower Brenn's church of St Ode has a Norman tower and a ring of eight bells, recast"
        " in 1890.\n"
    ),
    "notes/ashby-wells.txt": (
        "Ashby Wells\n\n"
        "Ashby Wells is a spa town in the Cray valley with about 9,000 people.\n\n"
        "Its pump room opened in 1781 and its hydropathic hotel in 1869.\n"
    ),
    "notes/cray-beck.txt": (
        "Cray Beck\n\n"
        "Cray Beck is a stream that rises on Hollin Moor and joins the River Cray at Lower"
        " Brenn.\n\n"
        "Its valley is crossed by the old railway on the Cray Viaduct, seven arches of brick,"
        " 31 m high, finished in 1861.\n"
    ),
    "notes/typhoid.md": (
        "# Typhoid vaccine\n\n"
        "The injection is one dose of 0.5 mL, given at least 2 weeks before travel, and"
        " protects for about 3 years.\n\n"
        "It works in 50 to 80 of every 100 people vaccinated, so food and water care still"
        " matters.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("notes",)) as home:
        yield home


def test_a_comparison_reads_one_measure_from_both_sides() -> None:
    record = ask_json("Which is bigger, Tarrow Mere or the park at Quillon House?", "notes")
    assert not record["abstained"], record["answer"]
    assert record["answer"].startswith("the park at Quillon House"), record["answer"]


def test_a_comparison_reads_the_year_written_next_to_the_option() -> None:
    record = ask_json("Which is older, the Moot Hall or the Butter Cross?", "notes")
    assert not record["abstained"], record["answer"]
    assert record["answer"].startswith("the Moot Hall"), record["answer"]


def test_a_note_naming_the_asked_place_on_the_way_does_not_answer_for_it() -> None:
    record = ask_json("How many bells does the church in Ashby Wells have?", "notes")
    assert record["abstained"], record["answer"]
    assert "eight" not in record["answer"].split(":")[0]


def test_the_note_of_the_asked_place_still_answers() -> None:
    record = ask_json("How many bells does the church in Lower Brenn have?", "notes")
    assert not record["abstained"], record["answer"]
    assert "eight" in record["answer"]


def test_another_form_of_a_vaccine_does_not_answer_for_the_asked_one() -> None:
    record = ask_json("How many years does the oral typhoid vaccine protect for?", "notes")
    assert record["abstained"], record["answer"]


def test_the_asked_form_of_a_vaccine_still_answers() -> None:
    record = ask_json("How many years does the typhoid injection protect for?", "notes")
    assert not record["abstained"], record["answer"]
    assert "3 years" in record["answer"]


def test_a_height_does_not_answer_how_long() -> None:
    record = ask_json("How long is the Cray Viaduct?", "notes")
    assert record["abstained"], record["answer"]


def test_a_height_still_answers_how_high() -> None:
    record = ask_json("How high is the Cray Viaduct?", "notes")
    assert not record["abstained"], record["answer"]
    assert "31 m" in record["answer"]
