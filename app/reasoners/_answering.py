"""Answering for the extractive reasoner: a span, sentences or items, a choice or yes/no."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.documents import Document

from prefrag.documents import unique_documents
from prefrag.reasoners._checks import (
    common_word_span,
    figure_missing,
    file_name_title,
    span_out_of_sentence,
    unnamed_subject,
)
from prefrag.reasoners._confidence import ConfidenceModel, active_model, answer_features
from prefrag.reasoners._conflicts import settle
from prefrag.reasoners._evidence import (
    Candidate,
    Evidence,
    QuestionWeights,
    ScoredSentence,
    Sentence,
    answer_candidates,
    rank_sentences,
)
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._policy import (
    FROM,
    Embed,
    Judge,
    Judged,
    defers,
    negated,
    plain,
)
from prefrag.reasoners._quantities import counted_figure
from prefrag.reasoners._shapes import (
    duration_span,
    list_answer,
    listed_items,
    sentence_answer,
)
from prefrag.reasoners._spans import (
    asked_kind,
    bridged_name,
    described_subject,
    in_asked_type,
    of_kind,
    sentence_span,
    span_text,
)
from prefrag.reasoners._subjects import subject_sentences, unaddressed_aspect
from prefrag.reasoners._support import (
    observed_documents,
    subjects_of,
    support_ids,
)
from prefrag.reasoners._text import (
    QuestionShape,
    analyze_question,
    candidate_spans,
    jaccard,
    normalize_answer,
    number_of,
    split_sentences,
    stem,
    term_set,
    unique,
    year_of,
)
from prefrag.reasoners._verdicts import descriptor, is_demonym, nationalities
from prefrag.reasoners.base import (
    AnswerDraft,
    Feedback,
    ScratchpadStep,
)

_COMPARATIVE_TERMS = frozenset(
    stem(w)
    for w in "first earlier older before later younger recent more larger bigger higher "
    "taller longer greater fewer less smaller lower shorter most largest".split()
)


def answer_question(
    question: str,
    scratchpad: Sequence[ScratchpadStep],
    evidence: Sequence[Document],
    *,
    feedback: Feedback | None = None,
    embed: Embed | None = None,
    calibrated: bool = True,
) -> AnswerDraft:
    """The answer in the form its confidence allows, citing its sources, or an abstention.

    Evidence sentences are judged for the question (`_policy.Judge`); the answer stands on
    the most confident ones: a short span when asked for and sure enough, else whole
    sentences, else an abstention saying why. When held documents on one subject disagree,
    the superseded ones are set aside first (`_conflicts.settle`) and the answer says which
    document it follows. `embed` gives MiniLM vectors; without it the lexical overlap
    stands in for the similarity.
    """
    model = active_model() if calibrated else None
    draft, features = draft_with_features(
        question,
        scratchpad,
        evidence,
        feedback=feedback,
        embed=embed,
        floor=PARAMS.answer_confidence if calibrated and model is None else PARAMS.candidate_floor,
    )
    if model is None or features is None:
        return draft
    return calibrate(draft, features, model, scratchpad)


def calibrate(
    draft: AnswerDraft,
    features: dict[str, float],
    model: ConfidenceModel,
    scratchpad: Sequence[ScratchpadStep],
) -> AnswerDraft:
    """The draft with the fitted confidence: kept, shown with its sentence, or abstained.

    Below the model's answer threshold for the draft's form (one for answers holding a short
    answer - a span, a yes/no, an option - one for sentence answers) the reasoner abstains
    saying why, with the sentence
    the draft stood on as the closest evidence (never the span, verdict or option it would
    have answered); a bare span below the span threshold comes with the sentence it was
    read from (the span stays the short answer).
    """
    probability = round(model.probability(features), 4)
    threshold = model.threshold(draft)
    if probability < threshold:
        return abstention(
            scratchpad,
            f"no retrieved sentence says it surely enough (confidence {probability:.2f}, below"
            f" {threshold:.2f}); the closest evidence is"
            f" '{_quote(closest_evidence(draft))}'",
            probability,
        )
    update: dict[str, object] = {"confidence": probability}
    sentence = span_sentence(draft)
    if draft.short_answer and sentence is not None and probability < model.span_threshold:
        update["answer"] = sentence
    return draft.model_copy(update=update)


def span_sentence(draft: AnswerDraft) -> str | None:
    """The sentence a short span was read from (its "From: ..." rationale), as plain text."""
    if not draft.rationale.startswith(FROM):
        return None
    return plain(draft.rationale.removeprefix(FROM))


def closest_evidence(draft: AnswerDraft) -> str:
    """The first sentence a draft stands on, without the span, verdict or option it answers.

    A span's sentence is its rationale ("From: ..."); a yes/no or a comparison answer
    ("No. <sentence>") loses its leading verdict; any other answer is its sentences.
    """
    span_from = span_sentence(draft)
    if span_from is not None:
        text = span_from
    else:
        text = draft.answer
        short = draft.short_answer.strip()
        if short and text.lower().startswith(short.lower()):
            text = text[len(short) :].lstrip(" .:;,")
    sentences = split_sentences(text)
    return sentences[0] if sentences else text


def draft_with_features(
    question: str,
    scratchpad: Sequence[ScratchpadStep],
    evidence: Sequence[Document],
    *,
    feedback: Feedback | None = None,
    embed: Embed | None = None,
    floor: float = 0.0,
) -> tuple[AnswerDraft, dict[str, float] | None]:
    """The policy's best answer (sentences below `floor` are not used) and its features.

    The features (`_confidence.answer_features`) are None for an abstention.
    """
    shape = analyze_question(question)
    documents = unique_documents([*evidence, *observed_documents(scratchpad)])
    if not documents:
        return abstention(scratchpad, "nothing relevant was found"), None
    settled = settle(shape, documents)
    held = Evidence(settled.documents)
    weights = QuestionWeights(shape, held)
    ranked = rank_sentences(shape, held, weights)
    if shape.subject:
        # A question naming its subject is answered from a document about that subject
        # or not at all: another subject's sentences would be a confident wrong answer.
        ranked = subject_sentences(shape, held, weights, ranked)
        if not ranked:
            return abstention(scratchpad, f"nothing retrieved is about {shape.subject}"), None
        aspect = unaddressed_aspect(shape, held)
        if aspect is not None:
            # A page about the subject that never says what is asked (how it is inherited,
            # how many it affects) would be answered with its best unrelated sentences.
            reason = f"nothing retrieved about {shape.subject} says {aspect}"
            return abstention(scratchpad, reason), None
    judge = Judge(shape, held, weights, embed)
    judged = judge.rank(ranked)
    if not judged:
        reason = "no retrieved sentence is about what the question asks"
        return abstention(scratchpad, reason), None
    outcome = policy_answer(
        shape, held, weights, ranked, judged, judge, rejected_answers(feedback), floor
    )
    if isinstance(outcome, Decline):
        return abstention(scratchpad, outcome.reason, outcome.closest), None
    draft = outcome.model_copy(update={"answer": plain(outcome.answer)})
    if shape.form == "span" and shape.kind not in ("choice", "yesno"):
        draft = in_asked_form(shape, held, draft)
        sentences = best_sentences(held, weights, ranked, judged, floor)
        typed = in_asked_type(shape, held, draft, sentences)
        if typed is None:
            # A figure, date or contact is asked and neither the span nor the sentences
            # hold one of its kind.
            reason = "no retrieved sentence gives what it asks for"
            return abstention(scratchpad, reason, judged[0].confidence), None
        draft = typed
    held_up = evidence_check(judge, judged, draft, held)
    if isinstance(held_up, Decline):
        return abstention(scratchpad, held_up.reason, held_up.closest), None
    features = answer_features(judge, judged, held_up, held)
    return settled.explain(held_up), features


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


def evidence_check(
    judge: Judge, judged: list[Judged], draft: AnswerDraft, evidence: Evidence
) -> AnswerDraft | Decline:
    """The draft if what it stands on says what is asked; else its sentence, or why not.

    General checks of the evidence, not of the question's wording (`_checks`): a short
    answer that is a common word capitalised at a sentence start ("Start") is no name, so
    the sentence it was read from answers instead; an answer whose sentences, cited titles
    and lead sentences never mention a name the question gives (both subjects of a yes/no,
    each option of a comparison) is about something else, and the reasoner abstains.
    """
    name = file_name_title(draft, evidence)
    if name:
        # A file-name title read out as the answer: the name as its note writes it.
        short = draft.short_answer.strip()
        answer = name if draft.answer.strip() == short else draft.answer.replace(short, name)
        draft = draft.model_copy(update={"answer": answer, "short_answer": name})
    if name == "" or common_word_span(draft, evidence) or span_out_of_sentence(draft):
        sentence = span_sentence(draft)
        if sentence is None:
            return Decline(f"'{draft.short_answer}' is not a name", 0.0)
        draft = draft.model_copy(update={"answer": sentence, "short_answer": ""})
    if figure_missing(judge, draft):
        return Decline("no retrieved sentence gives the figure it asks for", 0.0)
    missing = unnamed_subject(judge, judged, draft, evidence)
    if missing:
        # Like "nothing retrieved is about X": the abstention is sure (confidence 1).
        return Decline(f"the sentences that say what is asked are not about {missing}", 0.0)
    return draft


@dataclass(frozen=True)
class Decline:
    """Why the evidence does not answer, and the confidence of its closest sentence."""

    reason: str
    closest: float


def policy_answer(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    ranked: list[ScoredSentence],
    judged: list[Judged],
    judge: Judge,
    rejected: frozenset[str] = frozenset(),
    floor: float = PARAMS.answer_confidence,
) -> AnswerDraft | Decline:
    """The answer the judged sentences allow, or why there is none.

    Sentences below `floor` (their hand-weighted confidence) do not answer.
    """
    if shape.kind == "choice":
        return choice_answer(shape, evidence, weights, judged, judge, floor)
    if shape.kind == "yesno":
        return yes_no_answer(shape, evidence, weights, ranked, judged, floor)
    if defers(judged[0].scored.sentence.text):
        # The closest sentence says its document does not cover what is asked.
        best = judged[0]
        return Decline(
            f"the closest retrieved sentence says '{_quote(best.scored.sentence.text)}'",
            0.0,
        )
    confident = [j for j in judged if j.confidence >= floor and not defers(j.scored.sentence.text)]
    if shape.answer_type in ("number", "date") and shape.form == "span":
        if not any(j.fits for j in judged):
            kind = "number" if shape.answer_type == "number" else "date"
            return Decline(
                f"no retrieved sentence gives the {kind} it asks for", judged[0].confidence
            )
        confident = [j for j in confident if j.fits]
    bridged = two_documents(judge, judged, floor) or subject_and_topic(judge, judged, floor)
    if bridged is not None and (not confident or bridged[2] > confident[0].confidence):
        pair = pair_answer(evidence, judged[0], *bridged)
        if shape.form == "span":
            span = pair_span(shape, evidence, pair, bridged, frozenset(judge.asked), rejected)
            if span is not None:
                return span
            return span_of_kind(shape, evidence, pair, [bridged[0], bridged[1], *judged], rejected)
        return pair
    if not confident:
        best = judged[0]
        return Decline(
            "no retrieved sentence says what is asked (the closest, "
            f"'{_quote(best.scored.sentence.text)}', has confidence {best.confidence:.2f})",
            best.confidence,
        )
    if shape.form == "span":
        span = span_answer(shape, evidence, ranked, judge, rejected)
        if span is None:
            span = unambiguous_span(shape, evidence, confident[0], frozenset(judge.asked), rejected)
        if span is not None:
            return span
    if shape.form == "list":
        listed = listing_answer(shape, evidence, confident)
        if listed is not None:
            return listed
    answer = sentences_answer(evidence, weights, ranked, confident)
    if shape.form == "span":
        answer = with_short_span(
            shape, evidence, answer, confident[0], frozenset(judge.asked), rejected
        )
        if not answer.short_answer:
            answer = span_of_kind(shape, evidence, answer, confident, rejected)
    return answer


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


def listing_answer(
    shape: QuestionShape, evidence: Evidence, confident: list[Judged]
) -> AnswerDraft | None:
    """The sentences that list what a list question asks for, whole and cited, or None.

    The deciding sentence is the most confident one enumerating two or more items ("A, B
    and C", "such as D"), when it is about as confident as the best sentence of all (else the
    best sentences answer, whole); a further sentence of its document joins it when it enumerates
    items too and is nearly as confident (a list carried over two sentences). The items
    alone are the short answer: cut out of their sentence, an item ("tremor") loses what
    qualifies it ("coarse tremor"), so the answer keeps the sentences.
    """
    question_terms = term_set(shape.text)
    listing: list[tuple[Sentence, float]] = []
    # Only a sentence about as confident as the best one decides: a list further down
    # ("oranges and pomelos contain related compounds") is not what is asked.
    floor = PARAMS.list_sentence_share * confident[0].confidence if confident else 1.0
    for judged in (j for j in confident if j.confidence >= floor):
        # A sentence reached through another ("Marrowick is a market town ...") was led to
        # by a sentence naming it; when that one lists, it is the list asked for.
        for sentence in (judged.scored.sentence, judged.scored.link):
            if sentence is not None and len(listed_items(sentence.text, question_terms)) >= 2:
                listing.append((sentence, judged.confidence))
                break
    if not listing:
        return None
    best, confidence = listing[0]
    chosen = [best]
    for other, other_confidence in listing[1:]:
        if other.doc != best.doc or other in chosen:
            continue
        if other_confidence >= PARAMS.list_sentence_share * confidence:
            chosen.append(other)
        break
    chosen.sort(key=lambda sentence: sentence.position)
    items = unique([i for c in chosen for i in listed_items(c.text, question_terms)])
    return AnswerDraft(
        answer=" ".join(c.text for c in chosen),
        short_answer=", ".join(items[:-1]) + " and " + items[-1],
        cited_ids=unique([evidence.ids[c.doc] for c in chosen]),
        rationale="Listed in: " + " ".join(c.text for c in chosen),
        confidence=confidence,
    )


def span_answer(
    shape: QuestionShape,
    evidence: Evidence,
    ranked: list[ScoredSentence],
    judge: Judge,
    rejected: frozenset[str],
) -> AnswerDraft | None:
    """A short span whose sentence is confident enough, or None (answer with sentences)."""
    candidates = answer_candidates(shape, evidence, ranked, exclude=rejected)
    if not candidates and rejected:
        candidates = answer_candidates(shape, evidence, ranked)
    for candidate in candidates[: PARAMS.span_candidates]:
        judged = judge.judge(candidate.support)
        if judged.confidence < PARAMS.span_confidence:
            continue
        text = span_text(shape, evidence, candidate)
        if text is None:
            continue
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
    about the subject (it would be her note's own sentence, not a second document).
    """
    if judge.sides or not judge.name_terms:
        return None
    top = judged[: PARAMS.pair_sentences]
    subject = [j for j in top if j.names >= 1.0 and j.overlap < 1.0]
    topic = [j for j in top if j.names == 0.0 and j.overlap >= 1.0]
    best: tuple[Judged, Judged, float] | None = None
    for first in subject:
        for second in topic:
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


