"""A question asking one aspect of a subject ("Is X inherited?") that the held pages about X
never address is declined, naming the aspect, rather than answered with their best sentences.

Every document and question here is invented."""

from __future__ import annotations

import pytest

from prefrag.documents import make_document
from prefrag.reasoners.extractive import ABSTENTION, ExtractiveReasoner

GENERAL = make_document(
    "Tessel palsy is a weakness of the small muscles of the hand. It usually appears in "
    "adults who work with vibrating tools. Many people regain full strength within a year.",
    id="tessel-general",
    source="notes",
    title="Tessel palsy",
)
GENETICS = make_document(
    "Some families with Tessel palsy show an autosomal dominant pattern, in which one altered "
    "copy of the gene is enough to raise the risk.",
    id="tessel-genetics",
    source="notes",
    title="Tessel palsy in families",
)
SIGNS = make_document(
    "Tessel palsy develops slowly over months. Signs and symptoms include:\n"
    "- numb fingertips.\n- a weak pinch grip.\n- clumsy handwriting.",
    id="tessel-signs",
    source="notes",
    title="Tessel palsy",
)


@pytest.fixture
def reasoner() -> ExtractiveReasoner:
    return ExtractiveReasoner(use_embeddings=False)


def test_an_inherited_question_with_only_a_general_page_abstains_naming_the_aspect(reasoner):
    draft = reasoner.answer("Is Tessel palsy inherited?", [], [GENERAL])
    assert draft.abstained and not draft.cited_ids
    assert draft.answer == (
        f"{ABSTENTION}: nothing retrieved about Tessel palsy says how it is inherited."
    )


def test_a_page_with_an_inheritance_sentence_answers_with_it(reasoner):
    draft = reasoner.answer("Is Tessel palsy inherited?", [], [GENERAL, GENETICS])
    assert not draft.abstained
    assert "autosomal dominant pattern" in draft.answer
    assert draft.cited_ids == ["tessel-genetics"]


def test_a_frequency_question_without_a_figure_abstains_naming_the_aspect(reasoner):
    draft = reasoner.answer("How many people are affected by Tessel palsy?", [], [GENERAL])
    assert draft.abstained
    assert draft.answer.endswith("says how many people it affects.")


def test_a_symptoms_question_answers_with_the_bullets_after_signs_and_symptoms(reasoner):
    draft = reasoner.answer("What are the symptoms of Tessel palsy?", [], [SIGNS])
    assert not draft.abstained
    assert "Signs and symptoms include:" in draft.answer
    assert "numb fingertips" in draft.answer and "a weak pinch grip" in draft.answer
    assert draft.cited_ids == ["tessel-signs"]


def test_a_symptoms_question_with_only_a_page_without_them_abstains(reasoner):
    draft = reasoner.answer("What are the symptoms of Tessel palsy?", [], [GENETICS])
    assert draft.abstained
    assert draft.answer.endswith("says what its symptoms are.")


@pytest.mark.parametrize("question", ["What is Tessel palsy?", "What is (are) Tessel palsy ?"])
def test_a_what_is_question_never_abstains_this_way(reasoner, question):
    # The genetics page holds no "is a"-style definition, yet it is about the subject.
    draft = reasoner.answer(question, [], [GENETICS])
    assert not draft.abstained
    assert draft.cited_ids == ["tessel-genetics"]


def test_a_kind_with_a_loose_cue_keeps_answering_from_the_subjects_page(reasoner, monkeypatch):
    from prefrag.config import get_settings

    question = "Where to find support for Tessel palsy?"
    draft = reasoner.answer(question, [], [GENERAL])
    # Not declined for the aspect (the fitted confidence may still find it unsure) ...
    assert "nothing retrieved about" not in draft.answer
    # ... and the hand-weighted policy answers from the subject's page.
    monkeypatch.setenv("PREFRAG_CALIBRATED_CONFIDENCE", "false")
    get_settings.cache_clear()
    hand = reasoner.answer(question, [], [GENERAL])
    assert not hand.abstained, hand.answer
    assert hand.cited_ids == ["tessel-general"]
