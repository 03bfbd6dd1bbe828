"""Markdown tables and label lines in a user's own notes, as a user meets them: `prefrag
index` on the notes, then `prefrag ask --json`.

A table row is read as a statement of its own, each cell named by its column: the dose asked
for is the one in the asked row and column, and no pipe reaches the answer. A label line
("Author: ...", "Reviewed: ...") answers with its value, never with its label, and an ISO
date stays whole. The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "clinic/anticoagulants.md": """# Anticoagulant doses: Harlow Lane clinic

Reviewed: 2026-03-02
Author: Dr Petra Lund

Our usual doses for atrial fibrillation are below. Check kidney function before starting.

| Medicine | Usual dose | Reduced dose |
|---|---|---|
| Apixaban | 5 mg twice a day | 2.5 mg twice a day |
| Edoxaban | 60 mg once a day | 30 mg once a day |

Patients over 80 years who weigh 60 kg or less take the reduced dose of apixaban.
""",
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The notes indexed once for the module (replaces conftest's empty home)."""
    with indexed_home(tmp_path_factory, NOTES, ["clinic"]) as path:
        yield path


@pytest.mark.parametrize(
    ("question", "expected", "not_expected"),
    [
        ("What is the reduced dose of apixaban?", "2.5 mg twice a day", "60 mg"),
        ("What is the usual dose of edoxaban?", "60 mg once a day", "2.5 mg"),
    ],
)
def test_a_table_cell_is_read_from_the_asked_row_and_column(
    question: str, expected: str, not_expected: str
) -> None:
    result = ask_json(question, "clinic")
    assert not result.get("abstained"), result["answer"]
    assert expected in result["answer"]
    assert not_expected not in result["answer"]
    assert "|" not in result["answer"] and "---" not in result["answer"]


def test_a_label_line_answers_with_its_value_not_its_label() -> None:
    result = ask_json("Who wrote the anticoagulant note?", "clinic")
    assert result["answer"] != "Author"
    assert "Petra Lund" in result["answer"] or result.get("abstained"), result["answer"]


def test_an_iso_date_is_answered_whole() -> None:
    result = ask_json("When was the anticoagulant note reviewed?", "clinic")
    assert result.get("abstained") or "2026-03-02" in result["answer"], result["answer"]
