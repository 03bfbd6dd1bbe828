"""Comparisons decided by the value each side's note gives for the compared attribute, as a
user meets them: `prefrag index` on their own notes, then `prefrag ask --json`.

- "more people": the figure beside "inhabitants" / "population", not the first number of
  the sentence (a distance in km);
- "the higher adult daily maximum": the dose beside "maximum", not the single dose first;
- "reviewed more recently": the months of two review dates of one year, not any number.

The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "atlas/quarrendon.txt": (
        "Quarrendon is a market town on the Pellbury road. The town had 2,310 inhabitants"
        " in 2021; its Thursday market dates from 1290.\n"
    ),
    "atlas/sallowmere.txt": (
        "Sallowmere is a town 3 km from the coast on the River Teale, with a population of"
        " 5,870 (2021), most of them in the new estates by the station.\n"
    ),
    "formulary/dravomine.txt": (
        "Dravomine is an anti-sickness tablet. Adults take 25 mg up to four times a day, a"
        " maximum of 100 mg a day; children 8 to 12 years take 10 mg twice a day.\n"
    ),
    "formulary/keltrazine.txt": (
        "Keltrazine is an antihistamine for itching at night. The maximum dose is 80 mg a"
        " day for adults and 40 mg a day for older people.\n"
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


def test_more_people_is_read_from_the_population_not_a_distance() -> None:
    assert chosen("Does Quarrendon or Sallowmere have more people?", "atlas") == "sallowmere"


def test_the_daily_maximum_is_the_dose_beside_maximum() -> None:
    question = "Which has the higher adult daily maximum, dravomine or keltrazine?"
    assert chosen(question, "formulary") == "dravomine"


def test_reviewed_more_recently_compares_the_review_months() -> None:
    question = "Which note was reviewed more recently, sprained ankle or scalds in children?"
    assert chosen(question, "clinic") == "scalds in children"
