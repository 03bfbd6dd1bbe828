"""Two-document answers: a pair of sentences from two notes that answer together."""

from __future__ import annotations

import re

from prefrag.reasoners._evidence import (
    Evidence,
    answer_candidates,
)
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._policy import (
    FROM,
    Judge,
    Judged,
)
from prefrag.reasoners._quantities import counted_figure
from prefrag.reasoners._spans import (
    bridged_name,
    span_text,
)
from prefrag.reasoners._text import (
    QuestionShape,
    normalize_answer,
    unique,
    words,
)
from prefrag.reasoners.base import (
    AnswerDraft,
)


def two_documents(
    judge: Judge, judged: list[Judged], floor: float = PARAMS.answer_confidence
) -> tuple[Judged, Judged, float] | None:
    """The best pair of sentences of two documents that answers together, or None.

    Only for a question whose names no single document holds all of: each sentence of the
    pair names part of it, and the pair shares the term that links them.
    """
    if judge.sides or len(judge.name_terms) < 2:
        return None
    if any(j.names >= 1.0 and j.confidence >= floor for j in judged[:1]):
        return None
    best: tuple[Judged, Judged, float] | None = None
    top = judged[: PARAMS.pair_sentences]
    for i, first in enumerate(top):
        for second in top[i + 1 :]:
            if first.names >= 1.0 or second.names >= 1.0:
                continue
            confidence = judge.pair(first, second)
            if confidence >= floor and (best is None or confidence > best[2]):
                best = (first, second, confidence)
    return best


def subject_and_topic(
    judge: Judge, judged: list[Judged], floor: float = PARAMS.answer_confidence
) -> tuple[Judged, Judged, float] | None:
    """A named subject's sentence and another note's sentence on what it mentions, or None.

    "What is the most colchicine Mrs Quayle can have in one course?": her note says she was
    given colchicine but not the limit; a topic note gives the limit but not her. The pair
    shares the thing asked about (colchicine) and together names her and covers all that is
    asked. The subject's sentence must not answer alone, and the other note must not be
    about the subject (it would be her note's own sentence, not a second document); its
    title must be one the question or the subject's note names (her note is on a gout
    flare: the gout note), not another place's note saying the same of its own church.
    """
    if judge.sides or not judge.name_terms:
        return None
    top = judged[: PARAMS.pair_sentences]
    subject = [j for j in top if j.names >= 1.0 and j.overlap < 1.0]
    topic = [j for j in top if j.names == 0.0 and j.overlap >= 1.0]
    best: tuple[Judged, Judged, float] | None = None
    evidence = judge.evidence
    question = frozenset(judge.weights.weights)
    for first in subject:
        mentioned = question | evidence.doc_terms[first.scored.sentence.doc]
        for second in topic:
            if not evidence.title_terms[second.scored.sentence.doc] & mentioned:
                continue  # another place's or person's note: not what the subject mentions
            confidence = judge.pair(first, second, through_asked=True)
            if confidence >= floor and (best is None or confidence > best[2]):
                best = (first, second, confidence)
    return best


def pair_answer(
    evidence: Evidence, best: Judged, first: Judged, second: Judged, confidence: float
) -> AnswerDraft:
    """Two sentences of two documents, in evidence order, citing both.

    The most confident sentence of all joins them when it is of one of the two documents
    (it says what the question asks; the pair says why or through what).
    """
    chosen = [first, second]
    docs = {first.scored.sentence.doc, second.scored.sentence.doc}
    if best.scored.sentence.doc in docs and best not in chosen:
        chosen.append(best)
    ordered = sorted(chosen, key=lambda j: (j.scored.sentence.doc, j.scored.sentence.position))
    return AnswerDraft(
        answer=" ".join(j.scored.sentence.text for j in ordered),
        cited_ids=unique([evidence.ids[j.scored.sentence.doc] for j in ordered]),
        rationale="Two documents, linked by what both sentences name.",
        confidence=confidence,
    )


