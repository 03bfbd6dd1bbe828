"""A yes/no verdict read from the deciding sentence: the polarity of its asked clause.

A sentence deciding a yes/no question often says it in a clause of its own, next to
clauses about other things: "six sailings on weekdays and *none on Saturdays*", "was
repaired and *rings again*", "open from ten, *shut on Tuesdays*". The clause holding most
of the question's property words (its subject's words aside) decides; a negative clause
decides "no" too when it is the only one saying one of those words (the exception is what
was asked about). A clause is negative when it is negated ("not", "none", "never",
"avoid"), when it says a state has ended and the question asks whether it still holds ("no
longer", "was last", "closed in", "until" for "still", "now", "any more"), or when it holds
the opposite of a question word ("shut" for "open", "banned" for "allowed"), or names what
is not so ("for ten years *rather than for life*"). A bracketed aside stating something is a
clause of its own, one without a verb is read within the clause around it ("HRT (tablets,
gels) must not be taken"), which reads on past it. A negative
clause decides "no" whatever share of the property it holds; an affirmative one decides
"yes" only when it holds enough of the property's words (`PARAMS.verdict_clause_share`);
otherwise the verdict is "": the sentence does not state it.

A sentence may also state the asked relation with another value: "Was she born in Oskley?"
against "Born at Quenby, she married an Oskley boatman"; "built in 1850?" against "built in
1848" (`stated_instead`). Then the answer is "no" when the asked value is known to be
something else (the sentence or another document names it), else the sentence does not say
whether the two are the same place.

A question asking whether a state still holds is not answered "yes" by a sentence that only
says what was (`only_past`: "was a slate quarry", "in the 1680s it made 400 tons").
"""

from __future__ import annotations

import re

from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._policy import negated
from prefrag.reasoners._qualifiers import PRESENT_WORDS
from prefrag.reasoners._text import QuestionShape, candidate_spans, term_set

# A clause ends at a semicolon, colon, comma, square bracket or dash, and before a
# coordinator or a contrast ("for ten years *rather than for life*").
_CLAUSE_RE = re.compile(
    r"[;:,\[\]\u2013\u2014]|\s-\s"
    r"|\s+(?=(?:and|but|except|unless|although|though|whereas|while|rather than|instead of)\b)",
    re.IGNORECASE,
)
# A bracketed aside: a statement of its own ("(fresh cheeses are fine)"), or, without a
# verb, a gloss of the words before it ("HRT (tablets, patches, gels) must not be taken").
_ASIDE_RE = re.compile(r"\s*\(([^()]*)\)")
_VERB_RE = re.compile(
    r"\b(?:is|are|was|were|be|been|can|cannot|may|must|should|will|would|do|does|did|not"
    r"|no|never)\b|n't\b",
    re.IGNORECASE,
)
# A clause naming what is *not* so: "rather than for life", "instead of the hall".
_CONTRAST_RE = re.compile(r"^(?:rather than|instead of)\b", re.IGNORECASE)
# A question asking whether a state still holds: the present `_qualifiers` reads, or "still".
_ASKS_STILL_RE = re.compile(rf"\b(?:still|any ?more|any longer|{PRESENT_WORDS})\b", re.IGNORECASE)
# A clause saying that a state has ended (`_qualifiers.ENDED_RE` reads a dated end too).
_ENDED_RE = re.compile(
    r"\b(?:no longer|not any more|last|ceased|stopped|ended|closed|shut|abolished|demolished"
    r"|dissolved|abandoned|formerly|former|retired|used to|died out|until|gone)\b",
    re.IGNORECASE,
)
# A sentence about a past time: a past copula, or a year or decade ("in the 1680s").
_PAST_RE = re.compile(r"\b(?:was|were|had been|used to|1[0-9]{3}s?|20[0-2][0-9]s?)\b", re.I)
_WORD_RE = re.compile(r"[A-Za-z][\w'-]*")
# A sentence saying what holds now.
_PRESENT_RE = re.compile(rf"\b(?:is|are|remains?|still|since|{PRESENT_WORDS})\b", re.IGNORECASE)
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
    clauses = clauses_of(text)
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


def clauses_of(text: str) -> list[str]:
    """The clauses of `text` (`_CLAUSE_RE`); an aside stating something is one of its own.

    The clause around an aside reads on past it; an aside without a verb (a gloss, a list
    of kinds) is read within it: "HRT (tablets, patches, gels) must not be taken" says
    "HRT tablets patches gels must not be taken".
    """
    asides: list[str] = []

    def aside(match: re.Match[str]) -> str:
        if _VERB_RE.search(match.group(1)):
            asides.append(match.group(1))
            return ""
        return " " + re.sub(r"[;:,]", " ", match.group(1))

    parts = [_ASIDE_RE.sub(aside, text), *asides]
    return [
        c.strip(" ,.") for part in parts for c in _CLAUSE_RE.split(part) if c and c.strip(" ,.")
    ]


def only_past(shape: QuestionShape, text: str, subject_terms: frozenset[str]) -> bool:
    """Whether the question asks whether a state still holds and `text` only says what was.

    "Is the furnace still making iron?" is not answered "yes" by "At its height in the
    1680s the furnace made 400 tons of iron a year" nor "Is it still a working quarry?" by
    "It was a slate quarry, worked in terraces": the sentence is in the past (a past
    copula, a year) and says nothing of now ("is", "still", "since", "today"). A sentence
    writing an asked word as a verb of now ("was restored in 1990 and *grinds* flour" for
    "Does it still grind flour?") does.
    """
    if not _ASKS_STILL_RE.search(shape.text) or _PRESENT_RE.search(text):
        return False
    if not _PAST_RE.search(text):
        return False
    asked = term_set(shape.property_text) - subject_terms - _WHEN_WORDS
    question_words = {w.lower() for w in _WORD_RE.findall(shape.text)}
    for word in _WORD_RE.findall(text):
        lowered = word.lower()
        if term_set(word) & asked and lowered.endswith("s") and lowered not in question_words:
            return False  # "grinds" for "grind": said of now
    return True


def _negative(question: str, clause: str) -> bool:
    """Whether `clause` denies what `question` asks: negated, contrasted, ended, or opposite."""
    if negated(clause) or _CONTRAST_RE.match(clause):
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


__all__ = ["clauses_of", "only_past", "read_verdict", "stated_instead"]
