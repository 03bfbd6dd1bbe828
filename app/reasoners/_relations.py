"""Relations said in other words: "birthplace" in a question, "born in" in the evidence.

A two-document question names a relation as a noun ("her birthplace", "the enzyme that
activates X", "the medicine it clears") while the evidence states it with a verb ("was born
in", "converts it into its active form", "is broken down by"). Term overlap alone misses that
the sentence holding the bridge entity *is* the one stating the relation, so the chain
through it looks unsupported and the second hop is never searched for.

Each group below is one relation in its common English wordings. A sentence holding any
wording of a group also counts as holding the others (`with_relations`), so "born in
Marrowick" covers "birthplace" and "hometown", and "is broken down by CYP3A4" covers
"clears". The groups are general vocabulary, not phrases of any question; a phrase of two
words that names one relation ("home town", "place of birth") is read as one word first
(`joined_phrases`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from prefrag.shared import shared

# Each group: wordings of one relation. Keep them to words that carry the relation alone.
_GROUPS: tuple[tuple[str, ...], ...] = (
    ("born", "birth", "birthplace", "hometown", "native", "birthday"),
    ("died", "death", "deathplace"),
    ("buried", "burial", "grave"),
    ("founded", "founder", "founding", "established", "cofounder"),
    ("wrote", "written", "writer", "author", "authored"),
    ("married", "marriage", "wife", "husband", "spouse", "wed"),
    ("designed", "designer", "architect", "engineered", "built", "builder"),
    ("clears", "cleared", "clearance", "metabolised", "metabolized", "metabolism", "broken"),
    ("activates", "activated", "activation", "converts", "converted", "prodrug"),
    ("blocks", "blocked", "blocker", "inhibits", "inhibited", "inhibitor", "inhibition"),
    ("induces", "induced", "inducer", "induction"),
    ("mouth", "estuary", "sea"),
    ("rises", "source", "springs"),
    ("lives", "home", "habitat", "wildlife"),
    ("population", "populous", "inhabitants", "residents", "people"),
)
# Two-word names of one relation, read as the group's single word.
_PHRASES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:home|native)\s+(?:town|village|city)", re.IGNORECASE), "hometown"),
    (re.compile(r"\bplace\s+of\s+birth\b", re.IGNORECASE), "birthplace"),
    (re.compile(r"\bplace\s+of\s+death\b", re.IGNORECASE), "deathplace"),
    (re.compile(r"\bbroken\s+down\b", re.IGNORECASE), "broken"),
    # "Where did she spend her last years?": where she lived until her death.
    (re.compile(r"\b(?:last|final)\s+years\b", re.IGNORECASE), "death"),
)


def stems(text: str) -> list[str]:
    """The stemmed lower-case words of `text`."""
    # The stemmer `_text.stem` uses (this module is below `_text`, which reads
    # `joined_phrases` from it, so it stems on its own).
    stemmer = shared().stemmer()
    return [str(stemmer.stemWord(w)) for w in re.findall(r"[a-z0-9]+", text.lower())]


@lru_cache(maxsize=1)
def _stem_groups() -> tuple[frozenset[str], ...]:
    return tuple(frozenset(stems(" ".join(group))) for group in _GROUPS)


def joined_phrases(text: str) -> str:
    """`text` with two-word names of one relation written as one word ("home town")."""
    for pattern, word in _PHRASES:
        text = pattern.sub(word, text)
    return text


def with_relations(terms: frozenset[str]) -> frozenset[str]:
    """`terms` plus every wording of each relation some term of it states."""
    implied: set[str] = set()
    for group in _stem_groups():
        if terms & group:
            implied |= group
    return terms | implied if implied else terms


# "Maud's birthplace", "her home town"; "the enzyme that activates X".
_POSSESSIVE_RE = re.compile(
    r"\b(?:[\w\-]+['\u2019]s?|his|her|their|its)\s+(?:[\w\-]+\s+){0,2}?[\w\-]+"
    r"|\b(?:the|a|an)\s+[\w\-]+\s+(?:that|which|who|it)\s+[\w\-]+",
    re.IGNORECASE,
)


def names_by_relation(question: str) -> bool:
    """Whether a question names a thing by its relation to another ("Maud's birthplace").

    The thing is unnamed, so a first document gives its name (the bridge) and the asked
    fact is in that thing's own document.
    """
    return any(relation_of(t) for m in _POSSESSIVE_RE.finditer(question) for t in stems(m.group()))


def relation_of(term: str) -> frozenset[str]:
    """Every wording of the relation `term` states, or nothing when it states none."""
    for group in _stem_groups():
        if term in group:
            return group
    return frozenset()


__all__ = ["joined_phrases", "names_by_relation", "relation_of", "stems", "with_relations"]
