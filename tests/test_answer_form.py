"""Answers in the form the question asks for, as a user meets them: `prefrag index` on their
own notes, then `prefrag ask --json`.

The asked quantity is read from the question's main clause, not from a condition it gives
("what dose if the eGFR is 30" asks for a dose); "how much" asks for an amount, which a
frequency ("three times a day") or a count of other things ("after 2 courses") is not; a
note's table row read alone (its chunk opening at the table's last row) is a statement of
its own, never glued to the prose after it. The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

_TEAM_ROWS = "".join(
    f"| {name} | {role} | {days} | {interest} |\n"
    for name, role, days, interest in [
        ("Ottilie Vance", "Lead Chiropodist", "Mon, Tue, Wed", "wound care and dressings"),
        ("Brannoc Heale", "Chiropodist", "Mon, Thu, Fri", "sports injuries and insoles"),
        ("Ysolde Marrick", "Chiropodist (MSK)", "Tue, Wed, Fri", "gait and posture"),
        ("Corwen Tallis", "Chiropodist", "Mon, Tue, Thu", "older people's feet"),
        ("Jessamy Orle", "Clinic Assistant", "Mon to Fri", "reception and home visits"),
        ("Peverel Stoke", "Clinic Assistant", "Tue to Sat", "stock and sterilising"),
        ("Marigold Fenn", "Chiropodist", "Wed, Thu, Fri", "children and nail care"),
    ]
)

NOTES = {
    "ward/pellanex.txt": (
        "Pellanex for heavy nosebleeds\n\n"
        "Pellanex helps a nosebleed clot and is taken only while the bleeds keep coming:"
        " 2 g three times a day for up to 5 days; the dose can go up to 3 g three times a day."
        " If the nosebleeds are no better after 2 courses, stop it and see the GP.\n"
    ),
    "ward/drovamine.txt": (
        "Drovamine for sugar control\n\n"
        "Drovamine lowers blood sugar after meals. The usual dose is 80 mg once daily; it is"
        " reduced to 40 mg once daily when the eGFR is between 25 and 50 ml/min, and to 20 mg"
        " once daily below 25 ml/min. It rarely causes low blood sugar on its own.\n"
    ),
    "ward/fennick-foot-clinic.md": (
        "# Fennick foot clinic\n\n"
        "The Fennick foot clinic sees adults and children with foot problems from across the"
        " Ravelstow district, on referral from a GP, a practice nurse or the patients"
        " themselves, in the old cottage hospital building on Quillon Street.\n\n"
        "## Our team\n\n"
        "| name | role | main days | special interest |\n"
        "|---|---|---|---|\n"
        f"{_TEAM_ROWS}"
        "\nA first visit takes 45 minutes and a follow-up visit 15 minutes. If you cannot"
        " come, please ring at least a day before so the slot can go to someone else.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("ward",)) as home:
        yield home


def test_a_condition_names_no_asked_quantity() -> None:
    record = ask_json("drovamine dose if the eGFR is 30", "ward")
    assert not record["abstained"], record["answer"]
    assert " mg " in f" {record['answer']} ", record
    assert "ml/min" not in record["short_answer"], record


def test_a_frequency_is_no_amount() -> None:
    record = ask_json("how much pellanex do you take for nosebleeds", "ward")
    assert not record["abstained"], record["answer"]
    assert "2 g" in record["answer"], record
    assert not record["short_answer"].startswith("three"), record
    assert "courses" not in record["short_answer"], record


def test_a_table_row_read_alone_is_no_part_of_the_prose_after_it() -> None:
    record = ask_json("What should I do if I cannot come to my Fennick foot clinic visit?", "ward")
    assert not record["abstained"], record["answer"]
    assert "please ring" in record["answer"], record
    assert "|" not in record["answer"], record
