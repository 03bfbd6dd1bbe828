"""Evidence checks on a drafted answer: does what it stands on say what the question asks?

General checks of the evidence an answer stands on, not rules about a question's wording;
`_answering.evidence_check` applies them to every drafted answer:

- a short answer must be of the asked type: not a common word capitalised at a sentence
  start ("Start"), not a document's title standing in for its sentence's subject ("Gout:
  clinic notes"); either way the sentence it was read from answers instead;
- a question asking "how soon / how long / how many / what dose" needs a figure;
- what the answer stands on must mention what the question is about: its names (both
  subjects of a yes/no, each option of a comparison) and the held documents' titles it
  names.

Each was decided on the `tune` half of bench/tuning and checked on HotpotQA items 1-200
(docs/answers.md, "Evidence checks").
"""

from __future__ import annotations

import re

from prefrag.reasoners._evidence import Evidence
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._policy import FROM, Judge, Judged
from prefrag.reasoners._text import term_set
from prefrag.reasoners._verdicts import is_demonym
from prefrag.reasoners.base import AnswerDraft


def _lead_terms(evidence: Evidence, doc: int, count: int = 2) -> frozenset[str]:
    lead = [s for s in evidence.sentences if s.doc == doc][:count]
    return frozenset().union(*(s.terms for s in lead)) if lead else frozenset()


def common_word_span(draft: AnswerDraft, evidence: Evidence) -> bool:
    """Whether the short answer is a common word capitalised at a sentence start.

    One capitalised word the evidence also writes in lower case ("Start", "People",
    "Check") is a sentence's first word, not a name.
    """
    short = draft.short_answer.strip()
    if not short or " " in short or not short[:1].isupper() or not short.isalpha():
        return False
    return short.lower() in evidence.lower_case_words


_FUNCTION_WORDS = frozenset(
    "a an and the of in on at for to by with from or de la le van von".split()
)


def name_like(text: str) -> bool:
    """Whether every word of `text` but function words starts with a capital or a digit."""
    tokens = re.findall(r"[\w'-]+", text)
    return bool(tokens) and all(
        t[:1].isupper() or t[:1].isdigit() or t.lower() in _FUNCTION_WORDS for t in tokens
    )


def span_out_of_sentence(draft: AnswerDraft) -> bool:
    """Whether a short answer is a heading, not a name, and not in the sentence it came from.

    A document's title standing in for its sentence's subject ("Gout: clinic notes" for
    "Offer allopurinol to anyone with ...") says nothing the sentence does not say better.
    A heading has a colon, or lower-case words after a capitalised first one; a name
    ("Salt Hall") or a file's name ("tobias-wrenfield") has neither.
    """
    short = draft.short_answer.strip()
    if not short or not draft.rationale.startswith(FROM):
        return False
    if short.lower() in draft.rationale.removeprefix(FROM).lower():
        return False
    heading = ":" in short or (short[:1].isupper() and not name_like(short))
    return heading


_FILE_STEM = re.compile(r"[a-z0-9]+(?:[-_.][a-z0-9]+)+")


def file_name_title(draft: AnswerDraft, evidence: Evidence) -> str | None:
    """The name a file-name title ("wenna-carrow") stands for, when it is the short answer.

    A note without a heading is titled by its file's name; that title stands in for "she"
    or "it" in the note's sentences and can be read out as a span, but a file name is no
    answer. Returns the name as the note writes it ("Wenna Carrow"), "" when the note never
    writes it capitalised (the sentence must answer instead), None when the short answer is
    no file-name title.
    """
    short = draft.short_answer.strip()
    if not _FILE_STEM.fullmatch(short) or short not in evidence.titles:
        return None
    document = evidence.docs[evidence.titles.index(short)].page_content
    words = re.split(r"[-_.]", short)
    written = re.compile(
        r"(?<![\w-])" + r"[\s-]+".join(re.escape(w) for w in words) + r"(?![\w-])", re.I
    )
    for match in written.finditer(document):
        parts = re.split(r"[\s-]+", match.group())
        if all(part[:1].isupper() or part[:1].isdigit() for part in parts):
            return match.group()
    return ""


