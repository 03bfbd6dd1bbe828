"""An asked attribute said in other words is answered; one the notes never say is not.

As a user meets them: `prefrag index` on their own notes, then `prefrag ask --json`. A note
says a condition's outlook as its "prognosis", its complications as what it "can lead to",
its genetic changes as "mutations": the question is answered. A note on a sleeping tablet
that describes an overdose but names no antidote, and gives a dose but no half-life, does
not answer "what is the antidote / the half-life": the reasoner abstains, and not only
through the asked-attribute check (a sentence that never says the asked attribute does not
hold what is asked, however close MiniLM finds it). The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "notes/tessin-fever.md": (
        "# Tessin fever\n\n"
        "Tessin fever is a rare tick-borne infection of hill farmers in the Ossory uplands.\n\n"
        "The prognosis of Tessin fever is good: most people recover fully within two months.\n\n"
        "Untreated, Tessin fever can lead to inflammation of the heart muscle.\n"
    ),
    "notes/marl-disease.md": (
        "# Marl disease\n\n"
        "Marl disease is an inherited condition that weakens the enamel of the teeth.\n\n"
        "Mutations in the MARL2 gene cause Marl disease.\n"
    ),
    "notes/pellorin.md": (
        "# Pellorin\n\n"
        "Pellorin is a sleeping tablet for short-term insomnia.\n\n"
        "The usual adult dose of Pellorin is 5 mg at bedtime.\n\n"
        "An overdose of Pellorin causes deep sleep, slow breathing and confusion.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("notes",)) as home:
        yield home


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("What is the outlook for Tessin fever?", "recover fully"),
        ("What are the complications of Tessin fever?", "heart muscle"),
        ("What are the genetic changes related to Marl disease?", "MARL2"),
    ],
)
def test_an_attribute_said_in_other_words_is_answered(question: str, said: str) -> None:
    record = ask_json(question, "notes")
    assert not record["abstained"], record["answer"]
    assert said in record["answer"], record


@pytest.mark.parametrize(
    "question",
    ["What is the antidote for a Pellorin overdose?", "What is the half-life of Pellorin?"],
)
def test_an_attribute_the_notes_never_say_is_not_answered(question: str) -> None:
    record = ask_json(question, "notes")
    assert record["abstained"], record["answer"]


@pytest.mark.usefixtures("hand_weighted_confidence")
def test_without_the_asked_attribute_check_the_overdose_note_is_still_not_an_antidote(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The check on the cited notes is one guard; the sentences' own hand-weighted confidence
    # is another: a sentence on the overdose that never says "antidote" does not hold what
    # is asked. (The fitted gate, the default, drafts below that floor and lets its model
    # decide: without the check it would answer this one, docs/answers.md.)
    import prefrag.reasoners._answering as answering

    monkeypatch.setattr(answering, "absent_attribute", lambda *args: "")
    record = ask_json("What is the antidote for a Pellorin overdose?", "notes")
    assert record["abstained"], record["answer"]
