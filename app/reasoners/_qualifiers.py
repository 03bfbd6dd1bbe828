"""Qualifiers of a question that the sentence deciding its answer must cover.

A question often narrows what it asks to one case: an age ("for a 4 year old", "a child"),
a year or a season ("in 1880", "over the summer"), an extreme ("the highest dose", "the
first harbourmaster"), or a pair ("between A and B"). Notes give the same attribute for a
neighbouring case (the adult dose, the 2021 census, December's wait, the usual dose,
another medicine's gap), and reading that out is a confident wrong answer. Each function
here takes the question and the text the answer stands on (its sentences, their headings
and titles: `_checks.qualifier_context`) and says which qualifier that text does not
cover ("" when all are covered):

- an age under adulthood must fall in an age group the text states ("children 6 to 14
  years", "over 1 year", "6 months to 5 years", "children"); adults' figures or a text
  naming no age group do not answer for a child;
- a year must be written, or fall in a span the text gives ("from 1880 to 1895"), or lie
  on the asked side of one it gives ("before 2019");
- a season or month must be the text's, or a month of the season;
- an extreme ("highest", "maximum", "first") must be said in its own family of words
  (`_EXTREMES`): a starting dose is not the highest;
- each side of "between A and B" must be written;
- "now" is not covered by a text saying only what ended ("its chair until 1995"), nor
  a total ("in your whole life") by a figure per period ("2 in a year");
- a form of taking a medicine ("the oral vaccine", "the depo injection") is not covered by
  a text saying only another form ("the injection", "the pill").
"""

from __future__ import annotations

import math
import re

from prefrag.reasoners._attributes import says_word
from prefrag.reasoners._text import NUMBER_WORDS, number_of, term_set

_NUM = r"(\d+(?:\.\d+)?|" + "|".join(NUMBER_WORDS) + r")"
_UNIT = r"(years?|yrs?|months?|weeks?)"
# A figure of another kind: "children up to 40 kg" states a weight, not an age.
_NOT_AGE = r"\b(?!\s*(?:kg|kilo|g\b|grams?|mg|mcg|micrograms?|ml|mmol|cm|m\b|km|%|per\b|stone"
_NOT_AGE += r"|lb|pounds?|minutes?|hours?|days?|times?|doses?|tablets?|mm))"
ADULT = 18.0

# "a 4 month old", "a 6-year-old", "aged 3", "my 10 year old son".
_ASKED_AGE = re.compile(
    rf"\b{_NUM}[\s-]*{_UNIT}[\s-]*old\b|\baged\s+{_NUM}(?:\s*{_UNIT})?\b", re.IGNORECASE
)
# Words naming an age group, as (lowest, highest) in years.
_GROUPS: dict[str, tuple[float, float]] = {
    "newborn": (0.0, 0.1),
    "neonate": (0.0, 0.1),
    "baby": (0.0, 1.0),
    "babies": (0.0, 1.0),
    "infant": (0.0, 1.0),
    "toddler": (1.0, 3.0),
    "child": (0.0, ADULT),
    "children": (0.0, ADULT),
    "childhood": (0.0, ADULT),
    "kid": (0.0, ADULT),
    "kids": (0.0, ADULT),
    "paediatric": (0.0, ADULT),
    "pediatric": (0.0, ADULT),
    "teenager": (13.0, ADULT),
    "teenagers": (13.0, ADULT),
    "adolescent": (12.0, ADULT),
    "adolescents": (12.0, ADULT),
    "adult": (ADULT, math.inf),
    "adults": (ADULT, math.inf),
}
_CHILD_WORDS = re.compile(
    r"\b(newborns?|neonates?|bab(?:y|ies)|infants?|toddlers?|child(?:ren)?|kids?"
    r"|teenagers?|adolescents?)\b",
    re.IGNORECASE,
)
_STATED_GROUP = re.compile(
    r"\b(newborns?|neonates?|bab(?:y|ies)|infants?|toddlers?|child(?:ren|hood)?|kids?"
    r"|p(?:a)?ediatric|teenagers?|adolescents?|adults?)\b",
    re.IGNORECASE,
)
# Stated ages: "6 to 14 years", "6 months to 5 years", "2-11 years", "over 1 year",
# "15 and over", "under 12", "up to 5 years", "from 12 years".
_RANGE = re.compile(
    rf"\b{_NUM}\s*{_UNIT}?\s*(?:to|-|\u2013|and)\s*{_NUM}{_NOT_AGE}\s*{_UNIT}?", re.IGNORECASE
)
_ABOVE = re.compile(
    rf"\b(?:over|above|from|older than|at least)\s+(?:the\s+age\s+of\s+)?{_NUM}{_NOT_AGE}"
    rf"\s*{_UNIT}?"
    rf"|\b{_NUM}\s*{_UNIT}?\s*(?:and|or)\s+(?:over|above|older)|\b{_NUM}\s*{_UNIT}?\s*\+",
    re.IGNORECASE,
)
_BELOW = re.compile(
    rf"\b(?:under|below|younger than|up to|less than)\s+(?:the\s+age\s+of\s+)?{_NUM}{_NOT_AGE}"
    rf"\s*{_UNIT}?"
    rf"|\b{_NUM}\s*{_UNIT}?\s*(?:and|or)\s+(?:under|below|younger)",
    re.IGNORECASE,
)


