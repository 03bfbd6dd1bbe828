"""Near misses abstain: the notes hold the subject, but not the relation the question asks.

As a user meets it: `prefrag index` on their own notes, then `prefrag ask --json`. A note
giving a practice's postal address does not answer its e-mail address; another year's
count does not answer a population in a given year; a usual dose is no maximum dose. Each
is answered confidently by the neighbouring fact unless the answer's sentence is checked
for the asked relation (`_checks.unsaid_relation`); the questions the notes do answer keep
their answers. The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

from prefrag.reasoners._checks import relation_words

NOTES = {
    "notes/brindle-surgery.md": (
        "# Brindle Lane Surgery\n\n"
        "Address: 9 Brindle Lane, Harrowgate\n\n"
        "Phone: 01632 960 118\n\n"
        "The surgery is open from 8:00 to 18:30 on weekdays.\n"
    ),
    "notes/pellbury.md": (
        "# Pellbury\n\n"
        "Pellbury is a market town on the river Lune.\n"
        "Pellbury had a population of 8,200 at the 2011 census.\n"
        "Its market hall was built in 1764.\n"
    ),
    "notes/zelvorin.md": (
        "# Zelvorin\n\n"
        "Zelvorin is used for travel sickness.\n"
        "The usual dose of Zelvorin is 20 mg once a day, taken an hour before the journey.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("notes",)) as home:
        yield home


def test_an_address_does_not_answer_an_email_address() -> None:
    record = ask_json("What is the surgery's email address?", "notes")
    assert record["abstained"], record["answer"]
    assert "email" in record["answer"], record["answer"]
    assert "9 Brindle Lane" not in record.get("short_answer", ""), record


def test_the_phone_number_the_note_gives_is_still_answered() -> None:
    record = ask_json("What is the surgery's phone number?", "notes")
    assert not record["abstained"], record["answer"]
    assert "01632 960 118" in record["answer"], record


def test_another_years_count_does_not_answer_a_population_in_a_given_year() -> None:
    record = ask_json("What was Pellbury's population in 1950?", "notes")
    assert record["abstained"], record["answer"]
    assert "1950" in record["answer"], record["answer"]


def test_the_population_in_the_year_the_note_gives_is_answered() -> None:
    record = ask_json("What was Pellbury's population in 2011?", "notes")
    assert not record["abstained"], record["answer"]
    assert "8,200" in record["answer"], record


def test_the_usual_dose_does_not_answer_the_maximum_dose() -> None:
    record = ask_json("What is the maximum daily dose of Zelvorin?", "notes")
    assert record["abstained"], record["answer"]
    assert "maximum" in record["answer"], record["answer"]


def test_the_usual_dose_the_note_gives_is_answered() -> None:
    record = ask_json("What is the usual dose of Zelvorin?", "notes")
    assert not record["abstained"], record["answer"]
    assert "20 mg" in record["answer"], record


def test_relation_words_are_read_from_the_questions_form() -> None:
    assert [a.word for a in relation_words("What is the practice's email address?")] == ["email"]
    # "for the flu jab" narrows it (`test_near_misses`): one of its words must be said too.
    eligible = relation_words("Who is eligible for the flu jab?")
    assert [(a.word, a.alternatives) for a in eligible] == [("eligible", ()), ("flu", ("jab",))]
    assert [a.word for a in relation_words("When did she die?")] == ["die"]
    assert "1908" in [a.word for a in relation_words("What was the population in 1908?")]
    # The kind asked ("dose") is what the answer is an instance of: not required.
    assert [a.word for a in relation_words("What is the dose of Zelvorin?")] == []
