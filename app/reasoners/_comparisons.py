"""Comparisons: which of two named options, read from the sentence each side is given by.

Each option's value comes from its own note; when the options have no note each (or share
one), from the clause or table row that names each (`_option_clauses`). Lifespans are read
from life dates ("older when they died"). Both sides' figures must measure one kind of
quantity (an area against an area, durations in days): when the first readings differ
("one tablet a day" against "12 weeks"), each side is read again for a figure of one kind,
and without one the comparison is not decided.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from prefrag.reasoners._evidence import (
    Evidence,
    QuestionWeights,
    ScoredSentence,
    Sentence,
    rank_sentences,
)
from prefrag.reasoners._option_clauses import (
    clause_values,
    decided_direction,
    duration_days,
    key_words,
)
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._policy import (
    Decline,
    Judge,
    Judged,
)
from prefrag.reasoners._quantities import unit_kind
from prefrag.reasoners._relations import with_relations
from prefrag.reasoners._text import (
    QuestionShape,
    Span,
    candidate_spans,
    number_of,
    split_sentences,
    stem,
    term_set,
    unique,
    words,
    year_of,
)
from prefrag.reasoners._verdicts import nationalities
from prefrag.reasoners.base import (
    AnswerDraft,
)

_COMPARATIVE_TERMS = frozenset(
    stem(w)
    for w in "first earlier older before later younger recent more larger bigger higher "
    "taller longer greater fewer less smaller lower shorter most largest".split()
)


# What a comparative alone compares ("Which is longer, X or Y?"): the kinds of quantity
# (`_quantities.unit_kind`) a figure must measure to be the compared value.
_COMPARED_KINDS: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (re.compile(r"\b(?:longer|shorter)\b"), frozenset({"length", "duration"})),
    (re.compile(r"\b(?:taller|higher|deeper|lower|wider|narrower)\b"), frozenset({"length"})),
    (re.compile(r"\b(?:heavier|lighter)\b"), frozenset({"mass"})),
)


# A question comparing how long two people lived ("Who lived longer?", "Who was older when
# they died?"): each side's value is the span between its two life dates.
_LIFESPAN_RE = re.compile(
    r"\blived\b|\blife\b|\blifespan\b|\bwhen (?:they|he|she) died\b|\bage at death\b"
    r"|\bdied (?:older|younger)\b"
)
_SHORTER_LIFE_RE = re.compile(r"\b(?:younger|shorter|less)\b", re.IGNORECASE)


class ReadValue(NamedTuple):
    """An option's compared value, the document and sentence it was read from, its unit's kind.

    `kind` is the quantity a figure's unit measures (`_quantities.unit_kind`: "length",
    "area", "duration"...), None for a date, a lifespan or a figure without a known unit
    (a count). A duration's value is in days, so "1 week" and "5 days" compare.
    """

    value: float
    doc: int
    sentence: Sentence
    kind: str | None = None


def asks_lifespan(question: str) -> bool:
    """Whether the question compares lifespans (read from life dates)."""
    return bool(_LIFESPAN_RE.search(question.lower()))


def compared_kinds(question: str) -> frozenset[str]:
    """The kinds of quantity a comparative in the question compares, or none."""
    lowered = question.lower()
    return next(
        (kinds for pattern, kinds in _COMPARED_KINDS if pattern.search(lowered)), frozenset()
    )


def side_sentence(evidence: Evidence, judged: list[Judged], name: str) -> Judged | None:
    """The most confident judged sentence of the documents about `name`.

    In a document not titled by `name` (a table or a note on both options), a sentence that
    names it comes first: the row "methadone, ...: ECG at higher doses" is not citalopram's.
    """
    docs = set(evidence.docs_about(name))
    terms = term_set(name)
    found = [j for j in judged if j.scored.sentence.doc in docs]
    naming = [
        j
        for j in found
        if terms <= j.scored.sentence.terms or terms & evidence.title_terms[j.scored.sentence.doc]
    ]
    return naming[0] if naming else found[0] if found else None


def named_in(
    evidence: Evidence, weights: QuestionWeights, option: str, doc: int
) -> ScoredSentence | None:
    """The best-matching sentence of document `doc` that names `option`, or None."""
    terms = term_set(option)
    if terms & evidence.title_terms[doc]:
        return None
    naming = [_scored(weights, s) for s in evidence.sentences if s.doc == doc and terms <= s.terms]
    return max(naming, key=lambda scored: scored.score, default=None)


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
    if draft.abstained:
        return Decline(draft.rationale, 0.0)
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
    for option, key in zip(options, key_words(options), strict=False):
        if sides[option] is None and key:
            # No note about it ("a dog bite on the leg"): a best sentence naming its key word.
            top = judged[: PARAMS.pair_sentences]
            sides[option] = next((j for j in top if key in j.scored.sentence.terms), None)
    for option, side in sides.items():
        if side is not None and not term_set(option) <= side.scored.sentence.terms:
            # Its best sentence does not name it: a held sentence that does, if any.
            naming = named_in(evidence, weights, option, side.scored.sentence.doc)
            if naming is not None:
                sides[option] = judge.judge(naming)
    if shape.compare_by is not None and shape.direction is not None:
        values = {
            o: compared_value(shape, evidence, weights, docs[o], option_terms, option=o)
            or judged_value(shape, evidence, o, docs[o], judged)
            for o in options
        }
        known = {o: v for o, v in values.items() if v is not None}
        measures = {v.kind for v in known.values()}
        if len(known) < 2 or _one_source(docs, known) or len(measures) > 1:
            # No note of each option's own: each option's figure is read from the clause
            # or the table row that names it.
            read = _by_clauses(shape, evidence, weights, judged, option_terms)
            if read is not None:
                draft, clause_sides = read
                return draft, {**sides, **clause_sides}
        if len(known) == 2 and len(measures) > 1:
            # The figures measure different things ("one tablet a day" of one, "12 weeks"
            # of the other): each side is read again for a figure of one kind, the kind the
            # comparative compares first ("longer": a length or a duration).
            known = _same_measure(shape, evidence, weights, docs, option_terms, measures) or known
        if len(known) == 2 and len({v.kind for v in known.values()}) > 1:
            # Still no figure of one kind from each side: picking by them would be a coin
            # flip.
            said = " vs ".join(f"{o}: {v.kind or 'a count'}" for o, v in known.items())
            return _undecided(f"the options' figures measure different things ({said})"), sides
        for option, value in known.items():
            sides[option] = judge.judge(_scored(weights, value[2]))
        if len(known) == 2 and len({v[0] for v in known.values()}) == 2:
            direction = shape.direction
            if asks_lifespan(shape.text):
                # "Who was older when he died?": the longer life, not the earlier birth.
                direction = "min" if _SHORTER_LIFE_RE.search(shape.text) else "max"
            pick = (min if direction == "min" else max)(known, key=lambda o: known[o][0])
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


def _same_measure(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    docs: dict[str, list[int]],
    option_terms: frozenset[str],
    measures: set[str | None],
) -> dict[str, ReadValue]:
    """Each option's value read as a figure of one kind of quantity, or {} if none serves.

    The kinds tried are those the options' first readings gave, the comparative's own kinds
    first (`compared_kinds`).
    """
    preferred = compared_kinds(shape.text)
    for measure in sorted((m for m in measures if m), key=lambda m: m not in preferred):
        read = {
            o: compared_value(shape, evidence, weights, d, option_terms, option=o, measure=measure)
            for o, d in docs.items()
        }
        if all(v is not None for v in read.values()):
            return {o: v for o, v in read.items() if v is not None}
    return {}


def _undecided(reason: str) -> AnswerDraft:
    """A comparison the evidence cannot decide: an abstaining draft saying why."""
    return AnswerDraft(answer=f"Undecided: {reason}", abstained=True, rationale=reason)


def _one_source(docs: dict[str, list[int]], known: dict[str, ReadValue]) -> bool:
    """Whether both options' figures come from one sentence, or their best note is one."""
    sentences = {v[2] for v in known.values()}
    firsts = [tuple(d[:1]) for d in docs.values()]
    return (len(known) == 2 and len(sentences) == 1) or (bool(firsts[0]) and len(set(firsts)) == 1)