def _number(word: str) -> float:
    return number_of(word) or 0.0


def _years(value: str, unit: str | None) -> float:
    """`value` in `unit` as years (no unit: years)."""
    number = _number(value)
    lowered = (unit or "year").lower()
    if lowered.startswith("month"):
        return number / 12
    if lowered.startswith("week"):
        return number / 52
    return number


def asked_ages(question: str) -> list[tuple[str, float, float]]:
    """The ages under adulthood the question asks about: (as said, lowest, highest) in years.

    "a 4 month old" is (4/12, 4/12), "a child" the whole of childhood. An adult's age
    ("a 48-year-old") narrows nothing a note's doses are given for and is left out.
    """
    found: list[tuple[str, float, float]] = []
    for match in _ASKED_AGE.finditer(question):
        if match.group(1):
            age = _years(match.group(1), match.group(2))
        else:
            age = _years(match.group(3), match.group(4))
        if age < ADULT:
            found.append((match.group().strip(), age, age))
    if not found:
        for match in _CHILD_WORDS.finditer(question):
            low, high = _GROUPS[match.group(1).lower()]
            found.append((match.group(1), low, high))
            break
    return found


# Words that make a bare figure nearby an age: "children under 12", "aged 15 and over".
_AGE_CUE = re.compile(
    r"\b(?:aged?|ages|child(?:ren)?|kids?|bab(?:y|ies)|infants?|adults?|teenagers?"
    r"|adolescents?|those|people|patients?)\W+(?:\w+\W+)?$",
    re.IGNORECASE,
)


# A figure right after these is how long something lasts: "tablets for 3 to 6 months".
_DURATION_CUE = re.compile(r"\b(?:for|within|every|lasting|lasts|takes?)\s+(?:about\s+)?$", re.I)


def _is_age(text: str, match: re.Match[str], units: tuple[str | None, ...]) -> bool:
    """Whether a matched figure is an age: said in years or months, or after an age word.

    A figure of years or months said as a duration ("for 3 to 6 months") is no age.
    """
    if _DURATION_CUE.search(text[max(0, match.start() - 20) : match.start()]):
        return False
    if any(u and u.lower().startswith(("year", "yr", "month")) for u in units):
        return True
    return bool(_AGE_CUE.search(text[max(0, match.start() - 30) : match.start()]))


def stated_ages(text: str) -> list[tuple[float, float]]:
    """The age groups `text` states, each as (lowest, highest) in years.

    A figure counts as an age when said in years or months ("6 months to 5 years", "over
    1 year") or after an age word ("children under 12", "aged 15 and over"); "3 to 4
    weeks" or "from 5 to 20 micrograms" are not ages.
    """
    spans: list[tuple[float, float]] = []
    for match in _RANGE.finditer(text):
        high_unit = match.group(4)
        low_unit = match.group(2) or high_unit
        if _is_age(text, match, (low_unit, high_unit)):
            spans.append((_years(match.group(1), low_unit), _years(match.group(3), high_unit)))
    for pattern, above in ((_ABOVE, True), (_BELOW, False)):
        for match in pattern.finditer(text):
            value, unit = next(
                (match.group(i), match.group(i + 1))
                for i in range(1, len(match.groups()), 2)
                if match.group(i)
            )
            if _is_age(text, match, (unit,)):
                age = _years(value, unit)
                spans.append((age, math.inf) if above else (0.0, age))
    for match in _STATED_GROUP.finditer(text):
        spans.append(_GROUPS.get(match.group(1).lower(), (0.0, ADULT)))
    return spans


