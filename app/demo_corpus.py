"""The demo corpus shipped with PrefRAG: short notes on medicines and their interactions.

The notes were written for the project (see `demo/README.md`) and are installed as package
data, so a fresh install can index them on first use under the source name `DEMO_SOURCE`.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

from prefrag.jsonl import read_rows

DEMO_SOURCE = "demo"
_PACKAGE = "prefrag"
_CORPUS_FILE = "medicines.jsonl"
_QUESTIONS_FILE = "questions.jsonl"


def _demo_file(name: str) -> Path:
    # The package is installed as plain files (wheel or editable), never zipped, so the
    # resource is a real path that the indexer can open like any user-supplied file.
    return Path(str(files(_PACKAGE).joinpath("demo", name)))


def demo_corpus_path() -> Path:
    """Path of the demo corpus JSONL (one document per line) inside the installed package.

    Returns:
        The path to `demo/medicines.jsonl`, ready to pass to the local indexer.
    """
    return _demo_file(_CORPUS_FILE)


def demo_questions() -> list[dict[str, Any]]:
    """The demo questions with their expected answers.

    Returns:
        One dict per question with `question`, `answer`, `kind` (`local`, `web`, `conflict`
        or `multihop`) and `supporting_ids` (ids of demo documents; empty for `web`).
    """
    path = _demo_file(_QUESTIONS_FILE)
    return read_rows(path)
