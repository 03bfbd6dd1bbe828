"""Questions about a person they only describe, as a user meets them: `prefrag index`
on their own notes, then `prefrag ask --json`.

- "When does the nurse who referred Mrs Quilly to the falls clinic work?": the case note
  says who referred her (in a sentence, not as a span the first hop would give), the staff
  table's row for that nurse gives the days. The answer is the row, citing both notes.

The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "surgery/case-quilly.md": (
        "# Case review: Mrs Edna Quilly\n\n"
        "Mrs Quilly, 84, fell twice at home in January. At the annual review her blood pressure "
        "dropped on standing, so Ottilie Brannan referred her to the falls clinic. Mrs Quilly "
        "is to be reviewed by Dr Feargal Hosking in 6 weeks.\n"
    ),
    "surgery/staff.md": (
        "# Ashcombe Road Surgery: staff\n\n"
        "| name | role | working days |\n"
        "|---|---|---|\n"
        "| Dr Feargal Hosking | GP partner | Monday, Wednesday, Friday |\n"
        "| Ottilie Brannan | practice nurse | Tuesday and Thursday mornings |\n"
        "| Rhian Coldwell | healthcare assistant | Monday to Friday |\n"
    ),
    "surgery/falls.md": (
        "# Falls in older people\n\n"
        "Anyone over 65 with two falls in a year is referred to the falls clinic. Check lying "
        "and standing blood pressure and review sedating medicines.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("surgery",)) as home:
        yield home


def cited(record: dict) -> set[str]:
    return {Path(c["url"].removeprefix("file://")).stem for c in record["citations"]}


def test_a_person_named_in_a_sentence_is_looked_up_in_the_staff_table() -> None:
    record = ask_json(
        "When does the nurse who referred Mrs Quilly to the falls clinic work?", "surgery"
    )
    assert not record["abstained"], record["answer"]
    assert "Tuesday and Thursday mornings" in record["answer"], record
    assert "Monday, Wednesday, Friday" not in record["answer"], record
    assert {"case-quilly", "staff"} <= cited(record), record
