"""The extractive reasoner's answer policy, as a user meets it: `prefrag index` on their own
notes, then `prefrag ask --json` or the API.

Answers stand on evidence sentences judged for the question; each answer carries one
confidence; a short span only when it is sure, whole cited sentences otherwise, an abstention
when no sentence says what is asked. The notes below are invented.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

from prefrag.config import get_settings

NOTES = {
    "clinic/armand-asthma.md": """# Asthma review: Pell Armand

Pell Armand, 29, has moderate asthma treated with a steroid inhaler twice a day.
Allergies:
- penicillin (rash)
Because of her asthma she must avoid non-selective beta blockers such as propranolol.
Her target peak flow is 450 L/min.
**Review** is booked in 4 to 6 weeks.
""",
    "clinic/sorrel-diabetes.md": """# Diabetes review: Abel Sorrel

Abel Sorrel, 63, has type 2 diabetes treated with metformin.
His HbA1c was 58 mmol/mol, up from 52 at the spring visit.
His blood pressure was 142/88 mmHg and he was asked to record home readings for a week.
""",
    "drugs/dravoline.md": """# Dravoline

Dravoline is a heart rhythm tablet.
Dravoline is cleared almost entirely by the liver enzyme CYP2D6.
When its levels rise, Dravoline can slow the heart dangerously.
""",
    "drugs/ketamorin.md": """# Ketamorin

Ketamorin is an antidepressant tablet.
Ketamorin strongly blocks the liver enzyme CYP2D6.
Ketamorin does not interact with Pellitol.
""",
    "places/orsk-vale.md": """# Orsk Vale

Orsk Vale is a mill town on the river Tamsin.
The town was founded in 1312 by wool merchants.
""",
    "places/tarn-hollow.md": """# Tarn Hollow

Tarn Hollow is a village high in the Keld hills.
The village was founded in 1588 around a lead mine.
""",
}

TITLES = [
    "Asthma review: Pell Armand",
    "Diabetes review: Abel Sorrel",
    "Dravoline",
    "Ketamorin",
    "Orsk Vale",
    "Tarn Hollow",
]


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One data directory for the module, holding the three folders of notes indexed."""
    with indexed_home(tmp_path_factory, NOTES, ("clinic", "drugs", "places")) as home:
        yield home


def cited_files(record: dict) -> set[str]:
    return {Path(c["url"].removeprefix("file://")).stem for c in record["citations"]}


ANSWERABLE = [
    ("What is Pell Armand's target peak flow?", "clinic", "450 L/min"),
    ("What was Abel Sorrel's blood pressure?", "clinic", "142/88 mmHg"),
    ("What was Abel Sorrel's HbA1c?", "clinic", "58 mmol/mol"),
    ("Which enzyme clears Dravoline?", "drugs", "CYP2D6"),
    ("Which river is Orsk Vale on?", "places", "Tamsin"),
]


@pytest.mark.parametrize(("question", "source", "expected"), ANSWERABLE)
def test_answers_are_statements_never_titles_headings_labels_or_bare_numbers(
    question: str, source: str, expected: str
) -> None:
    record = ask_json(question, source)
    answer = record["answer"]
    assert not record["abstained"], answer
    assert expected in answer  # a figure keeps its unit and range
    assert answer.strip() not in TITLES
    assert not re.search(r"(^|\s)#{1,6}\s|\*\*|__|`", answer), answer  # no Markdown
    assert not answer.rstrip().endswith(":"), answer  # no label line
    assert not re.fullmatch(r"[\d.,/\s-]+", answer), answer  # no bare number
    assert "Allergies" not in answer


@pytest.mark.usefixtures("hand_weighted_confidence")
def test_a_range_is_answered_whole_with_its_unit() -> None:
    """With the hand-weighted gate: the fitted one withholds this right answer (a "when"
    question answered by a sentence, 0.59 below its 0.62), one of the right answers it loses
    for fewer confidently wrong ones (docs/answers.md)."""
    record = ask_json("When is Pell Armand's review booked?", "clinic")
    assert not record["abstained"], record["answer"]
    assert "4 to 6 weeks" in record["answer"]
    assert not re.search(r"(^|\s)#{1,6}\s|\*\*|__|`", record["answer"]), record["answer"]


