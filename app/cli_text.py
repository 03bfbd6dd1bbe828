"""Untrusted text (titles, snippets, questions, notes) made safe to print in a terminal.

Data is never rich markup: `[/bold]` in a title must print as written, not crash the CLI,
and `[link=...]` must not become a hidden hyperlink. Control characters (ANSI escape
sequences, NUL, ...) and bidirectional controls (U+202E, ...) are removed, and long text
is cut, so a hostile document can neither drive the terminal nor make printing slow.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.markup import escape

from prefrag.errors import PrefRAGError

# ANSI/VT escape sequences first (so their parameters go too), then any other control
# character except newline and tab.
_ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Bidirectional controls (U+202E turns the rest of a line around) and invisible format
# characters: a title can use them to show the terminal something else than it holds.
_BIDI = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
DEFAULT_LIMIT = 2000


def plain(text: object, *, limit: int = DEFAULT_LIMIT) -> str:
    """`text` as inert terminal text: control characters removed, markup escaped, cut."""
    cleaned = _BIDI.sub("", _CONTROL.sub("", _ESCAPES.sub("", str(text))))
    if len(cleaned) > limit:
        cleaned = cleaned[: limit - 1] + "…"
    return escape(cleaned)


def json_for_terminal(text: str) -> str:
    r"""JSON text with bidirectional and invisible format characters written as `\\uXXXX`.

    The data is the same (JSON decodes the escapes back), but a terminal showing the
    output is not turned around by a hostile title.
    """
    return _BIDI.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


@contextmanager
def clear_errors() -> Iterator[None]:
    """Every PrefRAG error becomes one sentence on stderr and exit code 2."""
    try:
        yield
    except PrefRAGError as error:
        Console(stderr=True).print(f"[bold red]error:[/] {plain(error, limit=4000)}")
        raise typer.Exit(code=2) from None
