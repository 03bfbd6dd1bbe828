"""The LLM path against a real OpenAI-compatible server: llama-cpp-python serving Gemma 3 270M.

Optional and slow. It needs llama-cpp-python with its server (`llama-cpp-python[server]`,
built from source: see docs/models.md) and the `real-model` extra (the Gemma GGUF); it is
skipped cleanly without them. It starts `python -m llama_cpp.server` on a free port with a
small context, then runs `prefrag ask --reasoner llm` and `prefrag train switcher-data
--policy` against it, with short replies (`PREFRAG_MAX_TOKENS`):

    PREFRAG_LLAMA_SERVER_TEST=1 .venv/bin/python -m pytest -m slow tests/test_llama_cpp_server.py -s

What a real server does that the conformance stubs only replay: llama.cpp refuses
`response_format: json_schema` and constrains output with `json_object` + schema; a weak
pretrained model's replies then go through parsing, repair and the recorded fallbacks.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from served_model import ask_llm, check_weak_model_record, index_notes, use_model
from typer.testing import CliRunner

from prefrag.cli import app
from prefrag.small_model import SMALL_MODEL_PACKAGE

SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        any(importlib.util.find_spec(name) is None for name in SERVER_MODULES),
        reason="needs llama-cpp-python with its server (pip install 'prefrag[llama-server]')",
    ),
    pytest.mark.skipif(
        importlib.util.find_spec(SMALL_MODEL_PACKAGE) is None,
        reason="needs the real-model extra (prefrag[real-model]) for the Gemma GGUF",
    ),
    # Minutes to tens of minutes of CPU on two cores: run only when asked for.
    pytest.mark.skipif(
        os.environ.get("PREFRAG_LLAMA_SERVER_TEST") != "1",
        reason="opt-in: set PREFRAG_LLAMA_SERVER_TEST=1 (a real llama.cpp server, slow)",
    ),
]
runner = CliRunner()
ALIAS = "gemma-3-270m"
READY_SECONDS = 180


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/models", timeout=2) as response:
            return response.status == 200 and ALIAS in response.read().decode()
    except OSError:
        return False


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`python -m llama_cpp.server` with the Gemma GGUF on a free port; its /v1 URL."""
    from importlib import import_module

    gguf = Path(import_module(SMALL_MODEL_PACKAGE).assemble())
    port = _free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    command = [
        *(sys.executable, "-m", "llama_cpp.server", "--model", str(gguf)),
        *("--model_alias", ALIAS, "--host", "127.0.0.1", "--port", str(port)),
        *("--n_ctx", "2048", "--n_threads", "2"),
    ]
    with log.open("w") as handle:
        server = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + READY_SECONDS
        while not _ready(url):
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not start:\n{log.read_text()[-2000:]}")
            time.sleep(1)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture
def served(llama_server: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_BASE_URL", llama_server)
    monkeypatch.setenv("OPENAI_API_KEY", "EMPTY")
    # A loaded two-core machine gives a few tokens per second (a 300-token prompt and a
    # 32-token reply took 70-100 s at a load of 8): generous limits, no client retries.
    use_model(
        monkeypatch,
        f"openai:{ALIAS}",
        request_timeout="600",
        max_retries="0",
        role_deadline="1800",
    )
    return llama_server


def test_prefrag_ask_against_llama_cpp_server(served, tmp_path, caplog):
    rows = [
        {
            "id": "f1",
            "title": "Tallow ferry",
            "text": "The Tallow ferry crosses the Brisk sound three times a day. It was "
            "built in 1961 at the Quell yard.",
        },
        {"id": "f2", "title": "Quell yard", "text": "The Quell yard closed in 1984."},
    ]
    index_notes(tmp_path, rows)
    caplog.set_level(logging.INFO, logger="prefrag")
    record = ask_llm("When was the Tallow ferry built?")
    # The model was asked and its replies were read or fell back, role by role.
    check_weak_model_record(record)
    assert sum(record["tokens"].values()) > 0
    # llama.cpp refuses json_schema; the client moved to json_object + schema.
    assert "refused response_format json_schema" in caplog.text
    decisions, fallbacks = record["role_decisions"], record["role_fallbacks"]
    rates = {role: f"{fallbacks.get(role, 0)}/{n}" for role, n in decisions.items()}
    print(
        "\nllama.cpp ask:",
        json.dumps(
            {
                "fallbacks/decisions": rates,
                "answer": record["answer"],
                "abstained": record["abstained"],
                "route": [
                    {k: step[k] for k in ("kind", "thought", "query", "verdict", "analysis")}
                    for step in record["route"]
                ],
                "reflections": [
                    {k: r.get(k) for k in ("label", "fallback")} for r in record["reflections"]
                ],
                "model_calls": record["model_calls"],
                "tokens": record["tokens"],
            }
        ),
    )


def test_switcher_data_with_a_policy_on_llama_cpp_server(served, tmp_path):
    dataset = tmp_path / "two_hop.jsonl"
    rows = [
        {
            "question_id": f"w{q}",
            "question_text": f"Which river runs past the mill of {town}?",
            "answers_objects": [{"spans": [river]}],
            "contexts": [
                {
                    "id": "0",
                    "title": f"{town} mill",
                    "paragraph_text": f"The {town} mill stands on the bank of the {river}.",
                    "is_supporting": True,
                },
                {
                    "id": "1",
                    "title": river,
                    "paragraph_text": f"The {river} is a slow river fed by moorland streams.",
                    "is_supporting": True,
                },
                {
                    "id": "2",
                    "title": f"{town} fair",
                    "paragraph_text": f"{town} holds a wool fair every autumn.",
                    "is_supporting": False,
                },
            ],
        }
        for q, (town, river) in enumerate((("Harrowby", "Lenn"), ("Ottershaw", "Carrow")))
    ]
    dataset.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    out = tmp_path / "pairs.jsonl"
    result = runner.invoke(
        app,
        [
            *("train", "switcher-data", "--dataset", str(dataset), "--out", str(out)),
            *("--policy", f"openai:{ALIAS}", "--policy_base_url", served, "--samples", "1"),
            *("--max_iterations", "1", "--top_k_range", "2-2", "--concurrency", "1"),
            "--no_progress",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(out.with_name("pairs.jsonl.summary.json").read_text())
    assert summary["questions"] == 2 and summary["failed"] == 0
    log = out.with_name("pairs.jsonl.collect.jsonl")
    questions = [r for r in map(json.loads, log.open()) if "question_id" in r]
    assert sorted(r["question_id"] for r in questions) == ["w0", "w1"]
    assert not any(r.get("error") for r in questions)
    pairs = [json.loads(line) for line in out.open()] if out.exists() else []
    assert len(pairs) == summary["pairs"] <= 2
    for pair in pairs:  # the chosen side is the teacher's verdict in the runtime's JSON
        assert json.loads(pair["chosen"][-1]["content"])["status"] in (True, False)
    judged = {r["question_id"]: [r.get("judged"), r.get("drops")] for r in questions}
    print("\nllama.cpp switcher-data:", json.dumps({**summary, "per question": judged}))
