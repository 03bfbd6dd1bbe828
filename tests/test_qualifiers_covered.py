"""A question's qualifier must be covered by the sentence that decides its answer.

As a user meets it: `prefrag index` on their own notes, then `prefrag ask --json`. A note
giving a syrup's doses from 6 months of age does not answer for a 4 month old; a
2021 head count does not answer "in 1951"; January's wait does not answer "in the summer";
a starting dose is not the maximum; a gap after iron tablets is not a gap after zinc
ones; stitches in the knee are not stitches in a cheek ("in a cheek *come out*": the
phrase ends before the verb). The same notes still answer the questions they do cover.
The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

from prefrag.reasoners._qualifiers import stated_ages, uncovered_age, uncovered_year

NOTES = {
    "notes/brindomel.md": (
        "# Brindomel\n\n"
        "Brindomel is a syrup for a dry cough.\n\n"
        "Doses: adults and children aged 12 and over, 10 ml three times a day; children 6 to"
        " 11 years, 5 ml three times a day; children 6 months to 5 years, 2.5 ml twice a day.\n"
    ),
    "notes/kessingford.txt": (
        "Kessingford\n"
        "Kessingford is a market town on the River Taple.\n"
        "Kessingford had 7,310 inhabitants in 2021.\n"
    ),
    "notes/pellow-ferry.md": (
        "# Pellow ferry notice\n\n"
        "January 2026: the average wait for the Pellow ferry has been 25 minutes this month.\n"
    ),
    "notes/tovaline.md": (
        "# Tovaline\n\n"
        "Tovaline is a tablet for restless legs.\n\n"
        "Start tovaline at 2 mg a day, taken at bedtime.\n"
    ),
    "notes/stitches.md": (
        "# Taking out stitches\n\n"
        "Stitches in the knee come out after 14 days.\n\n"
        "Stitches in the palm come out after 10 days.\n"
    ),
    "notes/gressol.md": (
        "# Gressol\n\n"
        "Gressol is a tablet for an underactive thyroid.\n\n"
        "Leave 4 hours between gressol and iron tablets.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("notes",)) as home:
        yield home


def _abstains_naming(question: str, qualifier: str) -> None:
    record = ask_json(question, "notes")
    assert record["abstained"], record["answer"]
    assert qualifier in record["answer"], record["answer"]


def test_a_dose_for_older_children_does_not_answer_for_a_baby() -> None:
    _abstains_naming("Brindomel dose for a 4 month old?", "4 month old")


def test_a_dose_whose_age_group_covers_the_child_still_answers() -> None:
    record = ask_json("Brindomel dose for a 3 year old?", "notes")
    assert not record["abstained"], record["answer"]
    assert "2.5 ml" in record["answer"], record["answer"]


def test_another_years_count_does_not_answer_the_asked_year() -> None:
    _abstains_naming("What was the population of Kessingford in 1951?", "1951")


def test_the_asked_years_count_still_answers() -> None:
    record = ask_json("What was the population of Kessingford in 2021?", "notes")
    assert not record["abstained"], record["answer"]
    assert "7,310" in record["answer"], record["answer"]


def test_another_months_figure_does_not_answer_another_season() -> None:
    _abstains_naming("What was the average wait for the Pellow ferry over the summer?", "summer")


def test_a_starting_dose_is_not_the_maximum() -> None:
    _abstains_naming("What is the maximum dose of tovaline?", "maximum dose")


def test_a_gap_after_one_medicine_is_not_the_gap_after_another() -> None:
    _abstains_naming("How long should I leave between gressol and my zinc tablets?", "zinc")


def test_the_gap_the_note_gives_still_answers() -> None:
    record = ask_json("How long should I leave between gressol and my iron tablets?", "notes")
    assert not record["abstained"], record["answer"]
    assert "4 hours" in record["answer"], record["answer"]


def test_ages_are_figures_in_years_or_after_an_age_word() -> None:
    assert stated_ages("strengths from 5 to 20 micrograms an hour, for 3 to 4 weeks") == []
    assert (0.0, 12.0) in stated_ages("children under 12")
    assert uncovered_age("dose for a 3 year old?", "children up to 40 kg: 2 mg per kg") == ""
    assert uncovered_age("dose for a 3 year old?", "adults: 10 mg a day") == "3 year old"


def test_a_year_inside_a_stated_span_is_covered() -> None:
    assert uncovered_year("Who was the mayor in 1999?", "mayor from 1995 to 2003") == ""
    assert uncovered_year("Who was the deacon before 2019?", "deacon since 2019") == "before 2019"


def test_stitches_elsewhere_do_not_answer_for_another_body_part() -> None:
    _abstains_naming("how many days before stitches in a cheek come out?", "cheek")


def test_stitches_where_the_note_says_still_answer() -> None:
    record = ask_json("how many days before stitches in the knee come out?", "notes")
    assert not record["abstained"], record["answer"]
    assert "14 days" in record["answer"], record["answer"]
