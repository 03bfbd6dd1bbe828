"""Which of a sentence's values the question's words point to: each value's own slot.

A sentence often holds several values of one kind: "the ropeworks started trading in 1788
and shut down in 1931", "of the 60 pupils who sat it, 52 passed", "paid for by the Harbour
Trust, opened by Edith Morrow". The question's words count for a value only inside its
slot: the words between it and the nearest clause boundary (a comma, semicolon, colon,
bracket or dash, a coordinating or relative word) or the next value of its kind, on either
side; a comma right before a value, or before how usual or exact it is ("is longer, usually
6 to 8 weeks"), is an apposition ("our new assistant, Ada Corran"), not a boundary; brackets
right after a value name it ("14 days (the lead-in)") and its open end is its own ("4 or
more suggests ..."). Words before the first value of a coordinated pair ("<subject> started
trading in A and shut down in B") are the subject both values share: only the first value's
own word ("trading") counts for it. A figure's own unit ("60 *pupils*" for "how many
pupils") is the kind asked, not a qualifier, and counts for no value.

A question giving a figure as its condition ("if the eGFR is 38", "weighs 80kg") is
answered by the value whose clause's bounds hold it ("50 mg once daily when the eGFR is
between 30 and 45"), not the usual one beside it (`conditioned_values`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from prefrag.reasoners._quantities import FIGURE_QUALIFIER_PATTERN, OPEN_END_RE
from prefrag.reasoners._text import Span

# A clause boundary inside a sentence: punctuation, or a coordinating or relative word.
_BOUNDARY_RE = re.compile(
    r"[,;:()\[\]\u2013\u2014]|\s-\s"
    r"|\b(?:and|but|or|while|whereas|then|who|which|where|whose|when)\b",
    re.IGNORECASE,
)
# Text between two values that coordinates them: "... 1788 and shut down in 1931".
_COORDINATED_RE = re.compile(r"^\s*(?:and|or|but|then)\b", re.IGNORECASE)
_WORD_RE = re.compile(r"[^\W_]+")
# What may stand between an apposition's comma and its value: nothing, or how usual or how
# exact the value is ("..., usually 6 to 8 weeks", "..., about 40").
_APPOSED_RE = re.compile(
    r"\s*(?:(?:usually|typically|normally|generally|often|mostly|currently|now)\s+)?"
    rf"(?:(?:{FIGURE_QUALIFIER_PATTERN})\s+)?",
    re.IGNORECASE,
)
# Text between two values listed together: "A and the B", "A, B", "A or B".
_LISTED_RE = re.compile(r"\s*(?:[,/;]\s*)?(?:(?:and|or|as well as)\s+)?(?:the\s+)?")
# Words between a value and the word it belongs to: "shut down *in* 1931", "opened *by*".
_LINKING = frozenset("in on at by of to from for since until about around the a an".split())


def slot_positions(
    text: str, span: Span, spans: Sequence[Span], positions: Sequence[int]
) -> list[int]:
    """The `positions` (question-word offsets in `text`) inside `span`'s slot.

    `spans` are the sentence's values of `span`'s kind. With no other value of its kind in
    the sentence there is nothing to tell apart: every position counts. Values listed
    together ("fought the A and the B", "A, B") are one group with one slot.
    """
    if span.start < 0:
        return list(positions)
    kin = sorted((s for s in spans if s.kind == span.kind and s.start >= 0), key=lambda s: s.start)
    if len(kin) < 2 or all(s.start != span.start for s in kin):
        return list(positions)
    groups: list[list[Span]] = [[kin[0]]]
    for value in kin[1:]:
        between = text[groups[-1][-1].end : value.start]
        if between.strip() and _LISTED_RE.fullmatch(between):
            groups[-1].append(value)
        else:
            groups.append([value])
    index = next(i for i, g in enumerate(groups) if any(s.start == span.start for s in g))
    first, last = groups[index][0], groups[index][-1]
    left = groups[index - 1][-1].end if index > 0 else 0
    right = groups[index + 1][0].start if index + 1 < len(groups) else len(text)
    boundaries = list(_BOUNDARY_RE.finditer(text, left, first.start))
    if (
        boundaries
        and boundaries[-1].group() == ","
        and _APPOSED_RE.fullmatch(text[boundaries[-1].end() : first.start])
    ):
        # An apposition: "our new assistant, Ada Corran, ..." or "the wait is longer,
        # usually 6 to 8 weeks" - the comma joins the value to the words before it.
        boundaries.pop()
    for boundary in boundaries:
        left = max(left, boundary.end())
    # "a score of 4 or more suggests ...": the open end is the value's, no boundary.
    open_end = OPEN_END_RE.match(text, last.end)
    after = _BOUNDARY_RE.search(text, open_end.end() if open_end else last.end, right)
    if (
        after is not None
        and after.group() == "("
        and not _BOUNDARY_RE.search(text[last.end : after.start()])
    ):
        # "for the first 14 days (the lead-in), then ...": the brackets after a value
        # name it; its slot runs on past them.
        closing = text.find(")", after.end(), right)
        after = _BOUNDARY_RE.search(text, closing + 1, right) if closing >= 0 else after
    if after is not None:
        right = after.start()
    if index == 0 and len(groups) > 1:
        if _COORDINATED_RE.match(text[last.end : groups[1][0].start]):
            # Coordinated values share the subject before the first one: only the first
            # value's own word ("trading in 1788", "born in Halbury") is its slot.
            governor = [
                w
                for w in _WORD_RE.finditer(text, left, first.start)
                if w.group().lower() not in _LINKING
            ]
            left = governor[-1].start() if governor else first.start
    own_unit = -1
    if span.kind == "number":
        unit = _WORD_RE.search(text, span.end)
        if unit is not None and not text[span.end : unit.start()].strip():
            own_unit = unit.start()
    return [
        p for p in positions if (left <= p < first.start or last.end <= p < right) and p != own_unit
    ]


def slot_share(text: str, span: Span, spans: Sequence[Span], positions: Sequence[int]) -> float:
    """How many question words `span`'s slot holds, as a share of the best slot's (0 to 1).

    The value whose slot holds most of the question's distinct words ("the *evening* dose
    is 5 mg" over "the morning dose is 10 mg" for "the evening dose") gets 1;
    a value alone of its kind in its sentence, or where no slot holds any, gets 1 too.
    """
    counts = {
        s.start: _distinct_words(text, slot_positions(text, s, spans, positions))
        for s in spans
        if s.kind == span.kind and s.start >= 0
    }
    best = max(counts.values(), default=0)
    if span.start < 0 or best == 0 or span.start not in counts:
        return 1.0
    return counts[span.start] / best


def _distinct_words(text: str, positions: Sequence[int]) -> int:
    found = {m.group().lower() for p in positions if (m := _WORD_RE.match(text, p)) is not None}
    return len(found)


# A figure the question gives as its condition: "if the eGFR is 38", "who weighs 80kg",
# "creatinine clearance is 20", "for a 6 year old".
_NUM = r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)"
_GIVEN_RE = re.compile(
    rf"\b(?:is|are|was|of|weighs?|weighing|aged?)\s+(?:about\s+|around\s+)?{_NUM}"
    r"(?![\d,.]*\s*(?:%|am|pm)\b)"
    rf"|\b{_NUM}[\s-]*(?:years?|yrs?)[\s-]*old\b|\b{_NUM}\s*kg\b",
    re.IGNORECASE,
)
_LOW = r"(?:above|over|more than|greater than|at least|from)"
_HIGH = r"(?:below|under|less than|up to|lower than|fewer than)"
# The bounds a clause sets on such a condition: "30 to 49", "below 30", "60 or more".
_BOUND_RE = re.compile(
    rf"\b{_NUM}\s*(?:to|-|\u2013|and)\s*{_NUM}|\b{_LOW}\s+{_NUM}|\b{_HIGH}\s+{_NUM}"
    rf"|\b{_NUM}(?:\s*[a-z/%]+)?\s+or\s+(?:more|above|over)\b"
    rf"|\b{_NUM}(?:\s*[a-z/%]+)?\s+or\s+(?:less|below|under)\b",
    re.IGNORECASE,
)
# Where one clause of a sentence's alternatives ends: "1 g twice daily if ..., and 1 g once
# daily if ...", "400 mg a day, or 300 mg a day if ...", "...; ...".
_CLAUSE_END_RE = re.compile(r";|,\s+(?:and|but|or)\s+|\.\s|\b(?:while|whereas)\b")


def given_value(question: str) -> float | None:
    """The figure a question gives as its condition ("if the eGFR is 38" -> 38), or None."""
    match = _GIVEN_RE.search(question)
    if match is None:
        return None
    return _number(next(g for g in match.groups() if g))


def condition_fit(question: str, text: str, start: int) -> bool | None:
    """Whether the clause holding the value at `start` sets bounds the question's figure meets.

    "Creatinine clearance is 20 - what dose?" read from "1 g twice daily if creatinine
    clearance is 30 to 49 ml/min, and 1 g once daily if it is 10 to 29 ml/min": the second
    dose's clause holds 20, the first's does not. None when the question gives no figure
    or the value's clause sets no bounds (its own figure aside).
    """
    value = given_value(question)
    if value is None:
        return None
    ends = list(_CLAUSE_END_RE.finditer(text))
    left = max([m.end() for m in ends if m.end() <= start], default=0)
    right = min([m.start() for m in ends if m.start() > start], default=len(text))
    bounds = []
    for match in _BOUND_RE.finditer(text, left, right):
        if match.start() <= start < match.end():
            continue  # the value's own range
        numbers = [_number(g) if g else None for g in match.groups()]
        low, high, above, below, at_least, at_most = numbers
        if low is not None and high is not None:
            bounds.append((low, high))
        elif above is not None or at_least is not None:
            bounds.append((above if above is not None else at_least or 0.0, math.inf))
        elif below is not None or at_most is not None:
            bounds.append((-math.inf, below if below is not None else at_most or 0.0))
    if not bounds:
        return None
    return any(low <= value <= high for low, high in bounds)


def conditioned_values(question: str, text: str, spans: Sequence[Span]) -> dict[int, bool]:
    """Start -> whether each number value of `text` is the one for the question's figure.

    Only when some value's clause holds the figure the question gives (`condition_fit`):
    then it is, and every other value is not - the usual dose beside the reduced one, a
    clause whose bounds leave the figure out. Empty otherwise: nothing to choose by.
    """
    fits = {
        s.start: condition_fit(question, text, s.start)
        for s in spans
        if s.kind == "number" and s.start >= 0
    }
    if not any(fits.values()):
        return {}
    return {start: bool(fit) for start, fit in fits.items()}


def _number(text: str) -> float:
    return float(text.replace(",", ""))


__all__ = ["condition_fit", "conditioned_values", "given_value", "slot_positions", "slot_share"]
