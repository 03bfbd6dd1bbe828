"""The default confidence is the fitted one: an answer whose sentence does not say what is
asked is withheld, a right answer keeps its answer and a confidence above the threshold.

A user indexes invented notes (`prefrag index`) and asks with `prefrag ask --json`, with
no confidence setting of their own. The clinic notes describe one surgery's physiotherapy
and cystitis care; the encyclopedia notes an invented reservoir and its town.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

from prefrag.config import get_settings

NOTES = {
    "clinic/brackenridge-physio.md": """# Physiotherapy at Brackenridge Surgery

Physiotherapy at Brackenridge Surgery is run by Tamsin Oakhurst on Tuesdays and Thursdays.
Referral letters go to the Harwell Road office, and the first appointment lasts 45 minutes.
Patients with back pain are seen within two weeks of referral.
""",
    "clinic/brackenridge-cystitis.md": """# Cystitis in women: Brackenridge Surgery

Women with uncomplicated cystitis are offered nitrofurantoin 100 mg modified-release twice a
day for 3 days.
A urine sample is sent to the laboratory only if symptoms return within four weeks.
Drink plenty of fluids and take paracetamol for the pain.
""",
    "places/quillan-mere.md": """# Quillan Mere

Quillan Mere is a reservoir 3 km west of the market town of Dunsford, built in 1902 to
supply the town's woollen mills.
Its stone dam was designed by the engineer Rufus Allardyce and holds back four million
cubic metres of water.
The reservoir is now used for sailing and is home to a colony of great crested grebes.
""",
    "places/dunsford.md": """# Dunsford

Dunsford is a market town on the River Lenning with about 9,400 residents.
Its market hall was built in 1761 and its Thursday market dates from a charter of 1288.
""",
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One data directory for the module, the two folders indexed as two sources."""
    with indexed_home(tmp_path_factory, NOTES, ("clinic", "places")) as home:
        yield home


pytestmark = pytest.mark.usefixtures("default_confidence")


def test_the_fitted_confidence_is_the_default() -> None:
    assert get_settings().calibrated_confidence


def test_a_sentence_about_another_service_is_withheld() -> None:
    """The notes say who runs physiotherapy, not podiatry: the closest sentence names a
    person for the wrong service, and the answer is an abstention saying why (quoting that
    sentence as the closest evidence, citing nothing)."""
    record = ask_json("Who runs the podiatry clinic at Brackenridge Surgery?", "clinic")
    assert record["abstained"], record["answer"]
    assert "surely enough" in record["answer"]
    assert record["citations"] == []


@pytest.mark.parametrize(
    ("question", "source", "expected"),
    [
        ("Who runs physiotherapy at Brackenridge Surgery?", "clinic", "Tamsin Oakhurst"),
        ("How long is the first physiotherapy appointment?", "clinic", "45 minutes"),
        ("Who designed the dam at Quillan Mere?", "places", "Rufus Allardyce"),
    ],
)
def test_a_right_answer_keeps_its_answer_and_a_confidence_above_the_threshold(
    question: str, source: str, expected: str
) -> None:
    from prefrag.reasoners._confidence import load_model

    model = load_model()
    assert model is not None
    record = ask_json(question, source)
    assert not record["abstained"], record["answer"]
    assert expected in record["answer"]
    assert min(model.answer_threshold, model.short_threshold) <= record["confidence"] <= 1.0
    assert record["citations"]
