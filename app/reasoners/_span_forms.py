"""Span and sentence answers: a short span of the asked type and kind, or whole sentences."""

from __future__ import annotations

import re

from prefrag.reasoners._evidence import (
    Candidate,
    Evidence,
    QuestionWeights,
    ScoredSentence,
    answer_candidates,
)
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._policy import (
    FROM,
    Judge,
    Judged,
    is_label_line,
    plain,
)
from prefrag.reasoners._quantities import counted_figure
from prefrag.reasoners._shapes import (
    sentence_answer,
)
from prefrag.reasoners._spans import (
    PERSON,
    asked_kind,
    asked_type,
    bridged_name,
    described_subject,
    holds_type,
    named_as,
    of_kind,
    sentence_span,
    span_fits,
    span_text,
)
from prefrag.reasoners._support import (
    support_ids,
)
from prefrag.reasoners._text import (
    QuestionShape,
    normalize_answer,
    unique,
    year_of,
)
from prefrag.reasoners._verdicts import is_demonym
from prefrag.reasoners.base import (
    AnswerDraft,
)


def in_asked_form(shape: QuestionShape, evidence: Evidence, draft: AnswerDraft) -> AnswerDraft:
    """A span answer's short answer in the form the question asks for.

    "Which Irish politician ...?" answered from a cited document whose lead says its subject
    is an Irish politician ("Ada Mary Corran (born 1970) is an Irish politician ...") is
    answered with that document's subject, its title (`described_subject`), not a span of
    its sentences (a name in another language, a body she sat in); a short answer that
    already starts with the title ("Corran Ltd") stays. "In what year ...?" answered with a
    full date gives its year. A bare span answer changes with its short answer; sentences
    stay the answer.
    """
    short = draft.short_answer
    subject = described_subject(shape, evidence, evidence.positions(draft.cited_ids))
    if subject is not None and not normalize_answer(short).startswith(normalize_answer(subject[0])):
        short = subject[0]
    elif short and _ASKS_YEAR_RE.search(shape.text):
        year = year_of(short)
        if year is not None and not _RANGE_RE.search(short) and str(year) not in shape.text:
            short = str(year)
    if short == draft.short_answer:
        return draft
    update = {"short_answer": short}
    if draft.short_answer and draft.answer == draft.short_answer:
        update["answer"] = short
    return draft.model_copy(update=update)


_ASKS_YEAR_RE = re.compile(r"\b(?:what|which)\s+year\b|\byear\s+(?:was|did|were|is)\b", re.I)


_RANGE_RE = re.compile(r"\d\s*(?:-|\u2013|to|until)\s*\d", re.I)


def span_of_kind(
    shape: QuestionShape,
    evidence: Evidence,
    draft: AnswerDraft,
    confident: list[Judged],
    rejected: frozenset[str] = frozenset(),
) -> AnswerDraft:
    """A sentence answer's short answer: the one span of the asked kind its sentences hold.

    "Which war ...?" answered with a sentence naming a war and a gas company, "what
    university" with one naming a university and a town: of the spans of the asked type
    in the answer's sentences, the one that is of the asked kind (`of_kind`: it names the
    kind, its sentence writes the kind beside it, or its own note says it is one), when
    exactly one is. The sentences stay the answer.
    """
    shown = [j.scored for j in confident if j.scored.sentence.text in draft.answer]
    text = kind_span(shape, evidence, shown, rejected)
    if text is None or normalize_answer(text) not in normalize_answer(draft.answer):
        return draft
    return draft.model_copy(update={"short_answer": counted_figure(shape.text, text)})


def kind_span(
    shape: QuestionShape,
    evidence: Evidence,
    sentences: list[ScoredSentence],
    rejected: frozenset[str] = frozenset(),
) -> str | None:
    """The one span of the asked type in `sentences` that is of the asked kind, or None."""
    kind = asked_kind(shape.text)
    if not kind:
        return None
    fitting = {
        normalize_answer(text): text
        for c in answer_candidates(shape, evidence, sentences, top=len(sentences), exclude=rejected)
        if (text := span_text(shape, evidence, c)) is not None
        if c.support.sentence.text.find(text) >= 0 or c.kind != "name"
        if not is_demonym(text) and normalize_answer(text) not in normalize_answer(shape.text)
        if of_kind(evidence, c, text, kind)
    }
    return next(iter(fitting.values())) if len(fitting) == 1 else None


def of_asked_kind(
    shape: QuestionShape,
    evidence: Evidence,
    candidate: Candidate,
    text: str,
    rejected: frozenset[str] = frozenset(),
) -> str:
    """A bare span, or the one span of its sentence of the asked kind when it is not.

    "Which printing school ...?" read from "She trained under Piet Marlowe in Saltmere at
    the Wren Works, a printing school": the town is of the asked type (a name) but not of
    the asked kind; the school is.
    """
    kind = asked_kind(shape.text)
    if not kind or of_kind(evidence, candidate, text, kind):
        return text
    return kind_span(shape, evidence, [candidate.support], rejected) or text


