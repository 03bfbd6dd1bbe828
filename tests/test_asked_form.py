"""A span answer in the form the question asks for, as a user meets it: `prefrag index` on
their own notes, then `prefrag ask --json`.

"Which <kind> ...?" answered from a note whose opening says its subject is of that kind is
answered with the note's subject, by its title, not with another name its sentences write
(a name in another language, the party she leads); a note that is only *about* something
of that kind ("a lane in the ward of X" for "which ward") does not answer with its title.
"In what year ...?" answered from a full date gives the year. The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "towns/mirela-oskan.md": (
        "# Mirela Oskan\n\n"
        'Mirela Oskan (Dunvalese: "Mira na Doca"; born 1961) is a Dunvale harbour politician'
        " who has led the Tidewater Party since 2015.\n"
        "She grew up in Saltmere and trained as a ferry pilot.\n"
    ),
    "towns/tidewater-party.md": """# Tidewater Party

The Tidewater Party is a political party in Dunvale, founded in 1978 by dock workers.
Since June 2015 the party has been led by a harbour politician from Saltmere.
""",
    "towns/halbury-footbridge.md": """# Halbury footbridge

The Halbury footbridge crosses the river Pell at Halbury.
It was opened on 4 May 1896 by the town's first mayor.
""",
    "towns/copper-lane.md": """# Copper Lane

Copper Lane is a lane in the ward of Eastgate, lined with old forges.
Its forges were closed in 1932.
""",
    "towns/kestrel-press.md": """# Kestrel Press

The Kestrel Press is a small publisher of poetry in Saltmere.
It was founded in 1990 by Orla Fenwick, a printer from Halbury.
""",
    "towns/orla-fenwick.md": """# Orla Fenwick

Orla Fenwick is a printer and poet from Halbury.
She trained with the engraver Piet Marlowe in Saltmere at the Wren Street Works, a printing school.
""",
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("towns",)) as home:
        yield home


def cited(record: dict) -> set[str]:
    return {Path(c["url"].removeprefix("file://")).stem for c in record["citations"]}


def test_the_subject_a_note_describes_as_the_asked_kind_is_the_short_answer() -> None:
    record = ask_json("Which harbour politician has led the Tidewater Party since 2015?", "towns")
    assert not record["abstained"], record["answer"]
    assert record["short_answer"] == "Mirela Oskan", record
    assert "mirela-oskan" in cited(record)


def test_a_date_answers_what_year_with_its_year() -> None:
    record = ask_json("In what year was the Halbury footbridge opened?", "towns")
    assert not record["abstained"], record["answer"]
    assert record["short_answer"] == "1896", record


def test_a_note_only_about_something_of_the_asked_kind_is_not_the_answer() -> None:
    record = ask_json("Which ward has forges that closed in 1932?", "towns")
    assert record["short_answer"] != "Copper Lane", record
    assert record["answer"] != "Copper Lane", record


def test_of_the_names_in_an_answering_sentence_the_one_of_the_asked_kind_is_the_short_answer() -> (
    None
):
    record = ask_json(
        "Which printing school did the founder of the Kestrel Press train at?", "towns"
    )
    assert not record["abstained"], record["answer"]
    assert record["short_answer"] == "Wren Street Works", record
