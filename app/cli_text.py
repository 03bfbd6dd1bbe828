"""Untrusted text (titles, snippets, questions, notes) made safe to print in a terminal.

Data is never rich markup: `[/bold]` in a title must print as written, not crash the CLI,
and `[link=...]` must not become a hidden hyperlink. Control characters (ANSI escape
sequences, NUL, ...) are removed, and long text is cut, so a hostile document can neither
drive the terminal nor make printing slow.
"""

from __future__ import annotations

import re

from rich.markup import escape

# ANSI/VT escape sequences first (so their parameters go too), then any other control
# character except newline and tab.
_ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
DEFAULT_LIMIT = 2000


def plain(text: object, *, limit: int = DEFAULT_LIMIT) -> str:
    """`text` as inert terminal text: control characters removed, markup escaped, cut."""
    cleaned = _CONTROL.sub("", _ESCAPES.sub("", str(text)))
    if len(cleaned) > limit:
        cleaned = cleaned[: limit - 1] + "…"
    return escape(cleaned)
