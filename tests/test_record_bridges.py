"""Questions about something they only describe, as a user meets them: `prefrag index` on
their own notes, then `prefrag ask --json`.

- "the physiotherapist whose special interest is knee pain": the table row holding "knee
  pain" names her; the answer is read in the note about her by name, not in the table;
- when no note says what is asked of the person the row names, the answer is an honest
  abstention, not the table.

The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "physio/team.md": (
        "# Brindlecombe Physiotherapy: our team\n\nUpdated: 2 February 2026\n\n"
        "We see adults registered with a GP in the Brindlecombe district.\n\n"
        "| name | role | main days | special interest |\n|---|---|---|---|\n"
        "| Halvard Quennell | Lead Physiotherapist | Mon, Tue, Wed | back pain |\n"
        "| Ottoline Marsk | Physiotherapist | Tue, Thu, Fri | knee pain, running injuries |\n"
        "| Benedek Fairlow | Physiotherapist | Mon, Wed, Thu | shoulders |\n"
        "| Wenna Castrell | Physiotherapy Assistant | Mon to Fri | exercise classes |\n"
    ),
    "physio/news-march.txt": (
        "Team news, March 2026\n\nOttoline Marsk is starting a knee exercise class in the"
        " church hall on Thursday evenings from 5 March. Places are booked at reception.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("physio",)) as home:
        yield home


def test_the_row_the_description_picks_names_who_the_second_note_is_about() -> None:
    question = (
        "The physiotherapist whose special interest is knee pain - which evening is her new"
        " class on?"
    )
    record = ask_json(question, "physio")
    assert not record["abstained"], record["answer"]
    assert "thursday" in record["answer"].lower()
    assert "halvard" not in record["answer"].lower()


def test_no_note_beyond_the_table_is_an_abstention_not_the_table() -> None:
    question = (
        "The physiotherapist whose special interest is shoulders - when does his clinic open?"
    )
    record = ask_json(question, "physio")
    assert record["abstained"], record["answer"]