def side_sentence(evidence: Evidence, judged: list[Judged], name: str) -> Judged | None:
    """The most confident judged sentence of the documents about `name`."""
    docs = set(evidence.docs_about(name))
    for item in judged:
        if item.scored.sentence.doc in docs:
            return item
    return None


def yes_no_answer(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    ranked: list[ScoredSentence],
    judged: list[Judged],
    floor: float = PARAMS.answer_confidence,
) -> AnswerDraft | Decline:
    """Yes or no with the sentences that decide it, or why the evidence does not decide."""
    subjects = subjects_of(shape)
    sides = [side_sentence(evidence, judged, s) for s in subjects] if subjects else []
    deciding = [s for s in sides if s is not None] or judged[:1]
    if subjects and len(deciding) < len(subjects):
        missing = [s for s, side in zip(subjects, sides, strict=True) if side is None]
        return Decline(f"nothing retrieved is about {missing[0]}", 0.0)
    draft = yes_no(shape, evidence, weights, ranked)
    confidence = min(j.confidence for j in deciding)
    documented = len(subjects) == 2 and all(evidence.has_document(s) for s in subjects)
    if documented and "?" not in draft.rationale and (shape.same or draft.answer == "yes"):
        # Each subject's own document gives the compared attribute (or holds the property).
        confidence = max(confidence, PARAMS.answer_confidence)
    if confidence < floor:
        return Decline(
            "no retrieved sentence says whether it is so (the closest has confidence "
            f"{confidence:.2f})",
            confidence,
        )
    verdict = draft.answer
    if not shape.same and len(deciding) == 1:
        text = deciding[0].scored.sentence.text
        property_terms = term_set(shape.property_text) - term_set(" ".join(subjects))
        states = bool(property_terms) and (
            len(property_terms & deciding[0].scored.sentence.terms) / len(property_terms)
            >= PARAMS.property_coverage
        )
        if states:
            # The sentence states the property: its own negation decides, not term coverage.
            verdict = "no" if negated(text) != negated(shape.text) else "yes"
    sentences = " ".join(unique([j.scored.sentence.text for j in deciding]))
    cited = unique([*draft.cited_ids, *(evidence.ids[j.scored.sentence.doc] for j in deciding)])
    return AnswerDraft(
        answer=f"{verdict.capitalize()}. {sentences}",
        short_answer=verdict,
        cited_ids=cited,
        rationale=draft.rationale,
        confidence=confidence,
    )