def _by_clauses(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    judged: list[Judged],
    option_terms: frozenset[str],
) -> tuple[AnswerDraft, dict[str, Judged | None]] | None:
    """The option picked by the figures the clauses naming each option give, or None."""
    attribute = frozenset(weights.weights) - option_terms - _COMPARATIVE_TERMS
    read = clause_values(shape, evidence, weights, judged, attribute, compared_kinds(shape.text))
    if len(read) < 2 or len({v.value for v in read.values()}) < 2 or shape.direction is None:
        return None
    direction = decided_direction(shape.text, shape.direction, list(read.values()))
    pick = (min if direction == "min" else max)(read, key=lambda o: read[o].value)
    other = next(o for o in read if o != pick)
    docs = [read[o].judged.scored.sentence.doc for o in (pick, other)]
    draft = AnswerDraft(
        answer=pick,
        cited_ids=unique([evidence.ids[d] for d in docs]),
        rationale=f"{pick}: {read[pick].value:g} vs {other}: {read[other].value:g}",
    )
    return draft, {o: v.judged for o, v in read.items()}


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
    shape: QuestionShape,
    evidence: Evidence,
    option: str,
    doc_indexes: list[int],
    judged: list[Judged],
) -> ReadValue | None:
    """The compared value from the most confident sentence of an option's documents.

    The sentence must name the option, or stand in a document titled by it: a figure of a
    note that only mentions the option ("The district covers 212 km\u00b2" in the district's
    note, for one of its parishes) is another thing's.
    """
    own_terms = term_set(option)
    for item in judged:
        sentence = item.scored.sentence
        if sentence.doc not in doc_indexes:
            continue
        titled = not own_terms or bool(evidence.title_terms[sentence.doc] & own_terms)
        if not titled and not own_terms <= sentence.terms:
            continue
        for span in candidate_spans(sentence.text):
            if shape.compare_by == "date" and span.kind in ("date", "year"):
                year = year_of(span.text)
                if year is not None:
                    return ReadValue(float(year), sentence.doc, sentence)
            if shape.compare_by == "number" and span.kind == "number":
                read = _figure_value(sentence.text, span)
                if read is not None:
                    return ReadValue(read[0], sentence.doc, sentence, read[1])
    return None


