"""Evidence scoring for the extractive reasoner: which sentences answer which part of a question.

A sentence supports a question directly (it shares the question's weighted terms) or through a
bridge: a sentence elsewhere names the document's title and covers part of the question, and
this sentence covers the rest. Scores are sums of question-term idf weights, so they compare
across sentences of one evidence set.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from langchain_core.documents import Document

from prefrag.documents import doc_id, unique_documents
from prefrag.reasoners._condense import ellipsis_part
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._record_links import Record, record_links, records_of
from prefrag.reasoners._relations import names_by_relation, relation_of, with_relations
from prefrag.reasoners._slots import conditioned_values, slot_positions, slot_share
from prefrag.reasoners._text import (
    QuestionShape,
    Span,
    candidate_spans,
    content_terms,
    idf_weights,
    listed_sentences,
    mentions,
    normalize_answer,
    stem,
    term_set,
    unseen_idf,
    words,
)
from prefrag.reasoners._verdicts import is_demonym

_TITLE_SUFFIX_RE = re.compile(r"\s*\([^)]*\)\s*$")
_ACRONYM_RE = re.compile(r"[A-Z]{2,5}s?")
# The subject of a lead sentence ends at its first verb, bracket or comma.
_LEAD_SUBJECT_RE = re.compile(r"\s(?:is|was|are|were|has|had|became)\s|\(|,|;")
_TYPE_FIT = {
    "date": {"date": 1.0, "year": 1.0},
    "number": {"number": 1.0, "year": PARAMS.year_as_number_fit},
    "name": {"name": 1.0, "quote": 1.0},
    "any": {
        "name": 1.0,
        "quote": 1.0,
        "date": PARAMS.any_type_fit,
        "year": PARAMS.any_type_fit,
        "number": PARAMS.any_type_fit,
    },
}


def without_heading(text: str, title: str) -> str:
    """`text` without a leading Markdown heading that repeats its title ("# Velmora Velmora ...").

    Indexing folds a heading line into the text after it; the heading names the document
    and states nothing, so it must not open (or become) an answer sentence.
    """
    stripped = text.lstrip()
    if not stripped.startswith("#"):
        # A plain-text title line ("Marrowick" above "Marrowick is a market town ..."):
        # the document's name on a line of its own, joined to nothing.
        first, newline, rest = stripped.partition("\n")
        if newline and rest.strip() and first.strip()[-1:] not in ".!?:" and title:
            if term_set(first) and term_set(first) == term_set(title):
                return rest
        return plain_headings(text)
    if stripped.startswith("##"):
        return stripped  # a chunk opening at a section heading: `sections` reads it
    body = stripped.lstrip("#").lstrip()
    if title and body.startswith(title):
        return body[len(title) :]
    return body


# A plain-text heading: the first line, short and unpunctuated, above a line opening with a
# capital ("Halverin and mossadine" / "Halverin raises ..."), or a line in capitals anywhere
# ("DO NOT COMBINE").
_TITLE_LINE_RE = re.compile(r"\A[ \t]*([A-Z0-9][^\n.!?:;,|]{0,59}?)[ \t]*\n(?=[ \t]*[A-Z0-9])")
_CAPITALS_LINE_RE = re.compile(r"(?m)^[ \t]*([A-Z][A-Z0-9 '&/()\u2013-]{3,79})[ \t]*$")


def plain_headings(text: str) -> str:
    """`text` with its plain-text heading lines written as Markdown section headings.

    A heading names what follows and states nothing: as a section heading it is what the
    sentences below it are about (`sections`), never the first words of one of them.
    """
    text = _TITLE_LINE_RE.sub(lambda m: f"## {m.group(1)}\n", text)
    return _CAPITALS_LINE_RE.sub(lambda m: f"## {m.group(1)}", text)


# A heading closing a chunk (its section is in the next chunk) is a heading too.
_SECTION_RE = re.compile(r"(?m)^[ \t]*#{2,6}[ \t]+([^\n]*)(?:\n|\Z)")


def sections(text: str) -> list[tuple[str, str]]:
    """`text` cut at its Markdown section headings: (heading, body) pairs, in order.

    The text before the first heading has the heading "". A sentence under "## Varenicline"
    is about varenicline as a sentence of a document is about its title.
    """
    parts = _SECTION_RE.split(text)
    pairs = [("", parts[0])]
    pairs += [(parts[i], parts[i + 1]) for i in range(1, len(parts) - 1, 2)]
    return [(heading.strip(), body) for heading, body in pairs if body.strip()]


def clean_title(title: str) -> str:
    """A document title without a trailing disambiguation ("Wink and Nod (1947 film)")."""
    return _TITLE_SUFFIX_RE.sub("", title or "").strip()


@dataclass(frozen=True)
class Sentence:
    """One sentence of one evidence document."""

    doc: int
    position: int
    text: str
    terms: frozenset[str]
    # The list (section number, list number) whose bullet, lead line or table row this is.
    block: tuple[int, int] | None = None
    # The section's heading as written ("Children 6 to 11 years").
    heading: str = ""

    @cached_property
    def section(self) -> frozenset[str]:
        """The terms of the section's heading."""
        return term_set(self.heading)