# A question asking an amount, whose figure differs by age: "what dose", "how much".
_ASKS_AMOUNT = re.compile(r"\b(?:doses?|dosage|strength|how much|how many|mg)\b", re.IGNORECASE)


def uncovered_age(question: str, context: str) -> str:
    """The child's age the question asks about that no age group of `context` covers.

    A specific age ("a 4 month old") must fall inside a stated group; a group asked for
    ("a child") must overlap one, when the question asks an amount (a dose differs by
    age; what to do for a child with impetigo may not). A context stating no age group
    does not answer for a child either: a note's dose with no age is an adult's.
    """
    stated = stated_ages(context)
    figures = stated_ages(_STATED_GROUP.sub(" ", context))
    amount = bool(_ASKS_AMOUNT.search(question))
    for said, low, high in asked_ages(question):
        if low != high and not amount:
            continue
        if low == high:
            # An age asked is placed by the figures given ("6 months to 5 years"); a group
            # word ("children") covers it only where no figure tells the ages apart.
            covered = any(a <= low <= b for a, b in (figures or stated))
        else:
            covered = any(a < high and b > low for a, b in stated if (a, b) != (ADULT, math.inf))
        if not covered:
            return said
    return ""


_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
_ASKED_YEAR = re.compile(
    r"\b(in|during|since|before|after|by|until|of)\s+(?:the\s+)?(1[0-9]{3}|20[0-9]{2})\b(?!\s*[a-z])",
    re.IGNORECASE,
)
_YEAR_SPAN = re.compile(
    r"\b(1[0-9]{3}|20[0-9]{2})\s*(?:to|-|\u2013|until)\s*(1[0-9]{3}|20[0-9]{2})\b"
)


def uncovered_year(question: str, context: str) -> str:
    """The year the question asks about ("in 1880") that `context` does not cover ("" if none).

    Covered when written, inside a span the context gives ("from 1880 to 1895"), or, for
    "before / after <year>", when the context gives a year on that side ("since 2019" is
    not before 2019). A year naming a thing ("the 1953 flood") is the subject's name,
    checked elsewhere.
    """
    years = {int(y) for y in _YEAR.findall(context)}
    spans = [(int(a), int(b)) for a, b in _YEAR_SPAN.findall(context)]
    for match in _ASKED_YEAR.finditer(question):
        word, year = match.group(1).lower(), int(match.group(2))
        if any(a <= year <= b for a, b in spans):
            continue
        if word == "before" and any(y < year for y in years):
            continue
        if word in ("after", "since") and any(y > year for y in years):
            continue
        if word != "before" and year in years:
            continue
        return match.group().strip()
    return ""


_SEASONS = {
    "spring": ("march", "april", "may"),
    "summer": ("june", "july", "august"),
    "autumn": ("september", "october", "november"),
    "fall": ("september", "october", "november"),
    "winter": ("december", "january", "february"),
}
_MONTHS = (
    "january february march april may june july august september october november december"
).split()
_ASKED_PERIOD = re.compile(
    r"\b(?:in|during|over|through|for|this|last|next)\s+(?:the\s+)?(spring|summer|autumn|fall"
    r"|winter|january|february|march|april|june|july|august|september|october|november"
    r"|december)\b",
    re.IGNORECASE,
)


