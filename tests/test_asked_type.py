"""Answers of the asked type, as a user meets them: `prefrag index` on their own notes, then
`prefrag ask --json`.

A short span answers only when it is of the type the question asks for (a medicine, a
figure, a person, a contact ...); a place name for "which vaccines", a capitalised common
word for "what does X turn Y into", or a heading word for a half-life is no answer: the best
sentences answer, whole and cited. A question asking for a figure that no sentence holds is
not answered with a sentence about something else. The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "surgery/travel-memo.md": (
        "# Travel memo\n\n"
        "We give cholera and typhoid vaccines free at the surgery.\n"
        "We do not give yellow fever vaccines; patients are sent to the travel clinic in"
        " Harrow Lane.\n"
    ),
    "surgery/velpirone.md": (
        "# Velpirone with dexmorin\n\n"
        "**The problem.** Velpirone blocks the pump that clears dexmorin, so the dexmorin"
        " level roughly doubles.\n"
        "- The interaction can last for weeks after velpirone stops, because velpirone stays"
        " in the body for a long time (its half-life is about 40 days).\n"
        "**Signs of dexmorin toxicity.** Nausea, confusion and a slow pulse.\n"
    ),
    "surgery/prodrax.md": (
        "# Prodrax\n\n"
        "Prodrax is a painkiller for short courses.\n"
        "People taking a strong blocker of the enzyme KR7 get little relief from prodrax.\n"
        "Prodrax works only after KR7 turns part of it into norvalin.\n"
    ),
    "surgery/tarnby.md": (
        "# Tarnby\n\n"
        "Tarnby is a market town on the Wensel estuary.\n"
        "The population was 7,320 at the last census.\n"
    ),
    "surgery/wensel-coast.md": (
        "# Wensel coast\n\n"
        "The Wensel coast is a stretch of salt marsh and dunes.\n"
        "The largest town is Tarnby; the rest of the population lives in villages such as"
        " Ebbing and Cray Holm.\n"
    ),
    "surgery/brant-fell.md": (
        "# Brant Fell\n\n"
        "Brant Fell is a mountain of 912 m in the Ostry Hills, the highest point of the"
        " county.\n"
        "A path from Ebbing reaches the summit in about three hours.\n"
    ),
    "surgery/ringworm.md": (
        "# Ringworm\n\n"
        "Author: Dr Nell Ashby\n"
        "Reviewed: 2024-03-02\n\n"
        "Treatment: terbinafine cream twice daily for 2 weeks, carried on for a week after the"
        " rash clears.\n\n"
        "Who is treated: anyone in the household with a scaly ring-shaped rash.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("surgery",)) as home:
        yield home


def test_a_place_name_does_not_answer_which_medicines() -> None:
    record = ask_json("Which travel vaccines do we give?", "surgery")
    assert not record["abstained"], record["answer"]
    assert "Harrow Lane" != record["answer"].strip(), record
    assert "cholera and typhoid" in record["answer"], record


def test_a_heading_word_does_not_answer_a_half_life() -> None:
    record = ask_json("half life of velpirone?", "surgery")
    assert not record["abstained"], record["answer"]
    assert "about 40 days" in record["answer"], record
    assert record["short_answer"] != "Signs", record


def test_a_capitalised_common_word_does_not_answer_what_it_turns_into() -> None:
    record = ask_json("What does KR7 turn prodrax into?", "surgery")
    assert not record["abstained"], record["answer"]
    assert "norvalin" in record["answer"], record
    assert record["answer"] != "People", record


def test_a_population_is_a_figure_not_the_names_of_villages() -> None:
    record = ask_json("population of tarnby?", "surgery")
    assert not record["abstained"], record["answer"]
    assert "7,320" in record["answer"], record
    assert "Cray Holm" not in record["answer"], record


def test_a_figure_of_the_asked_kind_answers_how_tall_without_the_word_tall() -> None:
    record = ask_json("How tall is Brant Fell?", "surgery")
    assert not record["abstained"], record["answer"]
    assert "912 m" in record["answer"], record


def test_a_label_line_does_not_answer_unless_its_label_is_asked() -> None:
    record = ask_json("What do we prescribe for ringworm?", "surgery")
    assert not record["abstained"], record["answer"]
    assert "terbinafine" in record["answer"], record
    assert "Reviewed" not in record["answer"] and "2024" not in record["answer"], record
    asked = ask_json("When was the ringworm note reviewed?", "surgery")
    assert "2024-03-02" in asked["answer"], asked
