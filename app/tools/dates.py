"""Publication dates of documents (metadata first, then cues in the text) and recency.

Timeliness needs a date per document. Metadata wins (`date`, `published`, `updated`,
`year`); otherwise the text is searched for an explicitly cued date ("Updated: March 5,
2021", "Published 2019-04-02", "Last reviewed: 06/2020"), then for any full date. A bare
year in running text is not taken: "in 1990 researchers found" says nothing about when
the page was written.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

from langchain_core.documents import Document

NEUTRAL_RECENCY = 0.5
_MONTHS = {
    name: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for name in names
}
_MONTH = (
    r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_YEAR = r"((?:19|20)\d\d)"
_PATTERNS = [
    # 2021-03-05, 2021/03/05
    (re.compile(rf"\b{_YEAR}[-/](\d{{1,2}})[-/](\d{{1,2}})\b"), ("y", "m", "d")),
    # March 5, 2021 / Mar. 5 2021
    (re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+{_YEAR}\b", re.I), ("M", "d", "y")),
    # 5 March 2021
    (re.compile(rf"\b(\d{{1,2}})\s+{_MONTH}\s+{_YEAR}\b", re.I), ("d", "M", "y")),
    # March 2021
    (re.compile(rf"\b{_MONTH}\s+{_YEAR}\b", re.I), ("M", "y")),
    # 06/2020 (month/year)
    (re.compile(rf"\b(\d{{1,2}})/{_YEAR}\b"), ("m", "y")),
]
_CUE = re.compile(
    r"\b(?:updated|last\s+updated|published|posted|reviewed|last\s+reviewed|revised|"
    r"last\s+modified|date|issued|effective|released)\b\s*(?:on|in|:)?\s*",
    re.I,
)
_CUED_YEAR = re.compile(rf"^{_YEAR}\b")
_METADATA_KEYS = ("date", "published", "publication_date", "updated", "year")


def parse_date(value: Any) -> date | None:
    """A date from a metadata value: ISO `YYYY-MM-DD`, `YYYY-MM`, `YYYY`, an int year, or a date."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, int | float):
        return _from_parts(int(value), None, None)
    text = str(value).strip()
    match = re.fullmatch(r"((?:1[89]|20)\d\d)(?:-(\d{1,2}))?(?:-(\d{1,2}))?(?:[T ].*)?", text)
    if match:
        year, month, day = match.groups()
        return _from_parts(int(year), _int(month), _int(day))
    return find_date_in_text(text, cued_only=False)


def find_date_in_text(text: str, *, cued_only: bool = False) -> date | None:
    """The first cued date in `text` ("Updated: ..."), else the first full date, else None."""
    for cue in _CUE.finditer(text):
        window = text[cue.end() : cue.end() + 40]
        found = _match_at_start(window)
        if found is not None:
            return found
        year = _CUED_YEAR.match(window)
        if year:
            return _from_parts(int(year.group(1)), None, None)
    if cued_only:
        return None
    for pattern, order in _PATTERNS:
        match = pattern.search(text)
        if match:
            found = _build(match.groups(), order)
            if found is not None:
                return found
    return None


def metadata_date(document: Document) -> date | None:
    """The publication date a document's metadata gives, or None (its text is not read)."""
    for key in _METADATA_KEYS:
        found = parse_date(document.metadata.get(key))
        if found is not None:
            return found
    return None


def document_date(document: Document) -> date | None:
    """The publication date of a document: from its metadata, else from its text."""
    found = metadata_date(document)
    return found if found is not None else find_date_in_text(document.page_content)


def recency_score(when: date | None, *, now: date, half_life_days: float) -> float:
    """Recency in [0, 1]: 1 for today, halving every `half_life_days`; undated → 0.5."""
    if when is None:
        return NEUTRAL_RECENCY
    age = (now - when).days
    if age <= 0:
        return 1.0
    return float(0.5 ** (age / max(half_life_days, 1e-9)))


def _match_at_start(window: str) -> date | None:
    for pattern, order in _PATTERNS:
        match = pattern.match(window)
        if match:
            return _build(match.groups(), order)
    return None


def _build(groups: tuple[str, ...], order: tuple[str, ...]) -> date | None:
    parts: dict[str, int | None] = {"y": None, "m": None, "d": None}
    for value, kind in zip(groups, order, strict=True):
        if kind == "M":
            parts["m"] = _MONTHS.get(value.lower().rstrip("."))
        else:
            parts[kind] = int(value)
    if parts["y"] is None:
        return None
    return _from_parts(parts["y"], parts["m"], parts["d"])


def _from_parts(year: int, month: int | None, day: int | None) -> date | None:
    # A missing month or day means "sometime then": the middle keeps the error smallest.
    try:
        return date(year, month or 7, day or (15 if month else 1))
    except ValueError:
        return None


def _int(value: str | None) -> int | None:
    return int(value) if value else None
