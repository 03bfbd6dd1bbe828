"""Prompt templates, one file per prompt; placeholders are documented at each file's top.

A template file starts with comment lines (`#`) describing its placeholders; the rest is
the template, formatted with `str.format` (literal braces doubled).
"""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def load_prompt(name: str) -> str:
    """The template text of `prompts/<name>.txt`, without its leading comment lines."""
    text = resources.files(__name__).joinpath(f"{name}.txt").read_text(encoding="utf-8")
    lines = text.splitlines()
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    return "\n".join(lines).strip() + "\n"


def render_prompt(name: str, **values: object) -> str:
    """Fill `prompts/<name>.txt` with `values`."""
    return load_prompt(name).format(**values)