@dataclass(frozen=True)
class ScoredSentence:
    """A sentence with its support for the question and the question terms it accounts for.

    `covered` includes the terms covered by the bridge sentence when `link` is set.
    """

    sentence: Sentence
    score: float
    covered: frozenset[str]
    link: Sentence | None = None


@dataclass(frozen=True)
class Candidate:
    """A candidate answer span with its support and the sentence it came from."""

    text: str
    score: float
    support: ScoredSentence
    kind: str
    # Where the span starts in its sentence (-1: not known, or not in it, a title).
    start: int = -1


_LOWER_WORD_RE = re.compile(r"\b[a-z][a-z'-]+\b")
_CAPITAL_WORD_RE = re.compile(r"\b[A-Z][a-z'-]+\b")


class Evidence:
    """Documents split into sentences, with idf weights computed over the documents themselves."""

    def __init__(self, documents: Sequence[Document]) -> None:
        self.docs = unique_documents(documents)
        self.ids = [doc_id(d) for d in self.docs]
        self.titles = [clean_title(str(d.metadata.get("title") or "")) for d in self.docs]
        self.title_terms = [term_set(t) for t in self.titles]
        self.sentences: list[Sentence] = []
        self.doc_terms: list[frozenset[str]] = []
        for index, document in enumerate(self.docs):
            terms = set(self.title_terms[index])
            content = without_heading(document.page_content, self.titles[index])
            position = 0
            for number, (heading, body) in enumerate(sections(content)):
                section = term_set(heading)
                terms |= section
                for text, listed in listed_sentences(body):
                    block = (number, listed) if listed >= 0 else None
                    sentence = Sentence(index, position, text, term_set(text), block, heading)
                    self.sentences.append(sentence)
                    terms |= sentence.terms
                    position += 1
            self.doc_terms.append(frozenset(terms))
        self.idf = idf_weights(self.doc_terms)
        self._unseen = unseen_idf(len(self.docs))

    def __len__(self) -> int:
        return len(self.docs)

    @cached_property
    def all_terms(self) -> frozenset[str]:
        """Every content term in the evidence."""
        return frozenset().union(*self.doc_terms) if self.doc_terms else frozenset()

    @cached_property
    def text(self) -> str:
        """The documents' titles and texts, one block."""
        return "\n".join([*self.titles, *(d.page_content for d in self.docs)])

    @cached_property
    def lower_case_words(self) -> frozenset[str]:
        """Every lower-case word the documents write ("start" when a "Start" is no name)."""
        return frozenset(w for d in self.docs for w in _LOWER_WORD_RE.findall(d.page_content))

    @cached_property
    def lower_case_stems(self) -> frozenset[str]:
        """The stems of `lower_case_words` ("podiatrist" when only "podiatrists" is written)."""
        return frozenset(stem(w) for w in self.lower_case_words)

    @cached_property
    def inner_capitals(self) -> frozenset[str]:
        """Capitalised words the evidence writes inside a sentence, not only as its first word.

        A name is capitalised wherever it stands; "Welcome" or "Anyone" only at the start.
        """
        return frozenset(
            w
            for s in self.sentences
            for w in _CAPITAL_WORD_RE.findall(s.text, len(s.text.split(" ", 1)[0]))
        )

    def positions(self, ids: Sequence[str]) -> list[int]:
        """The indices of the held documents among `ids`, in their order (others skipped)."""
        return [self.ids.index(i) for i in ids if i in self.ids]

    def sentence_before(self, sentence: Sentence) -> Sentence | None:
        """The sentence before `sentence` in its document, or None for a first sentence."""
        return next(
            (
                s
                for s in self.sentences
                if s.doc == sentence.doc and s.position == sentence.position - 1
            ),
            None,
        )

    def weight(self, term: str) -> float:
        """The idf of `term`; terms absent from the evidence count as the rarest."""
        return self.idf.get(term, self._unseen)

    def docs_about(self, name: str) -> list[int]:
        """Documents about `name`: its title first, then documents naming it in full."""
        name_terms = term_set(name)
        if not name_terms:
            return []
        by_title = [i for i, t in enumerate(self.title_terms) if _names_match(t, name_terms)]
        by_text = [
            i for i, terms in enumerate(self.doc_terms) if i not in by_title and name_terms <= terms
        ]
        return by_title + by_text

    def covers(self, name: str) -> bool:
        """Whether some document is about `name` (by title) or names it in full."""
        return bool(self.docs_about(name))

    def has_document(self, name: str) -> bool:
        """Whether some document is *about* `name`: its title, or the subject of its lead.

        Stricter than `covers`: a page that mentions someone in passing says nothing about
        that person's own birth date.
        """
        name_terms = term_set(name)
        if not name_terms:
            return False
        if any(_names_match(t, name_terms) for t in self.title_terms):
            return True
        # The lead must open with the name: a lead naming it later is about something else
        # (a book named after a person, a namesake with another first name); a middle name
        # may follow.
        size = len(name_terms) + 2
        return any(
            terms and terms[0] in name_terms and name_terms <= frozenset(terms[:size])
            for terms in self._lead_subjects
        )

    @cached_property
    def _lead_subjects(self) -> list[tuple[str, ...]]:
        """Terms of each document's lead subject: its first sentence up to the first verb."""
        subjects = []
        for sentence in self.sentences:
            if sentence.position == 0:
                head = _LEAD_SUBJECT_RE.split(sentence.text, maxsplit=1)[0]
                subjects.append(content_terms(head))
        return subjects

    def terms_of(self, doc_indexes: Sequence[int]) -> frozenset[str]:
        """Every content term of the given documents (titles included)."""
        return frozenset().union(*(self.doc_terms[i] for i in doc_indexes))

    def text_of(self, doc_indexes: Sequence[int]) -> str:
        """Title and text of the given documents, joined (for exact year and number checks)."""
        return " ".join(f"{self.titles[i]} {self.docs[i].page_content}" for i in doc_indexes)


