"""Questions that reach their answer through a thing named by its relation to a name, as a
user meets them: `prefrag index` on their own notes, then `prefrag ask --json`.

- "Which river runs through Tobin Reeve's birthplace?": the person's note names the
  village ("born in Garrow"), the village's own note names the river. The answer is read
  from the village's note, not the village's name (the first hop), citing both notes.
- "... home town" and "home village" name the same relation as "birthplace".
- "Tobin Reeve's birthplace is where which two rivers meet?": a counted plural asked
  anywhere in the question is a list, answered from the village's note with both rivers,
  not with the person's sentence naming the village.

The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "moor/tobin-reeve.txt": (
        "Tobin Reeve\n"
        "Tobin Reeve (1811-1879) was a clockmaker, born in Garrow, the son of a weaver. "
        "His first clock, made in 1832, still hangs in the Garrow Reading Room. He moved to "
        "Skelbury in 1840, where he made the town clock. He died at Lowan Quay.\n"
    ),
    "moor/garrow.txt": (
        "Garrow\n"
        "Garrow is a village on the River Brisk, at the meeting of the Brisk and the Tallow, "
        "with a population of 640. Its chapel was rebuilt in 1868. A goose fair is held "
        "in Garrow every October.\n"
    ),
    "moor/skelbury.txt": (
        "Skelbury\n"
        "Skelbury is a market town on the River Lune Moss, with a population of 9,200. "
        "Its town clock was made by Tobin Reeve in 1846.\n"
    ),
    "moor/lowan-quay.txt": (
        "Lowan Quay\n"
        "Lowan Quay is a small harbour at the mouth of the River Orrin, with a population "
        "of 1,300.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("moor",)) as home:
        yield home


def cited(record: dict) -> set[str]:
    return {Path(c["url"].removeprefix("file://")).stem for c in record["citations"]}


def test_a_relation_to_a_name_is_answered_from_the_related_things_note() -> None:
    record = ask_json("Which river runs through Tobin Reeve's birthplace?", "moor")
    assert not record["abstained"], record["answer"]
    assert "Brisk" in record["answer"], record
    assert record["short_answer"] != "Garrow", record
    assert {"tobin-reeve", "garrow"} <= cited(record), record


def test_home_village_names_the_same_relation() -> None:
    record = ask_json("When was the chapel in Tobin Reeve's home village rebuilt?", "moor")
    assert not record["abstained"], record["answer"]
    assert record["short_answer"] == "1868", record


def test_a_counted_plural_asked_late_is_a_list_read_from_the_related_note() -> None:
    record = ask_json("Tobin Reeve's birthplace is where which two rivers meet?", "moor")
    assert not record["abstained"], record["answer"]
    assert "Brisk" in record["answer"] and "Tallow" in record["answer"], record
    assert "garrow" in cited(record), record
