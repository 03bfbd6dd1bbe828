"""Questions that name their subject ("Is X inherited?", "How many people are affected by X?"):
answered with whole cited sentences of a document about X, or declined when nothing held is.

Every document and question here is invented."""

from __future__ import annotations

import pytest

from prefrag.documents import make_document
from prefrag.reasoners.extractive import ABSTENTION, ExtractiveReasoner

MOLLEN = make_document(
    "Mollen syndrome is a rare disorder of the inner ear that causes sudden dizziness. "
    "Attacks often start in early adulthood. It affects about 1 in 40,000 people worldwide. "
    "This condition is inherited in an autosomal recessive pattern. "
    "Symptoms include:\n- spinning dizziness.\n- ringing in the ears.\n"
    "Treatment is with rest and anti-nausea medicines.",
    id="mollen",
    source="notes",
    title="Mollen syndrome",
)
PELL = make_document(
    "Pell fever is an infection spread by ticks. About 300 people are affected each year. "
    "Pell fever is not inherited; it is caught from a tick bite. Symptoms include fever.",
    id="pell",
    source="notes",
    title="Pell fever",
)
COPD_NOTE = make_document(
    "COPD makes it hard to breathe and gets worse over time. It affects about 16 million "
    "adults in the country.",
    id="copd",
    source="notes",
    title="Chronic obstructive pulmonary disease (COPD)",
)


@pytest.fixture
def reasoner() -> ExtractiveReasoner:
    return ExtractiveReasoner(use_embeddings=False)


@pytest.mark.parametrize(
    "question",
    [
        "Is Mollen syndrome inherited?",
        "How many people are affected by Mollen syndrome?",
        "What are the symptoms of Mollen syndrome?",
        "What is (are) Mollen syndrome ?",
    ],
)
def test_a_question_about_a_subject_nothing_held_is_about_abstains(reasoner, question):
    # Pell fever answers every kind of question asked, but about another disease.
    draft = reasoner.answer(question, [], [PELL])
    assert draft.abstained and not draft.cited_ids
    assert draft.answer == f"{ABSTENTION}: nothing retrieved is about Mollen syndrome."


def test_the_same_question_with_a_document_about_the_subject_answers_a_whole_sentence(reasoner):
    draft = reasoner.answer("What is (are) Mollen syndrome ?", [], [PELL, MOLLEN])
    assert not draft.abstained
    assert draft.answer == (
        "Mollen syndrome is a rare disorder of the inner ear that causes sudden dizziness."
    )
    assert draft.cited_ids == ["mollen"]


def test_how_many_people_answers_with_the_sentence_holding_the_figure(reasoner):
    draft = reasoner.answer("How many people are affected by Mollen syndrome?", [], [PELL, MOLLEN])
    assert "It affects about 1 in 40,000 people worldwide." in draft.answer
    assert "300" not in draft.answer  # the other disease's figure
    assert draft.cited_ids == ["mollen"]
    # Whole sentences only, never the bare figure.
    assert draft.answer.strip() != "1 in 40,000"


def test_is_x_inherited_answers_with_the_inheritance_sentence_not_yes_or_no(reasoner):
    draft = reasoner.answer("Is Mollen syndrome inherited?", [], [PELL, MOLLEN])
    assert "This condition is inherited in an autosomal recessive pattern." in draft.answer
    assert "rare disorder" not in draft.answer and "Symptoms" not in draft.answer
    assert draft.cited_ids == ["mollen"]
    other = reasoner.answer("Is Pell fever inherited?", [], [PELL, MOLLEN])
    assert "Pell fever is not inherited" in other.answer
    assert other.cited_ids == ["pell"]


def test_a_list_kind_answers_with_the_listing_sentence_and_its_bullet_lines(reasoner):
    draft = reasoner.answer("What are the symptoms of Mollen syndrome?", [], [PELL, MOLLEN])
    assert draft.answer.startswith("Symptoms include:")
    # Every bullet, whole, read out after its lead line.
    assert "spinning dizziness" in draft.answer and "ringing in the ears" in draft.answer
    assert "fever" not in draft.answer.replace("Pell", "")  # not Pell fever's symptoms
    assert draft.cited_ids == ["mollen"]


def test_a_synonym_in_parentheses_makes_a_document_about_the_subject(reasoner):
    draft = reasoner.answer("How many people are affected by COPD?", [], [PELL, COPD_NOTE])
    assert not draft.abstained
    assert "16 million adults" in draft.answer and draft.cited_ids == ["copd"]
    full = reasoner.answer(
        "How many people are affected by chronic obstructive pulmonary disease?",
        [],
        [PELL, COPD_NOTE],
    )
    assert not full.abstained and full.cited_ids == ["copd"]


def test_a_document_naming_the_subject_in_its_text_counts_as_about_it(reasoner):
    untitled = make_document(
        "Doctors group several balance disorders together. Mollen syndrome is inherited in "
        "an autosomal dominant pattern in some families.",
        id="balance",
        source="notes",
        title="Balance disorders",
    )
    draft = reasoner.answer("Is Mollen syndrome inherited?", [], [PELL, untitled])
    assert not draft.abstained
    assert draft.answer.startswith("Mollen syndrome is inherited in an autosomal dominant")
    assert draft.cited_ids == ["balance"]


def test_questions_that_do_not_name_a_subject_this_way_keep_their_shape(reasoner):
    penicillin = make_document(
        "Alexander Fleming discovered penicillin in 1928.",
        id="penicillin",
        source="notes",
        title="Penicillin",
    )
    draft = reasoner.answer(
        "What is the name of the man who discovered penicillin?", [], [penicillin]
    )
    assert draft.answer == "Alexander Fleming"
