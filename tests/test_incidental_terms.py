"""A question's incidental words do not make the reasoner abstain; its essential ones still do.

As a user meets it: `prefrag index` on their own notes, then `prefrag ask --json`. What a
question asks must be said by the answer's sentence (`_checks.unsaid_relation`,
`absent_attribute`, `unnamed_subject`), but not every word of the question is asked: the
situation told before the asking part ("the patient in the stroke unit is starting X -
how long ...?"), the asker's own people ("my husband"), a duration of the asker's use
("after taking it for six months"), the kind an answer is an instance of ("the product
they rub on"), and a subject named by the section heading above the sentence. An age the
notes do not cover still abstains wherever the question says it. The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

from prefrag.reasoners._checks import asked_clause, attribute_head, relation_words

NOTES = {
    "notes/tavoxil.md": (
        "# Tavoxil\n\n"
        "Tavoxil is a tablet for chronic itch.\n"
        "The usual adult dose of Tavoxil is 10 mg once a day.\n"
        "Avoid grapefruit juice while taking Tavoxil and for 3 days after the last dose.\n"
        "Do not stop Tavoxil suddenly after regular use: reduce the dose over 2 weeks.\n"
    ),
    "notes/teething.md": (
        "# Teething\n\n"
        "Calmadent gel can be rubbed on the gums to ease teething pain in babies over 4 months.\n"
    ),
    "notes/oakvale-services.md": (
        "# Oakvale services\n\n"
        "Oakvale runs two clinics for blood tests, dressings and vaccinations.\n\n"
        "## Ferndale clinic\n\n"
        "Open Monday to Friday, 9 am to 5 pm; the nurse there also takes blood.\n\n"
        "## Kestrel Road clinic\n\n"
        "Open on Saturday mornings only, for dressings.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("notes",)) as home:
        yield home


def test_the_situation_told_before_the_question_need_not_be_said() -> None:
    record = ask_json(
        "The patient in the stroke unit is starting Tavoxil - how long after the last dose"
        " should he avoid grapefruit juice?",
        "notes",
    )
    assert not record["abstained"], record["answer"]
    assert "3 days" in record["answer"], record


def test_the_askers_own_people_need_not_be_said() -> None:
    record = ask_json("Can my husband drink grapefruit juice with Tavoxil?", "notes")
    assert not record["abstained"], record["answer"]
    assert "grapefruit" in record["answer"].lower(), record


def test_a_duration_of_the_askers_use_need_not_be_said() -> None:
    record = ask_json("How do I stop Tavoxil after taking it every day for a year?", "notes")
    assert not record["abstained"], record["answer"]
    assert "2 weeks" in record["answer"], record


def test_the_kind_an_answer_is_an_instance_of_need_not_be_said() -> None:
    record = ask_json("What's the product they rub on the gums for teething pain?", "notes")
    assert not record["abstained"], record["answer"]
    assert "Calmadent" in record["answer"], record


def test_a_section_heading_names_the_subject_of_its_sentences() -> None:
    record = ask_json("Which days is the Ferndale clinic open?", "notes")
    assert not record["abstained"], record["answer"]
    assert "Monday to Friday" in record["answer"], record


def test_an_age_the_notes_do_not_cover_still_abstains_in_the_situation() -> None:
    record = ask_json("My son is 7 years old - what dose of Tavoxil should he take?", "notes")
    assert record["abstained"], record["answer"]
    assert "10 mg" not in record.get("short_answer", ""), record


def test_a_clinic_the_notes_never_name_still_abstains() -> None:
    record = ask_json("When is the Brockwell clinic open?", "notes")
    assert record["abstained"], record["answer"]


def test_the_asking_part_is_read_after_the_situation() -> None:
    assert asked_clause("The man in bed 4 - when is his next dose?") == "when is his next dose?"
    assert asked_clause("In pregnancy, is it safe?") == "In pregnancy, is it safe?"
    assert asked_clause("my aunt, up to how long can she wait?") == "up to how long can she wait?"
    words = [a.word for a in relation_words("She takes it for gout, how long is the course?")]
    assert "gout" not in words
    words = [a.word for a in relation_words("What dose do you give just in case?")]
    assert "case" not in words
    words = [a.word for a in relation_words("Is X safe for a child or for an adult?")]
    assert words == ["child"]  # either side said will do
    assert attribute_head("What is the rash often mistaken for?") == ""
    assert attribute_head("What is the half-life of Tavoxil?") == "half-life"
