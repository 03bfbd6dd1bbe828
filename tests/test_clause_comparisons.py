"""Comparisons whose values are not one per note, as a user meets them: `prefrag index` on
their own notes, then `prefrag ask --json`.

- both options' figures in one sentence ("3 to 4 days after a shallow ... 10 to 12 days
  after a deep ..."): each option's figure is the one of the clause naming it;
- a table with one row per option, asked "more often": the rows' intervals ("every 2
  years", "every 6 months"), the shorter one is more often;
- "older when they died": the span between each person's life dates, not who was born first;
- "which is longer": the river's own length, not the length of a gorge named after it.

The notes are invented.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "ward/burn-dressings.txt": (
        "Burn dressings\n\nKeep the dressing dry and change it as the nurse showed you. The"
        " skin usually closes over in 3 to 4 days after a shallow graft donor site and in 10"
        " to 12 days after a deep graft donor site.\n"
    ),
    "ward/eye-checks.md": (
        "# Eye checks for people on hydroxyglarine\n\nEveryone taking hydroxyglarine has"
        " their eyes checked. The dose decides the group.\n\n"
        "| group | dose | who checks | how often |\n|---|---|---|---|\n"
        "| standard | up to 200 mg a day | high-street optician | every 2 years |\n"
        "| raised | over 200 mg a day | hospital eye clinic | every 6 months |\n"
    ),
    "lives/river-quell.txt": (
        "River Quell\n\nThe River Quell is the longest river of the Tarrow Vale. It rises on"
        " Bleak Fell at about 610 m and flows north for 38 km to the sea at Pennock. Below"
        " Pennock the river runs through Quell Gorge, a narrow ravine 5 km long.\n"
    ),
    "lives/river-ambery.txt": (
        "River Ambery\n\nThe River Ambery rises on Carrow Moss and flows west for 22 km to join"
        " the River Quell at Pennock.\n"
    ),
}
PEOPLE = [  # written as lives/people.jsonl
    {
        "id": "hester-morrow",
        "title": "Hester Morrow",
        "text": "Hester Morrow (1790 to 1881) was a weaver and diarist, born in Pennock.",
    },
    {
        "id": "osric-lane",
        "title": "Osric Lane",
        "text": "Osric Lane (1785 to 1850) was a bridge builder, born at Carrow.",
    },
]


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    notes = {**NOTES, "lives/people.jsonl": "\n".join(json.dumps(p) for p in PEOPLE) + "\n"}
    with indexed_home(tmp_path_factory, notes, ("ward", "lives")) as home:
        yield home


def chosen(question: str, source: str) -> str:
    record = ask_json(question, source)
    assert not record["abstained"], record["answer"]
    return record["answer"].split(".")[0].strip().lower()


def test_two_figures_in_one_sentence_are_read_clause_by_clause() -> None:
    question = "Which takes longer to close over, a shallow or a deep graft donor site?"
    assert chosen(question, "ward") == "a deep graft donor site"


def test_more_often_is_the_shorter_interval_of_the_table_rows() -> None:
    question = "who gets their eyes checked more often - the standard group or the raised group?"
    assert chosen(question, "ward") == "the raised group"


def test_older_when_they_died_compares_the_life_spans() -> None:
    question = "Who was older when they died, Hester Morrow or Osric Lane?"
    assert chosen(question, "lives") == "hester morrow"


def test_longer_reads_the_river_not_the_gorge_named_after_it() -> None:
    question = "Which is longer, the Quell or the Ambery?"
    assert chosen(question, "lives") == "the quell"