def _names_match(title_terms: frozenset[str], name_terms: frozenset[str]) -> bool:
    if not title_terms:
        return False
    shared = len(title_terms & name_terms)
    return (
        shared / len(name_terms) >= PARAMS.name_match
        and shared / len(title_terms) >= PARAMS.title_name_share
    )


class QuestionWeights:
    """Question terms weighted by idf over the evidence, names asked about counting more."""

    def __init__(self, shape: QuestionShape, evidence: Evidence) -> None:
        entity_terms = frozenset().union(*(term_set(e) for e in shape.entities))
        self.weights = {
            t: evidence.weight(t) * (PARAMS.entity_boost if t in entity_terms else 1.0)
            for t in shape.terms
        }
        self.total = sum(self.weights.values()) or 1.0

    def of(self, terms: frozenset[str]) -> float:
        """Summed weight of the question terms in `terms`.

        Summed in question order, never in set order: float addition is not associative,
        and set order varies with PYTHONHASHSEED, which would break score ties differently
        from one process to the next.
        """
        return sum(w for t, w in self.weights.items() if t in terms)

    def share(self, terms: frozenset[str]) -> float:
        """Share of the question's weight that `terms` account for."""
        return self.of(terms) / self.total


def rank_sentences(
    shape: QuestionShape, evidence: Evidence, weights: QuestionWeights
) -> list[ScoredSentence]:
    """Every evidence sentence scored by direct or bridged support, best first."""
    keys = frozenset(weights.weights)

    def match(sentence: Sentence, exclude: frozenset[str]) -> tuple[float, frozenset[str]]:
        # A relation stated in other words counts ("born in" for "birthplace").
        full = (with_relations(sentence.terms) & keys) - exclude
        context = evidence.title_terms[sentence.doc] | sentence.section
        half = (context & keys) - sentence.terms - exclude
        # A question term found only in the title or the section's heading counts part:
        # sentences often refer to their subject by pronoun ("She was named ...", "Nausea
        # is the commonest side effect" under "## Varenicline").
        return weights.of(full) + PARAMS.title_share * weights.of(half), full | half

    direct = {id(s): match(s, frozenset()) for s in evidence.sentences}
    question_terms = frozenset(shape.terms)
    links: dict[int, tuple[float, frozenset[str], Sentence]] = {}
    for index, title_terms in enumerate(evidence.title_terms):
        # A document whose title the question names is a first hop, not a bridge target.
        share = len(title_terms & question_terms) / len(title_terms) if title_terms else 1.0
        if share >= PARAMS.first_hop_title_share:
            continue
        best: tuple[float, frozenset[str], Sentence] | None = None
        for sentence in evidence.sentences:
            if sentence.doc == index or not title_terms <= sentence.terms:
                continue
            score, covered = direct[id(sentence)]
            if score > 0 and (best is None or score > best[0]):
                best = (score, covered, sentence)
        if best is not None:
            links[index] = best

    through_records = _record_bridges(evidence, question_terms, keys, weights)
    ranked = []
    for sentence in evidence.sentences:
        score, covered = direct[id(sentence)]
        scored = ScoredSentence(sentence, score, covered)
        for link in (links.get(sentence.doc), *through_records.get(id(sentence), ())):
            if link is None:
                continue
            rest, rest_covered = match(sentence, link[1])
            if rest > 0 and link[0] + rest > scored.score:
                scored = ScoredSentence(sentence, link[0] + rest, link[1] | rest_covered, link[2])
        ranked.append(scored)
    ranked.sort(key=lambda s: (-s.score, s.sentence.doc, s.sentence.position))
    return ranked