def choice_answer(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    judged: list[Judged],
    judge: Judge,
    floor: float = PARAMS.answer_confidence,
) -> AnswerDraft | Decline:
    """The chosen option with the sentence each side's attribute is read from."""
    draft, sides = choose(shape, evidence, weights, judge, judged)
    if any(side is None for side in sides.values()):
        missing = next(o for o, side in sides.items() if side is None)
        return Decline(f"nothing retrieved says anything about {missing} for this comparison", 0.0)
    chosen = [s for s in sides.values() if s is not None]
    confidence = min(s.confidence for s in chosen)
    if " vs " in draft.rationale:
        # Decided by a value read from each option's own document: as sure as a span.
        confidence = max(confidence, PARAMS.span_confidence)
    if confidence < floor:
        return Decline(
            "the retrieved sentences do not give what the options are compared by (the "
            f"weakest side has confidence {confidence:.2f})",
            confidence,
        )
    parts = []
    for option, side in sides.items():
        if side is None:
            continue
        text = side.scored.sentence.text
        parts.append(
            text if term_set(option) <= side.scored.sentence.terms else f"{option}: {text}"
        )
    cited = unique([*draft.cited_ids, *(evidence.ids[s.scored.sentence.doc] for s in chosen)])
    return AnswerDraft(
        answer=f"{draft.answer}. " + " ".join(unique(parts)),
        short_answer=draft.answer,
        cited_ids=cited,
        rationale=draft.rationale,
        confidence=confidence,
    )


