"""Questions that link two documents through a third thing, and list questions.

Asked as a user asks them: plain-text notes indexed with `prefrag index`, questions through
`prefrag.ask` with the web off. Every note and name here is invented.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from indexed_notes import index_notes

import prefrag

RUN: dict[str, Any] = {"preferred_source": "atlas", "fallback_sources": [], "max_reflections": 0}

# An invented gazetteer: people in one file, their towns in another. The relation is a noun
# in the questions ("birthplace", "home town") and a verb in the notes ("was born in").
GAZETTEER = {
    "ilse-varrow": "Ilse Varrow\n\nIlse Varrow (1861-1933) was a glassblower born in "
    "Feldrun. She opened a workshop in Cardle in 1890 and exhibited coloured bowls there.",
    "feldrun": "Feldrun\n\nFeldrun is a harbour village on the River Almsey, which meets the "
    "sea two miles to the south. Its chapel was rebuilt in 1822.",
    "cardle": "Cardle\n\nCardle is a mill town on the River Tesk. It is known for its weekly "
    "cattle market and a stone bridge of 1712.",
    "osric-palden": "Osric Palden\n\nOsric Palden (1790-1851) was a surveyor born in Cardle. "
    "He mapped the coast between Feldrun and the Brim estuary.",
    "river-almsey": "River Almsey\n\nThe River Almsey rises on Corran Moor and flows 38 km to "
    "the sea.",
    "corran-moor": "Corran Moor\n\nCorran Moor is an upland heath of about 900 hectares. It "
    "is home to merlins, adders and golden plovers.",
}
# An invented clinic note for list questions: label lines and headings above the list.
POISONING = {
    "trelazine": "# Trelazine: clinic notes\n\nAuthor: Dr Wendell Mayo\nReviewed: 2025-01-10\n\n"
    "## Toxicity\n\nBlurred vision, ringing in the ears, muscle twitching or new confusion "
    "may mean trelazine toxicity. Stop the drug and check the level the same day.\n\n"
    "## Monitoring\n\nCheck the level every three months, and a week after any dose change.",
}


@pytest.fixture
def atlas(tmp_path: Path) -> None:
    index_notes(tmp_path / "atlas", {**GAZETTEER, **POISONING}, "atlas")


def _ask(question: str) -> dict:
    from prefrag.sources.defaults import default_sources

    graph = prefrag.build_graph(sources=default_sources(web=False))
    return prefrag.ask(question, graph=graph, **RUN)


def _cited(result: dict) -> set[str]:
    # An indexed file is cited by its file: URL; its stem names the note.
    return {Path(str(c.get("url") or "")).stem for c in result["citations"]}


def _abstained(result: dict) -> bool:
    return bool(result.get("abstained"))


def test_a_birthplace_question_hops_to_the_town_and_cites_both_notes(atlas):
    result = _ask("Which river flows through Ilse Varrow's birthplace?")
    assert not _abstained(result), result["answer"]
    assert "Almsey" in result["answer"]
    assert "Tesk" not in result["answer"]
    assert {"ilse-varrow", "feldrun"} <= _cited(result)


def test_a_home_town_question_reads_born_in_as_the_relation(atlas):
    result = _ask("On which river is Osric Palden's home town?")
    assert not _abstained(result), result["answer"]
    assert "Tesk" in result["answer"]
    assert "Almsey" not in result["answer"]
    assert {"osric-palden", "cardle"} <= _cited(result)


def test_a_list_question_gets_the_sentence_listing_every_item(atlas):
    result = _ask("What are the warning signs of trelazine toxicity?")
    assert not _abstained(result), result["answer"]
    for item in ("Blurred vision", "ringing in the ears", "muscle twitching", "confusion"):
        assert item in result["answer"]
    assert "Wendell Mayo" not in result["answer"]
    assert "trelazine" in _cited(result)


# Invented clinic notes: a patient's case note names the medicine, the topic note gives its
# limit; neither alone answers.
CLINIC = {
    "case-pellow": "# Case review: Mr Anselm Pellow\n\nPatient: Anselm Pellow, aged 66\n\n"
    "Mr Pellow has heart failure. For his flare of pericarditis he was given dravocaine "
    "250 micrograms three times daily. His potassium was 4.4 mmol/L.",
    "dravocaine": "# Dravocaine: clinic notes\n\nAuthor: Dr Wendell Mayo\n\n## Dosing\n\n"
    "Never give more than 9 mg of dravocaine in one course, and leave four days before "
    "another course. Its commonest side effect is a dry mouth.",
    "heart-failure": "# Heart failure: clinic notes\n\nWeigh daily and report a gain of more "
    "than 2 kg in three days. Review diuretics when the kidneys worsen.",
}


@pytest.fixture
def clinic(tmp_path: Path) -> None:
    index_notes(tmp_path / "clinic", {f"{name}.md": text for name, text in CLINIC.items()}, "atlas")


def test_a_patient_question_combines_the_case_note_and_the_topic_note(clinic):
    result = _ask("What is the most dravocaine Mr Pellow can have in one course?")
    assert not _abstained(result), result["answer"]
    assert "9 mg" in result["answer"]
    assert "Pellow" in result["answer"] or "he was given dravocaine" in result["answer"]
    assert {"case-pellow", "dravocaine"} <= _cited(result)


def test_a_patient_question_the_notes_do_not_answer_is_not_bridged(clinic):
    # His note names no blood pressure; the heart-failure note is no answer for him.
    result = _ask("What was Mr Pellow's blood pressure at the review?")
    assert _abstained(result) or "blood pressure" not in result["answer"].lower()
