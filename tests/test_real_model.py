"""The whole graph with a real pretrained model behind every role, through the `hf` backend.

Gemma 3 270M (pretrained, no chat template; the `real-model` extra, `prefrag.small_model`)
answers every role of `prefrag ask --reasoner llm` on CPU. A weak real model's replies are
mostly not in the requested formats: the run must still end normally, count each role's
decisions and fallbacks, never record a CORRECT reflection it could not read, cite only
documents it holds, and abstain when every role fell back. Slow (minutes on two cores; the
first run also converts the GGUF once):

    .venv/bin/python -m pytest -m slow tests/test_real_model.py
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from prefrag.cli import app
from prefrag.small_model import small_model_available

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not small_model_available(), reason="needs the real-model extra (prefrag[real-model])"
    ),
]
runner = CliRunner()


def test_the_graph_runs_with_a_real_small_model_behind_every_role(tmp_path, monkeypatch):
    from prefrag.config import get_settings
    from prefrag.small_model import small_model_checkpoint

    checkpoint = small_model_checkpoint()
    corpus = tmp_path / "notes.jsonl"
    rows = [
        {
            "id": "k1",
            "title": "Kestrel ferry",
            "text": "The Kestrel ferry crosses the Ambel "
            "sound twice a day and was built in 1952 at the Orrin yard.",
        },
        {"id": "k2", "title": "Orrin yard", "text": "The Orrin yard closed in 1979."},
    ]
    corpus.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    assert runner.invoke(app, ["index", str(corpus), "--source", "ferries"]).exit_code == 0
    monkeypatch.setenv("PREFRAG_MODEL", f"hf:{checkpoint}")
    monkeypatch.setenv("PREFRAG_MAX_TOKENS", "32")
    monkeypatch.setenv("PREFRAG_PROMPT_DOC_CHARS", "300")
    monkeypatch.setenv("PREFRAG_ROLE_DEADLINE", "900")
    get_settings.cache_clear()
    result = runner.invoke(
        app,
        [
            "ask",
            "When was the Kestrel ferry built?",
            "--reasoner",
            "llm",
            "--source",
            "ferries",
            "--no-web",
            "--max-iterations",
            "1",
            "--top-k",
            "2",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    decisions, fallbacks = record["role_decisions"], record["role_fallbacks"]
    assert decisions.get("think", 0) >= 1 and record["model_calls"]["think"] >= 1
    assert all(0 <= fallbacks.get(role, 0) <= count for role, count in decisions.items())
    assert all(r["label"] != "CORRECT" for r in record["reflections"] if r["fallback"])
    held = {d for step in record["route"] for d in step["used"]}
    assert {c["id"] for c in record["citations"]} <= held
    if fallbacks == decisions:
        assert record["abstained"] and not record["citations"]
    print(
        json.dumps(
            {
                k: record[k]
                for k in (
                    "answer",
                    "abstained",
                    "role_decisions",
                    "role_fallbacks",
                    "model_calls",
                    "tokens",
                    "counters",
                )
            }
        )
    )
