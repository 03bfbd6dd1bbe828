"""Which of a sentence's values the question's words point to: each value's own slot.

A sentence often holds several values of one kind: "the ropeworks started trading in 1788
and shut down in 1931", "of the 60 pupils who sat it, 52 passed", "paid for by the Harbour
Trust, opened by Edith Morrow". The question's words count for a value only inside its
slot: the words between it and the nearest clause boundary (a comma, semicolon, colon,
bracket or dash, a coordinating or relative word) or the next value of its kind, on either
side; a comma right before a value is an apposition ("our new assistant, Ada Corran"), not
a boundary. Words before the first value of a coordinated pair ("<subject> started trading in A
and shut down in B") are the subject both values share: only the first value's own word
("trading") counts for it. A figure's own unit ("60 *pupils*" for "how many pupils") is
the kind asked, not a qualifier, and counts for no value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

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
        and not text[boundaries[-1].end() : first.start].strip()
    ):
        # An apposition: "our new assistant, Ada Corran, ..." - the comma joins the value to
        # the noun before it, it does not part them.
        boundaries.pop()
    for boundary in boundaries:
        left = max(left, boundary.end())
    after = _BOUNDARY_RE.search(text, last.end, right)
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


__all__ = ["slot_positions", "slot_share"]
