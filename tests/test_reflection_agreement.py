"""The extractive self-reflection says CORRECT only when the answer's own claim is supported.

Evidence comes from our own invented tuning notes (bench/tuning/); the labels are what a user
sees after "Self-reflection:" and what decides whether the graph searches again.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefrag.documents import make_document
from prefrag.reasoners._conflicts import NOTE_OPENING
from prefrag.reasoners.extractive import ExtractiveReasoner

TUNING = Path(__file__).resolve().parents[1] / "bench" / "tuning"


def _notes() -> dict:
    docs = {}
    for line in (
        (TUNING / "interactions" / "docs" / "interaction-notes.jsonl").read_text().split("\n")
    ):
        if line.strip():
            row = json.loads(line)
            docs[row["id"]] = make_document(
                row["text"], id=row["id"], source="interactions", title=row["title"]
            )
    for corpus in ("clinic", "encyclopedia"):
        for path in (TUNING / corpus / "docs").iterdir():
            text = path.read_text()
            title = text.splitlines()[0].lstrip("# ")
            docs[path.stem] = make_document(text, id=path.stem, source=corpus, title=title)
    return docs


NOTES = _notes()


@pytest.fixture
def reflect():
    reasoner = ExtractiveReasoner(use_embeddings=False)

    def label(question: str, answer: str, *ids: str):
        return reasoner.reflect(question, answer, [NOTES[i] for i in ids])

    return label


COLCHICINE_Q = "What is the most colchicine that can be given in one course?"


def test_the_conflict_note_is_not_part_of_the_claim(reflect) -> None:
    """A right answer stays CORRECT when the "(The sources disagree...)" note follows it."""
    note = f" ({NOTE_OPENING} this follows the newer, authoritative [a] (2024) over [b] (2019).)"
    plain = reflect(COLCHICINE_Q, "6 mg", "gout", "case-quayle")
    noted = reflect(COLCHICINE_Q, "6 mg" + note, "gout", "case-quayle")
    assert plain.label == noted.label == "CORRECT"
    assert NOTE_OPENING not in noted.explanation


def test_a_number_without_the_unit_its_sentence_gives_is_not_correct(reflect) -> None:
    """ "6" read out of "6 mg" drops the unit; a population needs none."""
    bare = reflect(COLCHICINE_Q, "6", "gout", "case-quayle")
    assert bare.label != "CORRECT" and "'6 mg'" in bare.explanation
    population = reflect("What is the population of Marrowick?", "48,300", "marrowick")
    assert population.label == "CORRECT"


def test_markdown_label_lines_and_sentence_start_words_are_not_correct(reflect) -> None:
    """Headings, "Author: ..." lines and a capitalised common word are never supported answers."""
    heading = reflect(COLCHICINE_Q, "# Gout: clinic notes ## Treating a flare 6 mg", "gout")
    assert heading.label == "INCORRECT" and "Markdown" in heading.explanation
    label = reflect("Who wrote the gout notes?", "Author: Dr Felix Ormerod", "gout")
    assert label.label == "INCORRECT" and "label line" in label.explanation
    offer = reflect("Which drug lowers urate in gout?", "Offer", "gout", "allopurinol")
    assert offer.label != "CORRECT"
    supported = reflect("What does CYP2D6 turn codeine into?", "morphine", "codeine")
    assert supported.label == "CORRECT"


@pytest.mark.parametrize(
    ("question", "ids", "right"),
    [
        ("Is it safe to take ibuprofen with lithium?", ("lithium",), "no"),
        ("Does orange juice interact the way grapefruit juice does?", ("grapefruit",), "no"),
        ("Can I give naproxen for a gout flare to a patient on warfarin?", ("gout",), "no"),
        ("Do barges still carry goods on the Sallow Navigation?", ("sallow-navigation",), "no"),
    ],
)
def test_yes_no_is_correct_only_with_the_polarity_its_sentence_decides(
    reflect, question: str, ids: tuple[str, ...], right: str
) -> None:
    """A warning or a negation on the matter makes "no" CORRECT and "yes" not."""
    wrong = "yes" if right == "no" else "no"
    assert reflect(question, right, *ids).label == "CORRECT"
    refused = reflect(question, wrong, *ids)
    assert refused.label != "CORRECT" and "decides" in refused.explanation


def test_a_same_question_is_checked_against_both_documents(reflect) -> None:
    """Both born in Marrowick: "no" is not CORRECT, "yes" is."""
    question = "Were Maud Ferrier-Lanning and Tobias Wrenfield born in the same town?"
    ids = ("maud-ferrier-lanning", "tobias-wrenfield")
    assert reflect(question, "no", *ids).label != "CORRECT"
    assert reflect(question, "yes", *ids).label == "CORRECT"


def test_a_choice_may_name_its_option_in_a_phrase(reflect) -> None:
    """ "that of fluoxetine" chooses fluoxetine; a name outside the options does not."""
    question = (
        "Which lasts longer after stopping, the enzyme effect of St John's wort or that of "
        "fluoxetine?"
    )
    ids = ("st-johns-wort", "fluoxetine")
    assert reflect(question, "that of fluoxetine", *ids).label == "CORRECT"
    assert reflect(question, "sertraline", *ids).label == "INCORRECT"


def test_explanations_carry_no_placeholder(reflect) -> None:
    """No "'the subject'" or other template filler reaches a user, whatever the answer."""
    question = "Can I drink grapefruit juice while taking simvastatin?"
    for answer in ("yes", "no", "maybe", "Grapefruit juice blocks CYP3A4 in the wall of the gut."):
        explanation = reflect(question, answer, "grapefruit", "simvastatin").explanation
        assert "the subject" not in explanation and "{" not in explanation


def test_a_title_line_or_a_heading_word_is_not_correct(reflect) -> None:
    """A text file's title line glued to its paragraph, or a heading's first word, is layout."""
    pasted = (
        "Tessaly Cross Tessaly Cross is a village in the upland parish of Halvard, on the "
        "River Venn."
    )
    titled = reflect("Why is the village called Tessaly Cross?", pasted, "tessaly-cross")
    assert titled.label == "INCORRECT" and "title line" in titled.explanation
    heading = reflect("Who should be offered allopurinol?", "Lowering", "gout")
    assert heading.label == "INCORRECT" and "heading" in heading.explanation


def test_a_warning_about_another_matter_does_not_decide_a_yes_no(reflect) -> None:
    """ "Codeine must not be given to children under 12" says nothing of tramadol."""
    assert reflect("Is tramadol safe for children under 12?", "no", "codeine").label != "CORRECT"
