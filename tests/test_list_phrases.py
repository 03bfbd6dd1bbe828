"""A list question is answered by the sentence whose series of phrases answers it, whole.

Through `prefrag index` on a user's own notes and `prefrag ask --json`:

- a label line's comma-separated phrases are a list, even without a closing "and" ("Tests
  before the first dose: a urine dip, a full blood count, ..."), and beat a sentence that
  only coordinates two other words;
- a sentence that points back to a list ("Any of the three means ...") is answered by the
  sentence before it, whose items are phrases, not single words.

The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "ward/velmorin.md": """# Velmorin infusions

Author: Dr Osric Pellham

Velmorin is given as a monthly infusion in the day unit for Harrowgate arthritis.

**Day unit label lines**
Tests before the first dose: a urine dip, a full blood count, serum calcium, a chest X-ray
Hold the dose if: calcium above 2.8 mmol/L
Infuse over: 30 minutes

Steroids lower calcium and phosphate, so in patients on a steroid repeat tests for calcium
and phosphate 2 weeks after the first dose of velmorin.

The infusion runs over 30 minutes and the patient stays for an hour afterwards.
""",
    "ward/calf-clot.md": """# Suspected calf clot in the day unit

Author: Dr Osric Pellham

A patient back from a long journey may have a clot in a deep calf vein. Look for swelling of
one calf, pain on squeezing the calf muscle, and a warm red patch over the vein. Any of the
three means a suspected calf clot. Send the patient for a same-day scan at Brockmere
Infirmary and give the first dose of the blood thinner while waiting.
""",
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("ward",)) as home:
        yield home


def test_a_labelled_comma_series_is_the_list_asked_for() -> None:
    record = ask_json("What tests are needed before the first dose of velmorin?", "ward")
    assert not record["abstained"], record["answer"]
    answer = record["answer"].lower()
    for item in ("urine dip", "full blood count", "calcium", "chest x-ray"):
        assert item in answer, record["answer"]
    # The sentence coordinating two other words is not the list asked for.
    assert "phosphate" not in answer, record["answer"]


def test_a_sentence_pointing_back_to_a_list_is_answered_by_that_list() -> None:
    record = ask_json("What are the three signs of a suspected calf clot?", "ward")
    assert not record["abstained"], record["answer"]
    answer = record["answer"].lower()
    for item in ("swelling of one calf", "squeezing the calf muscle", "warm red patch"):
        assert item in answer, record["answer"]