def uncovered_period(question: str, context: str) -> str:
    """The season or month asked about ("over the summer") that `context` does not say.

    A season is said by its name or one of its months ("in July"), a month by its name or
    its season.
    """
    lowered = context.lower()
    for match in _ASKED_PERIOD.finditer(question):
        asked = match.group(1).lower()
        words: tuple[str, ...]
        if asked in _SEASONS:
            words = (asked, *_SEASONS[asked])
        else:
            words = (asked, *(s for s, months in _SEASONS.items() if asked in months))
        if not any(re.search(rf"\b{w}\b", lowered) for w in words):
            return match.group().strip()
    return ""


# An extreme and the words a note says it with; "first" has its own.
_EXTREMES: dict[str, tuple[str, ...]] = {
    "highest": (
        "highest",
        "maximum",
        "max",
        "most",
        "up to",
        "at most",
        "no more than",
        "not exceed",
        "not more than",
        "limit",
        "ceiling",
        "top",
    ),
    "first": ("first", "original", "originally", "earliest", "founding", "inaugural", "initial"),
    "lowest": ("lowest", "minimum", "min", "least", "at least", "no less than", "smallest"),
}
_EXTREME_WORDS = {
    "highest": "highest",
    "maximum": "highest",
    "max": "highest",
    "most": "highest",
    "largest": "highest",
    "biggest": "highest",
    "first": "first",
    "lowest": "lowest",
    "minimum": "lowest",
    "min": "lowest",
    "smallest": "lowest",
}
_ASKED_EXTREME = re.compile(
    r"\bthe\s+(highest|maximum|max|most|largest|biggest|first|lowest|minimum|min|smallest)\s+"
    r"(?:daily\s+|single\s+|recommended\s+|safe\s+)?(dose|dosage|amount|number|strength"
    r"|[a-z]*master|mayor|vicar|owner|keeper|headmaster|headmistress|head|director|manager"
    r"|injections?|tablets?|doses)\b",
    re.IGNORECASE,
)


def uncovered_extreme(question: str, context: str) -> str:
    """The extreme asked for ("the highest dose") that `context` never says in its words."""
    lowered = context.lower()
    for match in _ASKED_EXTREME.finditer(question):
        family = _EXTREMES[_EXTREME_WORDS[match.group(1).lower()]]
        if not any(re.search(rf"\b{re.escape(w)}\b", lowered) for w in family):
            return f"{match.group(1)} {match.group(2)}".lower()
    return ""


# Words asking about the present (`_polarity` adds "still", "any more" for a verdict).
PRESENT_WORDS = r"now|nowadays|currently|these days|at present|at the moment|today"
_ASKED_PRESENT = re.compile(rf"\b({PRESENT_WORDS})\b", re.IGNORECASE)
# A role or state the text says has ended: "its chair until 1995", "from 1979 to 1995",
# "the former warden".
_ENDED = re.compile(
    r"\buntil\s+(?:\w+\s+)?(?:1[0-9]{3}|20[0-9]{2})\b"
    r"|\bfrom\s+(?:1[0-9]{3}|20[0-9]{2})\s+(?:to|until)\s+(?:1[0-9]{3}|20[0-9]{2})\b"
    r"|\b(?:former|formerly|retired|the late)\b",
    re.IGNORECASE,
)
_PRESENT = re.compile(
    r"\b(?:since|now|nowadays|currently|present|today|still|these days)\b", re.IGNORECASE
)


def uncovered_present(question: str, context: str) -> str:
    """The "now" asked about when `context` only says what ended ("" if covered).

    "Who chairs the trust now?" is not answered by "its chair until 1995": a role, a
    price or an arrangement the text says has ended is another time's, unless the text
    also says what holds now ("since 2019", "currently").
    """
    return _asked_but_only_other(_ASKED_PRESENT, _ENDED, _PRESENT, question, context)


_ASKED_TOTAL = re.compile(
    r"\b(?:(?:in|over|during)\s+(?:your|my|his|her|their|a|one)\s+(?:whole\s+|entire\s+)?"
    r"life(?:time)?|lifetime|in total|altogether|all told)\b",
    re.IGNORECASE,
)
# A figure given per period: "2 injections in a year", "3 a day", "per month".
_PER_PERIOD = re.compile(
    r"\b(?:a|per|each|every|in a|in any)\s+(?:day|week|month|year|12 months)\b", re.IGNORECASE
)
_TOTAL = re.compile(r"\b(?:life(?:time)?|in total|altogether|in all|total|ever)\b", re.IGNORECASE)