def _figure_value(text: str, span: Span) -> tuple[float, str | None] | None:
    """A number span's value (a duration in days) and the kind its unit measures."""
    value = number_of(span.text)
    if value is None:
        return None
    kind = unit_kind(text[span.start :])
    if kind == "duration":
        value = duration_days(value, text[span.end :])
    return value, kind


def compared_value(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    doc_indexes: list[int],
    option_terms: frozenset[str],
    *,
    option: str = "",
    measure: str | None = None,
) -> ReadValue | None:
    """The date (as a year) or number an option's documents give for the compared attribute.

    A document not titled by the `option` (one that mentions it) gives a value only in a
    sentence naming the option: "The Quenna is 74 km long" in the Quenna's page is not the
    length of the Dask, which that page also mentions; of that sentence's values the one
    written nearest the option's name comes first ("a charter of 1292, and a market held in
    the Pannier Hall, a hall of 1776": 1776). With a `measure`, only figures of that kind
    of quantity count (`_quantities.unit_kind`: "duration" reads "8 or 12 weeks", not "one
    tablet a day").
    """
    own_terms = term_set(option)
    lifespan = asks_lifespan(shape.text)
    attribute = frozenset(weights.weights) - option_terms - _COMPARATIVE_TERMS
    kinds = compared_kinds(shape.text) if not attribute else frozenset()
    head = attribute_head(shape.text)
    best: tuple[tuple[bool, bool, bool, float], tuple[float, str | None], int, Sentence] | None
    best = None
    for index in doc_indexes[:2]:
        for sentence in evidence.sentences:
            if sentence.doc != index:
                continue
            titled = not own_terms or bool(evidence.title_terms[index] & own_terms)
            names = own_terms <= sentence.terms and not _inside_longer_name(sentence.text, option)
            if not titled and not names:
                continue
            spans = candidate_spans(sentence.text)
            if not titled and not lifespan:
                spans = _nearest_first(sentence.text, option, spans)
            values: list[tuple[float, str | None]]
            if lifespan:
                years = [year_of(s.text) for s in spans if s.kind in ("date", "year")]
                known = [y for y in years if y is not None]
                values = [(float(known[1] - known[0]), None)] if len(known) >= 2 else []
            elif shape.compare_by == "date":
                dated = [s for s in spans if s.kind in ("date", "year") and year_of(s.text)]
                values = [
                    (v, None)
                    for s in by_attribute(
                        sentence.text, dated, attribute, weights, head=head, after=False
                    )
                    if (v := date_value(s.text)) is not None
                ]
            else:
                # Only numbers in a sentence about the compared attribute (or, for a bare
                # comparative, of the quantity it compares), and not part of a name.
                about = bool(with_relations(sentence.terms) & attribute)
                if not about and not kinds and measure is None:
                    continue
                numbers = _extents_first(
                    sentence.text,
                    [
                        s
                        for s in spans
                        if s.kind == "number" and not term_set(s.text) <= option_terms
                        if (
                            unit_kind(sentence.text[s.start :]) == measure
                            if measure is not None
                            else about or unit_kind(sentence.text[s.start :]) in kinds
                        )
                    ],
                )
                values = [
                    read
                    for s in by_attribute(sentence.text, numbers, attribute, weights, head=head)
                    if (read := _figure_value(sentence.text, s)) is not None
                ]
            if not values:
                continue
            # The option's own note first, then a sentence naming the whole option (not a
            # note titled by part of it: "Pellbury" for "Pellbury Corn Exchange"), then one
            # saying the attribute's head ("born" for "born first", not "the first woman");
            # earlier sentences describe the subject (birth, founding), matches break ties.
            score = (
                own_terms <= evidence.title_terms[index],
                names,
                bool(head) and head in with_relations(sentence.terms),
                weights.of(sentence.terms - option_terms)
                - PARAMS.position_penalty * sentence.position,
            )
            if best is None or score > best[0]:
                best = (score, values[0], index, sentence)
            if lifespan:
                break
    if best is None:
        return None
    return ReadValue(best[1][0], best[2], best[3], best[1][1])


