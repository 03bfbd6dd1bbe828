"""Figure questions read as a user meets them: `prefrag index` on their own notes, then
`prefrag ask --json`.

The asked quantity is the one the question names first ("what dose ... at altitude" asks a
dose, not a height); what a figure is counted per ("how much per dose") is not what is asked;
"how much higher" asks a length. Of several figures in a sentence, the one whose own words
the question uses answers: across an apposition's comma ("is longer, usually 10 to 12
weeks"), with the brackets naming it ("21 days (the titration phase)"), with its open end
("6 or more"); a figure the question gives ("if the eGFR is 42") picks the value whose
clause's bounds hold it ("100 mg ... when the eGFR is between 30 and 50"). A hyphened figure
keeps its noun ("a 14-day cycle"); a time of day is read whole ("2 pm to 6 pm"); a number
inside another ("5" in "150 mg") is not that number. The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "clinic/pemberol.md": """# Pemberol for mountain travellers

Reviewed: 3 February 2026

Pemberol eases the breathlessness of travel at altitude. It needs a private prescription.

## Dosing

- Prevention of Pemberol-treated breathlessness: **150 mg twice a day**, starting the day
  before the climb and stopping after 5 days at the highest camp.
- Side effects: a dry mouth and vivid dreams.
""",
    "clinic/quellvax-prices.md": """# Quellvax vaccine

Quellvax protects against Harrow fever for three years. Quellvax costs £54 per dose.
""",
    "clinic/hearing-service.md": """# Tamsford hearing service

Most people referred to us have one hearing test first. A hearing aid fitting follows when
the test shows a loss: the wait for a hearing aid fitting is longer, usually 10 to 12 weeks,
and the fitting itself takes 45 to 60 minutes.
""",
    "clinic/brevadone.md": """# Brevadone

Brevadone is started at 10 mg once a day for the first 21 days (the titration phase), then
increased to 20 mg once a day. If a headache appears, the dose is not increased until it has
gone, and the titration phase must not last longer than 35 days in total.
""",
    "clinic/solvarin.md": """# Solvarin tablets

Solvarin is taken for 10 days followed by a 4-day break (a 14-day cycle); most people have
six cycles.
""",
    "clinic/frailty-score.md": """# The Orrel frailty check

We use the Orrel check at every over-75 review: a score of 6 or more suggests frailty,
3 to 5 suggests a pre-frail state, 0 makes frailty unlikely.
""",
    "clinic/foot-clinic.md": """# Foot clinic

The foot clinic is held in room 4. The Friday foot clinic runs from 2 pm to 6 pm, and the
Monday one is for nail surgery only.
""",
    "places/kestle-reservoir.md": """# Kestle Reservoir

Kestle Reservoir lies in the Amberdown hills above the village of Lower Kestle. The dam was
finished in 1911 and raised by 4 metres in 1962 to hold the town's growing demand.
""",
    "clinic/dorvalin.md": """# Dorvalin and the kidneys

Dorvalin is cleared by the kidneys. The usual dose is 200 mg once daily; it is reduced to
100 mg once daily when the eGFR is between 30 and 50 ml/min, and to 50 mg once daily below
30 ml/min.
""",
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One data directory for the module, holding the notes indexed."""
    with indexed_home(tmp_path_factory, NOTES, ("clinic", "places")) as home:
        yield home


@pytest.mark.parametrize(
    ("question", "source", "expected", "not_expected"),
    [
        # The quantity named first is asked ("dose"), not the later "altitude"; and the "5"
        # of "5 days" is not read inside "150 mg".
        ("What dose of Pemberol is taken for travel at altitude?", "clinic", "150 mg", "5 days"),
        # What a figure is counted per is not the asked quantity: a price.
        ("How much per dose is the Quellvax vaccine?", "clinic", "£54", "no retrieved"),
        # A comparative names the dimension: a length.
        ("How much higher was the Kestle dam made in 1962?", "places", "4 metres", "1911"),
        # An apposition's comma does not part the value from its words.
        (
            "How long is the wait for a hearing aid fitting?",
            "clinic",
            "10 to 12 weeks",
            "45 to 60 minutes",
        ),
        # Brackets after a value name it.
        ("How long is the Brevadone titration phase?", "clinic", "21 days", "35 days"),
        # A hyphened figure is a duration with its noun.
        ("How long is one Solvarin cycle?", "clinic", "14-day cycle", "10 days"),
        # The open end is part of the figure, and of its words' slot.
        ("On the Orrel check, what score points to frailty?", "clinic", "6 or more", "0 makes"),
        # The figure the question gives picks the value whose clause's bounds hold it.
        ("Dorvalin dose if the eGFR is 42?", "clinic", "100 mg", "200 mg"),
        ("Dorvalin dose if the eGFR is 24?", "clinic", "50 mg", "200 mg"),
        # A time of day, read whole.
        ("what times is the Friday foot clinic on?", "clinic", "2 pm to 6 pm", "room 4"),
    ],
)
def test_the_asked_figure_answers(
    question: str, source: str, expected: str, not_expected: str
) -> None:
    record = ask_json(question, source)
    assert not record["abstained"], record["answer"]
    shown = record["short_answer"] or record["answer"]
    assert expected in shown, (record["answer"], record["short_answer"])
    assert not_expected not in shown, (record["answer"], record["short_answer"])