_ASKS_FIGURE = re.compile(
    r"^\s*(?:how (?:soon|long|many|much|often|far|old|deep|high|tall|heavy)|what dose)\b", re.I
)
_FIGURE = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty"
    r"|forty|fifty|hundred|thousand|million|half|quarter|once|twice|daily|weekly|monthly"
    r"|yearly|annually|immediately)\b",
    re.I,
)


def figure_missing(judge: Judge, draft: AnswerDraft) -> bool:
    """Whether a question asking "how soon / how many / what dose" gets no figure at all."""
    return bool(_ASKS_FIGURE.match(judge.shape.text)) and not _FIGURE.search(draft.answer)


def _incidental(name: str, common: frozenset[str]) -> bool:
    """Whether a capitalised question span is not a subject to find in the answer.

    An acronym ("UTI": notes spell it out), a figure or ordinal ("The 2011", "11th Album"),
    a nationality ("Australian") or one common word capitalised at a sentence start
    ("Aside"); `subjects` also leaves out a one-word span opening the question
    ("Considered").
    """
    if re.fullmatch(r"[A-Z0-9]{2,6}s?", name) or any(ch.isdigit() for ch in name):
        return True
    if is_demonym(name):
        return True
    return " " not in name.strip() and name.strip().lower() in common


def subjects(judge: Judge, evidence: Evidence) -> list[tuple[str, frozenset[str]]]:
    """What the question is about: its names, and the held documents' titles it names.

    Each is (how to say it, its terms). Comparisons and yes/no questions give their sides.
    An acronym ("UTI") is left out: notes often spell it out. A held document whose title
    the question holds in lower case ("Does rifampicin interact with levothyroxine?") is a
    subject too.
    """
    shape = judge.shape
    found: list[tuple[str, frozenset[str]]] = []
    if judge.sides:
        found = [(side, term_set(side)) for side in shape.candidates if term_set(side)]
    else:
        common = evidence.lower_case_words
        opening = shape.text.split()[0] if shape.text.split() else ""
        found = [
            (e, term_set(e) & judge.name_terms)
            for e in shape.entities
            if term_set(e) & judge.name_terms
            and not _incidental(e, common)
            and e.strip() != opening.strip(",;:")
        ]
    question = term_set(shape.text)
    for title, terms in zip(evidence.titles, evidence.title_terms, strict=True):
        if terms and terms <= question and not any(terms <= t for _, t in found):
            found.append((title, terms))
    return found


def unnamed_subject(
    judge: Judge, judged: list[Judged], draft: AnswerDraft, evidence: Evidence
) -> str:
    """The subject of the question that what the answer stands on never mentions ("" if none).

    What the answer stands on: its own words, the sentence a span was read from, the titles
    and lead sentences of the cited documents (a note names its subject in its title or first
    lines, then says "it"), and the sentence that led to a bridged document; an answer citing
    several documents (two hops) counts their whole text. "How long is the River Pell?" is
    not answered by "The River Tamsin is 38 km long", whatever else the Tamsin's document
    says about the Pell; "Does A interact with B?" is not decided by a sentence about A alone.
    """
    cited = evidence.positions(draft.cited_ids)
    covered = term_set(f"{draft.answer} {draft.rationale.removeprefix(FROM)}")
    for doc in cited:
        covered = covered | evidence.title_terms[doc] | _lead_terms(evidence, doc)
        if len(cited) > 1:
            covered = covered | evidence.doc_terms[doc]
    link = judged[0].scored.link if judged else None
    if link is not None:
        covered = covered | evidence.doc_terms[link.doc]
    for said, terms in subjects(judge, evidence):
        # A name is mentioned when most of its terms are (`PARAMS.name_match`: "Livesey Hal"
        # misspelt in a question is still "Livesey Hall"), or its last word: a person by
        # the surname ("Marrow fired ..."), a river by its own name, not "River".
        last = term_set(said.split()[-1]) if said.split() else frozenset()
        if last and last <= covered:
            continue
        if len(terms & covered) < PARAMS.name_match * len(terms):
            return said
    return ""
