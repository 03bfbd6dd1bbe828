"""Yes/no answers with the sentences that decide them."""

from __future__ import annotations

import re
from collections.abc import Sequence

from prefrag.reasoners._comparisons import lead_text, side_sentence
from prefrag.reasoners._evidence import (
    Evidence,
    QuestionWeights,
    ScoredSentence,
)
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._polarity import read_verdict, stated_instead
from prefrag.reasoners._policy import (
    Decline,
    Judged,
    negated,
)
from prefrag.reasoners._support import (
    subjects_of,
)
from prefrag.reasoners._text import (
    QuestionShape,
    candidate_spans,
    jaccard,
    normalize_answer,
    term_set,
    unique,
    year_of,
)
from prefrag.reasoners._verdicts import descriptor, nationalities
from prefrag.reasoners.base import (
    AnswerDraft,
)


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
        title_terms = evidence.title_terms[deciding[0].scored.sentence.doc]
        own = clause_verdict(shape, text, title_terms)
        subject_terms = title_terms | term_set(" ".join(subjects))
        read = read_verdict(shape, text, subject_terms)
        instead = stated_instead(shape, text, subject_terms)
        if instead:
            # The sentence gives the asked relation another value: "born at Quenby".
            asked, given = instead
            if not (year_of(asked) or asked in text or evidence.has_document(asked)):
                return Decline(f"the sources say '{given}', not whether that is {asked}", 0.0)
            verdict = "no"
        elif own:
            # The clause about the asked thing decides: "(fresh cheeses are fine)" inside a
            # list of things to avoid, "X at normal doses is fine, but ..." after a warning.
            verdict = own
        elif read:
            # The clause stating the asked property decides by its polarity (`_polarity`).
            verdict = read
        elif states:
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


# A clause ends at a semicolon, colon or bracket, and before "but", "except", "unless".
_CLAUSE_RE = re.compile(
    r"[;:()\[\]]|,?\s+(?=(?:but|except|unless|although|though|whereas)\b)", re.IGNORECASE
)
# A question asking whether something is allowed ("Is X ok on Y?", "Can I have X?").
_ASKS_PERMISSION = re.compile(
    r"^\s*(?:is|are)\b.*\b(?:ok|okay|safe|fine|alright|all right|allowed)\b"
    r"|^\s*(?:can|could|may)\s+(?:i|we|you|she|he|they|my|our|a|an|the|someone|people)\b",
    re.IGNORECASE,
)
# A clause allowing its subject ("cottage cheese is fine", "can be taken", "no interaction").
_PERMITS = re.compile(
    r"\b(?:(?:is|are|remains?|stays?)\s+(?:\w+\s+)?(?:fine|safe|ok|okay|allowed|suitable)"
    r"|(?:fine|safe|ok|okay)\s+(?:to|with)\b|no (?:known )?interaction|no need to (?:avoid|stop)"
    r"|can (?:be )?(?:taken|used|given|continued|take|use|have|give|continue))\b",
    re.IGNORECASE,
)


def clause_verdict(shape: QuestionShape, text: str, title_terms: frozenset[str]) -> str:
    """Yes or no from the clause of `text` about the asked thing, for a permission question.

    A sentence may warn and allow at once: "mature cheeses (fresh cheeses such as cottage
    cheese are fine)", "regular drinking raises the risk; paracetamol at normal doses is
    fine, but not more than the label says". The clause holding most of the question's
    words (its document's own subject aside) decides: "yes" when it allows, "no" when it
    is negated (`negated`); "" when the question asks no permission, the sentence is one
    clause, or that clause does neither.
    """
    if shape.negated or not _ASKS_PERMISSION.match(shape.text):
        return ""
    clauses = [c.strip(" ,.") for c in _CLAUSE_RE.split(text) if c and c.strip(" ,.")]
    if len(clauses) < 2:
        return ""
    asked = term_set(shape.text) - title_terms - term_set("ok okay safe fine allowed")
    if not asked:
        return ""
    overlaps = [len(term_set(c) & asked) for c in clauses]
    best = max(overlaps)
    if best == 0:
        return ""
    verdicts = []
    for clause, overlap in zip(clauses, overlaps, strict=True):
        if overlap < best:
            continue
        if _PERMITS.search(clause) and not re.search(r"\b(?:not|never)\b", clause, re.I):
            verdicts.append("yes")
        elif negated(clause):
            verdicts.append("no")
    return verdicts[0] if len(set(verdicts)) == 1 else ""


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
