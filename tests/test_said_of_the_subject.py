"""An answer's sentence must say the asked thing of the asked subject, for the asked time.

As a user meets it: `prefrag index` on their own notes, then `prefrag ask --json`. Notes
name the subject and a neighbouring fact: another event of the same thing (built, not
repainted), a role that has ended (a chair until 2004, asked who chairs it now), another
town's church, a river named in passing in the note of the canal's engineer, a limit per
year for a lifetime's, a gap between courses for how long a spray takes to work. Each was
answered confidently (`_checks.unsaid_relation`, `unnamed_subject`, `_qualifiers`,
`_two_documents.subject_and_topic`); the questions the notes do answer keep their answers.
The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

from prefrag.reasoners._bridges import described_thing
from prefrag.reasoners._checks import asked_of, asked_verbs

NOTES = {
    "places/tamsbury-light.md": (
        "# Tamsbury lighthouse\n\n"
        "Tamsbury lighthouse stands on the rocks east of the harbour at Tamsbury.\n"
        "The lighthouse was built in 1841 for the harbour trustees.\n"
        "Its keepers' cottages, now holiday lets, were sold in 1987.\n"
    ),
    "places/fennick-moor-society.md": (
        "# Fennick Moor Society\n\n"
        "The Fennick Moor Society was founded in 1971 to protect the heath above Fennick.\n"
        "Orla Pendry was a founder of the society and its chair until 2004.\n"
    ),
    "places/edwin-carrow.md": (
        "# Edwin Carrow\n\n"
        "Edwin Carrow (1790 to 1862) was a mill owner in Corrick.\n"
        "He bought the Abbel mills in 1821 and enlarged them over twenty years.\n"
        "He built the Lostock weir with the surveyor Amos Tell.\n"
        "He opposed the mill workers' union for most of his life.\n"
        "He died in 1862 at his house above the weir, which he had built in 1840.\n"
    ),
    "towns/caddow.md": (
        "# Caddow\n\n"
        "Caddow is a village on the river Wend.\n"
        "Its church of St Ilar has a Norman font and a painted rood screen.\n"
    ),
    "towns/brisley.md": (
        "# Brisley\n\n"
        "Brisley is a market town on the river Wend.\n"
        "The town church, St Maddern's, has a tower 40 m high and a ring of six bells.\n"
    ),
    "towns/orrin-vale.md": (
        "# Orrin Vale\n\n"
        "Orrin Vale (1760 to 1821) was a canal engineer, born at Tosk on the River Menn.\n"
        "He trained on the northern canals and surveyed the Menn Navigation in 1790.\n"
        "He later built the Quenby Canal (1801 to 1806).\n"
    ),
    "towns/river-menn.md": (
        "# River Menn\n\n"
        "The River Menn is the main river of the Ashby Downs, 44 km long.\n"
        "It rises on Tosk Moor and reaches the sea at Brisley.\n"
    ),
    "clinic/head-lice.md": (
        "# Head lice\n\n"
        "Treat only when a live louse is found. Use dimeticone 4% lotion on dry hair, left on "
        "for 8 hours and applied twice, 7 days apart. Wet combing with conditioner every 3 "
        "days for 2 weeks is the alternative for babies under 6 months. When neither has "
        "worked, the pharmacist can suggest malathion, which is used less now that lice resist "
        "it.\n"
    ),
    "clinic/rabies-boosters.md": (
        "# Rabies boosters\n\n"
        "Travellers who finished a primary course can have a rabies booster before a new "
        "trip, but no more than one booster in a year.\n"
    ),
    "clinic/hay-fever-spray.md": (
        "# Hay fever nasal spray\n\n"
        "Use the steroid nasal spray twice a day through the pollen season; leave at least "
        "2 weeks between courses of the decongestant spray.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("places", "towns", "clinic")) as home:
        yield home


def test_another_event_of_the_subject_does_not_answer_the_asked_one() -> None:
    record = ask_json("When was Tamsbury lighthouse last repainted?", "places")
    assert record["abstained"], record["answer"]
    assert "repainted" in record["answer"], record["answer"]


def test_the_event_the_note_gives_is_answered() -> None:
    record = ask_json("When was Tamsbury lighthouse built?", "places")
    assert not record["abstained"], record["answer"]
    assert "1841" in record["answer"], record


def test_a_role_that_ended_does_not_say_who_holds_it_now() -> None:
    record = ask_json("Who chairs the Fennick Moor Society now?", "places")
    assert record["abstained"], record["answer"]
    assert "now" in record["answer"], record["answer"]


def test_the_role_as_the_note_dates_it_is_answered() -> None:
    record = ask_json("Who was chair of the Fennick Moor Society until 2004?", "places")
    assert not record["abstained"], record["answer"]
    assert "Orla Pendry" in record["answer"], record


@pytest.mark.usefixtures("hand_weighted_confidence")
def test_the_death_the_persons_own_note_gives_is_answered() -> None:
    """With the hand-weighted gate: the fitted one withholds this right answer (0.54 below
    0.62), one of the right answers it loses (docs/answers.md)."""
    record = ask_json("Where did Edwin Carrow die?", "places")
    assert not record["abstained"], record["answer"]
    assert "above the weir" in record["answer"], record


def test_another_towns_church_does_not_answer_for_the_church_asked() -> None:
    record = ask_json("How many bells does St Ilar's church have?", "towns")
    assert record["abstained"], record["answer"]


def test_the_bells_of_the_church_asked_are_answered() -> None:
    record = ask_json("How many bells does St Maddern's church have?", "towns")
    assert not record["abstained"], record["answer"]
    assert "six" in record["answer"], record


def test_a_river_named_by_the_canals_engineer_does_not_answer_for_the_canal() -> None:
    record = ask_json("How long is the Quenby Canal?", "towns")
    assert record["abstained"], record["answer"]


def test_the_length_of_the_river_asked_is_answered() -> None:
    record = ask_json("How long is the River Menn?", "towns")
    assert not record["abstained"], record["answer"]
    assert "44 km" in record["answer"], record


def test_the_medicine_the_note_doses_is_answered() -> None:
    record = ask_json("What strength of dimeticone lotion is used for head lice?", "clinic")
    assert not record["abstained"], record["answer"]
    assert "4%" in record["answer"], record


def test_a_limit_per_year_does_not_answer_a_limit_over_a_lifetime() -> None:
    record = ask_json(
        "How many rabies boosters can a traveller have in their whole life?", "clinic"
    )
    assert record["abstained"], record["answer"]


def test_a_gap_between_courses_does_not_say_how_long_a_spray_takes_to_work() -> None:
    record = ask_json("How long does the steroid nasal spray take to work?", "clinic")
    assert record["abstained"], record["answer"]


def test_asked_verbs_are_read_from_the_questions_form() -> None:
    assert [a.word for a in asked_verbs("When was the ferry last launched?")] == ["launched"]
    assert [a.word for a in asked_verbs("Where did she retire?")] == ["retire"]
    assert [a.word for a in asked_verbs("Who runs the Tuesday clinic?")] == ["runs"]
    assert [a.word for a in asked_verbs("When did the mill close down?")] == ["close"]
    assert [a.word for a in asked_verbs("How long does the spray take to work?")] == ["work"]
    # A light verb or a copula names no event.
    assert asked_verbs("When did it happen?") == []
    assert asked_verbs("Who is the practice nurse?") == []


def test_asked_of_reads_the_thing_an_attribute_is_asked_of() -> None:
    assert [a.word for a in asked_of("What dose of malathion is used for lice?")] == ["malathion"]
    assert asked_of("What kind of exercise helps?") == []


def test_a_towns_population_is_asked_of_the_town_not_found_first() -> None:
    assert described_thing("What was Corrick's population in 1880?") is None
    assert described_thing("What river runs through Ada Pell's home town?") is not None