def test_json_carries_one_confidence_higher_for_an_answer_than_an_abstention() -> None:
    answered = ask_json("Which river is Orsk Vale on?", "places")
    declined = ask_json("Who was the mayor of Orsk Vale?", "places")
    assert isinstance(answered["confidence"], float) and 0.0 <= answered["confidence"] <= 1.0
    assert isinstance(declined["confidence"], float) and 0.0 <= declined["confidence"] <= 1.0
    assert not answered["abstained"] and declined["abstained"]
    # An abstention's confidence is in the abstention: both are confident here.
    assert answered["confidence"] >= 0.5 and declined["confidence"] >= 0.5


@pytest.mark.parametrize(
    ("question", "source"),
    [
        ("Who was the mayor of Orsk Vale?", "places"),
        ("What is Pell Armand's cholesterol level?", "clinic"),
        ("Which antibiotic was Abel Sorrel given?", "clinic"),
        ("What is the maximum daily dose of Ketamorin?", "drugs"),
        ("Is Dravoline safe in pregnancy?", "drugs"),
    ],
)
def test_unanswerable_questions_abstain_saying_why(question: str, source: str) -> None:
    record = ask_json(question, source)
    assert record["abstained"], record["answer"]
    assert record["answer"].startswith("The sources I could reach do not answer this: ")
    assert record["citations"] == []


def test_two_document_answer_cites_both_documents() -> None:
    from prefrag import ask

    result = ask("Why can Ketamorin raise the levels of Dravoline?", preferred_source="drugs")
    assert not result["abstained"], result["answer"]
    assert "blocks the liver enzyme CYP2D6" in result["answer"]
    assert "cleared almost entirely by the liver enzyme CYP2D6" in result["answer"]
    assert cited_files(result) == {"ketamorin", "dravoline"}


def test_comparison_reads_the_attribute_from_each_side() -> None:
    record = ask_json("Which was founded earlier, Orsk Vale or Tarn Hollow?", "places")
    assert record["short_answer"] == "Orsk Vale"
    assert "1312" in record["answer"] and "1588" in record["answer"]
    assert cited_files(record) == {"orsk-vale", "tarn-hollow"}


def test_yes_no_answer_carries_the_sentence_that_decides_it() -> None:
    record = ask_json("Does Ketamorin interact with Pellitol?", "drugs")
    assert record["short_answer"] == "no"
    assert record["answer"] == "No. Ketamorin does not interact with Pellitol."
    assert cited_files(record) == {"ketamorin"}


def test_advice_question_is_answered_with_the_warning_sentence(hand_weighted) -> None:
    # The answer's form is the policy's; the fitted confidence may still decline it as
    # unsure, but never with a bare yes or no.
    default = ask_json("Can Pell Armand take propranolol?", "clinic")
    assert default["answer"] not in ("yes", "no", "Yes", "No")
    hand_weighted()
    record = ask_json("Can Pell Armand take propranolol?", "clinic")
    assert not record["abstained"], record["answer"]
    assert "must avoid non-selective beta blockers such as propranolol" in record["answer"]
    assert record["answer"] not in ("yes", "no", "Yes", "No")


# --------------------------------------------------------------------------- fitted confidence


@pytest.fixture
def fitted_confidence_on(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], None]]:
    """Turns PREFRAG_CALIBRATED_CONFIDENCE on when called; settings are re-read after."""

    def turn_on() -> None:
        monkeypatch.setenv("PREFRAG_CALIBRATED_CONFIDENCE", "true")
        get_settings.cache_clear()

    yield turn_on
    get_settings.cache_clear()  # this module keeps one home: nothing else clears the cache


@pytest.fixture
def hand_weighted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], None]]:
    """Turns the fitted confidence off (PREFRAG_CALIBRATED_CONFIDENCE=false) when called."""

    def turn_off() -> None:
        monkeypatch.setenv("PREFRAG_CALIBRATED_CONFIDENCE", "false")
        get_settings.cache_clear()

    yield turn_off
    get_settings.cache_clear()


