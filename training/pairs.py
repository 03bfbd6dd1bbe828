"""Switcher preference pairs: the JSONL format, reading it back, and the prompt's inputs.

`preference_pair_problem` is the shape check every DPO pair passes (switcher or plan).

A pair is one line in TRL's conversational preference format plus `meta`::

    {"prompt": [{"role": "user", "content": <compare prompt>}],
     "chosen": [{"role": "assistant", "content": <verdict>}],
     "rejected": [{"role": "assistant", "content": <verdict>}],
     "meta": {"question_id", "step", "teacher", "policy", "sampling", "label"}}

where a verdict is the JSON text `{"analysis": "...", "status": true}`: the object the
`compare` role's JSON schema (`CompareWire`, a boolean `status`) makes a served model
return at run time, so the trained model learns the reply it will be asked for; `label` is
the chosen verdict's "keep" or "switch". (Older files with the paper's `"status": "True"`
strings still read.)
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.documents import Document

from prefrag.documents import DOCUMENTS_CLOSE, DOCUMENTS_OPEN
from prefrag.errors import IngestError
from prefrag.jsonl import utf8_lines
from prefrag.prompts import load_prompt
from prefrag.reasoners.base import CompareVerdict
from prefrag.reasoners.parsing import parse_compare

_DOCUMENT_RE = re.compile(r"<document>\[(.*?)\] title: (.*?) content: (.*?)</document>", re.DOTALL)


def verdict_text(verdict: CompareVerdict) -> str:
    """The verdict as the JSON the runtime `compare` schema asks for (boolean status)."""
    return json.dumps({"analysis": verdict.analysis, "status": verdict.status}, ensure_ascii=False)


def make_pair(
    prompt: str, chosen: CompareVerdict, rejected: CompareVerdict, meta: dict[str, Any]
) -> dict[str, Any]:
    """One preference pair in the pairs format (`meta["label"]` set from `chosen`)."""
    return {
        "prompt": [{"role": "user", "content": prompt}],
        "chosen": [{"role": "assistant", "content": verdict_text(chosen)}],
        "rejected": [{"role": "assistant", "content": verdict_text(rejected)}],
        "meta": {**meta, "label": "keep" if chosen.status else "switch"},
    }


@dataclass
class CompareInputs:
    """What a compare prompt shows: the question, held evidence and new documents."""

    question: str
    held: list[Document]
    new: list[Document]


def read_compare_prompt(prompt: str) -> CompareInputs:
    """The question and documents a compare prompt (from `compare_prompt`) was filled with.

    The inverse of `prefrag.reasoners.llm.compare_prompt`: the template's literal text is
    matched and the placeholders read back; documents come back with their id, title and
    (possibly cut) text.

    Raises:
        IngestError: The text is not a filled `prompts/compare.txt`.
    """
    pattern = []
    names = []
    for literal, name, _, _ in string.Formatter().parse(load_prompt("compare")):
        pattern.append(re.escape(literal))
        if name is not None:
            names.append(name)
            pattern.append(r"(.*?)")
    match = re.fullmatch("".join(pattern), prompt, re.DOTALL)
    if match is None:
        raise IngestError("The pair's prompt is not a compare prompt (prompts/compare.txt).")
    values = dict(zip(names, match.groups(), strict=True))
    return CompareInputs(
        question=values["question"],
        held=_documents(values["existed_info"]),
        new=_documents(values["observation"]),
    )


def _documents(block: str) -> list[Document]:
    block = block.strip()
    if block.startswith(DOCUMENTS_OPEN) and block.endswith(DOCUMENTS_CLOSE):
        block = block[len(DOCUMENTS_OPEN) : -len(DOCUMENTS_CLOSE)]
    return [
        Document(page_content=text, metadata={"id": key, "title": title})
        for key, title, text in _DOCUMENT_RE.findall(block)
    ]


def pair_status(pair: dict[str, Any], side: str) -> bool:
    """The status (True keeps local) of a pair's `chosen` or `rejected` verdict.

    Raises:
        IngestError: The verdict has no readable status.
    """
    verdict = parse_compare(pair[side][-1]["content"])
    if verdict is None:
        raise IngestError(f"The pair's {side} verdict has no readable status.")
    return verdict.status


def read_pairs(path: Path) -> Iterator[dict[str, Any]]:
    """The pairs of a pairs JSONL file, checked line by line.

    Raises:
        IngestError: The file does not exist, or a line is not a pair (its number is named).
    """
    path = Path(path)
    if not path.is_file():
        raise IngestError(f"The pairs file '{path}' does not exist.")
    for number, line in enumerate(utf8_lines(path), start=1):
        if not line.strip():
            continue
        try:
            pair = json.loads(line)
            problem = preference_pair_problem(pair)
            if problem:
                raise IngestError(problem)
            pair_status(pair, "chosen")
            pair_status(pair, "rejected")
        except (json.JSONDecodeError, IngestError, KeyError, TypeError, IndexError) as error:
            reason = error if isinstance(error, IngestError) else type(error).__name__
            raise IngestError(
                f"Line {number} of '{path}' is not a switcher preference pair ({reason})."
            ) from None
        yield pair


def preference_pair_problem(row: Any) -> str | None:
    """What is wrong with a row as a TRL conversational preference pair, or None.

    A pair's `prompt` is a list of messages ending with the user's, and `chosen` and
    `rejected` are one assistant message each, with different texts; every message has a
    string role and content. Any DPO data (switcher verdicts, SPO plans) has this shape.
    """
    if not isinstance(row, dict):
        return "the line is not an object"
    for key in ("prompt", "chosen", "rejected"):
        messages = row.get(key)
        if not isinstance(messages, list) or not messages:
            return f"'{key}' must be a non-empty list of messages"
        for message in messages:
            if not (
                isinstance(message, dict)
                and isinstance(message.get("role"), str)
                and isinstance(message.get("content"), str)
            ):
                return f"'{key}' holds a message without a string role and content"
    if row["prompt"][-1]["role"] != "user":
        return "the prompt must end with the user's message"
    for key in ("chosen", "rejected"):
        if [m["role"] for m in row[key]] != ["assistant"]:
            return f"'{key}' must be one assistant message"
    if row["chosen"][0]["content"] == row["rejected"][0]["content"]:
        return "chosen and rejected are the same text"
    return None
