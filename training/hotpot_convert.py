"""HotpotQA's official JSON to the IRCoT JSONL that `switcher-data --dataset` reads.

`prefrag train hotpot-convert --source hotpot_train_v1.1.json --out train.jsonl` turns a
HotpotQA file (a JSON list of `_id`, `question`, `answer`, `context: [[title, [sentences]]]`,
`supporting_facts: [[title, sentence index]]`; the training set's distractor setting) into
one JSON object a line in the IRCoT format of `../shared/data/hotpotqa/`:
`question_id`, `question_text`, `answers_objects: [{"spans": [answer]}]` and
`contexts: [{"id", "title", "paragraph_text", "is_supporting"}]`, a paragraph supporting
when `supporting_facts` names its title. `--limit N` keeps a seeded sample of N questions.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefrag.errors import IngestError
from prefrag.jsonl import write_jsonl

__all__ = ["HotpotConvertConfig", "convert", "ircot_row", "main"]


@dataclass
class HotpotConvertConfig:
    """Settings of one conversion (`prefrag train hotpot-convert --help`)."""

    source: str = field(metadata={"help": "HotpotQA JSON file (a list of questions)."})
    out: str = field(metadata={"help": "IRCoT-format JSONL to write."})
    limit: int | None = field(default=None, metadata={"help": "Keep a sample of N questions."})
    seed: int = field(default=0, metadata={"help": "Seed of the sample."})


def ircot_row(item: dict[str, Any]) -> dict[str, Any]:
    """One HotpotQA question in the IRCoT format.

    Raises:
        KeyError, TypeError, ValueError: The item lacks a HotpotQA field.
    """
    supporting = {str(title) for title, _ in item["supporting_facts"]}
    return {
        "question_id": str(item["_id"]),
        "question_text": str(item["question"]),
        "answers_objects": [{"spans": [str(item["answer"])]}],
        "contexts": [
            {
                "id": str(i),
                "title": str(title),
                "paragraph_text": "".join(str(s) for s in sentences).strip(),
                "is_supporting": str(title) in supporting,
            }
            for i, (title, sentences) in enumerate(item["context"])
        ],
    }


def convert(config: HotpotConvertConfig) -> int:
    """Write the converted file; returns the number of questions written.

    Raises:
        IngestError: The source is missing, not a JSON list, or an item lacks a field
            (the message names its position).
    """
    source = Path(config.source)
    if not source.is_file():
        raise IngestError(f"The HotpotQA file '{source}' does not exist.")
    try:
        items = json.loads(source.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise IngestError(f"'{source}' is not JSON ({error.msg}, line {error.lineno}).") from None
    if not isinstance(items, list):
        raise IngestError(f"'{source}' is not a HotpotQA file: expected a JSON list of questions.")
    rows = []
    for number, item in enumerate(items, 1):
        try:
            rows.append(ircot_row(item))
        except (KeyError, TypeError, ValueError) as error:
            raise IngestError(
                f"Question {number} of '{source}' is not a HotpotQA item (missing or bad {error})."
            ) from None
    if config.limit is not None and config.limit < len(rows):
        rows = random.Random(config.seed).sample(rows, config.limit)
    write_jsonl(rows, Path(config.out))
    return len(rows)


def main(argv: Sequence[str] | None = None) -> int:
    """`prefrag train hotpot-convert`: convert and say how many questions were written."""
    from prefrag.training.config import parse_config

    (config,) = parse_config([HotpotConvertConfig], argv)
    written = convert(config)
    print(f"Wrote {written} questions to {config.out}.")
    return written
