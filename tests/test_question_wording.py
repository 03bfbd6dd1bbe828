"""A question worded the asker's way is still answered from the note that says it.

As a user meets it: `prefrag index` on their own notes, then `prefrag ask --json`. A patient
writes "I've" and "I'm" (no name, however capitalised), says where their own injury is
("stitches in my knee": not a group the answer must name), asks why "people" did
something (not a population), or spells out a name the notes shorten to its initials
("the minor ailments clinic" for "the MAC"). Each was abstained on although the note says
what is asked. What the notes do not say is still not answered. The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "notes/glued-wounds.md": (
        "# Glued wounds\n\n"
        "Reviewed: April 2026.\n\n"
        "Skin glue holds a clean cut together while it heals.\n\n"
        "Glued cuts can be showered after 24 hours but must not be soaked in a bath for 5 "
        "days.\n\n"
        "The glue flakes off by itself after 7 to 10 days: do not pick at it.\n"
    ),
    "notes/blisters.md": (
        "# Blisters\n\n"
        "Reviewed: May 2026.\n\n"
        "Do not burst a blister on the heel: the skin over it keeps out infection.\n\n"
        "Cover a blister with a hydrocolloid dressing and change it when it peels.\n"
    ),
    "notes/gorsecombe.md": (
        "# Gorsecombe\n\n"
        "Gorsecombe is a deserted village on the Tillet moor.\n\n"
        "Its families had to leave in 1921 after the Tillet tin mine flooded.\n\n"
        "The chapel roof fell in during the winter of 1947.\n"
    ),
    "notes/marlow-row-practice.md": (
        "# Marlow Row Practice\n\n"
        "Marlow Row Practice runs a minor ailments clinic (MAC) for coughs, rashes and "
        "earache.\n\n"
        "The practice phone line opens at 8am.\n"
    ),
    "notes/mac-hours.txt": (
        "Notice, March 2026\n\nFrom 2 March the MAC opens at 9am on Saturdays and closes at 1pm.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("notes",)) as home:
        yield home


@pytest.mark.parametrize(
    ("question", "said"),
    [
        # "I've" is no name the sentences must hold.
        ("Should I burst the blister on my heel if I've got one?", "Do not burst"),
        # Where the asker's own wound is narrows nothing.
        ("can I have a bath with a glued cut in my knee?", "not be soaked"),
        # "people" here is who left, not a population.
        ("Why did people leave Gorsecombe in 1921?", "mine flooded"),
        # The note writes "MAC", the question the words it stands for.
        ("When does the minor ailments clinic open on Saturdays?", "9am"),
    ],
)
def test_a_question_in_the_askers_words_is_answered(question: str, said: str) -> None:
    record = ask_json(question, "notes")
    assert not record["abstained"], record["answer"]
    assert said in record["answer"], record


@pytest.mark.parametrize(
    "question",
    [
        "What is the email address of the minor ailments clinic?",
        "How much does it cost to visit Gorsecombe?",
    ],
)
def test_what_the_notes_never_say_is_still_not_answered(question: str) -> None:
    record = ask_json(question, "notes")
    assert record["abstained"], record["answer"]
