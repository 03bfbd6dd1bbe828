"""What a user sees from the extractive reasoner: answers shaped by the question, conflicts
settled in favour of the newer authoritative document, an honest self-reflection, and
structured feedback reaching the next attempt."""

from __future__ import annotations

import pytest

from prefrag.documents import make_document
from prefrag.reasoners._params import PARAMS, ExtractiveParams
from prefrag.reasoners.base import Feedback
from prefrag.reasoners.extractive import ExtractiveReasoner

ANTIBIOTICS = make_document(
    "Many anti-infective medicines change the effect of warfarin. Co-trimoxazole, "
    "metronidazole and fluconazole inhibit the liver enzyme CYP2C9, which clears the more "
    "potent S-form of warfarin, and can raise the INR markedly. Macrolides such as "
    "clarithromycin and erythromycin can also raise the INR. In the opposite direction, "
    "rifampicin can lower the INR greatly.",
    id="antibiotics",
    source="notes",
    title="Antibiotics that affect warfarin",
)
TIZANIDINE = make_document(
    "Tizanidine is a muscle relaxant cleared almost entirely by the liver enzyme CYP1A2. "
    "Strong CYP1A2 inhibitors raise its blood levels many-fold, causing severe low blood "
    "pressure. For this reason tizanidine is contraindicated with ciprofloxacin. "
    "Tizanidine tablets come in two strengths.",
    id="tizanidine",
    source="notes",
    title="Ciprofloxacin and tizanidine",
)
PENICILLIN = make_document(
    "Alexander Fleming discovered penicillin in 1928 at St Mary's Hospital in London.",
    id="penicillin",
    source="notes",
    title="Penicillin",
)


def _note(text: str, id: str, date: str, authority: float, title: str):
    return make_document(text, id=id, source="notes", title=title, date=date, authority=authority)


OLD_GUIDE = _note(
    "Alcohol should be avoided for at least 24 hours after the last dose of metronidazole.",
    "metronidazole-2014",
    "2014-05-20",
    0.9,
    "Metronidazole and alcohol",
)
NEW_GUIDE = _note(
    "Current labels advise avoiding alcohol for at least three days after the last dose of "
    "metronidazole.",
    "metronidazole-2022",
    "2022-07-07",
    0.8,
    "Metronidazole and alcohol: a longer gap",
)
NEW_FORUM = _note(
    "A forum member wrote that alcohol is fine one hour after the last dose of metronidazole.",
    "metronidazole-forum",
    "2024-01-10",
    0.3,
    "Metronidazole and alcohol: forum thread",
)


@pytest.fixture
def reasoner() -> ExtractiveReasoner:
    return ExtractiveReasoner(use_embeddings=False)


def test_a_why_question_gets_whole_cited_sentences(reasoner):
    draft = reasoner.answer(
        "Why is tizanidine contraindicated with ciprofloxacin?", [], [TIZANIDINE]
    )
    # The sentence that answers and the one its "For this reason" refers to, word for word.
    assert "Strong CYP1A2 inhibitors raise its blood levels many-fold" in draft.answer
    assert "For this reason tizanidine is contraindicated with ciprofloxacin." in draft.answer
    assert "two strengths" not in draft.answer
    assert draft.cited_ids == ["tizanidine"]


def test_a_factoid_question_keeps_a_short_span(reasoner):
    who = reasoner.answer("Who discovered penicillin?", [], [PENICILLIN])
    when = reasoner.answer("When was penicillin discovered?", [], [PENICILLIN])
    assert who.answer == "Alexander Fleming"
    assert when.answer == "1928"
    assert who.cited_ids == ["penicillin"]


def test_a_duration_keeps_its_qualifier_and_unit(reasoner):
    draft = reasoner.answer(
        "How long after the last dose of metronidazole should alcohol be avoided?", [], [OLD_GUIDE]
    )
    assert draft.answer == "at least 24 hours"


def test_a_list_question_gets_the_sentences_that_list_the_items(reasoner):
    draft = reasoner.answer(
        "Which antibiotics raise the INR of patients on warfarin?", [], [ANTIBIOTICS]
    )
    # The deciding sentences whole (an item keeps what qualifies it), the items as the
    # short answer, and nothing from the sentence about the opposite effect.
    for item in ("Co-trimoxazole", "metronidazole", "fluconazole", "clarithromycin"):
        assert item in draft.answer
        assert item in (draft.short_answer or "")
    assert "can raise the INR markedly" in draft.answer
    assert "S-form" not in (draft.short_answer or "")
    assert "rifampicin" not in draft.answer
    assert draft.cited_ids == ["antibiotics"]


