"""A question naming a person and asking what another note says of the thing a log links to
them, as a user meets it: `prefrag index` on their own notes, then `prefrag ask --json`.

- The drop note's sentence about the taper never names the patient; the day-case log's
  entry naming him, his operation and the drops is the first hop, so the answer stands,
  says the link and cites both notes (`_subject_links`).
- A patient whose entry names other tablets, or who is in no entry, stays unanswered: a
  sentence about a thing no first hop links to them is not theirs.
- A word capitalised because it opens the question's second sentence is no subject.
- The month the question tells ("the man in the April log") is said by the log's entry
  linking him to the drop note, not by the drop note; a month no entry says stays
  unanswered.

The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "daycase/daycase-log.md": (
        "# Day-case unit log, April 2033\n\n"
        "## 3 April\n"
        "**Mr Osric Vantongeren**, 66: cataract surgery, left eye. Lumiprednol drops.\n"
        "**Ms Talitha Brome**, 52: knee arthroscopy. Sent home with Ferrocalm tablets.\n\n"
        "## 4 April\n"
        "**Mrs Ysolde Penhaligon**, 71: bunion repair. Walking boot for six weeks.\n"
    ),
    "daycase/lumiprednol.txt": (
        "Lumiprednol eye drops.\n\n"
        "Lumiprednol is a steroid eye drop used after eye operations. Shake the bottle well\n"
        "before each use. The course is tapered over 4 weeks, one drop a day fewer each week.\n"
    ),
    "daycase/ferrocalm.txt": (
        "Ferrocalm.\n\n"
        "Ferrocalm is a pain tablet for the first days after an operation. Take no more than\n"
        "6 tablets in 24 hours, with food.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("daycase",)) as home:
        yield home


def cited(record: dict) -> set[str]:
    return {Path(c["url"].removeprefix("file://")).stem for c in record["citations"]}


def test_a_log_entry_links_the_named_patient_to_the_note_that_answers() -> None:
    record = ask_json(
        "Mr Vantongeren had his cataract done this month - over how many weeks are his drops"
        " tapered?",
        "daycase",
    )
    assert not record["abstained"], record["answer"]
    assert "4 weeks" in record["answer"], record
    assert "Vantongeren" in record["answer"], record  # the answer says the link
    assert {"daycase-log", "lumiprednol"} <= cited(record), record


def test_a_patient_whose_entry_names_other_tablets_stays_unanswered() -> None:
    record = ask_json(
        "Ms Brome had her knee arthroscopy this month - over how many weeks are her drops tapered?",
        "daycase",
    )
    assert record["abstained"], record["answer"]


def test_a_patient_in_no_entry_stays_unanswered() -> None:
    record = ask_json(
        "Mr Hollingbrook had his cataract done this month - over how many weeks are his drops"
        " tapered?",
        "daycase",
    )
    assert record["abstained"], record["answer"]


def test_a_word_opening_the_questions_second_sentence_is_no_subject() -> None:
    # "According" is capitalised by its place, and "Lumiprednol. According" is no name.
    record = ask_json(
        "My father was sent home with Lumiprednol. According to the note, what should he do"
        " with the bottle before each use?",
        "daycase",
    )
    assert not record["abstained"], record["answer"]
    assert "Shake the bottle" in record["answer"], record


def test_the_log_entry_says_the_month_the_question_tells() -> None:
    # The drop note never says April; the April log's entry linking him to the drops does.
    record = ask_json(
        "The man in the April log who had cataract surgery uses Lumiprednol: over how many"
        " weeks is the course tapered?",
        "daycase",
    )
    assert not record["abstained"], record["answer"]
    assert "4 weeks" in record["answer"], record
    assert {"daycase-log", "lumiprednol"} <= cited(record), record


def test_a_month_no_first_hop_says_stays_unanswered() -> None:
    record = ask_json(
        "The man in the March log who had cataract surgery uses Lumiprednol: over how many"
        " weeks is the course tapered?",
        "daycase",
    )
    assert record["abstained"], record["answer"]
