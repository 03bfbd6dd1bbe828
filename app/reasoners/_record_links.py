"""Bridges through a record: a log entry or case paragraph names what another note is about.

"The lady in the log who had diarrhoea in cycle 3: for how many days does she take her
tablets?" describes its first hop at length (a bullet of a review log: "Mrs Ada Pell, 80.
Capecitabine cycle 3. Diarrhoea ...") and asks the rest of a second note (the capecitabine
note's "14 days, then a 7-day break"). A sentence-level bridge misses it twice: the record's
sentences are short ("Mrs Ada Pell, 80."), so no one sentence both matches the description
and writes the bridge name; and the name is rarely the second note's title (a medicine in a
note about a class of medicines).

So the first hop is read by *record*: a bullet item with its wrapped lines, scored by the
question's terms over all its sentences. The best records name things the question does
not: a rare word of the record (held by few notes) that another
held note writes is a bridge name, and that note's sentences writing it (or standing under a
heading or a title that does) are reached through the record: they inherit what the record
covers (`Link`), as `_evidence.rank_sentences` lets a sentence inherit from a sentence
naming its note's title.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._text import term_set

# A bullet line opens a record; a line that wraps it goes on in lower case (an indexed note
# has lost its indents and blank lines), one opening like a sentence ends it.
_BULLET_RE = re.compile(r"^[ \t]*(?:[-*\u2022]|\d{1,2}[.)])[ \t]+")
_NEW_LINE_RE = re.compile(r"^[ \t]*[A-Z*_]")
_HEADING_RE = re.compile(r"^[ \t]*#")
_CAPITALISED_RE = re.compile(r"\b[A-Z][a-z][\w-]+")


@dataclass(frozen=True)
class Record:
    """One bullet item of a note (a log entry): its text and terms."""

    doc: int
    text: str
    terms: frozenset[str]


def records_of(doc: int, text: str) -> list[Record]:
    """The bullet items of one note's text, each with its wrapped lines.

    Prose is no record: a paragraph of an encyclopedia note names many places and people,
    and only a sentence naming another note's title leads there (`_evidence`).
    """
    found: list[list[str]] = []
    current: list[str] = []
    for line in text.splitlines():
        opens = bool(_BULLET_RE.match(line))
        if opens or not line.strip() or _HEADING_RE.match(line) or _NEW_LINE_RE.match(line):
            if current:
                found.append(current)
            current = [_BULLET_RE.sub("", line).strip()] if opens else []
        elif current:
            current.append(line.strip())
    if current:
        found.append(current)
    records = []
    for lines in found:
        joined = " ".join(lines).replace("**", "")
        if len(joined.split()) <= PARAMS.record_words:
            records.append(Record(doc, joined, term_set(joined)))
    return records


@dataclass(frozen=True)
class Link:
    """A first-hop record's support and the rare names it writes (its way to other notes)."""

    record: Record
    score: float
    covered: frozenset[str]
    names: frozenset[str]


def record_links(
    records: list[Record],
    note_terms: list[frozenset[str]],
    question_terms: frozenset[str],
    match: Callable[[Record], tuple[float, frozenset[str]]],
    total: float,
) -> list[Link]:
    """The best-supported records and the bridge names each writes, best first.

    `match` scores a record for the question (its weight and the question terms it
    covers); `total` is the question's whole weight; `note_terms` holds each held note's
    terms (its chunks together). A record is a first hop when it covers
    `PARAMS.record_link_share` of that weight; its bridge names are its capitalised words
    (a medicine, a place, a person) not in the question and held by at most
    `PARAMS.record_bridge_docs` notes, one of them another note.
    """
    scored = []
    for record in records:
        score, covered = match(record)
        if score >= PARAMS.record_link_share * total:
            scored.append((score, covered, record))
    scored.sort(key=lambda s: -s[0])
    links = []
    for score, covered, record in scored[: PARAMS.record_links]:
        capitalised = term_set(" ".join(_CAPITALISED_RE.findall(record.text)))
        names = frozenset(
            t
            for t in capitalised - question_terms
            if not any(ch.isdigit() for ch in t)
            and 1 < sum(t in terms for terms in note_terms) <= PARAMS.record_bridge_docs
        )
        if names:
            links.append(Link(record, score, covered, names))
    return links


__all__ = ["Link", "Record", "record_links", "records_of"]
