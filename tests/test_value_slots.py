"""The value of a sentence the question points to, when the sentence holds several of a kind,
as a user meets it: `prefrag index` on their own notes, then `prefrag ask --json`.

"Opened in A and shut in B": the question's verb picks the year it belongs to; "of the N
people, M passed": the count the question's verb qualifies, not the one beside the counted
noun; "paid for by X, opened by Y": the name after the asked verb. The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "places/carrow-ropeworks.md": """# Carrow Ropeworks

The Carrow Ropeworks stood on the east bank of the Osk below Halbury.
The ropeworks started trading in 1788 and shut down in 1931, and its rope walk became a park.
""",
    "places/halbury-lifeboat-house.md": """# Halbury Lifeboat House

The Halbury Lifeboat House stands at the foot of Quarry Lane.
The house, paid for by the Osk Harbour Trust, was opened in 1902 by Edith Morrow.
""",
    "places/tallow-school.md": """# Tallow Grammar School

Tallow Grammar School is a small school on the Dunning road.
Of the 60 pupils who sat the county scholarship in 1920, 52 passed.
""",
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One data directory for the module, holding the notes indexed."""
    with indexed_home(tmp_path_factory, NOTES, ("places",)) as home:
        yield home


def shown(record: dict) -> str:
    """What a reader takes as the answer: the short answer when there is one."""
    return record["short_answer"] or record["answer"]


@pytest.mark.parametrize(
    ("question", "expected", "not_expected"),
    [
        # Two years coordinated in one sentence: the asked verb's own year.
        ("When did the Carrow Ropeworks shut down?", "1931", "1788"),
        ("When did the Carrow Ropeworks start trading?", "1788", "1931"),
        # Two counts: the one the asked verb qualifies, not the one beside the noun.
        ("How many pupils passed the scholarship at Tallow Grammar School?", "52", "60"),
        # Two names: the one after the asked verb, not the one paying.
        ("Who opened the Halbury Lifeboat House?", "Edith Morrow", "Osk Harbour Trust"),
    ],
)
def test_the_value_in_the_asked_words_slot_answers(
    question: str, expected: str, not_expected: str
) -> None:
    record = ask_json(question, "places")
    assert not record["abstained"], record["answer"]
    assert expected in shown(record), record["answer"]
    assert not_expected not in shown(record), record["answer"]