def with_short_span(
    shape: QuestionShape,
    evidence: Evidence,
    draft: AnswerDraft,
    best: Judged,
    asked: frozenset[str],
    rejected: frozenset[str] = frozenset(),
) -> AnswerDraft:
    """A sentence answer to a span question, with the span its sentences give.

    The sentences stay the answer (they are what a reader checks); the span they can only
    mean is its `short_answer`: the name a leading sentence gives for the document that
    answers (`bridged_name`), else the one span the best sentence gives (`sentence_span`).
    The document that span names, when held, is cited too.
    """
    link = best.scored.link
    decided = None
    if link is not None:
        decided = bridged_name(shape, evidence, link, best.scored.sentence, rejected)
    if decided is None:
        answering = frozenset(evidence.positions(draft.cited_ids))
        decided = sentence_span(
            shape, evidence, best.scored, asked, rejected, strict=False, answering=answering
        )
    if decided is None:
        return draft
    text, cited = decided
    if normalize_answer(text) not in normalize_answer(draft.answer):
        return draft
    return draft.model_copy(
        update={
            "short_answer": counted_figure(shape.text, text),
            "cited_ids": unique([*draft.cited_ids, *cited]),
        }
    )


def span_answer(
    shape: QuestionShape,
    evidence: Evidence,
    ranked: list[ScoredSentence],
    judge: Judge,
    rejected: frozenset[str],
    best: float = 0.0,
) -> AnswerDraft | None:
    """A short span whose sentence is confident enough, or None (answer with sentences).

    The likeliest span that reads as an answer must also stand on a sentence about as
    confident as the `best` one (`PARAMS.span_sentence_share`; 0 leaves it unchecked), else no
    span is sure: one read from a sentence well below it (a name from a sentence about a
    neighbouring topic) answers what that sentence is about, not the question. A candidate
    that reads as no answer ("60" of "60 kg" for a dose) is passed over first.
    """
    candidates = answer_candidates(shape, evidence, ranked, exclude=rejected)
    if not candidates and rejected:
        candidates = answer_candidates(shape, evidence, ranked)
    candidates = [
        c
        for c in candidates
        if not is_label_line(c.support.sentence.text, evidence.titles[c.support.sentence.doc])
    ]  # a heading says nothing: no span is read from it
    for candidate in candidates[: PARAMS.span_candidates]:
        judged = judge.judge(candidate.support)
        if judged.confidence < PARAMS.span_confidence:
            continue
        text = span_text(shape, evidence, candidate)
        if text is None:
            continue
        if judged.confidence < PARAMS.span_sentence_share * best:
            # The likeliest span stands on a sentence well below the best: no span is sure.
            return None
        text = of_asked_kind(shape, evidence, candidate, text, rejected)
        return AnswerDraft(
            answer=text,
            short_answer=counted_figure(shape.text, text),
            cited_ids=support_ids(evidence, candidate.support),
            rationale=f"{FROM}{candidate.support.sentence.text}",
            confidence=judged.confidence,
        )
    return None


def unambiguous_span(
    shape: QuestionShape,
    evidence: Evidence,
    best: Judged,
    asked: frozenset[str],
    rejected: frozenset[str] = frozenset(),
) -> AnswerDraft | None:
    """The span of the asked type the answering sentence holds, when it can only be that one.

    The most confident sentence answers the question but not surely enough for a span
    (`span_answer`); when it says what is asked (its asked-term overlap at least
    `PARAMS.span_overlap`: a sentence that only leads towards the answer - "the seal was cut
    by the engraver X" for "which office did the engraver hold" - names the bridge, not the
    answer) and `sentence_span` finds the one span it can only mean, that span is the
    answer, with the sentence as its cited support (and the document the span names, when
    one is held). A bridged sentence is not read this way: its spans include the link's
    subject.
    """
    if best.scored.link is not None or best.overlap < PARAMS.span_overlap:
        return None
    decided = sentence_span(shape, evidence, best.scored, asked, rejected)
    if decided is None:
        return None
    text, cited = decided
    return AnswerDraft(
        answer=text,
        short_answer=counted_figure(shape.text, text),
        cited_ids=cited,
        rationale=f"{FROM}{best.scored.sentence.text}",
        confidence=best.confidence,
    )


