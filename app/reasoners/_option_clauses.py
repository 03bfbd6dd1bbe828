"""Comparisons read clause by clause: each option's figure from the clause that names it.

"Which takes longer to heal, a partial or a total nail avulsion?" has no note per option:
one sentence gives both figures ("4 to 6 weeks after a partial nail avulsion and 6 to 8
weeks after a total nail avulsion"), or a table gives one row per option ("moderate ...
every 3 to 6 months", "high ... every 1 to 3 months"). Each option is found by its key word
(the first word of it the other option does not share: "partial", "total"), each sentence
is cut into clauses at punctuation and conjunctions, and an option's figure is the first one
of a clause naming it and not the other. The sentence must say the compared attribute (a
question word other than the options' and the comparative) or give a figure of the quantity a
bare comparative compares ("longer": a length or a duration). A figure counted "every N
months" is an interval: asked "more often", the smaller interval wins.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from prefrag.reasoners._evidence import Evidence, QuestionWeights
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._policy import Judged
from prefrag.reasoners._quantities import unit_kind
from prefrag.reasoners._relations import with_relations
from prefrag.reasoners._text import QuestionShape, candidate_spans, number_of, term_set, words

# Where one option's clause ends and the next begins.
_CLAUSE_CUT_RE = re.compile(
    r"[;:()]|,(?!\d)|\s[-\u2013\u2014]\s|\b(?:and|but|while|whereas|than|compared with)\b"
)
# A figure counted per interval ("every 3 months"): the smaller, the more often.
_INTERVAL_RE = re.compile(r"\bevery\s+(?:[\w-]+\s+)?$", re.IGNORECASE)
_HOW_OFTEN_RE = re.compile(r"\b(?:often|frequently)\b", re.IGNORECASE)
# A duration's unit after its figure (and its range: "4 to 6 weeks"), in days, so that
# "every 2 years" and "every 6 months" compare.
_DURATION_UNIT_RE = re.compile(
    r"^(?:\s*(?:to|-|\u2013)\s*[\d.]+)?\s*(hour|day|night|week|fortnight|month|year)s?\b",
    re.IGNORECASE,
)
_DAYS = {"hour": 1 / 24, "day": 1, "night": 1, "week": 7, "fortnight": 14, "month": 30, "year": 365}


@dataclass(frozen=True)
class OptionValue:
    """An option's figure, the sentence it was read from, and whether it is an interval."""

    value: float
    judged: Judged
    interval: bool


def key_words(options: Sequence[str]) -> tuple[str, ...]:
    """Each option's key word (as a term): the word it differs from the other one by.

    Options often share words the question writes once: "a partial or a total nail
    avulsion" (the shorter is the longer's first word: "partial", "total"), "stitches on
    your back or on your face" (the shorter is the longer's last word: "back", "face").
    Otherwise the first word the other option does not have.
    """
    if len(options) != 2:
        return ()
    listed = [[w.lower() for w in words(o)] for o in options]
    terms = [[t for w in o if (t := next(iter(term_set(w)), ""))] for o in listed]
    short, long_ = sorted(range(2), key=lambda k: len(listed[k]))
    # The shorter option's first word written later in the longer one: the two share
    # the words before the difference, which is then each option's last word.
    from_end = bool(listed[short]) and listed[short][0] in listed[long_][1:]
    keys = []
    for k, own in enumerate(terms):
        others = set(terms[1 - k])
        distinct = [t for t in own if t not in others]
        keys.append((distinct[-1] if from_end else distinct[0]) if distinct else "")
    return tuple(keys)


def clause_values(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    judged: list[Judged],
    attribute: frozenset[str],
    kinds: frozenset[str],
) -> dict[str, OptionValue]:
    """Each option's figure from the best sentences' clauses that name it.

    An option no clause of the best sentences names is left out.
    """
    options = shape.candidates
    keys = key_words(options)
    if len(options) != 2 or not all(keys):
        return {}
    often = bool(_HOW_OFTEN_RE.search(shape.text))
    found: dict[str, OptionValue] = {}
    for item in judged[: PARAMS.pair_sentences]:
        text = item.scored.sentence.text
        about = bool(with_relations(item.scored.sentence.terms) & attribute)
        figures = _clause_figures(text, options, keys, about, kinds, often)
        for option, value, interval in figures:
            if option not in found:
                found[option] = OptionValue(value, item, interval)
        if len(found) == 2:
            break
    return found


def _clause_figures(
    text: str,
    options: Sequence[str],
    keys: Sequence[str],
    about: bool,
    kinds: frozenset[str],
    often: bool,
) -> list[tuple[str, float, bool]]:
    """(option, figure, interval) for each option `text` gives a figure of.

    A sentence naming one option (a table row) gives its best figure; one naming both gives
    the figure of each clause that names one only.
    """
    named = _named(text, options, keys)
    if len(named) == 1:
        figure = _figure(text, 0, len(text), about, kinds, often)
        return [(named[0], *figure)] if figure else []
    figures = []
    start = 0
    for end in [m.start() for m in _CLAUSE_CUT_RE.finditer(text)] + [len(text)]:
        named = _named(text[start:end], options, keys)
        figure = _figure(text, start, end, about, kinds, often) if len(named) == 1 else None
        if figure:
            figures.append((named[0], *figure))
        start = end
    return figures


def _named(text: str, options: Sequence[str], keys: Sequence[str]) -> list[str]:
    terms = term_set(text)
    return [o for o, key in zip(options, keys, strict=True) if key in terms]


def _figure(
    text: str, start: int, end: int, about: bool, kinds: frozenset[str], often: bool
) -> tuple[float, bool] | None:
    """The figure of `text[start:end]` that measures what is compared, and if an interval.

    Asked how often, an interval ("every 1 to 3 months") comes first; else a figure of the
    compared quantity's kind, else (in a sentence saying the attribute) the first figure.
    """
    found = []
    for span in candidate_spans(text[start:end]):
        value = number_of(span.text) if span.kind == "number" else None
        at = start + span.start
        if value is None:
            continue
        fits = unit_kind(text[at:]) in kinds
        if not (about or fits):
            continue
        interval = bool(_INTERVAL_RE.search(text[:at]))
        value = duration_days(value, text[start + span.end :])
        found.append(((often and interval, fits), value, interval))
    if not found:
        return None
    best = max(found, key=lambda f: f[0])
    return best[1], best[2]


def duration_days(value: float, after: str) -> float:
    """A figure in days when the text `after` it opens with a duration's unit ("weeks").

    Any other figure is returned as it is: "every 2 years" and "every 6 months" compare.
    """
    unit = _DURATION_UNIT_RE.match(after)
    return value * _DAYS[unit.group(1).lower()] if unit else value


def decided_direction(question: str, direction: str, values: Sequence[OptionValue]) -> str:
    """The direction to pick by: "more often" over intervals wants the smaller one."""
    if _HOW_OFTEN_RE.search(question) and all(v.interval for v in values):
        return "min" if direction == "max" else "max"
    return direction


__all__ = ["OptionValue", "clause_values", "decided_direction", "duration_days", "key_words"]