def _quote(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def rejected_answers(feedback: Feedback | None) -> frozenset[str]:
    """The earlier answer an INCORRECT reflection rejected (normalised), to avoid repeating it."""
    if feedback is None or feedback.label != "INCORRECT":
        return frozenset()
    key = normalize_answer(feedback.answer)
    return frozenset({key}) if key else frozenset()


def draft_answer(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    ranked: list[ScoredSentence],
    rejected: frozenset[str] = frozenset(),
) -> tuple[AnswerDraft, float, ScoredSentence | None]:
    """The answer, its support and the sentence it came from.

    Support is the share of question weight the answer's evidence covers; the sentence
    is None for choice and yes/no answers.
    """
    if shape.kind in ("choice", "yesno"):
        subjects = subjects_of(shape)
        covered = bool(subjects) and all(evidence.has_document(s) for s in subjects)
        support = 1.0 if covered else PARAMS.weak_support
        if shape.kind == "choice":
            return (
                choose(shape, evidence, weights, Judge(shape, evidence, weights))[0],
                support,
                None,
            )
        return yes_no(shape, evidence, weights, ranked), support, None
    if shape.form == "sentences":
        return sentence_answer(evidence, weights, ranked)
    if shape.form == "list":
        listed = list_answer(shape, evidence, weights, ranked)
        return listed if listed is not None else sentence_answer(evidence, weights, ranked)
    candidates = answer_candidates(shape, evidence, ranked, exclude=rejected)
    if not candidates and rejected:
        # The rejected answer is still the only span of the expected type; a whole
        # sentence would be no better an answer.
        candidates = answer_candidates(shape, evidence, ranked)
    if candidates:
        best = candidates[0]
        text = best.text
        if shape.duration and best.kind == "number":
            text = duration_span(best.support.sentence.text, text)
        cited = support_ids(evidence, best.support)
        draft = AnswerDraft(
            answer=text, cited_ids=cited, rationale=f"{FROM}{best.support.sentence.text}"
        )
        return draft, weights.share(best.support.covered), best.support
    # No span of the expected type: the best sentence itself is the answer.
    draft, support, scored = sentence_answer(evidence, weights, ranked[:1])
    return draft, support, scored


def choose(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    judge: Judge,
    judged: list[Judged] | None = None,
) -> tuple[AnswerDraft, dict[str, Judged | None]]:
    """Pick one of the two named options, and the sentence each side is read from.

    By compared values (a date or number read from each option's documents), else by a
    nationality the question names, else by support.
    """
    options = shape.candidates
    option_terms = term_set(" ".join(options))
    docs = {o: evidence.docs_about(o) for o in options}
    judged = judged if judged is not None else judge.rank(rank_sentences(shape, evidence, weights))
    sides: dict[str, Judged | None] = {o: side_sentence(evidence, judged, o) for o in options}
    if shape.compare_by is not None and shape.direction is not None:
        values = {
            o: compared_value(shape, evidence, weights, docs[o], option_terms)
            or judged_value(shape, docs[o], judged)
            for o in options
        }
        known = {o: v for o, v in values.items() if v is not None}
        for option, value in known.items():
            sides[option] = judge.judge(_scored(weights, value[2]))
        if len(known) == 2 and len({v[0] for v in known.values()}) == 2:
            pick = (min if shape.direction == "min" else max)(known, key=lambda o: known[o][0])
            other = next(o for o in options if o != pick)
            cited = unique([evidence.ids[known[pick][1]], evidence.ids[known[other][1]]])
            draft = AnswerDraft(
                answer=pick,
                cited_ids=cited,
                rationale=f"{pick}: {known[pick][0]:g} vs {other}: {known[other][0]:g}",
            )
            return draft, sides
    written = written_option(evidence, options, judged)
    if written is not None:
        return written, sides
    # "Which band is from England, X or Y": the option whose nationality the question names.
    asked_country = nationalities(question_without(shape.text, options))
    if asked_country:
        matching = [
            o for o in options if nationalities(lead_text(evidence, docs[o])) == asked_country
        ]
        if len(matching) == 1:
            draft = AnswerDraft(
                answer=matching[0],
                cited_ids=unique([evidence.ids[d] for o in options for d in docs[o][:1]]),
                rationale=f"Only '{matching[0]}' is described as from {next(iter(asked_country))}.",
            )
            return draft, sides
    # No comparable values: the option whose documents best match the rest of the question.
    scores = {}
    for option in options:
        best, best_doc = 0.0, None
        for sentence in evidence.sentences:
            in_doc = sentence.doc in docs[option]
            if not in_doc and not term_set(option) <= sentence.terms:
                continue
            score = weights.of((sentence.terms | evidence.title_terms[sentence.doc]) - option_terms)
            if score > best:
                best, best_doc = score, sentence.doc
        scores[option] = (best, best_doc)
    pick = max(options, key=lambda o: (scores[o][0], -options.index(o)))
    cited = [evidence.ids[d] for o in options for d in docs[o][:1]]
    best_doc = scores[pick][1]
    if not cited and best_doc is not None:
        cited = [evidence.ids[best_doc]]
    draft = AnswerDraft(
        answer=pick,
        cited_ids=unique(cited),
        rationale=f"'{pick}' is the option the evidence ties best to the question.",
    )
    return draft, sides


def written_option(
    evidence: Evidence, options: Sequence[str], judged: list[Judged]
) -> AnswerDraft | None:
    """The option the best sentences write out, when the options are values, not subjects.

    "Is Tomas Vell a left-handed or right-handed pitcher?" offers two values of one
    attribute, neither the subject of a held document; the most confident sentences saying
    "a right-handed pitcher" (and never "left-handed") decide. None when both or neither
    are written, or when an option has a document of its own (then it is a subject).
    """
    if any(evidence.has_document(option) for option in options):
        return None
    top = judged[: PARAMS.pair_sentences]
    patterns = {
        o: re.compile(rf"(?<![\w-]){re.escape(o.lower())}(?![\w-])") for o in options if o.strip()
    }
    written = {
        o: [j for j in top if pattern.search(j.scored.sentence.text.lower())]
        for o, pattern in patterns.items()
    }
    found = [o for o, sentences in written.items() if sentences]
    if len(found) != 1:
        return None
    pick = found[0]
    sentence = written[pick][0].scored.sentence
    return AnswerDraft(
        answer=pick,
        cited_ids=[evidence.ids[sentence.doc]],
        rationale=f"'{pick}' is what the sentence says: {sentence.text}",
    )


def _scored(weights: QuestionWeights, sentence: Sentence) -> ScoredSentence:
    covered = sentence.terms & frozenset(weights.weights)
    return ScoredSentence(sentence, weights.of(covered), covered)


def judged_value(
    shape: QuestionShape, doc_indexes: list[int], judged: list[Judged]
) -> tuple[float, int, Sentence] | None:
    """The compared value from the most confident sentence of an option's documents."""
    for item in judged:
        sentence = item.scored.sentence
        if sentence.doc not in doc_indexes:
            continue
        for span in candidate_spans(sentence.text):
            if shape.compare_by == "date" and span.kind in ("date", "year"):
                year = year_of(span.text)
                if year is not None:
                    return float(year), sentence.doc, sentence
            if shape.compare_by == "number" and span.kind == "number":
                value = number_of(span.text)
                if value is not None:
                    return value, sentence.doc, sentence
    return None


def compared_value(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    doc_indexes: list[int],
    option_terms: frozenset[str],
) -> tuple[float, int, Sentence] | None:
    """The date (as a year) or number an option's documents give for the compared attribute."""
    lifespan = bool(re.search(r"\blived\b|\blife\b|\blifespan\b", shape.text.lower()))
    attribute = frozenset(weights.weights) - option_terms - _COMPARATIVE_TERMS
    best: tuple[float, float, int, Sentence] | None = None
    for index in doc_indexes[:2]:
        for sentence in evidence.sentences:
            if sentence.doc != index:
                continue
            spans = candidate_spans(sentence.text)
            if lifespan:
                years = [year_of(s.text) for s in spans if s.kind in ("date", "year")]
                known = [y for y in years if y is not None]
                values = [float(known[1] - known[0])] if len(known) >= 2 else []
            elif shape.compare_by == "date":
                values = [
                    float(y) for s in spans if s.kind in ("date", "year") if (y := year_of(s.text))
                ]
            else:
                # Only numbers in a sentence about the compared attribute, and not part of a name.
                if not sentence.terms & attribute:
                    continue
                values = [
                    v
                    for s in spans
                    if s.kind == "number" and not term_set(s.text) <= option_terms
                    if (v := number_of(s.text)) is not None
                ]
            if not values:
                continue
            # Earlier sentences describe the subject (birth, founding); matches break ties.
            score = weights.of(sentence.terms - option_terms) - (
                PARAMS.position_penalty * sentence.position
            )
            if best is None or score > best[0]:
                best = (score, values[0], index, sentence)
            if lifespan:
                break
    return (best[1], best[2], best[3]) if best is not None else None


def yes_no(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    ranked: Sequence[ScoredSentence],
) -> AnswerDraft:
    """Yes/no from the subjects' documents: same attribute, or the property holds for all."""
    subjects = subjects_of(shape)
    docs = {s: evidence.docs_about(s) for s in subjects}
    cited = unique([evidence.ids[d] for s in subjects for d in docs[s][:1]])
    if shape.same and len(subjects) == 2:
        attribute = shape.property_text.lower()
        if re.search(r"nationalit|country|citizen|from\b|origin", attribute):
            values = [nationalities(lead_text(evidence, docs[s])) for s in subjects]
            kind = "nationality"
            same = bool(values[0] & values[1]) if all(values) else False
        else:
            values = [attribute_values(shape, evidence, docs[s], subjects) for s in subjects]
            kind = "value"
            same = bool(values[0] & values[1])
            if not all(values):
                # No sentence of theirs says the asked attribute: compare their descriptions.
                values = [descriptor(lead_text(evidence, docs[s])) for s in subjects]
                kind = "description"
                same = (
                    jaccard(values[0], values[1]) >= PARAMS.same_description
                    if all(values)
                    else False
                )
        verdict = same != shape.negated
        shown = " vs ".join("/".join(sorted(v)) or "?" for v in values)
        return AnswerDraft(
            answer="yes" if verdict else "no",
            cited_ids=cited,
            rationale=f"Compared {kind}: {shown}.",
        )
    property_terms = term_set(shape.property_text) - term_set(" ".join(subjects))
    if not property_terms:
        property_terms = frozenset(weights.weights) - term_set(" ".join(subjects))
    coverages = []
    for subject in subjects:
        terms = frozenset().union(*(evidence.doc_terms[d] for d in docs[subject][:2]))
        coverages.append(len(property_terms & terms) / len(property_terms or {""}))
    if not subjects:
        # No subject named: does the best sentence state what the question asks?
        best = ranked[0] if ranked else None
        share = weights.share(best.covered) if best else 0.0
        coverages = [share]
        if best is not None:
            cited = [evidence.ids[best.sentence.doc]]
    verdict = bool(coverages) and min(coverages) >= PARAMS.property_coverage
    if shape.negated:
        verdict = not verdict
    return AnswerDraft(
        answer="yes" if verdict else "no",
        cited_ids=cited,
        rationale="Property terms covered per subject: " + ", ".join(f"{c:.0%}" for c in coverages),
    )


_TIME_RE = re.compile(r"\b(?:year|decade|century|date|day|month)s?\b", re.IGNORECASE)


def attribute_values(
    shape: QuestionShape, evidence: Evidence, doc_indexes: list[int], subjects: Sequence[str]
) -> frozenset[str]:
    """The values a subject's own sentence gives for what a "same ...?" question compares.

    "Were A and B born in the same town?": the sentence of A's document holding most of
    the question's other words ("born", "town") gives the places it names ("born in
    Marrowick" -> {marrowick}); for a year, decade or date the years it gives. Names of
    either subject are not values. Empty when no sentence of the subject's documents holds
    those words or gives such a value (the descriptions are compared instead).
    """
    named = term_set(" ".join(subjects))
    asked = term_set(shape.text) - named - term_set("same")
    wants_year = bool(_TIME_RE.search(shape.property_text))
    best: tuple[int, frozenset[str]] = (0, frozenset())
    for sentence in evidence.sentences:
        if sentence.doc not in doc_indexes[:2]:
            continue
        hits = len(sentence.terms & asked)
        if hits <= best[0]:
            continue
        values: set[str] = set()
        for span in candidate_spans(sentence.text):
            if term_set(span.text) & named:
                continue
            if wants_year and span.kind in ("date", "year") and (year := year_of(span.text)):
                values.add(str(year))
            elif not wants_year and span.kind == "name":
                values.add(normalize_answer(span.text))
        if values:
            best = (hits, frozenset(values))
    return best[1]


def question_without(question: str, names: Sequence[str]) -> str:
    for name in names:
        question = question.replace(name, " ")
    return question


def lead_text(evidence: Evidence, doc_indexes: list[int]) -> str:
    """The first two sentences of a subject's document, where descriptions usually are."""
    if not doc_indexes:
        return ""
    return " ".join(split_sentences(evidence.docs[doc_indexes[0]].page_content)[:2])


ABSTENTION = "The sources I could reach do not answer this"


def abstention(
    scratchpad: Sequence[ScratchpadStep], reason: str, closest: float = 0.0
) -> AnswerDraft:
    """A plain 'cannot answer' with why: the web was down, or nothing relevant was found.

    Its confidence is that of the abstention: 1 minus the `closest` evidence sentence's.
    """
    notes = " ".join(step.note for step in scratchpad).lower()
    why = [reason]
    if "web search unavailable" in notes:
        why.insert(0, "the web search was unavailable")
    answer = f"{ABSTENTION}: {' and '.join(why)}."
    return AnswerDraft(
        answer=answer, abstained=True, rationale=answer, confidence=round(1.0 - closest, 4)
    )
