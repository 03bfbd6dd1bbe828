"""A list is answered whole: every bullet of the list that decides, not the one bullet (or
the bullets and the prose after them) that matches best. Through `prefrag index` on a
user's own notes and `prefrag ask --json`.

- The bullets under a lead line ending in a colon, the line in bold above a list, or a
  section heading, read out together with their lead line.
- A bullet ends where the list does: the sentence after the last bullet is not part of it
  (an indexed note has lost its blank lines).
- A sentences answer that reads out some bullets of a list gets the rest of them.

The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "ward/quellamine.md": """# Quellamine: what stops it working

Source: Fernhollow ward pharmacy sheet 4 (2026)

Quellamine is taken once a day at the same time, with a full glass of water.

These stop quellamine being absorbed; keep them at least 3 hours apart from it:

- zinc lozenges and zinc supplements
- magnesium hydroxide laxatives
- sucralfate
- bismuth stomach remedies

Grapefruit juice taken at the same time also lowers its level. Check the trough level 10 days
after any change.
""",
    "ward/corvane-rash.md": """# Corvane rash

Author: Dr Ilse Marrable

A mild rash in the first week of corvane is common and can be watched.

**Warning signs: stop corvane and send to hospital the same day**
- blistering or peeling skin;
- sores in the mouth or the eyes;
- a fever with the rash.

Treat itching with an emollient and review in 48 hours.
""",
    "ward/tessel-kidney.md": """# Tessel kidney clinic

Patients with tessel nephropathy are seen by the practice nurse every six months.

## Refer to the tessel clinic when
- the creatinine doubles within a year;
- protein in the urine goes above 1 g a day;
- the blood pressure stays above 150/95 on three medicines;
- a new swelling of both ankles appears.

## Diet
A low-salt diet is advised for everyone with tessel nephropathy.
""",
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("ward",)) as home:
        yield home


def test_a_list_question_gets_every_bullet_under_the_lead_line() -> None:
    record = ask_json("What stops quellamine being absorbed?", "ward")
    assert not record["abstained"], record["answer"]
    answer = record["answer"].lower()
    for item in ("zinc", "magnesium hydroxide", "sucralfate", "bismuth"):
        assert item in answer, record["answer"]
    # The sentence after the last bullet is not an item of the list.
    assert "grapefruit" not in answer, record["answer"]


def test_a_bold_line_above_a_list_leads_it() -> None:
    record = ask_json("What are the warning signs of a corvane rash?", "ward")
    assert not record["abstained"], record["answer"]
    answer = record["answer"].lower()
    for item in ("blistering", "mouth", "fever"):
        assert item in answer, record["answer"]
    assert "**" not in record["answer"]


def test_a_sentences_answer_reading_some_bullets_reads_them_all() -> None:
    record = ask_json("when do we refer to the tessel clinic?", "ward")
    assert not record["abstained"], record["answer"]
    answer = record["answer"].lower()
    for item in ("creatinine doubles", "1 g a day", "150/95", "ankles"):
        assert item in answer, record["answer"]
