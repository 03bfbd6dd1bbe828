"""What the tests of a real model behind every role share (llama.cpp server, Gemma in-process).

Each indexes two invented notes with `prefrag index`, points the settings at its model with
short replies and prompts, asks one question with `prefrag ask --reasoner llm --json`, and
checks what must hold however weak the model's replies are.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from prefrag.cli import app
from prefrag.jsonl import write_jsonl

runner = CliRunner()


def index_notes(folder: Path, rows: list[dict[str, str]], source: str = "ferries") -> None:
    """Index `rows` (id, title, text) as source `source` through `prefrag index`."""
    corpus = write_jsonl(rows, folder / f"{source}.jsonl")
    assert runner.invoke(app, ["index", str(corpus), "--source", source]).exit_code == 0


def use_model(monkeypatch: pytest.MonkeyPatch, model: str, **settings: str) -> None:
    """Every role on `model`: 32-token replies, 300-character documents, plus `settings`.

    `settings` are further `PREFRAG_*` variables by their lower-case names without the
    prefix (`role_deadline="900"`).
    """
    from prefrag.config import get_settings

    monkeypatch.setenv("PREFRAG_MODEL", model)
    monkeypatch.setenv("PREFRAG_MAX_TOKENS", "32")
    monkeypatch.setenv("PREFRAG_PROMPT_DOC_CHARS", "300")
    for name, value in settings.items():
        monkeypatch.setenv(f"PREFRAG_{name.upper()}", value)
    get_settings.cache_clear()


def ask_llm(question: str, source: str = "ferries") -> dict[str, Any]:
    """The `--json` record of `prefrag ask --reasoner llm` over `source`, one round, top 2."""
    result = runner.invoke(
        app,
        [
            *("ask", question, "--reasoner", "llm"),
            *("--source", source, "--no-web", "--max-iterations", "1", "--top-k", "2"),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    record: dict[str, Any] = json.loads(result.stdout)
    return record


def check_weak_model_record(record: dict[str, Any]) -> None:
    """What holds however a weak model replies: counts add up, nothing unread is trusted."""
    decisions, fallbacks = record["role_decisions"], record["role_fallbacks"]
    assert decisions.get("think", 0) >= 1 and record["model_calls"].get("think", 0) >= 1
    assert all(0 <= fallbacks.get(role, 0) <= count for role, count in decisions.items())
    assert all(r["label"] != "CORRECT" for r in record["reflections"] if r["fallback"])
    held = {d for step in record["route"] for d in step["used"]}
    assert {c["id"] for c in record["citations"]} <= held
    if fallbacks == decisions:
        assert record["abstained"] and not record["citations"]
