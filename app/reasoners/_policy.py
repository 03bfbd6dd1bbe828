"""The answer policy: one confidence per evidence sentence, and the answer's form chosen by it.

Every answer of the extractive reasoner stands on evidence sentences. Each sentence gets one
confidence in [0, 1] for the question, from three signals:

- similarity: the bundled MiniLM cosine of the question and the sentence (prefixed with its
  document's title, which stands in for a pronoun subject);
- overlap: the share of the question's *asked* terms (its terms minus the names it gives)
  that the sentence, its title or its bridge sentence covers - "the mayor of Velmora" needs
  a sentence about a mayor, not any sentence about Velmora; for a question naming its
  subject and one kind of thing about it ("the genetic changes related to X"), a sentence
  holding that kind's cue words ("mutation", "gene") covers it; an acronym covers the words
  it stands for and the reverse ("MIU", "minor injuries unit": `_acronyms`);
- type: whether the sentence holds what the question asks for (a number for "how many",
  a year for "when", a name for "who"; a figure of the asked kind - a duration for "how
  long", a dose for "what dose", a reading for "what level" - see `_quantities`); a name
  or thing asked as "the <attribute> of X" fits only a sentence saying the attribute
  (`_attributes.said_attribute`: "antidote", or a kind's own words such as "prognosis" for
  an outlook), whatever else it says about X; other untyped questions always fit;

times how much of the names the question gives the sentence (with its title and bridge)
covers. The answer's form follows from the confidence of the sentence it stands on: a
short span only when the question asks for one and its sentence reaches
`PARAMS.span_confidence` (and `PARAMS.span_sentence_share` of the best sentence's, when that
one names the question's names itself); otherwise the one to three best whole sentences,
cited; below
`PARAMS.answer_confidence` an abstention that says why. Thresholds and weights are in
`_params.PARAMS`, chosen with `bench/calibration_curve.py` on declared tuning data.

Answers never are a title, a heading, a label line or a bare number: headings and label
lines are never evidence sentences here, a span equal to its document's title (unless the
question asks for a name) falls back to the sentence, and a figure keeps its unit and range
("6 to 8 weeks", "135/85 mmHg") or comes as its sentence. Markdown syntax is stripped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from prefrag.reasoners._acronyms import Acronyms
from prefrag.reasoners._attributes import said_attribute
from prefrag.reasoners._evidence import Evidence, QuestionWeights, ScoredSentence
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._quantities import (
    CLOCK_RE,
    FIGURE_QUALIFIER_PATTERN,
    OPEN_END_RE,
    asked_quantity,
    figure_answers,
    measure_words,
    number_position,
)
from prefrag.reasoners._relations import with_relations
from prefrag.reasoners._text import (
    QuestionShape,
    Span,
    candidate_spans,
    normalize_answer,
    term_set,
    year_of,
)
from prefrag.reasoners._topics import CUES

Embed = Callable[[list[str]], "np.ndarray | None"]
# The attribute a question asks of its subject ("antidote"), given its names' terms.
AttributeOf = Callable[[str, frozenset[str]], str]

_MARKDOWN_LINK_RE = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKDOWN_MARK_RE = re.compile(r"(\*\*|__|`+|~~)")
_MARKDOWN_EMPHASIS_RE = re.compile(r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])")
_LINE_MARK_RE = re.compile(r"(?m)^\s*(?:#{1,6}\s+|>\s*|[-*+\u2022]\s+)")
# A figure: a number, an optional range ("6 to 8", "135/85", "0.5-1"), then its unit.
_NUMBER = r"(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)"
_RANGE_RE = re.compile(rf"{_NUMBER}(?:\s*(?:to|-|\u2013|/|and|or)\s*{_NUMBER})*")
_UNIT_RE = re.compile(
    r"(?:\s*|-)(%|percent\b|per cent\b|\u00b0\s?[CF]\b"
    r"|(?:(?:square|sq\.?|cubic|nautical)\s+)?"  # "610 square km"
    r"(?:[a-zA-Z\u00b5\u03bc]+(?:/[a-zA-Z0-9]+)?)"
    r"(?:\s+(?:once|twice|three times|four times|a|per|each|every)\s+(?:a\s+)?"
    r"(?:day|daily|week|month|year|hour|dose))?)"
)
_CURRENCY = "\u00a3$\u20ac\u00a5"
# What a sum of money is per: "$12.50 a month", "\u00a340 per session".
_PER_PERIOD_RE = re.compile(
    r"\s+(?:a|an|per|each|every)\s+(?:day|week|month|year|hour|session|visit|dose|person)\b"
)
_NOT_UNITS = frozenset(
    "and or to the a an at in on of for by with from as is was are were be that which who it"
    " its this he she they his her their than then when while has have had will can may"
    " should would could".split()
)
# A sentence saying its document does not cover something, or that it is decided elsewhere.
_DEFERRAL_RE = re.compile(
    r"\b(?:does|do|did) not (?:cover|discuss|address|include|describe|give|list)\b"
    r"|\bnot covered\b|\bout(?:side)? (?:of )?(?:the |its )?scope\b"
    r"|\b(?:is|are) (?:decided|handled|managed|covered) (?:in|by|elsewhere)\b",
    re.IGNORECASE,
)
# The rationale of a short span names the sentence it was read from: "From: <sentence>".
FROM = "From: "
_NEGATION_RE = re.compile(r"\b(not|no|never|none|neither|nor|without|avoid\w*)\b|n't\b", re.I)


def plain(text: str) -> str:
    """`text` without Markdown syntax: headings, quotes, bullets, emphasis, code, links."""
    text = _MARKDOWN_LINK_RE.sub(r"\1", text)
    text = _LINE_MARK_RE.sub("", text)
    text = _MARKDOWN_MARK_RE.sub("", text)
    text = _MARKDOWN_EMPHASIS_RE.sub(r"\1", text)
    return " ".join(text.split())


def is_label_line(text: str, title: str = "") -> bool:
    """Whether a line is a title, heading or label rather than a statement.

    A heading ("# Gout", or a plain-text one in capitals without a full stop, "WARFARIN:
    BLEEDING RISKS") or the document's own title says nothing by itself. (A line ending
    in a colon, "Symptoms include:", is judged: it answers only with the lines it
    introduces, never alone.)
    """
    stripped = text.strip()
    if not stripped or stripped.startswith("#") or _SHOUTED_HEADING_RE.fullmatch(stripped):
        return True
    return bool(title) and normalize_answer(stripped) == normalize_answer(title)


# A plain-text heading: two or more words in capitals, no sentence end ("LITHIUM: LEVELS").
_SHOUTED_HEADING_RE = re.compile(r"[A-Z][A-Z0-9 :,&/()'\-]*\s[A-Z0-9 :,&/()'\-]*[A-Z0-9)]")


@dataclass(frozen=True)
class Decline:
    """Why the evidence does not answer, and the confidence of its closest sentence."""

    reason: str
    closest: float


# A note's field line: a short label, a colon, a value with no sentence end.
_FIELD_LINE_RE = re.compile(r"^([A-Z][A-Za-z][\w ./'()-]{0,28}):\s+[^.!?]{1,100}$")
_WH_RE = re.compile(r"\b(who|when|where)\b")
# Labels standing for a relation a question asks with other words (first five letters).
_LABEL_RELATIONS: tuple[tuple[str, frozenset[str]], ...] = (
    (r"phone|tel\b|mobile|fax|e-?mail|contact", frozenset({"ring", "call", "numbe", "phone"})),
    (r"address|location|venue", frozenset({"where", "addre"})),
    (r"author|written by|by\b|lead|manager|doctor|nurse|gp\b", frozenset({"who"})),
    (r"date|reviewed|updated|published|issued|written", frozenset({"when", "date"})),
)


@dataclass(frozen=True)
class Judged:
    """An evidence sentence with its signals and its confidence for the question."""

    scored: ScoredSentence
    similarity: float
    overlap: float
    fits: bool
    names: float
    base: float
    confidence: float


class Judge:
    """Confidence of evidence sentences for one question (see the module docstring)."""

    def __init__(
        self,
        shape: QuestionShape,
        evidence: Evidence,
        weights: QuestionWeights,
        embed: Embed | None = None,
        attribute_of: AttributeOf | None = None,
    ) -> None:
        self.shape = shape
        self.evidence = evidence
        self.weights = weights
        self._embed = embed
        entity_terms = frozenset().union(*(term_set(e) for e in shape.entities))
        self.name_terms = frozenset(weights.weights) & entity_terms
        # A comparison's sentences are each about one side: one side's names suffice.
        sides = shape.candidates if shape.kind in ("choice", "yesno") else ()
        self.sides = [term_set(side) for side in sides if term_set(side)]
        # Idf weights, but a word no held document uses weighs no more than the rarest one
        # that is used: it may be a synonym's place ("residents" for "population").
        seen = [evidence.weight(t) for t in weights.weights if t in evidence.all_terms]
        cap = max(seen, default=1.0)
        asked = {t: min(evidence.weight(t), cap) for t in weights.weights if t not in entity_terms}
        self.asked = asked or {t: min(evidence.weight(t), cap) for t in weights.weights}
        # A question naming its subject and one kind of thing about it ("the genetic changes
        # related to X") is met by a sentence holding that kind's cue words ("mutations").
        self.cue = CUES.get(shape.topic) if shape.subject else None
        # "How tall is X?": a sentence giving a length says "tall" with its figure.
        self.measure = term_set(measure_words(shape.text)) & frozenset(self.asked)
        # "What is the antidote for X?": a sentence that never says the asked attribute
        # (nor its kind's words) does not hold what is asked, however close it is to X.
        attribute = attribute_of(shape.text, self.name_terms) if attribute_of else ""
        self.attribute = attribute if shape.kind not in ("choice", "yesno") else ""
        # "MIU" in a note covers "minor injuries unit" in the question, and the reverse.
        self.acronyms = Acronyms.read(shape.text, evidence.text)
        self._cache: dict[tuple[int, int], Judged] = {}
        self._question_vector: np.ndarray | None = None
        self._vectors: dict[str, np.ndarray] = {}

    def _context(self, scored: ScoredSentence) -> str:
        title = self.evidence.titles[scored.sentence.doc]
        text = scored.sentence.text
        text = f"{title}: {text}" if title and title.lower() not in text.lower() else text
        # A bridged sentence is read after the sentence that leads to its document.
        return f"{scored.link.text} {text}" if scored.link is not None else text

    def prepare(self, ranked: Sequence[ScoredSentence]) -> None:
        """Embed the question and these sentences in one batch (when an embedder is given)."""
        if self._embed is None:
            return
        texts = [self._context(s) for s in ranked if self._context(s) not in self._vectors]
        try:
            vectors = self._embed([self.shape.text, *texts])
        except Exception:
            vectors = None
        if vectors is None:
            self._embed = None
            return
        self._question_vector = vectors[0]
        self._vectors.update(zip(texts, vectors[1:], strict=True))

    def vectors(self, texts: list[str]) -> np.ndarray | None:
        """MiniLM unit vectors of `texts` (words, phrases), or None without an embedder."""
        if self._embed is None or not texts:
            return None
        try:
            return self._embed(texts)
        except Exception:
            return None

    def similarity(self, scored: ScoredSentence) -> float | None:
        """MiniLM cosine of the question and the sentence, or None without an embedder."""
        if self._embed is None:
            return None
        text = self._context(scored)
        if text not in self._vectors or self._question_vector is None:
            self.prepare([scored])
        if self._question_vector is None or text not in self._vectors:
            return None
        return float(self._vectors[text] @ self._question_vector)

    def judge(self, scored: ScoredSentence) -> Judged:
        """The sentence's signals and confidence."""
        key = (scored.sentence.doc, scored.sentence.position)
        if key in self._cache and self._cache[key].scored == scored:
            return self._cache[key]
        evidence = self.evidence
        terms = scored.covered | evidence.title_terms[scored.sentence.doc] | scored.sentence.terms
        if scored.link is not None:
            terms = terms | scored.link.terms | evidence.title_terms[scored.link.doc]
        terms = self.acronyms.expand(with_relations(terms))
        if self.measure and self._holds_figure(scored.sentence.text):
            terms = terms | self.measure
        asked_total = sum(self.asked.values()) or 1.0
        overlap = sum(w for t, w in self.asked.items() if t in terms) / asked_total
        if self.cue is not None and self.cue.search(scored.sentence.text):
            overlap = 1.0
        # Names count anywhere in the sentence's document (and its bridge's): a note names
        # its patient once, then says "she".
        named = terms | evidence.doc_terms[scored.sentence.doc]
        if scored.link is not None:
            named = named | evidence.doc_terms[scored.link.doc]
        named = self.acronyms.expand(named)
        if len(self.sides) >= 2:
            names = max(len(side & named) / len(side) for side in self.sides)
        elif self.name_terms:
            names = len(self.name_terms & named) / len(self.name_terms)
        else:
            names = 1.0
        fits = self._fits(scored.sentence.text) and self._says_attribute(scored)
        cosine = self.similarity(scored)
        if cosine is not None and scored.link is not None:
            # A chained sentence is read after the sentence leading to it, which holds the
            # question's own subject: the chain is at least as close as that sentence.
            led_by = self.similarity(ScoredSentence(scored.link, 0.0, frozenset()))
            cosine = max(cosine, led_by if led_by is not None else cosine)
        if cosine is None:
            # No embedder: the lexical overlap stands in for the similarity.
            similarity = overlap
        else:
            low, high = PARAMS.similarity_floor, PARAMS.similarity_ceiling
            similarity = min(1.0, max(0.0, (cosine - low) / (high - low)))
        base = (
            PARAMS.similarity_weight * similarity
            + PARAMS.overlap_weight * overlap
            + PARAMS.type_weight * float(fits)
        )
        confidence = base * (1.0 - PARAMS.names_weight * (1.0 - names))
        judged = Judged(scored, similarity, overlap, fits, names, base, round(confidence, 4))
        self._cache[key] = judged
        return judged

    def pair(self, first: Judged, second: Judged, *, through_asked: bool = False) -> float:
        """Confidence of two sentences of two documents read together (a bridge).

        They must share a term the question does not give (the enzyme, the place that links
        them) - or, `through_asked`, a term it asks about that is not a name (the medicine
        a patient's note mentions and a topic note gives the limit of); then the overlap and
        names count over both documents, the similarity is the two sentences' mean.
        """
        a, b = first.scored, second.scored
        if a.sentence.doc == b.sentence.doc:
            return 0.0
        question_terms = frozenset(self.weights.weights)
        shared = (a.sentence.terms & b.sentence.terms) - self.name_terms
        # Through what is asked: the thing both name must be one the question asks about.
        shared = shared & frozenset(self.asked) if through_asked else shared - question_terms
        if not any(not term.isdigit() for term in shared):
            return 0.0  # a number in both ("6") links nothing
        evidence = self.evidence
        named = self.acronyms.expand(
            with_relations(evidence.doc_terms[a.sentence.doc] | evidence.doc_terms[b.sentence.doc])
        )
        asked_total = sum(self.asked.values()) or 1.0
        overlap = sum(w for t, w in self.asked.items() if t in named) / asked_total
        names = len(self.name_terms & named) / len(self.name_terms) if self.name_terms else 1.0
        similarity = (first.similarity + second.similarity) / 2
        fits = first.fits or second.fits
        base = (
            PARAMS.similarity_weight * similarity
            + PARAMS.overlap_weight * overlap
            + PARAMS.type_weight * float(fits)
        )
        return round(base * (1.0 - PARAMS.names_weight * (1.0 - names)), 4)

    def holds_asked_type(self, text: str) -> bool:
        """Whether `text` holds what the question asks for (a figure of the asked kind...)."""
        return self._fits(text)

    def _holds_figure(self, text: str) -> bool:
        """Whether `text` gives a figure, with its unit, of the kind the question asks for."""
        asked = asked_quantity(self.shape.text)
        for span in candidate_spans(text):
            shown = figure(text, span) if span.kind == "number" else None
            if shown is not None and figure_answers(asked, shown):
                return True
        return False

    def _says_attribute(self, scored: ScoredSentence) -> bool:
        """Whether a sentence, its heading or title says the asked attribute (`said_attribute`).

        Figures and dates have kinds of their own (`_fits`); a name or a thing asked as
        "the <attribute> of X" is held only by a sentence saying the attribute: written, a
        wording of its relation ("architect" for "designer") or its kind's words
        ("prognosis" for an outlook).
        """
        if not self.attribute or self.shape.answer_type in ("date", "number"):
            return True
        heading = " ".join(sorted(scored.sentence.section))
        return said_attribute(self.attribute, f"{self._context(scored)} {heading}")

    def _fits(self, text: str) -> bool:
        kind = self.shape.answer_type
        if kind == "date":
            return year_of(text) is not None or bool(
                re.search(
                    r"\b(century|centuries|\d+(st|nd|rd|th)|(?:monday|tuesday|wednesday"
                    r"|thursday|friday|saturday|sunday)s?|weeks?|days?|months?)\b",
                    text,
                    re.I,
                )
            )
        if kind == "number":
            # A figure of the asked kind: a dose does not answer "how long" (`_quantities`).
            asked = asked_quantity(self.shape.text)
            for span in candidate_spans(text):
                if span.kind == "year" and (asked is None or "age" in asked):
                    return True
                if span.kind == "number":
                    shown = figure(text, span) or span.text
                    if figure_answers(asked, shown):
                        return True
            return False
        if kind == "name":
            return any(s.kind in ("name", "quote") for s in candidate_spans(text))
        return True

    def idle_label(self, text: str) -> bool:
        """Whether `text` is a note's label line whose label does not name what is asked.

        "Reviewed: 2024-11-19" or "Address: 4 Mill Row" is a field of the note, not an
        answer to "What do we prescribe for scabies?"; it answers only a question naming its
        label ("When was it reviewed?") or the relation the label stands for ("What number
        do I ring?" for "Phone: ...").
        """
        match = _FIELD_LINE_RE.match(text.strip())
        if match is None:
            return False
        label = match.group(1).lower()
        asked = {t[:5] for t in term_set(self.shape.text)} | set(
            _WH_RE.findall(self.shape.text.lower())
        )
        named = {t[:5] for t in term_set(label)}
        for pattern, relation in _LABEL_RELATIONS:
            if re.search(pattern, label):
                named |= relation
        return not named & asked

    def rank(self, ranked: Sequence[ScoredSentence]) -> list[Judged]:
        """The statement sentences among the best-supported ones, most confident first."""
        pool = [
            s
            for s in ranked[: PARAMS.policy_sentences]
            if s.score > 0
            and not is_label_line(s.sentence.text, self.evidence.titles[s.sentence.doc])
            and not self.idle_label(s.sentence.text)
        ]
        self.prepare(pool)
        judged = [self.judge(s) for s in pool]
        judged.sort(
            key=lambda j: (-j.confidence, j.scored.sentence.doc, j.scored.sentence.position)
        )
        return judged