def _record_bridges(
    evidence: Evidence,
    question_terms: frozenset[str],
    keys: frozenset[str],
    weights: QuestionWeights,
) -> dict[int, list[tuple[float, frozenset[str], Sentence]]]:
    """Sentences reached through a first-hop record naming what their note is about.

    By `id` of the sentence: the record's support, the question terms it covers and the
    record as a sentence (`_record_links`). A sentence is reached when it, its heading or
    its note's title writes one of the record's bridge names.
    """
    records = [
        record
        for index, (document, title) in enumerate(zip(evidence.docs, evidence.titles, strict=True))
        for record in records_of(index, without_heading(document.page_content, title))
    ]

    def match(record: Record) -> tuple[float, frozenset[str]]:
        # As a sentence's: a question term only in the note's title counts part.
        full = with_relations(record.terms) & keys
        half = (evidence.title_terms[record.doc] & keys) - full
        return weights.of(full) + PARAMS.title_share * weights.of(half), full | half

    # A note's chunks are one note: its words count once, and it leads nowhere within.
    notes: dict[str, frozenset[str]] = {}
    for title, terms in zip(evidence.titles, evidence.doc_terms, strict=True):
        notes[title] = notes.get(title, frozenset()) | terms
    reached: dict[int, list[tuple[float, frozenset[str], Sentence]]] = {}
    for link in record_links(records, list(notes.values()), question_terms, match, weights.total):
        record = link.record
        as_sentence = Sentence(record.doc, -1, record.text, record.terms)
        for sentence in evidence.sentences:
            if evidence.titles[sentence.doc] == evidence.titles[record.doc]:
                continue
            said = sentence.terms | sentence.section | evidence.title_terms[sentence.doc]
            if link.names & said:
                reached.setdefault(id(sentence), []).append((link.score, link.covered, as_sentence))
    return reached


