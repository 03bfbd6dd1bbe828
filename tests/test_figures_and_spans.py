"""Figures of the asked kind, and short spans read out of the answering sentence, as a user
meets them: `prefrag index` on their own notes, then `prefrag ask --json`.

A "how long" question is answered with a duration, never with the dose that shares its
sentence; "what dose" with the dose; "how many people" with a count, not a distance; "what
blood pressure" with the whole reading; ranges stay whole. A question asking for a name is
answered with the one name its sentence gives for it; a sentence naming two people with
nothing to tell them apart is given whole. The notes are invented.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "clinic/corvanil.md": """# Corvanil for chest infections

Adults take Corvanil 400 mg twice a day for 5 days.
Children under twelve are not given Corvanil.
""",
    "clinic/thyroid-review.md": """# Thyroid review: Ines Marlow

Ines Marlow, 58, takes levothyroxine for an underactive thyroid.
Her thyroid level should be rechecked 6 to 8 weeks after each dose change.
Her home blood pressure target is below 135/85 mmHg while she takes 5 mg of amlodipine.
""",
    "clinic/ferrolan.md": """# Ferrolan iron tablets

Take Ferrolan at least 4 hours apart from tea, coffee or antacids.
""",
    "places/halbury.md": """# Halbury

Halbury is a hill town 18 km north of the Carrow estuary.
The town has 12,400 residents.
The Halbury footbridge was designed in 1894 by the engineer Oswin Tarrell.
The Halbury Almanac, first printed in 1887, has sold more than 40,000 copies.
""",
    "places/pell-mere.md": """# Pell Mere

Pell Mere is a lake village on the Dunning road.
Its chapel was restored in 1902 by Ada Venn and Lorne Hask.
""",
    "places/glass-harbour.md": """# Glass Harbour

Glass Harbour is the third album of the Quay Rooms Trio.
It was recorded in 1971 at the Quay Rooms by Ada Corran and Tom Vell.
""",
    "places/ada-corran.md": """# Ada Corran

Ada Corran (born Ada Mary Corran) was an English sound engineer and chemist.
She built the first echo chamber in Halbury.
""",
    "places/bell-tower.md": """# Bell Tower of Pell Mere

The Bell Tower of Pell Mere was drawn in 1880 by the architect Nils Arden.
""",
    "places/nils-arden.md": """# Nils Arden

Nils Arden was an architect from Halbury.
He later held the office of Surveyor General of Carrow.
""",
    "places/dunmere-riot.md": """# Dunmere Riot

In the Dunmere Riot of 1841 the Hollin Weavers clashed with the Carrow Ferrymen outside Tallow Hall.
""",
    "places/tomas-vell.md": """# Tomas Vell

Tomas Vell is a Halbury cricketer.
He is a left-arm spin bowler and a right-handed batsman.
""",
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One data directory for the module, holding the two folders of notes indexed."""
    with indexed_home(tmp_path_factory, NOTES, ("clinic", "places")) as home:
        yield home


def shown(record: dict) -> str:
    """What a reader takes as the answer: the short answer when there is one."""
    return record["short_answer"] or record["answer"]


@pytest.mark.parametrize(
    ("question", "source", "expected", "not_expected"),
    [
        # The dose and the duration share one sentence: each question gets its own figure.
        ("For how long do adults take Corvanil?", "clinic", "5 days", "400 mg"),
        ("What dose of Corvanil do adults take?", "clinic", "400 mg twice a day", "5 days"),
        # A range stays whole, with its unit.
        (
            "How long after a dose change should Ines Marlow's thyroid level be rechecked?",
            "clinic",
            "6 to 8 weeks",
            "5 mg",
        ),
        # A reading keeps both numbers and its unit; the dose beside it is not a reading.
        ("What is Ines Marlow's home blood pressure target?", "clinic", "135/85 mmHg", "5 mg"),
        # A count of people is not the distance in the same note.
        ("How many residents does Halbury have?", "places", "12,400", "18 km"),
        ("How far is Halbury from the Carrow estuary?", "places", "18 km", "12,400"),
        # "How far apart" asks for a separation: in time when the note gives hours.
        ("How far apart should Ferrolan and coffee be taken?", "clinic", "4 hours", "5 days"),
    ],
)
def test_a_figure_answers_only_a_question_asking_for_its_kind(
    question: str, source: str, expected: str, not_expected: str
) -> None:
    record = ask_json(question, source)
    assert not record["abstained"], record["answer"]
    assert expected in shown(record)
    assert not_expected not in shown(record)
    assert not re.fullmatch(r"[\d.,/\s-]+", record["answer"]), record["answer"]  # no bare number


def test_the_one_name_of_the_asked_kind_is_the_answer_and_its_sentence_the_support() -> None:
    record = ask_json("Which engineer designed the Halbury footbridge?", "places")
    assert record["answer"] == "Oswin Tarrell"
    assert record["short_answer"] == "Oswin Tarrell"
    assert {Path(c["url"].removeprefix("file://")).stem for c in record["citations"]} == {"halbury"}


