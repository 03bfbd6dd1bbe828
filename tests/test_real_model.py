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
from served_model import ask_llm, check_weak_model_record, index_notes, use_model

from prefrag.small_model import small_model_available

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not small_model_available(), reason="needs the real-model extra (prefrag[real-model])"
    ),
]


def test_the_graph_runs_with_a_real_small_model_behind_every_role(tmp_path, monkeypatch):
    from prefrag.small_model import small_model_checkpoint

    checkpoint = small_model_checkpoint()
    rows = [
        {
            "id": "k1",
            "title": "Kestrel ferry",
            "text": "The Kestrel ferry crosses the Ambel "
            "sound twice a day and was built in 1952 at the Orrin yard.",
        },
        {"id": "k2", "title": "Orrin yard", "text": "The Orrin yard closed in 1979."},
    ]
    index_notes(tmp_path, rows)
    use_model(monkeypatch, f"hf:{checkpoint}", role_deadline="900")
    record = ask_llm("When was the Kestrel ferry built?")
    check_weak_model_record(record)
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