def test_confidence_comes_from_the_fitted_model_that_says_how_it_was_fitted(
    fitted_confidence_on,
) -> None:
    from prefrag.reasoners._confidence import MODEL_PATH, load_model

    model = load_model()
    assert model is not None, f"{MODEL_PATH} is missing or unreadable"
    fitted = json.loads(MODEL_PATH.read_text())["how_fitted"]
    assert "fresh6" in fitted["data"] and "heldout" not in fitted["data"]
    assert fitted["rows"] >= 30
    lowest = min(model.answer_threshold, model.short_threshold)
    assert 0.0 < lowest <= model.correct_threshold <= 1.0
    fitted_confidence_on()
    answered = ask_json("Which river is Orsk Vale on?", "places")
    assert not answered["abstained"]
    assert lowest <= answered["confidence"] <= 1.0


def test_the_fitted_confidence_keeps_a_sure_two_document_answer(
    fitted_confidence_on, hand_weighted
) -> None:
    """With the fitted confidence the model's probability is the answer's confidence (here
    it keeps the two-document answer, citing both notes); PREFRAG_CALIBRATED_CONFIDENCE=false
    gives the hand-weighted one."""
    from prefrag import ask
    from prefrag.reasoners._confidence import load_model

    question = "Why can Ketamorin raise the levels of Dravoline?"
    fitted_confidence_on()
    fitted = ask(question, preferred_source="drugs")
    hand_weighted()
    hand = ask(question, preferred_source="drugs")
    model = load_model()
    assert model is not None
    for result in (fitted, hand):
        assert not result["abstained"], result["answer"]
        assert "CYP2D6" in result["answer"]
        assert cited_files(result) == {"ketamorin", "dravoline"}
    assert fitted["confidence"] >= min(model.answer_threshold, model.short_threshold)
    assert fitted["confidence"] != hand["confidence"]


def test_reflection_says_correct_only_above_the_fitted_correct_threshold(
    fitted_confidence_on, monkeypatch
) -> None:
    import dataclasses

    import prefrag.reasoners.extractive as extractive
    from prefrag import ask
    from prefrag.reasoners._confidence import load_model

    fitted_confidence_on()
    question = "Which river is Orsk Vale on?"
    sure = ask(question, preferred_source="places", fallback_sources=[])
    assert sure["reflections"][0]["label"] == "CORRECT"
    model = load_model()
    assert model is not None
    strict = dataclasses.replace(model, correct_threshold=min(1.0, sure["confidence"] + 0.01))
    monkeypatch.setattr(extractive, "active_model", lambda: strict)
    unsure = ask(question, preferred_source="places", fallback_sources=[])
    assert unsure["answer"] == sure["answer"]
    first = unsure["reflections"][0]
    assert first["label"] == "PARTIALLY CORRECT"
    assert f"({unsure['confidence']:.2f}) is below" in first["explanation"]


@pytest.mark.parametrize(
    ("question", "source", "evidence"),
    [
        ("Which river is Orsk Vale on?", "places", "Orsk Vale is a mill town on the river Tamsin."),
        (
            "Does Ketamorin interact with Pellitol?",
            "drugs",
            "Ketamorin does not interact with Pellitol.",
        ),
    ],
)
def test_an_unsure_answer_abstains_with_its_closest_evidence_not_the_answer(
    fitted_confidence_on, monkeypatch, question: str, source: str, evidence: str
) -> None:
    """Below the fitted threshold the abstention says why and shows the sentence it stood
    on as the closest evidence; the span or verdict it would have given is not offered."""
    import dataclasses

    import prefrag.reasoners._answering as answering
    import prefrag.reasoners.extractive as extractive
    from prefrag import ask
    from prefrag.reasoners._confidence import load_model

    fitted_confidence_on()
    sure = ask(question, preferred_source=source, fallback_sources=[])
    assert not sure["abstained"], sure["answer"]
    model = load_model()
    assert model is not None
    above = min(1.0, sure["confidence"] + 0.01)
    strict = dataclasses.replace(model, answer_threshold=above, short_threshold=above)
    monkeypatch.setattr(extractive, "active_model", lambda: strict)
    monkeypatch.setattr(answering, "active_model", lambda: strict)
    unsure = ask(question, preferred_source=source, fallback_sources=[])
    assert unsure["abstained"], unsure["answer"]
    assert unsure["answer"].startswith("The sources I could reach do not answer this")
    assert f"closest evidence is '{evidence}'" in unsure["answer"]
    assert f"'{sure['answer']}'" not in unsure["answer"]  # the answer is not quoted as one
    assert not unsure.get("short_answer")