def uncovered_total(question: str, context: str) -> str:
    """The whole span asked about ("in your whole life") when `context` gives a rate.

    "How many injections can you have in your whole life?" is not answered by "no more
    than 2 in a year": a limit per period is another figure than a total, unless the text
    also says the total ("in total", "over a lifetime").
    """
    return _asked_but_only_other(_ASKED_TOTAL, _PER_PERIOD, _TOTAL, question, context)


def _asked_but_only_other(
    asked: re.Pattern[str],
    other: re.Pattern[str],
    said: re.Pattern[str],
    question: str,
    context: str,
) -> str:
    """What `asked` finds in the question if `context` says `other` but not `said`; else ""."""
    match = asked.search(question)
    if match is None or not other.search(context) or said.search(context):
        return ""
    return match.group().strip()


# How a medicine or vaccine is taken, by family of words: "the oral vaccine" is not answered
# by a sentence about "the injection", nor "the depo injection" by one about "the pill".
_FORMS: dict[str, re.Pattern[str]] = {
    "by mouth": re.compile(
        r"\b(?:oral(?:ly)?|by mouth|tablets?|capsules?|pills?|syrups?|swallow\w*)\b", re.I
    ),
    "injected": re.compile(
        r"\b(?:injections?|injected|injectable|jabs?|intramuscular\w*|intravenous\w*"
        r"|subcutaneous\w*)\b",
        re.I,
    ),
    "on the skin": re.compile(r"\b(?:creams?|ointments?|gels?|topical\w*|lotions?)\b", re.I),
    "inhaled": re.compile(r"\b(?:inhalers?|inhaled|nebuli[sz]\w*)\b", re.I),
}


def other_form(question: str, context: str) -> str:
    """The form the question asks about ("oral") when `context` says only other forms.

    A text saying no form at all ("500 mg twice a day") is left to the other checks; one
    saying the asked form beside another ("tablets or an injection") covers it.
    """
    asked = {form: found for form, pattern in _FORMS.items() if (found := pattern.search(question))}
    if not asked:
        return ""
    said = {form for form, pattern in _FORMS.items() if pattern.search(context)}
    if not said or said & asked.keys():
        return ""
    return next(iter(asked.values())).group()


_PAIR = re.compile(
    r"\bbetween\s+(?:(?:my|the|a|an|his|her|their)\s+)?([\w-]+)(?:\s+[\w-]+)?\s+and\s+"
    r"(?:(?:my|the|a|an|his|her|their)\s+)?([\w-]+)",
    re.IGNORECASE,
)


def unsaid_pair(question: str, context: str) -> str:
    """The side of "between A and B" that `context` never writes ("" if both are written)."""
    for match in _PAIR.finditer(question):
        for side in (match.group(1), match.group(2)):
            if term_set(side) and not says_word(side.lower(), context):
                return side
    return ""


def uncovered_qualifier(
    question: str, context: str, clause: str = "", verdict: bool = False
) -> str:
    """The first qualifier of the question `context` does not cover, as said ("" if none).

    An age is read from `clause` (the part of the sentence holding the short answer, with
    its headings) when given: "100 mg a day for adults ...; children up to 40 kg ..." does
    not give a child's dose as 100 mg. A yes/no question (`verdict`) about a season is
    decided by a sentence giving another one ("open from Easter to October").
    """
    missing = uncovered_age(question, clause or context)
    if missing:
        return missing
    checks = [
        uncovered_year,
        uncovered_extreme,
        unsaid_pair,
        uncovered_present,
        uncovered_total,
        other_form,
    ]
    if not verdict:
        checks.append(uncovered_period)
    for check in checks:
        missing = check(question, context)
        if missing:
            return missing
    return ""


__all__ = [
    "PRESENT_WORDS",
    "asked_ages",
    "other_form",
    "stated_ages",
    "uncovered_age",
    "uncovered_extreme",
    "uncovered_period",
    "uncovered_present",
    "uncovered_qualifier",
    "uncovered_total",
    "uncovered_year",
    "unsaid_pair",
]