def test_two_names_with_nothing_to_tell_them_apart_come_as_the_whole_sentence() -> None:
    record = ask_json("Who restored the chapel of Pell Mere?", "places")
    assert not record["abstained"], record["answer"]
    assert "Ada Venn and Lorne Hask" in record["answer"]
    assert record["short_answer"] not in ("Ada Venn", "Lorne Hask")


def test_a_count_names_its_noun_in_the_answer_and_is_the_number_in_the_short_answer() -> None:
    record = ask_json("How many residents does Halbury have?", "places")
    assert record["answer"] == "12,400 residents"
    assert record["short_answer"] == "12,400"


def test_a_year_is_never_the_answer_to_how_many() -> None:
    record = ask_json("How many copies of the Halbury Almanac have sold?", "places")
    assert not record["abstained"], record["answer"]
    assert "40,000" in shown(record)
    assert "1887" not in shown(record)


def test_a_figure_keeps_its_qualifier_in_the_answer_and_drops_it_from_the_short_answer() -> None:
    record = ask_json("How many copies of the Halbury Almanac have sold?", "places")
    assert "more than 40,000" in record["answer"], record["answer"]
    assert record["short_answer"] == "40,000"


def test_a_name_that_titles_the_answering_document_is_the_short_answer_citing_both() -> None:
    # One note names her among others; her own note says she is what the question asks for.
    record = ask_json(
        "Which English sound engineer and chemist recorded the album Glass Harbour?", "places"
    )
    assert not record["abstained"], record["answer"]
    assert record["short_answer"] == "Ada Corran", record
    cited = {Path(c["url"].removeprefix("file://")).stem for c in record["citations"]}
    assert {"glass-harbour", "ada-corran"} <= cited


@pytest.mark.parametrize(
    ("question", "bridge"),
    [
        # The architect's own note gives the office asked for: his name is the way there.
        ("What office did the architect who drew the Bell Tower of Pell Mere hold?", "Nils Arden"),
        # Her note never says she is a studio: the kind asked for is not hers.
        ("Which studio did the sound engineer of Glass Harbour found?", "Ada Corran"),
    ],
)
def test_the_bridge_name_is_not_the_answer_when_it_is_not_what_is_asked(
    question: str, bridge: str
) -> None:
    record = ask_json(question, "places")
    assert record["short_answer"] != bridge
    assert record["answer"] != bridge


def test_of_several_names_the_one_the_question_does_not_give_and_nearest_its_words() -> None:
    record = ask_json("Which group clashed with the Hollin Weavers in the Dunmere Riot?", "places")
    assert not record["abstained"], record["answer"]
    assert record["short_answer"] == "Carrow Ferrymen", record


def test_a_choice_between_two_values_is_the_one_the_sentence_writes() -> None:
    record = ask_json("Is Tomas Vell a left-handed or right-handed batsman?", "places")
    assert record["short_answer"] == "right-handed", record
    assert "right-handed batsman" in record["answer"]
    assert record["answer"].count("left-arm spin bowler") == 1  # the deciding sentence once


def _sentence_of(text: str, title: str, question: str):
    """The judged sentence holding `text` among invented documents, for `sentence_span`."""
    from prefrag.documents import make_document
    from prefrag.reasoners._evidence import Evidence, QuestionWeights, rank_sentences
    from prefrag.reasoners._policy import Judge
    from prefrag.reasoners._text import analyze_question

    docs = [
        make_document(text, id="riot", source="notes", title=title),
        make_document(
            "Tallow Hall is the old guild house of Dunmere.",
            id="hall",
            source="notes",
            title="Tallow Hall",
        ),
    ]
    shape = analyze_question(question)
    evidence = Evidence(docs)
    weights = QuestionWeights(shape, evidence)
    judge = Judge(shape, evidence, weights)
    scored = next(s for s in rank_sentences(shape, evidence, weights) if s.sentence.doc == 0)
    return shape, evidence, scored, frozenset(judge.asked)


def test_of_several_names_the_short_span_is_the_one_nearest_the_asked_words() -> None:
    from prefrag.reasoners._spans import sentence_span

    shape, evidence, scored, asked = _sentence_of(
        "In 1841 the Hollin Weavers fought the Carrow Ferrymen on the quay below Tallow Hall "
        "and the Marsh Gate.",
        "Dunmere Riot",
        "Which group fought the Hollin Weavers in the Dunmere Riot?",
    )
    # Strict reading (the span as the whole answer): nothing tells the names apart by score.
    decided = sentence_span(shape, evidence, scored, asked, strict=False)
    assert decided is not None and decided[0] == "Carrow Ferrymen"


def test_two_names_equally_near_the_asked_words_give_no_short_span() -> None:
    from prefrag.reasoners._spans import sentence_span

    shape, evidence, scored, asked = _sentence_of(
        "In 1841 the Hollin Weavers fought the Carrow Ferrymen and the Marsh Carters.",
        "Dunmere Riot",
        "Which group fought the Hollin Weavers in the Dunmere Riot?",
    )
    assert sentence_span(shape, evidence, scored, asked, strict=False) is None
