"""Comparisons decided by the value each side's note gives for the compared attribute, as a
user meets them: `prefrag index` on their own notes, then `prefrag ask --json`.

- "the larger population": the figure beside "population" / "inhabitants", not the first
  number of the sentence (a distance in km);
- "the bigger maximum dose per day": the dose beside "maximum", not the single dose first;
- "the later review date": the months of two review dates of one year.

The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "atlas/quarrendon.txt": (
        "Quarrendon has kept its Thursday market since 1290. Some 2,310 inhabitants were"
        " counted at the last census.\n"
    ),
    "atlas/sallowmere.txt": (
        "Sallowmere lies 3 km inland on the River Teale; its population of 5,870 lives"
        " mostly in the new estates by the station.\n"
    ),
    "formulary/dravomine.txt": (
        "Dravomine is a travel-sickness tablet. The usual dose is 25 mg every six hours,"
        " never more than a maximum of 100 mg in a day.\n"
    ),
    "formulary/keltrazine.txt": (
        "Keltrazine is an antihistamine for itching at night. Older people take 40 mg a"
        " day; the maximum dose for others is 80 mg a day.\n"
    ),
    "clinic/sprains.md": (
        "# Sprained ankle\n\nReviewed: March 2024\n\nRest, ice and elevate the ankle for the"
        " first 48 hours; walk on it as pain allows.\n"
    ),
    "clinic/scalds.md": (
        "# Scalds in children\n\nReviewed: October 2024\n\nCool the scald under running tap"
        " water for 20 minutes and cover it with cling film.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("atlas", "formulary", "clinic")) as home:
        yield home


def chosen(question: str, source: str) -> str:
    record = ask_json(question, source)
    assert not record["abstained"], record["answer"]
    return record["answer"].split(".")[0].strip().lower()


def test_the_larger_population_is_read_beside_population_not_a_distance() -> None:
    question = "Which town has the larger population, Quarrendon or Sallowmere?"
    assert chosen(question, "atlas") == "sallowmere"


def test_the_maximum_is_the_dose_beside_maximum() -> None:
    question = "Which allows the bigger maximum dose per day, dravomine or keltrazine?"
    assert chosen(question, "formulary") == "dravomine"


def test_the_later_review_date_compares_the_review_months() -> None:
    question = "Which has the later review date, sprained ankle or scalds in children?"
    assert chosen(question, "clinic") == "scalds in children"
