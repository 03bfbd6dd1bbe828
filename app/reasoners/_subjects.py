"""Whether held documents are about the subject a question names, and the one best about it.

A document is about a subject when its title names it or a sentence of its text does: two of
the subject's three terms (`PARAMS.name_match`), with a name in parentheses ("chronic
obstructive pulmonary disease (COPD)") counting as a synonym on either side. A question about
a subject nothing held is about is declined rather than answered from a document about
something else.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from prefrag.reasoners._evidence import Evidence, QuestionWeights, ScoredSentence
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._text import QuestionShape, mentions, term_set
from prefrag.reasoners._topics import CUES

_PARENTHESIS_RE = re.compile(r"\(([^()]*)\)")


def name_forms(name: str) -> list[str]:
    """A name and the synonyms it gives in parentheses: "Foo disease (FD)" -> both forms."""
    inner = [m.strip() for m in _PARENTHESIS_RE.findall(name) if m.strip()]
    outer = " ".join(_PARENTHESIS_RE.sub(" ", name).split())
    return [form for form in [outer, *inner] if term_set(form)]


def title_names(title: str, subject: str) -> bool:
    """Whether a document title names `subject` (either one's parenthesised synonyms count).

    Two of three of the subject's terms must be in the title, and they must make up at
    least `PARAMS.title_name_share` of the title (a longer title is about something wider).
    """
    for title_form in name_forms(title):
        title_terms = term_set(title_form)
        for form in name_forms(subject):
            shared = len(title_terms & term_set(form))
            if (
                shared / len(term_set(form)) >= PARAMS.name_match
                and shared / len(title_terms) >= PARAMS.title_name_share
            ):
                return True
    return False


def text_names(evidence: Evidence, doc: int, subject: str) -> bool:
    """Whether a sentence of document `doc` names `subject` (two of its three terms)."""
    forms = name_forms(subject)
    return any(
        mentions(sentence.terms, form) >= PARAMS.name_match
        for sentence in evidence.sentences
        if sentence.doc == doc
        for form in forms
    )


def documents_about(evidence: Evidence, subject: str) -> list[int]:
    """Held documents about `subject`: those whose title names it first, then by text."""
    by_title = [
        i
        for i, document in enumerate(evidence.docs)
        if title_names(str(document.metadata.get("title") or ""), subject)
    ]
    by_text = [
        i for i in range(len(evidence)) if i not in by_title and text_names(evidence, i, subject)
    ]
    return by_title + by_text


# How a declined question's aspect reads in the reason: "... says how it is inherited".
ASPECTS: dict[str, str] = {
    "inheritance": "how it is inherited",
    "frequency": "how many people it affects",
    "genetic changes": "which genetic changes are related to it",
    "symptoms": "what its symptoms are",
    "treatment": "how it is treated",
    "causes": "what causes it",
    "exams and tests": "how it is diagnosed",
    "prevention": "how it can be prevented",
    "outlook": "what its outlook is",
    "complications": "what its complications are",
    "stages": "what its stages are",
    "susceptibility": "who is at risk for it",
}


def unaddressed_aspect(shape: QuestionShape, evidence: Evidence) -> str | None:
    """The asked aspect when documents about the subject exist but none addresses it, else None.

    Only the kinds in `PARAMS.aspect_kinds` count: their cue words (`_topics.CUES`) are
    specific enough that a document never using them does not say what is asked ("Is X
    inherited?" against a page that never names an inheritance pattern). None when some
    sentence of any document about the subject holds the cue, when no document is about it
    (that is declined for another reason), or for other kinds ("What is X?").
    """
    cue = CUES.get(shape.topic)
    if cue is None or shape.topic not in PARAMS.aspect_kinds:
        return None
    about = set(documents_about(evidence, shape.subject))
    if not about:
        return None
    if any(s.doc in about and cue.search(s.text) for s in evidence.sentences):
        return None
    return ASPECTS.get(shape.topic, f"anything about its {shape.topic}")


def subject_sentences(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    ranked: Sequence[ScoredSentence],
) -> list[ScoredSentence]:
    """The ranked sentences of the one document best about the question's subject.

    Documents titled by the subject come before those only naming it; among them, the one
    whose best sentence is best supported. A sentence scores by the question's terms other
    than the subject's, plus `PARAMS.topic_cue_share` of their weight when it holds the words
    the question's kind calls for (a figure for "how many people", an inheritance pattern
    for "is X inherited"). Empty when no held
    document is about the subject.
    """
    about = documents_about(evidence, shape.subject)
    if not about:
        return []
    titled = {
        i
        for i in about
        if title_names(str(evidence.docs[i].metadata.get("title") or ""), shape.subject)
    }
    cue = CUES.get(shape.topic)
    subject_terms = term_set(shape.subject)
    # Within the subject's documents, naming the subject again says little: what the
    # question asks of it decides, plus the kind's cue words. "What is X?" asks nothing
    # else, so there the subject's terms count (part, as in titles).
    asked = frozenset(weights.weights) - subject_terms
    if asked:
        factor, cue_weight = 1.0, PARAMS.topic_cue_share * weights.of(asked)
    else:
        asked, factor = subject_terms, PARAMS.title_share
        cue_weight = PARAMS.topic_cue_share * weights.total
    boosted = []
    for scored in ranked:
        if scored.sentence.doc not in about:
            continue
        score = factor * weights.of(scored.sentence.terms & asked)
        if cue is not None and cue.search(scored.sentence.text):
            score += cue_weight
        boosted.append(ScoredSentence(scored.sentence, score, scored.covered, scored.link))
    best_doc = max(
        about,
        key=lambda d: (
            d in titled,
            max((s.score for s in boosted if s.sentence.doc == d), default=0.0),
            -about.index(d),
        ),
    )
    chosen = [s for s in boosted if s.sentence.doc == best_doc]
    if not any(s.score > 0 for s in chosen):
        # The document is about the subject but never says what is asked: its sentences
        # that best match the whole question, rather than declining a question it covers.
        chosen = [s for s in ranked if s.sentence.doc == best_doc]
    chosen.sort(key=lambda s: (-s.score, s.sentence.position))
    return chosen
