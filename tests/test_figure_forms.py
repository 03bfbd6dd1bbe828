"""Figures and dates answered whole, as a user meets them: `prefrag index` on their own notes,
then `prefrag ask --json`.

A sum keeps its currency sign ("£36,500", never a bare "36,500"); a two-word unit stays
whole ("14 nautical miles"); a year that opens a range answers with the range ("between
1871 and 1876", short "1871 to 1876"); a weekday written in the plural ("Thursdays only")
is a day. The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "places/oskley-corn-exchange.md": """# Oskley Corn Exchange

The Oskley Corn Exchange is a market hall on Quay Street.
Its new slate roof, finished in 2021, cost £36,500.
""",
    "places/brill-point-light.md": """# Brill Point Light

Brill Point Light stands on the headland south of Oskley.
The Marl Bank lies 14 nautical miles west of the light.
""",
    "places/oskley-sea-wall.md": """# Oskley Sea Wall

The Oskley sea wall runs for 900 m along the front.
The wall was built between 1871 and 1876 by the Oskley Harbour Board.
""",
    "clinic/leg-ulcer-clinic.md": """# Leg ulcer clinic

Patients with a leg ulcer are seen by the practice nurse, Ruth Alder.
The leg ulcer clinic runs in the treatment room (Thursdays only).
""",
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One data directory for the module, holding the two folders of notes indexed."""
    with indexed_home(tmp_path_factory, NOTES, ("places", "clinic")) as home:
        yield home


@pytest.mark.parametrize(
    ("question", "source", "expected"),
    [
        ("How much did the new roof of the Oskley Corn Exchange cost?", "places", "£36,500"),
        ("How far is the Marl Bank from Brill Point Light?", "places", "14 nautical miles"),
        ("When was the Oskley sea wall built?", "places", "1871 to 1876"),
        ("Which day does the leg ulcer clinic run?", "clinic", "Thursday"),
    ],
)
def test_a_figure_or_date_is_answered_whole(question: str, source: str, expected: str) -> None:
    record = ask_json(question, source)
    assert not record["abstained"], record["answer"]
    shown = record["short_answer"] or record["answer"]
    assert expected in shown, (record["answer"], record["short_answer"])


SHOUTED = {
    "meds/dravocin.txt": """DRAVOCIN: SODIUM AND KIDNEYS

Dravocin is a water tablet. It lowers sodium, so be careful with low-salt diets.
Check sodium and creatinine 1 to 2 weeks after starting.
Stop it if sodium falls below 130 mmol/L.

Dravocin also raises lithium levels.
""",
}


def test_a_heading_in_capitals_is_never_the_answer(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    with indexed_home(tmp_path_factory, SHOUTED, ("meds",)):
        record = ask_json("at what sodium do you stop dravocin", "meds")
    assert "SODIUM AND KIDNEYS" not in record["answer"], record["answer"]
    assert "SODIUM AND KIDNEYS" not in (record["short_answer"] or ""), record["short_answer"]
