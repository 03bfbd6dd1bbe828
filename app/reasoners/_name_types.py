"""What sort of thing a name names: a person, or a place or body ("Marlpit Lane Clinic").

A "who" question asks for a person or the holder of a role; a name whose last word is the
head noun of a place or a body ("... Clinic", "... Lane", "... Gorge", "... Trust") names
where or what, not who. The head nouns are `PLACE_NOUNS` and `ORGANISATION_NOUNS` (which
also type a "which <noun>" question, `_spans.asked_type`) and a few more heads that end
names but are not asked for by kind; words that are also common surnames ("Hall",
"Green", "Hill") are left out: they do not tell a person from a place.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from prefrag.reasoners._text import stem

if TYPE_CHECKING:
    from prefrag.reasoners._evidence import Evidence

PLACE_NOUNS = (
    r"town|village|city|country|region|county|river|lake|island|mountain|hill|street"
    r"|road|place|harbour|port|valley|coast|sea|bay|moor|parish|district|ward|estate"
)
ORGANISATION_NOUNS = (
    r"team|club|company|firm|band|group|school|college|university|practice|pharmacy"
    r"|hospital|clinic|service|charity|party|church|newspaper|organisation|organization"
)
# Heads that end a place's or body's name besides the asked kinds.
_OTHER_HEADS = (
    r"centre|center|surgery|lane|avenue|gorge|tarn|quay|quarry|tower|museum|institute"
    r"|library|trust|society|council|station|abbey|cathedral|chapel|hills|mountains"
    r"|islands|lakes|fells|moors|mine|mines|works|exchange|infirmary|unit"
)
# Surnames as often as heads: they tell nothing on their own.
_SURNAMES = frozenset("hill ward church green hall bank mill park street".split())
_HEAD_RE = re.compile(rf"(?:{PLACE_NOUNS}|{ORGANISATION_NOUNS}|{_OTHER_HEADS})")


def names_place_or_body(name: str) -> bool:
    """Whether a name's last word is a place's or a body's head ("Haddon Fold Health Centre")."""
    words = re.findall(r"[A-Za-z]+", name)
    if len(words) < 2 or not name[:1].isupper():
        return False
    last = words[-1].lower()
    return last not in _SURNAMES and bool(_HEAD_RE.fullmatch(last))


# A weekday's or month's short form in a timetable ("Mon, Thu, Fri"): a day, not a name.
_SHORT_DAY_RE = re.compile(
    r"(?:mon|tues?|wed|thu|thurs|fri|sat|sun|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\.?",
    re.IGNORECASE,
)


def names_place_or_day(name: str) -> bool:
    """Whether a name is a place's or a body's (`names_place_or_body`) or a day's short form."""
    return names_place_or_body(name) or bool(_SHORT_DAY_RE.fullmatch(name.strip()))


def may_name_person(name: str, sentence: str, evidence: Evidence) -> bool:
    """Whether a name span may be a person's.

    Not a place's or body's, nor a day's short form, nor a heading ("Service: who we are"),
    nor words the evidence also writes in lower case ("Lead Podiatrist", "Patients": a role
    or a common word capitalised), nor a role's label's value ("role: Specialist
    Podiatrist"), nor a lone sentence-opening word ("Welcome") that the evidence never
    writes capitalised inside a sentence.
    """
    if names_place_or_day(name) or ":" in name:
        return False
    words = [w for w in re.findall(r"[A-Za-z][\w'-]*", name) if w.lower() not in _CONNECTORS]
    if words and all(stem(w) in evidence.lower_case_stems for w in words):
        return False
    start = sentence.find(name)
    if start > 0 and _ROLE_LABEL_RE.search(sentence[:start]):
        return False  # a table row's "role: Specialist Podiatrist" is what someone is
    lone = len(words) == 1
    return not (lone and sentence.startswith(name) and name.strip() not in evidence.inner_capitals)


_ROLE_LABEL_RE = re.compile(r"\b(?:role|job|post|position|grade|title)s?:\s*$", re.IGNORECASE)
_CONNECTORS = frozenset("of the and de la le van von du da".split())


__all__ = [
    "ORGANISATION_NOUNS",
    "PLACE_NOUNS",
    "may_name_person",
    "names_place_or_body",
    "names_place_or_day",
]