def answer_candidates(
    shape: QuestionShape,
    evidence: Evidence,
    ranked: Sequence[ScoredSentence],
    *,
    top: int = PARAMS.candidate_sentences,
    exclude: frozenset[str] = frozenset(),
) -> list[Candidate]:
    """Typed spans from the best sentences that the question does not already name, best first.

    `exclude` holds normalised answers to skip (e.g. one a reflection rejected).
    """
    category = asked_category(shape.text)
    # The asked category ("which river") inside a span names its type, not a repeat of
    # the question: "River Sallow" answers "on which river".
    question_terms = term_set(shape.text) - category
    question_norm = normalize_answer(shape.text)
    fits = _TYPE_FIT[shape.answer_type]
    asks_nationality = bool(re.search(r"nationalit|what country|which country", shape.text.lower()))
    # A name right after a wording of a relation the question names ("born in X" for
    # "birthplace") is what that relation points to.
    relations = (
        frozenset().union(*(relation_of(t) for t in question_terms))
        if names_by_relation(shape.text)
        else frozenset()
    )
    end_asked = asked_end(shape.text) if shape.answer_type == "date" else ""
    # A follow-up that kept the earlier question ("..., and what about for older people?")
    # asks for the value its own words point to, not the one already answered.
    follow_up = term_set(ellipsis_part(shape.text))
    pooled: dict[str, list[Candidate]] = {}
    for scored in ranked[:top]:
        if scored.score <= 0:
            break
        sentence = scored.sentence
        title_terms = evidence.title_terms[sentence.doc]
        positions = matched_positions(sentence.text, scored.covered)
        own = matched_positions(sentence.text, follow_up)
        positions = own or positions
        stated = matched_positions(sentence.text, relations) if relations else []
        spans = candidate_spans(sentence.text)
        if end_asked:
            # "(1829-1902)" after a name: born in the first year, died in the second.
            other = lifespan_ends(sentence.text, "died" if end_asked == "born" else "born")
            spans = [s for s in spans if s.start not in other]
        title = evidence.titles[sentence.doc]
        if title and normalize_answer(title) not in normalize_answer(sentence.text):
            # Sentences often name their subject by pronoun; the title stands in for it.
            spans.append(Span(title, "name", -1, -1))
        conditioned = conditioned_values(shape.text, sentence.text, spans)
        for span in spans:
            fit = fits.get(span.kind, 0.0)
            key = normalize_answer(span.text)
            if fit == 0.0 or not key or key in exclude:
                continue
            span_terms = term_set(span.text)
            if span.kind in ("number", "year", "date"):
                # Given by the question as a figure of its own ("the 4" of "4AT" is not).
                said = re.search(rf"(?<![\w.,]){re.escape(key)}(?![\w]|[.,]\d)", question_norm)
                novelty = 0.0 if said else 1.0
            else:
                novelty = 1.0 - (len(span_terms & question_terms) / len(span_terms or {""}))
            if novelty <= 0.0:
                continue
            # The subject of a bridged document is the bridge itself, rarely the answer,
            # unless the question asks for a person or thing by name.
            subject = bool(span_terms) and span_terms <= title_terms
            subject_factor = PARAMS.bridged_subject if subject and scored.link is not None else 1.0
            if subject and shape.answer_type != "name":
                subject_factor *= PARAMS.untyped_subject
            # A name that titles another held document is the way to that document (a
            # bridge); the question then asks about something that document says.
            bridge = not subject and any(
                t and span_terms and _same_name(t, span_terms)
                for i, t in enumerate(evidence.title_terms)
                if i != sentence.doc
            )
            if bridge and shape.answer_type != "name":
                subject_factor *= PARAMS.bridge_name
            if is_demonym(span.text) and not asks_nationality:
                subject_factor *= PARAMS.demonym
            if span.start < 0:
                subject_factor *= PARAMS.implicit_title
            if category and category & span_terms and span_terms - category:
                subject_factor *= PARAMS.category_match
            if any(0 < span.start - p <= PARAMS.relation_reach for p in stated):
                subject_factor *= PARAMS.relation_bridge
            if _ACRONYM_RE.fullmatch(span.text):
                # Short acronyms ("SEC", "IMD") are usually asides, not answers.
                subject_factor *= PARAMS.acronym
            # Of several values of its kind, the one whose own slot the question's words
            # are in ("shut down in 1931", not "started in 1788", for "when did it shut").
            near = slot_positions(sentence.text, span, spans, positions)
            subject_factor *= 1.0 + PARAMS.slot_bonus * slot_share(
                sentence.text, span, spans, positions
            )
            if span.kind == "number" and span.start in conditioned:
                # "... if creatinine clearance is 20": the value of the clause holding 20
                # (not the usual one, when another clause names the case asked).
                meets = conditioned[span.start]
                subject_factor *= PARAMS.condition_match if meets else PARAMS.condition_miss
            score = scored.score * fit * novelty * subject_factor * proximity(span, near)
            candidate = Candidate(span.text, score, scored, span.kind, span.start)
            pooled.setdefault(key, []).append(candidate)
    candidates = []
    for group in pooled.values():
        group.sort(key=lambda c: -c.score)
        bonus = PARAMS.repeat_bonus * sum(c.score for c in group[1:])
        best = group[0]
        candidates.append(
            Candidate(best.text, best.score + bonus, best.support, best.kind, best.start)
        )
    candidates.sort(key=lambda c: (-c.score, c.support.sentence.doc, c.text))
    return candidates


