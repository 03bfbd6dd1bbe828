"""A yes/no verdict read from the deciding sentence: the polarity of its asked clause.

A sentence deciding a yes/no question often says it in a clause of its own, next to
clauses about other things: "six sailings on weekdays and *none on Saturdays*", "was
repaired and *rings again*", "open from ten, *shut on Tuesdays*". The clause holding most
of the question's property words (its subject's words aside) decides; a negative clause
decides "no" too when it is the only one saying one of those words (the exception is what
was asked about). A clause is negative when it is negated ("not", "none", "never",
"avoid"), when it says a state has ended and the question asks whether it still holds ("no
longer", "was last", "closed in", "until" for "still", "now", "any more"), or when it holds
the opposite of a question word ("shut" for "open", "banned" for "allowed"). A negative
clause decides "no" whatever share of the property it holds; an affirmative one decides
"yes" only when it holds enough of the property's words (`PARAMS.verdict_clause_share`);
otherwise the verdict is "": the sentence does not state it.

A sentence may also state the asked relation with another value: "Was she born in Oskley?"
against "Born at Quenby, she married an Oskley boatman"; "built in 1850?" against "built in
1848" (`stated_instead`). Then the answer is "no" when the asked value is known to be
something else (the sentence or another document names it), else the sentence does not say
whether the two are the same place.
"""

from __future__ import annotations

import re

from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._policy import negated
from prefrag.reasoners._text import QuestionShape, candidate_spans, term_set

# A clause ends at a semicolon, colon, comma, bracket or dash, and before a coordinator.
_CLAUSE_RE = re.compile(
    r"[;:,()\[\]\u2013\u2014]|\s-\s"
    r"|\s+(?=(?:and|but|except|unless|although|though|whereas|while)\b)",
    re.IGNORECASE,
)
# A question asking whether a state still holds.
_ASKS_STILL_RE = re.compile(
    r"\b(?:still|now|nowadays|today|currently|any ?more|any longer|these days)\b", re.IGNORECASE
)
# A clause saying that a state has ended.
_ENDED_RE = re.compile(
    r"\b(?:no longer|not any more|last|ceased|stopped|ended|closed|shut|abolished|demolished"
    r"|dissolved|abandoned|formerly|used to|died out|until|gone)\b",
    re.IGNORECASE,
)
# Words of opposite sense: a clause holding one answers a question holding the other "no".
_OPPOSITES: tuple[tuple[str, str], ...] = (
    (r"open", r"closed|shut"),
    (r"allowed|permitted", r"banned|forbidden|prohibited"),
    (r"safe", r"unsafe|dangerous"),
    (r"inhabited", r"uninhabited|deserted"),
)
# Words of the question that say when, not what: they are no property of the subject.
_WHEN_WORDS = term_set("still now nowadays today currently anymore ever")


def read_verdict(shape: QuestionShape, text: str, subject_terms: frozenset[str]) -> str:
    """The verdict ("yes", "no") of the clause of `text` stating the asked property, or "".

    `subject_terms` are the words naming the subject (its note's title, the question's
    subjects): they say whom the property is about, not the property.
    """
    asked = term_set(shape.property_text) - subject_terms - _WHEN_WORDS
    if not asked:
        return ""
    clauses = [c.strip(" ,.") for c in _CLAUSE_RE.split(text) if c and c.strip(" ,.")]
    found = [term_set(c) & asked for c in clauses]
    hits = [len(f) for f in found]
    best = max(hits, default=0)
    if best == 0:
        return ""
    negative = False
    for index, clause in enumerate(clauses):
        if not found[index] or not _negative(shape.text, clause):
            continue
        others = frozenset().union(*(f for i, f in enumerate(found) if i != index))
        # A negative clause decides when it is among the fullest, or when it alone says one
        # of the asked words: "six sailings on weekdays and none on *Saturdays*".
        if hits[index] == best or found[index] - others:
            negative = True
    if not negative and best / len(asked) < PARAMS.verdict_clause_share:
        return ""  # an affirmative clause saying too little of the property states nothing
    return "no" if negative != shape.negated else "yes"


# A name after the relation word: "born at *Quenby*", "buried in the churchyard at *Tully Gate*"
# (up to four lower-case words between); not the first of a list ("stops at Oskley, Quenby").
_NAME_AFTER = re.compile(
    r"\s+(?:[a-z][\w'-]*\s+){0,4}?((?:[A-Z][\w'-]*)(?:\s+(?:(?:de|du|la|le|of|the|upon)\s+)?"
    r"[A-Z][\w'-]*)*)(?!\s*(?:,|\band\b|\bor\b)\s*[A-Z])"
)
_YEAR_AFTER = re.compile(r"[^;:.()]{0,30}?\b(1\d{3}|20\d{2})\b")


def stated_instead(
    shape: QuestionShape, text: str, subject_terms: frozenset[str]
) -> tuple[str, str] | None:
    """The asked value and the other value `text` gives for the asked relation, or None.

    "Was Tamsin Hale born in Oskley?" asks the relation "born" with the value "Oskley"; the
    sentence "Born at Quenby, she married an Oskley boatman" gives "Quenby" after "born".
    None when the question names no value (a place, person or year) besides its subject,
    no other word of the property is left to relate it, or the sentence gives the asked
    value after the relation word anywhere (or no other value there).
    """
    if shape.negated:
        return None
    spans = [
        s for s in candidate_spans(shape.property_text) if not term_set(s.text) & subject_terms
    ]
    values = [s for s in spans if s.kind in ("name", "year")]
    if len(values) != 1:
        return None
    value = values[0]
    value_terms = term_set(value.text)
    relation = term_set(shape.property_text) - subject_terms - value_terms - _WHEN_WORDS
    if not relation:
        return None
    given: list[str] = []
    for word in re.finditer(r"[A-Za-z][\w'-]*", text):
        if not term_set(word.group()) & relation:
            continue
        tail = text[word.end() :]
        found = (_YEAR_AFTER if value.kind == "year" else _NAME_AFTER).match(tail)
        if found:
            given.append(found.group(1))
    if not given or any(term_set(g) & value_terms for g in given):
        return None
    others = [g for g in given if not term_set(g) & (subject_terms | relation)]
    return (value.text, others[0]) if others else None


def _negative(question: str, clause: str) -> bool:
    """Whether `clause` denies what `question` asks: negated, ended, or of opposite sense."""
    if negated(clause):
        return True
    if _ASKS_STILL_RE.search(question) and _ENDED_RE.search(clause):
        return True
    for one, other in _OPPOSITES:
        for asked, said in ((one, other), (other, one)):
            if re.search(rf"\b(?:{asked})\b", question, re.I) and re.search(
                rf"\b(?:{said})\b", clause, re.I
            ):
                return True
    return False


__all__ = ["read_verdict", "stated_instead"]