def test_a_conflict_follows_the_newer_authoritative_document_and_says_so(reasoner):
    question = "How long after finishing metronidazole should alcohol be avoided?"
    draft = reasoner.answer(question, [], [OLD_GUIDE, NEW_GUIDE])
    assert draft.answer.startswith("at least three days")
    assert "24 hours" not in draft.answer.split("(")[0]
    assert "follows the newer, authoritative [metronidazole-2022]" in draft.answer
    assert "over [metronidazole-2014]" in draft.answer
    assert draft.cited_ids == ["metronidazole-2022"]


def test_a_conflict_is_settled_whatever_else_is_held(reasoner):
    # Other held documents on other subjects, some with the question's rarer words ("long"),
    # must not make the older version look off-topic: the answer still says it follows the
    # newer one, and over which.
    question = "How long after finishing metronidazole should alcohol be avoided?"
    newer = _note(
        "Current labels advise avoiding alcohol for at least three days after finishing "
        "metronidazole.",
        "metronidazole-2022",
        "2022-07-07",
        0.8,
        "Metronidazole and alcohol: a longer gap",
    )
    others = [
        _note(text, f"other-{i}", "2019-03-02", 0.9, title)
        for i, (title, text) in enumerate(
            [
                ("MAOI diet", "People taking an MAOI should avoid aged cheese and tap beer."),
                ("Warfarin", "Metronidazole raises the INR; heavy alcohol use should be avoided."),
                ("Paracetamol", "The long-standing daily limit is 4 grams; avoid alcohol near it."),
            ]
        )
    ]
    draft = reasoner.answer(question, [], [newer, OLD_GUIDE, *others])
    assert draft.answer.startswith("at least three days")
    assert "follows the newer, authoritative [metronidazole-2022]" in draft.answer
    assert "over [metronidazole-2014]" in draft.answer


def test_a_newer_but_much_less_authoritative_document_does_not_win(reasoner):
    question = "How long after finishing metronidazole should alcohol be avoided?"
    draft = reasoner.answer(question, [], [NEW_FORUM, OLD_GUIDE])
    assert draft.answer.startswith("at least 24 hours")
    assert "metronidazole-forum" not in draft.cited_ids


def test_reflection_is_not_correct_when_no_sentence_supports_the_answer(reasoner):
    question = "Which antibiotics raise the INR of patients on warfarin?"
    # A word of the right sentence, but not an item it lists (the README's old answer).
    wrong = reasoner.reflect(question, "S-form", [ANTIBIOTICS])
    assert wrong.label != "CORRECT"
    made_up = reasoner.reflect(
        "Why is tizanidine contraindicated with ciprofloxacin?",
        "Tizanidine is safe with every antibiotic.",
        [TIZANIDINE],
    )
    assert made_up.label == "INCORRECT"
    right = reasoner.answer(question, [], [ANTIBIOTICS]).answer
    assert reasoner.reflect(question, right, [ANTIBIOTICS]).label == "CORRECT"


def test_reflection_on_a_span_from_a_sentence_without_the_asked_focus_is_not_correct(reasoner):
    question = "What antidote is given for a metronidazole overdose?"
    assert reasoner.reflect(question, "Current", [NEW_GUIDE]).label != "CORRECT"


def test_structured_feedback_reaches_the_second_answer(reasoner):
    question = "Who discovered penicillin?"
    rival = make_document(
        "Some accounts credit Ernest Duchesne, who discovered penicillin's effect in 1897.",
        id="duchesne",
        source="notes",
        title="Penicillin history",
    )
    first = reasoner.answer(question, [], [PENICILLIN, rival])
    reflection = reasoner.reflect(question, "Made Up Person", [PENICILLIN, rival])
    assert reflection.label == "INCORRECT"
    feedback = Feedback(answer=first.answer, label="INCORRECT", explanation="Not supported.")
    second = reasoner.answer(question, [], [PENICILLIN, rival], feedback=feedback)
    assert second.answer and second.answer != first.answer
    # A lead in the feedback is searched for next.
    lead = Feedback(answer=first.answer, label="PARTIALLY CORRECT", leads=["Ernest Duchesne"])
    decision = reasoner.think(question, [], sources=["notes"], feedback=lead)
    assert decision.action == "search" and "Ernest Duchesne" in decision.query


def test_every_parameter_says_how_it_was_chosen():
    chosen = ExtractiveParams.how_chosen()
    assert chosen and all(how.strip() for how in chosen.values())
    with pytest.raises(AttributeError):
        PARAMS.answer_support = 0.1  # type: ignore[misc]
    # One name-match threshold: two of three terms pass, one of two does not.
    assert 1 / 2 < PARAMS.name_match <= 2 / 3