def _nearest_first(text: str, option: str, spans: Sequence[Span]) -> list[Span]:
    """`spans` ordered by how near each is written to the option's name in `text`."""
    core = re.sub(r"^(?:the|a|an)\s+", "", option.strip(), flags=re.IGNORECASE)
    named = [m.span() for m in re.finditer(rf"(?<!\w){re.escape(core)}(?!\w)", text, re.I)]
    if not named:
        return list(spans)

    def distance(span: Span) -> int:
        return min(max(start - span.end, span.start - end, 0) for start, end in named)

    return sorted(spans, key=distance)


def _inside_longer_name(text: str, option: str) -> bool:
    """Whether `text` writes the option only as part of a longer name ("Drennan Gorge").

    A figure of that sentence measures the other thing (the gorge), not the option.
    """
    core = re.sub(r"^(?:the|a|an)\s+", "", option.strip(), flags=re.IGNORECASE)
    if not core[:1].isupper():
        return False
    found = list(re.finditer(rf"\b{re.escape(core)}\b", text))
    return bool(found) and all(re.match(r" [A-Z]", text[m.end() :]) for m in found)


# A figure measuring an extent ("for 41 km", "4 km long") and one giving a position ("at
# about 560 m"): a bare "longer" / "higher" compares the former.
_EXTENT_BEFORE_RE = re.compile(r"\bfor (?:about |around |some |nearly )?$")
_EXTENT_AFTER_RE = re.compile(r"^\s*[a-z]+ (?:long|high|deep|wide|tall)\b")
_POSITION_BEFORE_RE = re.compile(r"\bat (?:about |around |some )?$")


def _extents_first(text: str, spans: Sequence[Span]) -> list[Span]:
    """`spans` with extents first and positions last, in the sentence's order otherwise."""

    def rank(span: Span) -> int:
        before, after = text[: span.start], text[span.end :]
        if _EXTENT_BEFORE_RE.search(before) or _EXTENT_AFTER_RE.match(after):
            return 0
        return 2 if _POSITION_BEFORE_RE.search(before) else 1

    return sorted(spans, key=rank)


