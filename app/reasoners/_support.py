"""What the held evidence supports and lacks for a question: names, chains, bridges, queries."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from langchain_core.documents import Document

from prefrag.documents import unique_documents
from prefrag.reasoners._evidence import (
    Evidence,
    QuestionWeights,
    ScoredSentence,
    matched_positions,
    proximity,
    words_of,
)
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._relations import names_by_relation, relation_of
from prefrag.reasoners._text import (
    QuestionShape,
    candidate_spans,
    mentions,
    stem,
    term_set,
    unique,
    year_of,
)
from prefrag.reasoners._verdicts import is_demonym
from prefrag.reasoners.base import (
    ScratchpadStep,
)

# A question that describes an unnamed entity ("the woman who portrayed", "a film directed by
# whom") asks something of that entity: a two-hop (bridge) question.
_BRIDGE_SHAPE_RE = re.compile(
    r"\b(?:a|an|the|this|that)\s+(?:[\w'\-]+\s+){0,4}?(?:who|whom|that|which|whose|where)\b"
    r"|\b\w+ed by (?:who|whom|what|which)\b",
    re.IGNORECASE,
)
_NOISE_WORDS = frozenset(
    "what which who whom whose when where why how many much did does do is are was were "
    "name named known called the a an of in on at to for by with from and or as that this".split()
)


def observed_documents(scratchpad: Sequence[ScratchpadStep]) -> list[Document]:
    return unique_documents(d for step in scratchpad for d in step.observation)


def query_key(query: str) -> str:
    return " ".join(sorted(term_set(query)))


def subjects_of(shape: QuestionShape) -> tuple[str, ...]:
    return shape.candidates or shape.entities[:2]


def compared_names(shape: QuestionShape) -> tuple[str, ...]:
    """The entities a question compares, each needing a document of its own.

    The options of "X or Y" and the subjects of yes/no questions; for other questions the
    two names of "both X and Y" / "X and Y ... in common / the same" phrasings.
    """
    if shape.kind in ("choice", "yesno"):
        return subjects_of(shape)
    if not re.search(r"\bboth\b|\bin common\b|\bthe same\b", shape.text.lower()):
        return ()
    names = [c for c in question_constraints(shape.text) if not is_year(c)]
    return tuple(names[:2]) if len(names) >= 2 else ()


@lru_cache(maxsize=1024)
def question_constraints(question: str) -> tuple[str, ...]:
    """Names, quoted titles and years of the question: what the answer's evidence must mention.

    "X and Y" spans count as their two names when both are multi-word ("Ann Lee and
    Bo Ray Hart"), else as one title ("Pride and Joy"). Nationality adjectives, a lone
    capitalised first word ("According", "Aside") and names that are part of a longer one
    are dropped; dates count by their year.
    """
    out: list[str] = []
    for span in candidate_spans(question):
        text = span.text.strip()
        if span.kind in ("date", "year"):
            year = year_of(text)
            if year is not None:
                out.append(str(year))
            continue
        if span.kind not in ("name", "quote") or is_demonym(text):
            continue
        if not any(ch.isalpha() for ch in text):
            continue
        if span.start == 0 and " " not in text and text[1:].islower():
            continue
        parts = text.split(" and ")
        if len(parts) == 2 and all(len(p.split()) >= 2 for p in parts):
            out.extend(parts)
        else:
            out.append(text)
    names = unique(out)
    kept = []
    for name in names:
        terms = term_set(name)
        if not terms:
            continue
        if any(terms < term_set(other) for other in names if other != name):
            continue
        kept.append(name)
    return tuple(kept)


def is_year(text: str) -> bool:
    return bool(re.fullmatch(r"1[0-9]{3}|20[0-9]{2}", text))


def is_mentioned(name: str, terms: frozenset[str], text: str) -> bool:
    """Whether evidence with these terms and text names `name` (years must appear verbatim)."""
    if is_year(name):
        return bool(re.search(rf"\b{name}\b", text))
    return mentions(terms, name) >= PARAMS.name_match


def missing_for(
    shape: QuestionShape, evidence: Evidence, scored: ScoredSentence | None
) -> list[str]:
    """What the answer's evidence lacks, in the question's words.

    Compared entities without a document of their own, then the question's names and years
    absent from the answer sentence's document and the bridge document leading to it.
    """
    missing = [c for c in compared_names(shape) if not evidence.has_document(c)]
    if scored is None:
        return missing
    chain = support_chain(evidence, scored)
    terms, text = evidence.terms_of(chain), evidence.text_of(chain)
    compared = {c.lower() for c in compared_names(shape)}
    for name in question_constraints(shape.text):
        if name.lower() in compared or is_mentioned(name, terms, text):
            continue
        missing.append(name)
    return unique(missing)


def evidence_gaps(shape: QuestionShape, evidence: Evidence) -> list[str]:
    """What answering needs that no held document mentions, in the question's words.

    Compared entities without a document of their own, then the question's names and years
    that no held document names. Empty means every piece is held: a wrong answer then comes
    from reading the evidence, not from what was found.
    """
    gaps = [c for c in compared_names(shape) if not evidence.has_document(c)]
    everything = evidence.text_of(range(len(evidence)))
    for name in question_constraints(shape.text):
        if name not in gaps and not is_mentioned(name, evidence.all_terms, everything):
            gaps.append(name)
    return unique(gaps)


def fits_type(shape: QuestionShape, answer: str) -> bool:
    """Whether `answer` is of the type the question asks for (any type fits an open question)."""
    if shape.answer_type == "date":
        return year_of(answer) is not None
    if shape.answer_type == "number":
        return any(s.kind == "number" for s in candidate_spans(answer))
    if shape.answer_type == "name":
        return any(s.kind in ("name", "quote") for s in candidate_spans(answer))
    return True


def attainable_share(
    evidence: Evidence, weights: QuestionWeights, covered: frozenset[str]
) -> float:
    """Share of the question's weight `covered` accounts for, among terms the evidence has.

    Question words no held document uses ("inhabitants" for "population", a typo) cannot be
    covered by any sentence; they say nothing about whether this answer is the right one.
    """
    reachable = weights.of(evidence.all_terms)
    return weights.of(covered) / reachable if reachable > 0 else 0.0


def is_settled(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    answer: str,
    scored: ScoredSentence | None,
) -> bool:
    """Whether held evidence already answers a two-hop question: no further bridge to chase.

    The answer is a span of the asked type, its sentence is reached through a bridge (another
    held document names the answer's document), the chain names every name and year the
    question gives, and its documents cover most of the question terms the evidence has.
    """
    if shape.kind != "factoid" or shape.answer_type == "any" or scored is None:
        return False
    if scored.link is None or not fits_type(shape, answer):
        return False
    if missing_for(shape, evidence, scored):
        return False
    # The chain's documents, not just the answer's sentence: the bridge document states the
    # relation the question describes ("a promo for a movie"), the answer's the fact asked.
    covered = evidence.terms_of(support_chain(evidence, scored))
    return attainable_share(evidence, weights, covered) >= PARAMS.answer_support


def answer_is_bridge(
    shape: QuestionShape, evidence: Evidence, answer: str, scored: ScoredSentence | None
) -> bool:
    """Whether a name answer is likely the bridge entity of a two-hop question, not its answer.

    "The actress who plays X" / "a film directed by whom": the question describes an unnamed
    entity and asks something of it. A name answer that no held document is about is then
    probably that entity (found in the first hop's document), with the asked fact in its own.
    Only answers from a first-hop sentence count: one reached through a bridge is the second hop.
    """
    if shape.kind != "factoid" or not (
        _BRIDGE_SHAPE_RE.search(shape.text) or names_by_relation(shape.text)
    ):
        return False
    if scored is None or scored.link is not None:
        return False
    terms = term_set(answer)
    if not terms or not any(ch.isupper() for ch in answer) or is_year(answer.strip()):
        return False
    if terms <= term_set(shape.text):
        return False
    return not evidence.has_document(answer)


def support_chain(evidence: Evidence, scored: ScoredSentence) -> list[int]:
    """The documents supporting a sentence: its own and those leading to it.

    Those are the bridge sentence's document and any document naming its title in full.
    """
    doc = scored.sentence.doc
    chain = [doc] + ([scored.link.doc] if scored.link is not None else [])
    title_terms = evidence.title_terms[doc]
    if title_terms:
        chain += [i for i, t in enumerate(evidence.doc_terms) if i != doc and title_terms <= t]
    return unique_ints(chain)


def bridged_terms(evidence: Evidence, scored: ScoredSentence) -> frozenset[str]:
    """Terms of the sentences elsewhere that name the sentence's document (its way in)."""
    title_terms = evidence.title_terms[scored.sentence.doc]
    if not title_terms:
        return frozenset()
    found = [
        s.terms
        for s in evidence.sentences
        if s.doc != scored.sentence.doc and title_terms <= s.terms
    ]
    return frozenset().union(*found) if found else frozenset()


def unique_ints(items: Sequence[int]) -> list[int]:
    return list(dict.fromkeys(items))


def anchor_of(shape: QuestionShape) -> str:
    """The question's first name or title: the entity every sub-query should stay tied to."""
    return next((c for c in question_constraints(shape.text) if not is_year(c)), "")


def anchored(shape: QuestionShape, words: Sequence[str]) -> str:
    """A sub-query of `words` that keeps the question's anchor entity (prepended if absent)."""
    query = " ".join(words).strip()
    anchor = anchor_of(shape)
    if anchor and mentions(term_set(query), anchor) < PARAMS.name_match:
        query = f"{anchor} {query}".strip()
    return query


def support_ids(evidence: Evidence, scored: ScoredSentence) -> list[str]:
    ids = []
    if scored.link is not None:
        ids.append(evidence.ids[scored.link.doc])
    ids.append(evidence.ids[scored.sentence.doc])
    return unique(ids)


def unresolved_words(shape: QuestionShape, covered: frozenset[str]) -> list[str]:
    """Question words (original case) whose terms the given evidence does not account for."""
    out = []
    for word in words_of(shape.text):
        lowered = word.lower()
        if lowered in _NOISE_WORDS or not term_set(word):
            continue
        if stem(lowered) in covered or lowered in covered:
            continue
        out.append(word)
    return unique(out)[: PARAMS.max_query_words]


def compose_query(entity: str, shape: QuestionShape, covered: frozenset[str]) -> str:
    rest = [w for w in unresolved_words(shape, covered | term_set(entity))]
    return " ".join([entity, *rest]).strip()


def bridge_gap(
    shape: QuestionShape, evidence: Evidence, ranked: Sequence[ScoredSentence]
) -> tuple[str, frozenset[str]] | None:
    """The best name in the top sentences that the question lacks and no held document is about.

    Names score by their sentence's support, closeness to the question's words in it, and
    length (a full name says more than a nationality or an acronym). Returns the name and the
    question terms its sentence already covers.
    """
    question_terms = term_set(shape.text)
    # Relations the question names ("birthplace"): a name right after a wording of one
    # ("born in Tessaly Cross") is what the relation points to.
    relations = frozenset().union(*(relation_of(t) for t in question_terms))
    best: tuple[float, str, frozenset[str]] | None = None
    for scored in ranked[: PARAMS.bridge_sentences]:
        if scored.score <= 0:
            break
        positions = matched_positions(scored.sentence.text, scored.covered)
        stated = matched_positions(scored.sentence.text, relations) if relations else []
        for span in candidate_spans(scored.sentence.text):
            if span.kind not in ("name", "quote") or is_demonym(span.text):
                continue
            terms = term_set(span.text)
            if not terms or terms <= question_terms or about_itself(evidence, span.text):
                continue
            score = scored.score * proximity(span, positions)
            score *= 1.0 + PARAMS.bridge_length_bonus * min(len(terms), 3)
            if span.text.isupper():
                score *= PARAMS.acronym
            if any(0 < span.start - p <= PARAMS.relation_reach for p in stated):
                score *= PARAMS.relation_bridge
            if best is None or score > best[0]:
                best = (score, span.text, scored.covered)
    if best is not None:
        return best[1], best[2]
    for entity in shape.entities:
        if not evidence.covers(entity):
            return entity, frozenset()
    return None


def about_itself(evidence: Evidence, name: str) -> bool:
    """Whether a held document has `name` as its title (so its facts are already held)."""
    name_terms = term_set(name)
    return any(
        t and len(t & name_terms) / len(name_terms) >= PARAMS.name_match
        for t in evidence.title_terms
    )
