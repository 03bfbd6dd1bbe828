"""The fitted confidence reads a signal by the answer's route: interactions of features.

A model may name a product of two features ("similarity_lead*cited_first"): how far the
cited note's closest sentence leads the others counts one way for an answer from the note
the search ranked first and another way for an answer from a lower-ranked note. Every
feature the shipped model names, products included, is computed for an answer a user asks
for through `prefrag ask` on invented notes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

from prefrag.reasoners._confidence import ConfidenceModel

NOTES = {
    "harbour/tolvane-ferry.md": """# Tolvane ferry

The Tolvane ferry crosses from Brisk Harbour to the island of Quillan Skerry.
The crossing takes forty minutes and the first boat leaves at 07:15.
Bicycles travel free; cars must be booked a day ahead.
""",
    "harbour/quillan-skerry.md": """# Quillan Skerry

Quillan Skerry is a small island with a lighthouse built in 1862.
About ninety people live there, most of them in the hamlet of Dunmore Strand.
""",
}


def model_with(feature: str) -> ConfidenceModel:
    """A one-feature model on `feature` (unscaled, coefficient 1, intercept 0)."""
    return ConfidenceModel(
        features=(feature,),
        mean=(0.0,),
        scale=(1.0,),
        coef=(1.0,),
        intercept=0.0,
        answer_threshold=0.5,
        span_threshold=0.8,
        correct_threshold=0.6,
        short_threshold=0.5,
    )


def test_a_named_product_of_features_is_read_as_their_product() -> None:
    """The lead counts for an answer citing the first-ranked note, not for another one: the
    probability is the logistic of lead x cited_first (0.5 when not cited first)."""
    model = model_with("similarity_lead*cited_first")
    cited_first = {"similarity_lead": 0.8, "cited_first": 1.0}
    other_note = {"similarity_lead": 0.8, "cited_first": 0.0}
    assert model.probability(cited_first) == pytest.approx(1.0 / (1.0 + math.exp(-0.8)))
    assert model.probability(other_note) == pytest.approx(0.5)


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One data directory for the module, the notes indexed as one source."""
    with indexed_home(tmp_path_factory, NOTES, ("harbour",)) as home:
        yield home


@pytest.mark.usefixtures("default_confidence")
def test_every_feature_the_shipped_model_names_is_computed_for_an_asked_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Asked through `prefrag ask`, the drafted answer's features hold every feature the
    shipped model names and both parts of each product it names."""
    import prefrag.reasoners._answering as answering
    from prefrag.reasoners._confidence import load_model

    model = load_model()
    assert model is not None
    seen: list[dict[str, float]] = []
    calibrate = answering.calibrate

    def recording(draft, features, model, scratchpad):  # type: ignore[no-untyped-def]
        seen.append(features)
        return calibrate(draft, features, model, scratchpad)

    monkeypatch.setattr(answering, "calibrate", recording)
    record = ask_json("When does the first Tolvane ferry leave?", "harbour")
    assert "07:15" in record["answer"]
    assert seen
    parts = {part for name in model.features for part in name.split("*")}
    assert parts <= set(seen[-1])
