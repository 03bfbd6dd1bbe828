"""Answering for the extractive reasoner: a span, sentences or items, a choice or yes/no."""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.documents import Document

from prefrag.documents import unique_documents
from prefrag.reasoners._conflicts import settle
from prefrag.reasoners._evidence import (
    Evidence,
    QuestionWeights,
    ScoredSentence,
    answer_candidates,
    rank_sentences,
)
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._shapes import duration_span, list_answer, sentence_answer
from prefrag.reasoners._subjects import subject_sentences, unaddressed_aspect
from prefrag.reasoners._support import (
    fits_type,
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
from prefrag.reasoners._verdicts import descriptor, nationalities
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
) -> AnswerDraft:
    """The answer in the shape the question asks for, citing its sources, or an abstention.

    When held documents on one subject disagree, the superseded ones are set aside first
    (`_conflicts.settle`) and the answer says which document it follows.
    """
    shape = analyze_question(question)
    documents = unique_documents([*evidence, *observed_documents(scratchpad)])
    if not documents:
        return abstention(scratchpad, "nothing relevant was found")
    settled = settle(shape, documents)
    held = Evidence(settled.documents)
    weights = QuestionWeights(shape, held)
    ranked = rank_sentences(shape, held, weights)
    if shape.subject:
        # A question naming its subject is answered from a document about that subject
        # or not at all: another subject's sentences would be a confident wrong answer.
        ranked = subject_sentences(shape, held, weights, ranked)
        if not ranked:
            return abstention(scratchpad, f"nothing retrieved is about {shape.subject}")
        aspect = unaddressed_aspect(shape, held)
        if aspect is not None:
            # A page about the subject that never says what is asked (how it is inherited,
            # how many it affects) would be answered with its best unrelated sentences.
            return abstention(scratchpad, f"nothing retrieved about {shape.subject} says {aspect}")
    draft, support, scored = draft_answer(shape, held, weights, ranked, rejected_answers(feedback))
    if not draft.answer.strip():
        return abstention(scratchpad, "no retrieved sentence is about what the question asks")
    if misses_focus(shape, support, scored):
        return abstention(scratchpad, f"no retrieved sentence names the {shape.focus} it asks for")
    if (
        shape.form == "span"
        and shape.answer_type == "number"
        and not fits_type(shape, draft.answer)
    ):
        # A sentence holding no number does not answer "how many" or "what dose". (A "when"
        # question may be answered by a month or a century, which is no year: not checked.)
        return abstention(scratchpad, "no retrieved sentence gives the number it asks for")
    return settled.explain(draft)


def rejected_answers(feedback: Feedback | None) -> frozenset[str]:
    """The earlier answer an INCORRECT reflection rejected (normalised), to avoid repeating it."""
    if feedback is None or feedback.label != "INCORRECT":
        return frozenset()
    key = normalize_answer(feedback.answer)
    return frozenset({key}) if key else frozenset()


def misses_focus(shape: QuestionShape, support: float, scored: ScoredSentence | None) -> bool:
    """Whether a weakly supported span comes from a sentence that never names what is asked.

    "What antidote is given for an overdose?" answered from a sentence about overdoses that
    says nothing of an antidote is a made-up answer: for a question naming no subject, with
    less than `PARAMS.answer_support` of it covered and none of its focus terms in the
    answer's sentence (or the bridge to it), the reasoner abstains instead.
    """
    if shape.form != "span" or shape.kind != "factoid" or not shape.focus or scored is None:
        return False
    if shape.entities:
        # A question about a named subject asks a category of it ("what nationality", "what
        # year"); the subject's own sentence answers without naming the category.
        return False
    if support >= PARAMS.answer_support:
        return False
    terms = scored.sentence.terms | (scored.link.terms if scored.link is not None else frozenset())
    return not terms & term_set(shape.focus)


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
            return choose(shape, evidence, weights), support, None
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
            answer=text, cited_ids=cited, rationale=f"From: {best.support.sentence.text}"
        )
        return draft, weights.share(best.support.covered), best.support
    # No span of the expected type: the best sentence itself is the answer.
    draft, support, scored = sentence_answer(evidence, weights, ranked[:1])
    return draft, support, scored


def choose(shape: QuestionShape, evidence: Evidence, weights: QuestionWeights) -> AnswerDraft:
    """Pick one of the two named options by compared values, else by support."""
    options = shape.candidates
    option_terms = term_set(" ".join(options))
    docs = {o: evidence.docs_about(o) for o in options}
    if shape.compare_by is not None and shape.direction is not None:
        values = {
            o: compared_value(shape, evidence, weights, docs[o], option_terms) for o in options
        }
        known = {o: v for o, v in values.items() if v is not None}
        if len(known) == 2 and len({v[0] for v in known.values()}) == 2:
            pick = (min if shape.direction == "min" else max)(known, key=lambda o: known[o][0])
            other = next(o for o in options if o != pick)
            cited = unique([evidence.ids[known[pick][1]], evidence.ids[known[other][1]]])
            return AnswerDraft(
                answer=pick,
                cited_ids=cited,
                rationale=f"{pick}: {known[pick][0]:g} vs {other}: {known[other][0]:g}",
            )
    # "Which band is from England, X or Y": the option whose nationality the question names.
    asked_country = nationalities(question_without(shape.text, options))
    if asked_country:
        matching = [
            o for o in options if nationalities(lead_text(evidence, docs[o])) == asked_country
        ]
        if len(matching) == 1:
            return AnswerDraft(
                answer=matching[0],
                cited_ids=unique([evidence.ids[d] for o in options for d in docs[o][:1]]),
                rationale=f"Only '{matching[0]}' is described as from {next(iter(asked_country))}.",
            )
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
    return AnswerDraft(
        answer=pick,
        cited_ids=unique(cited),
        rationale=f"'{pick}' is the option the evidence ties best to the question.",
    )


def compared_value(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    doc_indexes: list[int],
    option_terms: frozenset[str],
) -> tuple[float, int] | None:
    """The date (as a year) or number an option's documents give for the compared attribute."""
    lifespan = bool(re.search(r"\blived\b|\blife\b|\blifespan\b", shape.text.lower()))
    attribute = frozenset(weights.weights) - option_terms - _COMPARATIVE_TERMS
    best: tuple[float, float, int] | None = None
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
                best = (score, values[0], index)
            if lifespan:
                break
    return (best[1], best[2]) if best is not None else None


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
            values = [descriptor(lead_text(evidence, docs[s])) for s in subjects]
            kind = "description"
            same = (
                jaccard(values[0], values[1]) >= PARAMS.same_description if all(values) else False
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


def abstention(scratchpad: Sequence[ScratchpadStep], reason: str) -> AnswerDraft:
    """A plain 'cannot answer' with why: the web was down, or nothing relevant was found."""
    notes = " ".join(step.note for step in scratchpad).lower()
    why = [reason]
    if "web search unavailable" in notes:
        why.insert(0, "the web search was unavailable")
    answer = f"{ABSTENTION}: {' and '.join(why)}."
    return AnswerDraft(answer=answer, abstained=True, rationale=answer)