# A life's span in brackets after a name: "(1829-1902)", "(c. 1820 - 1870)", "(4 May 1901 -
# 3 June 1980)"; the first date is the birth, the second the death.
_LIFESPAN_RE = re.compile(
    r"\((?:born |b\. |c\. )?(?P<born>[^()\-\u2013]*?\b\d{3,4})\s*[-\u2013\u2014]\s*"
    r"(?:died |d\. )?(?P<died>[^()]*?\b\d{3,4})\)"
)
_BORN_RE = re.compile(r"\b(?:born|birth|birthday)\b", re.IGNORECASE)
_DIED_RE = re.compile(r"\b(?:died|die|death|dead)\b", re.IGNORECASE)


def asked_end(question: str) -> str:
    """Which end of a life a date question asks for: "born", "died" or ""."""
    born, died = bool(_BORN_RE.search(question)), bool(_DIED_RE.search(question))
    return "born" if born and not died else "died" if died and not born else ""


def lifespan_ends(text: str, end: str) -> frozenset[int]:
    """Start offsets of the dates at one end ("born" or "died") of lifespans in `text`."""
    return frozenset(m.start(end) for m in _LIFESPAN_RE.finditer(text))


_CATEGORY_RE = re.compile(r"\b(?:which|what)\s+([a-z][a-z\-]+)\b")
_NOT_CATEGORIES = frozenset(
    "is are was were does do did has have had can could should would will may might must kind"
    " type sort".split()
)


def asked_category(question: str) -> frozenset[str]:
    """The category noun of a "which X" question ("river", "antidepressant"), as terms."""
    match = _CATEGORY_RE.search(question.lower())
    if match is None or match.group(1) in _NOT_CATEGORIES:
        return frozenset()
    return term_set(match.group(1))


def titled_documents(evidence: Evidence, span: str, doc: int) -> list[int]:
    """The held documents other than `doc` whose title is the name `span` (bridges).

    "... a song by English musician Ada Corran" in one document, and a held document titled
    "Ada Corran": the name is the way to that document, and may be what is asked.
    """
    span_terms = term_set(span)
    if not span_terms:
        return []
    return [
        i
        for i, title in enumerate(evidence.title_terms)
        if i != doc and title and _same_name(title, span_terms)
    ]


def same_name(title: str, span: str) -> bool:
    """Whether `span` names what `title` names, written otherwise ("Ada Mary Corran")."""
    return _same_name(term_set(title), term_set(span))


def _same_name(title_terms: frozenset[str], span_terms: frozenset[str]) -> bool:
    shared = len(title_terms & span_terms)
    return (
        shared / len(title_terms) >= PARAMS.name_match
        and shared / len(span_terms) >= PARAMS.name_match
    )


def matched_positions(text: str, covered: frozenset[str]) -> list[int]:
    """Character offsets of the words of `text` whose stems are covered question terms."""
    positions = []
    for match in re.finditer(r"[^\W_]+", text):
        terms = content_terms(match.group())
        if terms and (terms[0] in covered or relation_of(terms[0]) & covered):
            positions.append(match.start())
    return positions


def proximity(span: Span, positions: Sequence[int]) -> float:
    """1.0 to 1.0 + `proximity_bonus`: spans close to the question's words are likelier answers.

    `positions` are the character offsets of the question's words in the span's sentence
    (`matched_positions`); the bonus halves at `proximity_scale` characters away. The one
    proximity formula of the reasoner: answer spans and bridge names both use it.
    """
    if not positions or span.start < 0:
        return 1.0
    distance = min(abs(p - span.start) for p in positions)
    return 1.0 + PARAMS.proximity_bonus / (1.0 + distance / PARAMS.proximity_scale)


def words_of(text: str) -> list[str]:
    """Original-case words of `text` (for building readable sub-queries)."""
    return re.findall(r"[^\W_]+(?:['\u2019][^\W_]+)*", text)


__all__ = [
    "Candidate",
    "Evidence",
    "QuestionWeights",
    "ScoredSentence",
    "Sentence",
    "answer_candidates",
    "clean_title",
    "matched_positions",
    "mentions",
    "proximity",
    "rank_sentences",
    "same_name",
    "titled_documents",
    "words",
    "words_of",
]