# How many words either side of a value its attribute's words are read in ("to a maximum
# of 40 mg", "2,040 residents").
_ATTRIBUTE_WINDOW = 4
_TOKEN_RE = re.compile(r"[\w'\u2019-]+")
_MONTH_NUMBERS = {
    m: k for k, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)
}


def by_attribute(
    text: str,
    spans: Sequence[Span],
    attribute: frozenset[str],
    weights: QuestionWeights,
    *,
    head: str = "",
    after: bool = True,
) -> list[Span]:
    """`spans` of `text`, those written next to the compared attribute's words first.

    "Take 10 mg every four hours, to a maximum of 40 mg": for "the larger maximum" the 40
    beside "maximum" (the attribute's `head`) is the value, not the first number. A span is
    ranked by whether the head is within `_ATTRIBUTE_WINDOW` words of it, then by the
    question weight of the attribute's words there (or their relations: "inhabitants" for
    "people"); ties keep the sentence's order. With `after` false only the words before a
    span count (a date follows what it dates: "born in 1851 ... died 1932").
    """
    if not attribute or len(spans) < 2:
        return list(spans)
    tokens = [(m.start(), m.end(), stem(m.group())) for m in _TOKEN_RE.finditer(text)]

    def score(span: Span) -> tuple[bool, float]:
        first = next((k for k, t in enumerate(tokens) if t[1] > span.start), len(tokens))
        last = next((k for k, t in enumerate(tokens) if t[0] >= span.end), len(tokens))
        near = tokens[max(0, first - _ATTRIBUTE_WINDOW) : first]
        if after:
            near += tokens[last : last + _ATTRIBUTE_WINDOW]
        said = with_relations(frozenset(t[2] for t in near))
        return bool(head) and head in said, weights.of(said & attribute)

    return sorted(spans, key=score, reverse=True)


def attribute_head(question: str) -> str:
    """The stem of the compared attribute's head word, or "".

    The last word of the phrase after the comparative ("the larger maximum", "more
    pupils"), else the word before it ("born first", "opened more recently").
    """
    clause = re.split(r"[,?;:]|\s[-\u2013\u2014]\s|\b(?:or|than)\b", question.lower())
    for part in clause:
        tokens = [(w, stem(w)) for w in words(part)]
        at = next((k for k, (_, t) in enumerate(tokens) if t in _COMPARATIVE_TERMS), None)
        if at is None:
            continue
        following = [t for w, t in tokens[at + 1 :] if term_set(w) and t not in _COMPARATIVE_TERMS]
        before = [t for w, t in tokens[:at] if term_set(w)]
        return following[-1] if following else before[-1] if before else ""
    return ""


def date_value(text: str) -> float | None:
    """A date as a year with its month and day as a fraction ("November 2025" > "May 2025")."""
    year = year_of(text)
    if year is None:
        return None
    lowered = text.lower()
    iso = re.search(r"\b\d{4}-(\d{2})-(\d{2})\b", lowered)
    if iso:
        return year + (int(iso.group(1)) - 1) / 12 + (int(iso.group(2)) - 1) / 372
    month = next((n for m, n in _MONTH_NUMBERS.items() if re.search(rf"\b{m}", lowered)), 0)
    day = re.search(r"\b(\d{1,2})(?:st|nd|rd|th)?\b(?!\d)", lowered.replace(str(year), " "))
    fraction = (month - 1) / 12 if month else 0.0
    if month and day:
        fraction += (int(day.group(1)) - 1) / 372
    return year + fraction


def question_without(question: str, names: Sequence[str]) -> str:
    for name in names:
        question = question.replace(name, " ")
    return question


def lead_text(evidence: Evidence, doc_indexes: list[int]) -> str:
    """The first two sentences of a subject's document, where descriptions usually are."""
    if not doc_indexes:
        return ""
    return " ".join(split_sentences(evidence.docs[doc_indexes[0]].page_content)[:2])
