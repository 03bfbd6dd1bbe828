"""Questions about a patient a review log describes, asking what another note says of the
medicine the log writes for them, as a user meets them: `prefrag index` on their own
notes, then `prefrag ask --json`.

- "The man in the log with ankle swelling: which juice must he avoid with his tablets?":
  the log's bullet about him (several short sentences: his name, his medicine, the swelling)
  names the medicine; the medicine's own note says which juice. The answer is the medicine
  note's sentence, citing the log too, not the bullet's sentence about the swelling.

The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "pharmacy/review-log-june.md": (
        "# Pharmacy review log, June 2031\n\n"
        "Telephone reviews by the dispensary pharmacists. Patients by name with consent.\n\n"
        "## 2 June 2031\n\n"
        "- **Mr Osric Pennyfeather**, 66. Veltrazine 40 mg bd since May. Ankle swelling for a\n"
        "  week, weight up 2 kg. GP informed. (TL)\n"
        "- **Mrs Ione Castellane**, 58. Quorapam 10 mg at night. Asked about driving to work;\n"
        "  advised to wait until the morning drowsiness settles. (RB)\n\n"
        "## 9 June 2031\n\n"
        "- **Mr Leofric Dunstable**, 74. Maribexin 5 mg od. Rash on both forearms after a\n"
        "  sunny weekend. Advised sun cream and long sleeves. (TL)\n"
    ),
    "pharmacy/veltrazine.md": (
        "# Veltrazine\n\n"
        "Veltrazine is a tablet for pulmonary hypertension, taken twice a day.\n\n"
        "The doses are taken 12 hours apart, with or without food. Pomelo juice raises its\n"
        "level in the blood and must be avoided. Swollen legs are a common side effect.\n"
    ),
    "pharmacy/quorapam.md": (
        "# Quorapam\n\n"
        "Quorapam is a sleeping tablet taken at bedtime.\n\n"
        "Take it at least 9 hours before driving or operating machinery. Alcohol makes the\n"
        "drowsiness worse.\n"
    ),
    "pharmacy/maribexin.md": (
        "# Maribexin\n\n"
        "Maribexin is a tablet for gout, taken once a day. It makes the skin burn easily in\n"
        "sunlight. Cranberry juice does not affect it.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("pharmacy",)) as home:
        yield home


def cited(record: dict) -> set[str]:
    return {Path(c["url"].removeprefix("file://")).stem for c in record["citations"]}


def test_a_log_entry_leads_to_the_note_about_the_medicine_it_names() -> None:
    record = ask_json(
        "The man in the log with ankle swelling: which juice must he avoid with his tablets?",
        "pharmacy",
    )
    assert not record["abstained"], record["answer"]
    assert "Pomelo" in record["answer"], record
    assert "Cranberry" not in record["answer"], record
    assert {"review-log-june", "veltrazine"} <= cited(record), record


def test_a_named_patient_leads_to_the_note_about_their_medicine() -> None:
    record = ask_json(
        "Mrs Castellane asked about driving. How long before driving should she take her tablet?",
        "pharmacy",
    )
    assert not record["abstained"], record["answer"]
    assert "9 hours" in record["answer"], record
    assert {"review-log-june", "quorapam"} <= cited(record), record
