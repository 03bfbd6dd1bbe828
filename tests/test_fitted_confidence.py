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

# ("What was Mira Halden's HbA1c?", her note being about her gout, was one until the eighth
# stop, and "When was the church of Carnby rebuilt?" until the thirty-second: the hand-weighted
# confidence abstains on both too now, the second because no sentence says "rebuilt"
# (`_checks.asked_verbs`). No near miss on these notes is answered by the hand-weighted
# confidence and withheld by the fitted confidence any more; the list stays for the next one found.)
NEAR_MISSES: list[tuple[str, str]] = []


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


@pytest.mark.parametrize(("question", "source"), NEAR_MISSES)
def test_a_near_miss_the_hand_weighted_confidence_answers_abstains_with_the_fitted_one(
    question: str, source: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fitted = ask_with(question, source, monkeypatch, fitted=True)
    assert fitted["abstained"], fitted["answer"]
    assert fitted["answer"].startswith("The sources I could reach do not answer this: ")
    assert "surely enough" in fitted["answer"]
    assert fitted["citations"] == []
    hand = ask_with(question, source, monkeypatch, fitted=False)
    # The hand-weighted confidence answers it with a sentence of the subject's note: a
    # confident wrong answer.
    assert not hand["abstained"], hand["answer"]


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