def pair_span(
    shape: QuestionShape,
    evidence: Evidence,
    pair: AnswerDraft,
    bridged: tuple[Judged, Judged, float],
    asked: frozenset[str],
    rejected: frozenset[str] = frozenset(),
) -> AnswerDraft | None:
    """The span a two-document answer gives for a question asking for one, or None.

    The pair's two sentences are read as one passage (`answer_candidates`: spans the question
    does not name, of the asked type, closest to the question's words, a name found in both
    sentences counting more - "Which actor starred in X?": the film's cast sentence and the
    actor's own "was an American actor" sentence both name him). The best span answers when
    it is the only one of the asked type or clearly ahead of the runner-up
    (`PARAMS.span_lead`); the two sentences are its cited support. Otherwise the sentences
    answer, whole, with the name one gives for the other's document as the short answer when
    it is what is asked (`bridged_name`).
    """
    first, second, _ = bridged
    supports = [first.scored, second.scored]
    found = [
        (c, text)
        for c in answer_candidates(shape, evidence, supports, top=len(supports), exclude=rejected)
        if (text := span_text(shape, evidence, c)) is not None
    ]
    if not found:
        return None
    if len(found) > 1 and found[0][0].score < PARAMS.span_lead * found[1][0].score:
        a, b = first.scored.sentence, second.scored.sentence
        decided = bridged_name(shape, evidence, a, b, rejected) or bridged_name(
            shape, evidence, b, a, rejected
        )
        if decided is None or normalize_answer(decided[0]) not in normalize_answer(pair.answer):
            return None
        return pair.model_copy(update={"short_answer": counted_figure(shape.text, decided[0])})
    text = found[0][1]
    return pair.model_copy(
        update={
            "answer": text,
            "short_answer": counted_figure(shape.text, text),
            "rationale": f"{FROM}{pair.answer}",
        }
    )


# A word written as a name inside a sentence: capitalised or holding a digit ("CYP3A4").
_NAME_WORD_RE = re.compile(r"(?<=\s)(?:[A-Z][\w-]*|\w*\d\w*)")


def linked_subjects(
    judge: Judge, judged: list[Judged], floor: float = PARAMS.answer_confidence
) -> tuple[Judged, Judged, float] | None:
    """Two notes, each about one thing the question names, joined by a name both give.

    "Why does the level of X rise after starting Y?": X's note says it is cleared by an
    enzyme, Y's note says Y blocks that enzyme; neither note names the other medicine, and
    medicines written in lower case are no names to `two_documents`. The things asked about
    are the question's words that title a held note; the pair is one sentence of each of
    two such notes (about different things) sharing a name the question does not give (the
    enzyme, a place, a person), read together (`Judge.pair`). A question asking for a
    span (a figure, a name) needs one of the two sentences to hold one of the asked type.
    """
    if judge.sides or judge.name_terms:
        return None
    evidence = judge.evidence
    question = frozenset(judge.weights.weights)
    about = {
        doc: terms & question for doc, terms in enumerate(evidence.title_terms) if terms & question
    }
    if len({frozenset(terms) for terms in about.values()}) < 2:
        return None
    question_words = {w.lower() for w in words(judge.shape.text)}
    linked: list[tuple[Judged, frozenset[str]]] = []
    for j in judged:
        sentence = j.scored.sentence
        if sentence.doc in about:
            found = {w for w in _NAME_WORD_RE.findall(f" {sentence.text}") if len(w) > 2}
            names = frozenset(w for w in found if w.lower() not in question_words)
            if names:
                linked.append((j, names))
    best: tuple[Judged, Judged, float] | None = None
    for i, (first, first_names) in enumerate(linked):
        for second, second_names in linked[i + 1 :]:
            a, b = first.scored.sentence.doc, second.scored.sentence.doc
            if a == b or about[a] & about[b] or not first_names & second_names:
                continue
            if judge.shape.form == "span" and not (first.fits or second.fits):
                continue  # "By how much ...?": the link is no figure
            confidence = judge.pair(first, second)
            if confidence >= floor and (best is None or confidence > best[2]):
                best = (first, second, confidence)
    return best


def through_record(
    judge: Judge, judged: list[Judged], floor: float = PARAMS.answer_confidence
) -> tuple[Judged, Judged, float] | None:
    """The best sentence when it only describes a first hop, and the sentence it leads to.

    "The lady in the log who had diarrhoea in cycle 3: for how many days does she take her
    tablets?": the log's bullet about her matches the question best, yet it only says who
    she is; the note about the medicine it names (`_record_links`) says the days. When the
    best sentence is part of the record a confident sentence of another note was reached
    through, and that sentence says asked words the record does not, it answers: returned as
    (record sentence, answering sentence, its confidence), else None.
    """
    if judge.sides or not judged:
        return None
    top = judged[0].scored.sentence
    for candidate in judged[: PARAMS.pair_sentences]:
        link = candidate.scored.link
        if link is None or link.position >= 0 or candidate.confidence < floor:
            continue  # only a record's link (`_record_links`) is a first hop read whole
        if link.doc != top.doc or top.text not in link.text:
            continue
        beyond = (candidate.scored.sentence.terms & frozenset(judge.asked)) - link.terms
        if beyond:
            return judged[0], candidate, candidate.confidence
    return None