def figure(sentence: str, span: Span) -> str | None:
    """A number span with its range and unit ("6 to 8 weeks", "135/85 mmHg"), or None.

    None when no unit follows the number in its sentence: a bare number says nothing. A
    currency sign before it is its unit ("\u00a348,000", "$12.50 a month").
    """
    start = span.start if span.start >= 0 else number_position(sentence, span.text)
    if start < 0:
        return None
    clock = CLOCK_RE.match(sentence, start)
    if clock is not None:
        return clock.group()  # a time of day: "1 pm to 5 pm", "6:30pm"
    qualifier = re.search(rf"\b(?:{FIGURE_QUALIFIER_PATTERN})\s+$", sentence[:start], re.I)
    begin = qualifier.start() if qualifier else start
    figure_match = _RANGE_RE.match(sentence, start)
    end = figure_match.end() if figure_match else start + len(span.text)
    end = max(end, start + len(span.text))
    if start > 0 and sentence[start - 1] in _CURRENCY:
        period = _PER_PERIOD_RE.match(sentence, end)
        return sentence[start - 1 : period.end() if period else end]
    unit = _UNIT_RE.match(sentence, end)
    if unit is None or unit.group(1).lower() in _NOT_UNITS:
        # "a score of 4 or more": an open end is the figure's, unit or none.
        open_end = OPEN_END_RE.match(sentence, end)
        return sentence[start : open_end.end()] if open_end else None
    end = unit.end()
    if sentence[unit.start()] == "-":
        # "a 21-day cycle": the hyphened unit qualifies the noun after it, which says what
        # the figure measures.
        noun = _QUALIFIED_NOUN_RE.match(sentence, end)
        end = noun.end() if noun and noun.group(1).lower() not in _NOT_UNITS else end
    open_end = OPEN_END_RE.match(sentence, end)
    return sentence[begin : open_end.end() if open_end else end].strip(" ,;")


