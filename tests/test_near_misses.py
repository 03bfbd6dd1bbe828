"""Near misses abstain, and follow-ups carry the thread's subject and its new question.

As a user meets them: `prefrag index` on their own notes, then `prefrag ask --json`, or the
API on a thread. A note giving an adult dose does not answer a dose "for a child"; a note
on a drug in general does not answer whether it is safe "in pregnancy"; the questions the
notes do answer, with the same qualifier written, keep their answers. On a thread, "and for
how long?" after a dose question asks how long (not the dose again) about the same
medicine. The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home, thread_graph

import prefrag
from prefrag.reasoners._checks import relation_words
from prefrag.reasoners._condense import condense_follow_up
from prefrag.reasoners.base import PriorTurn

NOTES = {
    "notes/quellamine.md": (
        "# Quellamine\n\n"
        "Quellamine is an antihistamine tablet for hay fever.\n\n"
        "The adult dose of Quellamine is 8 mg once a day.\n"
    ),
    "notes/dorvex.md": (
        "# Dorvex for poor sleep\n\n"
        "Dorvex 3 mg is taken one hour before bed for poor sleep.\n\n"
        "A course of Dorvex lasts up to 5 weeks, then it is stopped.\n"
    ),
    "notes/taskerin.md": (
        "# Taskerin\n\n"
        "Taskerin is a cream for cracked heels.\n\n"
        "For children, use 2 g of Taskerin cream twice a day.\n"
    ),
    "notes/brannock.txt": (
        "Brannock Fells\n"
        "The Brannock Fells district covers about 480 square kilometres of upland.\n"
        "Its highest hill is Carrow Pike.\n"
    ),
    "notes/halverin.txt": (
        "HALVERIN AND MOSSADINE - AVOID TOGETHER\n"
        "Halverin raises the blood level of mossadine about fourfold.\n"
        "Choose another painkiller for anyone taking mossadine.\n"
    ),
    "notes/orlimab.md": (
        "# Orlimab\n\n"
        "Orlimab is an injection for severe nettle rash.\n\n"
        "Do not give Orlimab to anyone with a latex allergy.\n"
    ),
    "notes/farrow.md": (
        "# Farrow syndrome\n\n"
        "Farrow syndrome is a rare condition that thickens the skin of the palms.\n\n"
        "Mutations in the FARR1 gene cause Farrow syndrome.\n"
    ),
    "notes/harlow.md": (
        "# Harlow\n\n"
        "Harlow is a fishing town on the east coast.\n\n"
        "In 1902 a dam 14 m high was built above Harlow to supply its drinking water.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("notes",)) as home:
        yield home


def test_an_adult_dose_does_not_answer_a_dose_for_a_child() -> None:
    record = ask_json("What dose of Quellamine for a child?", "notes")
    assert record["abstained"], record["answer"]
    assert "child" in record["answer"], record["answer"]
    assert "8 mg" not in record.get("short_answer", ""), record


def test_the_group_the_note_names_is_still_answered() -> None:
    record = ask_json("What dose of Taskerin for children?", "notes")
    assert not record["abstained"], record["answer"]
    assert "2 g" in record["answer"], record


def test_the_dose_without_a_qualifier_is_still_answered() -> None:
    record = ask_json("What is the adult dose of Quellamine?", "notes")
    assert not record["abstained"], record["answer"]
    assert "8 mg" in record["answer"], record


def test_another_things_height_does_not_answer_the_height_asked() -> None:
    record = ask_json("How tall is the Harlow lighthouse?", "notes")
    # Abstained on; why depends on the path (the lighthouse unsaid, or the dam's sentence
    # too unsure once the budget-spent answer reads with MiniLM).
    assert record["abstained"], record["answer"]
    record = ask_json("How high is the Harlow dam?", "notes")
    assert not record["abstained"], record["answer"]
    assert "14 m" in record["answer"], record


def test_a_general_note_does_not_say_a_drug_is_safe_in_pregnancy() -> None:
    record = ask_json("Can Quellamine be taken in pregnancy?", "notes")
    assert record["abstained"], record["answer"]


def test_how_long_on_a_thread_asks_the_duration_of_the_earlier_medicine() -> None:
    graph = thread_graph()
    first = prefrag.ask("How much Dorvex do we give for poor sleep?", graph=graph, thread_id="t")
    assert "3 mg" in first["answer"], first["answer"]
    result = prefrag.ask(
        "and for how long?",
        graph=graph,
        thread_id="t",
        preferred_source="notes",
        fallback_sources=[],
        max_reflections=0,
    )
    assert result["standalone_question"].startswith("How long"), result["standalone_question"]
    assert "Dorvex" in result["standalone_question"]
    assert not result["abstained"], result["answer"]
    assert "5 weeks" in result["answer"], result["answer"]
    assert "3 mg" not in result["answer"]


@pytest.mark.parametrize(
    ("earlier", "follow_up", "standalone"),
    [
        # The new question's own question word, about the earlier subject.
        ("When was the Harlow Mill built?", "and where exactly is it?", "Where exactly is"),
        (
            "What's the usual Dorvex dose for poor sleep?",
            "and when should it be stopped?",
            # "it" takes the earlier question's whole subject phrase, dose and all.
            "Dorvex dose for poor sleep be stopped",
        ),
        # A question word alone asks it of what the earlier question was about.
        ("What do we use first for nettle rash?", "how long for?", "How long, "),
        # The same preposition's new object; a lower-case verb stays, its noun is replaced.
        ("What does Quellamine do to Dorvex?", "and to Taskerin?", "do to Taskerin?"),
        ("Why does coffee affect dorvex?", "what about quellamine?", "affect quellamine?"),
    ],
)
def test_the_rules_keep_the_thread_and_ask_the_new_question(earlier, follow_up, standalone):
    condensed = condense_follow_up(follow_up, [PriorTurn(question=earlier, answer="x")])
    assert standalone in condensed.question, condensed.question
    assert "What's" not in condensed.question.removeprefix("What's")


def test_a_pronoun_with_no_one_to_point_to_is_left_as_it_is() -> None:
    prior = [PriorTurn(question="How long after a meal can Dorvex be taken?", answer="x")]
    condensed = condense_follow_up("when can she restart her tablets?", prior)
    assert "'s" not in condensed.question, condensed.question


def test_a_condition_is_no_subject_to_swap_in() -> None:
    prior = [PriorTurn(question="What is the dose of Dorvex for poor sleep?", answer="x")]
    condensed = condense_follow_up("and if she is breastfeeding?", prior)
    assert "Dorvex" in condensed.question and "breastfeeding" in condensed.question


def test_a_qualifying_phrase_is_part_of_the_asked_relation() -> None:
    words = {a.word for a in relation_words("What dose of Dorvex for a child with asthma?")}
    assert "child" in words
    # A clause about "someone", a time adverb, and a phrase naming the subject are not.
    assert relation_words("Is Dorvex still used for sleep after someone quits?")[-1].word != "quits"
    assert not any(a.word == "today" for a in relation_words("What is Dorvex used for today?"))
    names = frozenset({"harlow", "dorvex"})
    assert relation_words("What is the dose of Dorvex in Harlow?", names) == []
    # The measured thing's common noun is asked too: "mill", not the town's other things.
    assert [a.word for a in relation_words("How old is the mill in Harlow?", names)] == ["mill"]


# --- leftovers of the last stop, each through `prefrag ask` ---------------------------------


def test_an_area_keeps_its_whole_unit() -> None:
    record = ask_json("How big is the Brannock Fells district?", "notes")
    assert not record["abstained"], record["answer"]
    assert "480 square kilometres" in record["answer"], record


def test_a_plain_text_title_line_is_not_part_of_the_answer() -> None:
    record = ask_json("What does Halverin do to mossadine?", "notes")
    assert not record["abstained"], record["answer"]
    assert "fourfold" in record["answer"], record
    assert "AVOID TOGETHER" not in record["answer"], record["answer"]


def test_an_instruction_not_to_give_a_drug_is_no_note_declining_to_say() -> None:
    record = ask_json("What is the warning about Orlimab and latex?", "notes")
    assert not record["abstained"], record["answer"]
    assert "latex allergy" in record["answer"], record


def test_what_a_drug_is_used_for_is_asked_of_the_drug() -> None:
    record = ask_json("What is Orlimab used for?", "notes")
    assert not record["abstained"], record["answer"]
    assert "nettle rash" in record["answer"], record


def test_genetic_is_said_by_a_sentence_naming_the_gene() -> None:
    record = ask_json("What is the genetic cause of Farrow syndrome?", "notes")
    assert not record["abstained"], record["answer"]
    assert "FARR1" in record["answer"], record


def test_a_word_is_written_by_its_root_with_an_ending() -> None:
    # Without MiniLM (an answer drafted when the retrieval budget is spent) only written
    # words count: "genetic" is written by "gene".
    from prefrag.reasoners._attributes import says_word

    assert says_word("genetic", "Mutations in the FARR1 gene cause it.")
    assert not says_word("genetic", "Farrow syndrome thickens the skin.")
