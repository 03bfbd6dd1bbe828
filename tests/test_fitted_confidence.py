"""The fitted confidence (`PREFRAG_CALIBRATED_CONFIDENCE=true`, the default): a near miss on
a user's own notes abstains.

A user indexes their notes (`prefrag index`) and asks with `prefrag ask --json`. A question
about a subject the notes hold, asking for something they do not say, is answered by the
hand-weighted confidence (`PREFRAG_CALIBRATED_CONFIDENCE=false`) with the subject's closest
sentence; the fitted confidence (`app/data/confidence_model.json`) withholds that answer
and says why, while questions the notes answer keep their answers. The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

from prefrag.config import get_settings

NOTES = {
    "clinic/halden-gout.md": """# Gout review: Mira Halden

Mira Halden, 58, has gout in her left big toe.
She takes allopurinol 200 mg once a day and her urate was 320 umol/L in March.
She should drink at least two litres of water a day.
Her next review is in 3 months.
""",
    "clinic/ostrow-copd.md": """# COPD review: Jonas Ostrow

Jonas Ostrow, 71, has COPD and uses a tiotropium inhaler every morning.
He had two flare-ups last winter, each treated with prednisolone for 5 days.
He stopped smoking in 2019.
""",
    "places/brisk-fell.md": """# Brisk Fell

Brisk Fell is a hill of 612 metres above the village of Carnby.
Its summit cairn was rebuilt in 1922 by the parish council.
""",
    "places/carnby.md": """# Carnby

Carnby is a farming village on the Wenning Beck with about 400 residents.
Its church of St Aldhelm dates from the twelfth century.
""",
}

# A near miss the fitted confidence withholds is tested where it is the default
# (tests/test_default_confidence.py); the near misses these notes held ("What was Mira Halden's
# HbA1c?", "When was the church of Carnby rebuilt?") are refused by the evidence checks too now.


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One data directory for the module, holding the two folders of notes indexed."""
    with indexed_home(tmp_path_factory, NOTES, ("clinic", "places")) as home:
        yield home


def ask_with(question: str, source: str, monkeypatch: pytest.MonkeyPatch, *, fitted: bool) -> dict:
    """`prefrag ask --json` with PREFRAG_CALIBRATED_CONFIDENCE set to `fitted`."""
    monkeypatch.setenv("PREFRAG_CALIBRATED_CONFIDENCE", "true" if fitted else "false")
    get_settings.cache_clear()
    try:
        return ask_json(question, source)
    finally:
        get_settings.cache_clear()


@pytest.mark.parametrize(
    ("question", "source", "expected"),
    [
        ("How long was Jonas Ostrow's prednisolone course?", "clinic", "5 days"),
        ("How often does Mira Halden take allopurinol?", "clinic", "once a day"),
        ("What is the population of Brisk Fell's village?", "places", "400"),
    ],
)
def test_answered_questions_keep_their_answer_with_the_fitted_probability(
    question: str, source: str, expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prefrag.reasoners._confidence import load_model

    model = load_model()
    assert model is not None
    record = ask_with(question, source, monkeypatch, fitted=True)
    assert not record["abstained"], record["answer"]
    assert expected in record["answer"]
    assert min(model.answer_threshold, model.short_threshold) <= record["confidence"] <= 1.0
