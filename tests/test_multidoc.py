"""Two-document questions, comparisons and lists, as a user meets them: `prefrag index` on
their own notes, then `prefrag ask --json`.

- A question about a thing it only describes ("the engineer born in Kestow") is
  answered from that thing's own note, found by the name the first note gives, citing both
  notes; not with the name itself (the first hop).
- A lifespan after a name, "(1829-1902)", gives the birth year for "born" and the death
  year for "died".
- A list question with a count or a modifier before its plural noun ("Which three herbs
  ...") is answered with every item of the deciding sentence, not one name.
- A comparison offering its options first ("The Wenn or the Arrow: which ...?") is a
  comparison; a bare comparative ("longer") compares the figures of its kind, each read from
  the option's own note (the Wenn's note mentioning the Arrow gives the Wenn's length only).

The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "valley/tollard-viaduct.md": """# Tollard Viaduct

The Tollard Viaduct carries the northern railway across the Wenn gorge on fourteen arches.
It was designed by the engineer Maren Solvik and opened in 1871.
""",
    "valley/kestow.md": """# Kestow

Kestow is a village at the head of the Wenn gorge, below Harl Fell.
The engineer Maren Solvik was born in Kestow, and her first bridge crosses its millrace.
""",
    "valley/maren-solvik.md": """# Maren Solvik

Maren Solvik (1829-1902) was a railway engineer born in Kestow, where her father kept the mill.
She designed the Tollard Viaduct and twelve smaller bridges.
She lived in Ambry from 1880 until her death.
""",
    "valley/ambry.md": """# Ambry

Ambry is a market town on the lower Wenn, known for its cattle fair.
""",
    "valley/river-wenn.md": """# River Wenn

The River Wenn rises on Harl Fell and is 58 km long.
It is joined by the Arrow at Kestow, below the old mill.
""",
    "valley/river-arrow.md": """# River Arrow

A stream of the northern valleys, 12 km long, flowing from Brenn Moss to Kestow.
Otters were seen on it again in 2019.
""",
    "valley/marrow-inn.md": """# Marrow Inn

The Marrow Inn stands by the packhorse bridge at Kestow.
Its kitchen garden grows sage, lovage and sweet cicely for the cook.
Guests may pick them on request from the gate on Hob Lane.
""",
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("valley",)) as home:
        yield home


def cited(record: dict) -> set[str]:
    return {Path(c["url"].removeprefix("file://")).stem for c in record["citations"]}


def test_a_described_thing_is_asked_of_by_its_name_in_its_own_note() -> None:
    record = ask_json("Where did the engineer born in Kestow spend her last years?", "valley")
    assert not record["abstained"], record["answer"]
    assert "Ambry" in record["answer"], record
    assert "maren-solvik" in cited(record)


@pytest.mark.usefixtures("hand_weighted_confidence")
def test_a_described_person_is_born_in_the_first_year_of_her_lifespan() -> None:
    """With the hand-weighted gate: the fitted one withholds this right two-hop answer
    (0.33 below 0.39), one of the right answers it loses (docs/answers.md)."""
    record = ask_json("In what year was the engineer of the Tollard Viaduct born?", "valley")
    assert not record["abstained"], record["answer"]
    assert record["short_answer"] == "1829", record
    assert "maren-solvik" in cited(record)


def test_a_counted_list_question_gets_every_item() -> None:
    record = ask_json("Which three herbs can guests pick at the Marrow Inn?", "valley")
    assert not record["abstained"], record["answer"]
    for herb in ("sage", "lovage", "sweet cicely"):
        assert herb in record["answer"], record
    assert "Hob Lane" not in record["short_answer"], record


def test_a_bare_comparative_reads_each_option_from_its_own_note() -> None:
    record = ask_json("Which is longer, the Wenn or the Arrow?", "valley")
    assert not record["abstained"], record["answer"]
    assert record["short_answer"].endswith("Wenn"), record
    assert "12 km" in record["answer"] and "58 km" in record["answer"], record
    assert {"river-wenn", "river-arrow"} <= cited(record)


def test_options_before_the_question_make_a_comparison() -> None:
    record = ask_json("The Wenn or the Arrow: which is shorter?", "valley")
    assert not record["abstained"], record["answer"]
    assert record["short_answer"].endswith("Arrow"), record


LINKED_NOTES = {
    "pharmacy/morvalin.md": """# Morvalin

Morvalin is an old tablet for night cramps with a narrow margin between the dose that works
and the dose that harms.
It is cleared almost entirely by the liver enzyme KRX7.
Its blood level is checked every three months.
Too much causes ringing in the ears and a slow pulse.
""",
    "pharmacy/tessadrine.md": """# Tessadrine

Tessadrine is an antibiotic for chest infections, taken twice a day for five days.
It strongly blocks the liver enzyme KRX7: medicines cleared by KRX7 can build up when
tessadrine is started, and fall when it is stopped.
Take it with food to avoid an upset stomach.
""",
    "pharmacy/lumafen.md": """# Lumafen

Lumafen is a painkiller for period pain, cleared by the kidneys.
It should be taken with food.
""",
}


@pytest.fixture(scope="module")
def _linked_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, LINKED_NOTES, ("pharmacy",)) as home:
        yield home


def test_two_notes_about_two_lower_case_medicines_are_joined_by_the_enzyme_both_name(
    _linked_home: Path,
) -> None:
    # Neither note names the other medicine; the enzyme both name is the link.
    record = ask_json(
        "Why might someone's morvalin level go up after starting tessadrine?", "pharmacy"
    )
    assert not record["abstained"], record["answer"]
    assert "KRX7" in record["answer"], record
    assert {"morvalin", "tessadrine"} <= cited(record), record["citations"]