_QUALIFIED_NOUN_RE = re.compile(r"\s+([a-z][a-z-]+)\b")


def counts_asked(shape: QuestionShape) -> bool:
    """Whether the question itself names what a bare number counts ("how many residents")."""
    lowered = shape.text.lower()
    return bool(re.search(r"\bhow many \w+|\bpopulation\b|\bnumber of\b|\bhow old\b", lowered))


_QUANTITY_RE = re.compile(
    r"\b(?:how (?:many|much|long|old|far|tall|high|big|large|often|soon|deep|wide|heavy)"
    r"|when|what year|which year|dates?|years?|doses?|dosages?|levels?|targets?|ranges?"
    r"|amounts?|number|age|weight|length|height|population|size|temperature|rate|pressure"
    r"|capacity|cost|price|distance|area|depth|duration|score|count|percent(?:age)?|limit"
    r"|maximum|minimum|most|least|values?|volume|speed|strength|interval|period|time)\b",
    re.IGNORECASE,
)


def asks_quantity(shape: QuestionShape) -> bool:
    """Whether the question asks for a figure, a count or a date, so a number may answer it.

    "What is the second-choice antibiotic?" does not: a dose in its sentence ("400 mg") is
    not the antibiotic.
    """
    return shape.answer_type in ("number", "date") or bool(_QUANTITY_RE.search(shape.text))


def defers(text: str) -> bool:
    """Whether a sentence says its document does not cover a matter, or defers it elsewhere.

    An instruction ("Do not give aspirin to children.", "Check the level; do not give the
    dose") has no subject before its "do not": it says what to do, not what the note lacks.
    """
    for match in _DEFERRAL_RE.finditer(text):
        before = text[: match.start()].rstrip()
        imperative = match.group().lower().startswith("do ") and (
            not before
            or before.endswith((".", ";", ":", ",", "(", "-", "\u2013"))
            or re.search(r"\b(?:and|but|so|then|please|otherwise|if so)$", before, re.I)
        )
        if not imperative:
            return True
    return False


def negated(text: str) -> bool:
    """Whether a sentence or question holds a negation ("not", "never", "avoid", "n't")."""
    return bool(_NEGATION_RE.search(text))


__all__ = [
    "FROM",
    "Embed",
    "Judge",
    "Judged",
    "asks_quantity",
    "counts_asked",
    "figure",
    "is_label_line",
    "negated",
    "plain",
]
