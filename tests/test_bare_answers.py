"""A short answer alone needs a sure sentence, and a figure must measure what is asked.

As a user meets it: `prefrag index` on their own notes, then `prefrag ask --json`. A note
giving how many people a flood left homeless does not say how many acres it covered; a
blood pressure in mmHg is no heart rate; the number of labourers who dug a canal is not what
it cost; a dose is not a risk score. The same notes answer the questions whose figure they
do give. A figure answered alone needs a sure sentence: "How long is the stone bridge?"
is not answered with the width of its arch as a bare "14 m" but with the sentence saying
it; a name read from a sentence not sure enough for it alone is answered the same way, the
name as its short answer. The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "notes/pellin-flood.md": (
        "# The Pellin flood\n\n"
        "The Pellin flood of 1911 left some 300 people homeless in the lower town.\n\n"
        "The river rose for three days before the banks gave way.\n"
    ),
    "notes/harwick-canal.md": (
        "# Harwick Canal\n\n"
        "The Harwick Canal was dug by up to 700 navvies between 1791 and 1796.\n\n"
        "It runs from the Harwick basin to the river at Stoke Marrow.\n"
    ),
    "notes/tolland-cut.md": (
        "# Tolland Cut\n\n"
        "The Tolland Cut was finished in 1820 and cost 36,000 pounds.\n\n"
        "Barges carried slate along it until 1911.\n"
    ),
    "notes/skin-infection.md": (
        "# Spreading skin infection\n\n"
        "Admit anyone with a spreading skin infection whose systolic blood pressure is under"
        " 90 mmHg.\n\n"
        "Mark the edge of the redness with a pen to see whether it spreads.\n"
    ),
    "notes/heart-risk.md": (
        "# Heart risk and statins\n\n"
        "Offer atorvastatin 20 mg a day to adults who want a statin.\n\n"
        "Repeat the lipid test three months after starting.\n"
    ),
    "notes/harl-bridge.md": (
        "# Harl Bridge\n\n"
        "Harl Bridge crosses the River Pell below Wenlow.\n\n"
        "Its middle arch is 14 m wide, and the whole bridge was rebuilt after the flood of"
        " 1907.\n\n"
        "Some 300 carts crossed it each day in the 1890s.\n"
    ),
    "notes/corvanil.md": (
        "# Corvanil\n\n"
        "Corvanil is an antibiotic tablet for chest infections.\n\n"
        "Adults take Corvanil 400 mg twice a day for 5 days.\n"
    ),
    "notes/river-pell.md": (
        "# River Pell\n\n"
        "The River Pell rises on Carrow Moor and flows east to the sea at Marlow Quay.\n\n"
        "Its largest tributary is the Tenby Brook, which joins it at Wenlow.\n\n"
        "The ferry across its mouth was run by the Hask family until 1950.\n"
    ),
    "notes/brisk-fen.md": (
        "# Brisk Fen\n\nBrisk Fen is a wet meadow of about 1,200 acres beside the Orm.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("notes",)) as home:
        yield home


def _figure_shown(record: dict, figure: str) -> bool:
    """Whether the answer gives `figure` as what was asked: bare, or as its short answer.

    A whole sentence holding the figure, cited, leaves the reader to judge it.
    """
    if record["abstained"]:
        return False
    bare = len(record["answer"].split()) <= 4 and figure in record["answer"]
    return bare or figure in (record.get("short_answer") or "")


def test_people_made_homeless_are_not_acres_flooded() -> None:
    record = ask_json("How many acres did the Pellin flood of 1911 cover?", "notes")
    assert not _figure_shown(record, "300"), record["answer"]


def test_acres_answer_an_area_question() -> None:
    record = ask_json("How many acres is Brisk Fen?", "notes")
    assert not record["abstained"], record["answer"]
    assert "1,200 acres" in record["answer"], record["answer"]


def test_a_blood_pressure_is_no_heart_rate() -> None:
    record = ask_json(
        "What heart rate means we admit someone with a spreading skin infection?", "notes"
    )
    assert not _figure_shown(record, "90 mmHg"), record["answer"]


def test_labourers_are_not_what_a_canal_cost() -> None:
    record = ask_json("How much did the Harwick Canal cost to build?", "notes")
    assert not _figure_shown(record, "700"), record["answer"]


def test_a_sum_of_money_answers_what_it_cost() -> None:
    record = ask_json("How much did the Tolland Cut cost?", "notes")
    assert not record["abstained"], record["answer"]
    assert "36,000 pounds" in record["answer"], record["answer"]


def test_a_dose_is_no_risk_score() -> None:
    record = ask_json("What heart risk score means we offer a statin?", "notes")
    assert not _figure_shown(record, "20 mg"), record["answer"]


def test_a_figure_alone_needs_a_sure_sentence() -> None:
    record = ask_json("How long is the stone bridge at Wenlow?", "notes")
    # Not the bare "14 m": the sentence it stands on, which a reader can check.
    assert record["answer"] != "14 m", record["answer"]
    if not record["abstained"]:
        assert "middle arch is 14 m wide" in record["answer"], record["answer"]
        assert record["citations"], record


def test_a_sure_figure_is_answered_alone() -> None:
    record = ask_json("For how long do adults take Corvanil?", "notes")
    assert record["answer"] == "5 days", record["answer"]
    assert record["confidence"] >= 0.8, record


@pytest.mark.usefixtures("hand_weighted_confidence")
def test_a_name_on_an_unsure_sentence_comes_with_its_sentence() -> None:
    """The hand-weighted gate's `alone_confidence`; the fitted gate decides by its own span
    threshold."""
    record = ask_json("Which family ran the ferry at the mouth?", "notes")
    assert not record["abstained"], record["answer"]
    assert record["answer"].startswith("The ferry across its mouth was run by the Hask family")
    assert record["short_answer"] == "Hask", record
    assert record["confidence"] < 0.8, record


def test_a_name_on_a_sure_sentence_is_answered_alone() -> None:
    record = ask_json("Which quay is at the mouth of the Pell?", "notes")
    assert record["answer"] == "Marlow Quay", record["answer"]