def person_span(
    shape: QuestionShape,
    evidence: Evidence,
    confident: list[Judged],
    asked: frozenset[str],
    rejected: frozenset[str] = frozenset(),
) -> AnswerDraft | None:
    """For a "who" question: the person the most confident sentence naming one names.

    The best sentences may say where or how the asked thing is done ("Nail surgery takes a
    90-minute slot", "... at the Marlpit Lane Clinic") and name nobody; the answer is the
    person the next confident one names (a staff table's row, "led by ..."), read as
    `sentence_span` reads it. None when the question asks for no person or none of the
    `PARAMS.max_answer_sentences` most confident sentences names one.
    """
    if asked_type(shape) != PERSON:
        return None
    for best in confident[: PARAMS.max_answer_sentences]:
        if best.scored.link is not None:
            return None  # a bridged sentence's names include the link's subject
        decided = sentence_span(shape, evidence, best.scored, asked, rejected, strict=False)
        if decided is not None:
            text, cited = decided
            return AnswerDraft(
                answer=text,
                short_answer=text,
                cited_ids=cited,
                rationale=f"{FROM}{best.scored.sentence.text}",
                confidence=best.confidence,
            )
    return None


def sentences_answer(
    evidence: Evidence,
    weights: QuestionWeights,
    ranked: list[ScoredSentence],
    confident: list[Judged],
) -> AnswerDraft:
    """The one to three most confident sentences, whole and cited, with a bridge's link."""
    best = confident[0]
    shown = [j.scored for j in confident]
    draft, _, _ = sentence_answer(
        evidence, weights, [*shown, *(s for s in ranked if s not in shown)]
    )
    if draft.answer.rstrip().endswith(":") and len(confident) > 1:
        # A label line alone ("Allergies:") says nothing: the next sentence answers.
        return sentences_answer(evidence, weights, ranked, confident[1:])
    link = best.scored.link
    if link is not None and link.doc != best.scored.sentence.doc and link.text not in draft.answer:
        # A two-document answer: the sentence that leads to the answering document first.
        draft = draft.model_copy(
            update={
                "answer": f"{link.text} {draft.answer}",
                "cited_ids": unique([evidence.ids[link.doc], *draft.cited_ids]),
            }
        )
    return draft.model_copy(update={"confidence": best.confidence})


def best_sentences(
    evidence: Evidence,
    weights: QuestionWeights,
    ranked: list[ScoredSentence],
    judged: list[Judged],
    floor: float,
) -> AnswerDraft:
    """The one to three most confident sentences (those above `floor`, else the best one)."""
    confident = [j for j in judged if j.confidence >= floor] or judged[:1]
    draft = sentences_answer(evidence, weights, ranked, confident)
    return draft.model_copy(update={"answer": plain(draft.answer)})


def in_asked_type(
    shape: QuestionShape, evidence: Evidence, draft: AnswerDraft, sentences: AnswerDraft
) -> AnswerDraft | None:
    """The draft, its bare span only when of the asked type (`asked_type`, `span_fits`).

    A bare span of another type ("Wexcombe Green" for "Which four medicines ...?", a name
    for "How big is ...?", a date for "Who can get ...?") is no answer: `sentences`, the
    best sentences, whole and cited, answer instead and the span is dropped - or, when the
    question asks for a figure, a date, a time or a contact that those sentences do not hold
    either, nothing does (None: abstain). A name for a kind the reasoner cannot type, not
    shown to be of the asked kind, is unsure: the sentences answer and the span stays their
    short answer. A sentence answer keeps its short answer unless that is of another type.
    Choices, yes/no and lists are left as they are.
    """
    short = draft.short_answer.strip()
    if not short or shape.kind in ("choice", "yesno") or shape.form == "list":
        return draft
    asked = asked_type(shape)
    read_from = draft.rationale.removeprefix(FROM) if draft.rationale.startswith(FROM) else None
    kind = asked_kind(shape.text)
    fits = span_fits(asked, short, of_asked_kind=named_as(evidence, short, read_from, kind))
    if fits is None and short.lower() in evidence.lower_case_words:
        fits = False  # a common word capitalised at a sentence start ("People") is no name
    if fits is True:
        return draft
    bare = draft.answer.strip() == short
    if not bare:
        return draft if fits is None else draft.model_copy(update={"short_answer": ""})
    if not holds_type(shape, asked, sentences.answer):
        return None
    opens = " " not in short and (read_from or "").startswith(f"{short} ")
    if fits is None and short not in sentences.answer and read_from is not None and not opens:
        # Unsure, and the best sentences do not hold it: the sentence it was read from
        # (unless it is only that sentence's capitalised first word, "People taking ...").
        return draft.model_copy(update={"answer": read_from})
    return sentences.model_copy(
        update={
            "short_answer": short if fits is None and short in sentences.answer else "",
            "confidence": draft.confidence,
        }
    )
