"""`langgraph dev` serves the graph offline; one question runs through its HTTP API."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    # Port 2024 may be taken; the server would then silently pick another, so choose ours.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def model_server() -> Iterator[Any]:
    """A loopback OpenAI-compatible stub (it streams when asked) the Studio server can use.

    Only its URL is configured, no model name, so runs stay on the extractive reasoner
    unless their context names models.
    """
    from stub_server import StubChatServer

    with StubChatServer() as server:
        yield server


@pytest.fixture(scope="module")
def studio_server(tmp_path_factory: pytest.TempPathFactory, model_server: Any) -> Iterator[str]:
    if importlib.util.find_spec("langgraph_cli") is None:
        pytest.skip("langgraph-cli is not installed (dev extra)")
    port = _free_port()
    home = tmp_path_factory.mktemp("studio-home")
    env = os.environ | {
        "PREFRAG_HOME": str(home),
        "PREFRAG_WEB_ENABLED": "false",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "HF_HUB_OFFLINE": "1",
        "OPENAI_BASE_URL": model_server.url,
        "PREFRAG_REQUEST_TIMEOUT": "10",
    }
    # This interpreter's langgraph-cli: a copied virtualenv's `langgraph` script may still
    # name the interpreter (and so the prefrag) it was installed for.
    command = [
        sys.executable,
        "-m",
        "langgraph_cli",
        "dev",
        "--no-browser",
        "--no-reload",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    process = subprocess.Popen(
        command,
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    ready = threading.Event()
    output: list[str] = []

    def _watch() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line)
            if "Application startup complete" in line or (f":{port}" in line and "API" in line):
                ready.set()
        ready.set()

    threading.Thread(target=_watch, daemon=True).start()
    try:
        if not ready.wait(timeout=120) or process.poll() is not None:
            pytest.fail("langgraph dev did not start:\n" + "".join(output[-30:]))
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.mark.slow
def test_question_through_langgraph_dev(studio_server: str) -> None:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=studio_server)
    assistants = client.assistants.search(graph_id="prefrag")
    assert assistants, "the prefrag graph is not registered"
    thread = client.threads.create()
    nodes: list[str] = []
    for part in client.runs.stream(
        thread["thread_id"],
        "prefrag",
        input={"question": "Which medicines interact with warfarin?"},
        context={"top_k": 3, "fallback_sources": []},
        stream_mode="updates",
    ):
        if part.event == "updates" and isinstance(part.data, dict):
            nodes.extend(part.data)
    assert nodes[:5] == [
        "new_question",
        "condense_question",
        "think",
        "retrieve_local",
        "mog_select",
    ]
    assert nodes[-2:] == ["answer", "self_reflect"]
    state = client.threads.get_state(thread["thread_id"])
    values: Any = state["values"]
    assert values["answer"]
    assert values["citations"] and values["citations"][0]["source"] == "demo"


@pytest.mark.slow
def test_model_tokens_stream_through_langgraph_dev(studio_server: str, model_server: Any) -> None:
    """Studio's token stream: the LLM roles' replies arrive as chunks, deadline on."""
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=studio_server)
    thread = client.threads.create()
    roles = ("think", "compare", "answer", "reflect", "plan", "condense")
    context: dict[str, Any] = {
        "top_k": 3,
        "fallback_sources": [],
        "max_reflections": 0,
        "reasoner": "llm",
        **{f"{role}_model": "served-model" for role in roles},
    }
    asked_before = model_server.requests
    chunks: list[tuple[str, str]] = []  # (node, content) per streamed message chunk
    for part in client.runs.stream(
        thread["thread_id"],
        "prefrag",
        input={"question": "Which medicines interact with warfarin?"},
        context=context,
        stream_mode="messages-tuple",
    ):
        if part.event == "messages" and isinstance(part.data, list) and len(part.data) == 2:
            message, metadata = part.data
            chunks.append((metadata.get("langgraph_node", ""), str(message.get("content", ""))))
    asked = model_server.received[asked_before:]
    assert asked and all(request.get("stream") for request in asked)
    answer_pieces = [content for node, content in chunks if node == "answer" and content]
    assert len(answer_pieces) > 3, chunks[:20]
    assert "stub answer" in "".join(answer_pieces)
    assert {"think", "answer"} <= {node for node, _ in chunks}


@pytest.mark.slow
def test_studio_gets_input_and_output_forms(studio_server: str) -> None:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=studio_server)
    (assistant,) = client.assistants.search(graph_id="prefrag")
    schemas: Any = client.assistants.get_schemas(assistant["assistant_id"])
    assert schemas["input_schema"] is not None, "Studio would show no input form"
    assert list(schemas["input_schema"]["properties"]) == ["question"]
    assert schemas["output_schema"] is not None, "Studio would show no output view"
    assert set(schemas["output_schema"]["properties"]) >= {
        "answer",
        "citations",
        "route",
        "counters",
        "reflections",
        "history",
    }
    assert {
        "top_k",
        "compare_model",
        "use_polyview",
        "plan_model",
        "use_planning",
        "rationale_queries",
        "use_evidence_filter",
    } <= set(schemas["context_schema"]["properties"])


@pytest.mark.slow
def test_second_question_on_a_studio_thread_is_a_fresh_episode(studio_server: str) -> None:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=studio_server)
    thread = client.threads.create()
    context: dict[str, Any] = {"top_k": 3, "fallback_sources": [], "max_reflections": 0}
    questions = ["Which medicines interact with warfarin?", "What is paracetamol used for?"]
    outputs = [
        client.runs.wait(thread["thread_id"], "prefrag", input={"question": q}, context=context)
        for q in questions
    ]
    first, second = outputs
    assert isinstance(first, dict) and isinstance(second, dict)
    assert second["question"] == questions[1]
    assert [step["index"] for step in second["route"]] == list(range(len(second["route"])))
    assert len(second["route"]) <= 3  # max_iterations of one episode, not two
    assert second["counters"]["local_total"] == len(second["route"])
    assert [turn["question"] for turn in second["history"]] == [questions[0]]
    assert second["history"][0]["answer"] == first["answer"]


@pytest.mark.slow
def test_a_follow_up_on_a_studio_thread_is_rewritten_before_retrieval(studio_server: str) -> None:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=studio_server)
    thread = client.threads.create()
    context: dict[str, Any] = {"top_k": 3, "fallback_sources": [], "max_reflections": 0}
    first, follow_up = "Can I take ibuprofen with warfarin?", "What should I take for pain instead?"
    client.runs.wait(thread["thread_id"], "prefrag", input={"question": first}, context=context)
    output = client.runs.wait(
        thread["thread_id"], "prefrag", input={"question": follow_up}, context=context
    )
    assert isinstance(output, dict)
    assert output["question"] == follow_up
    assert "ibuprofen" in output["standalone_question"]
    assert output["route"][0]["query"] == output["standalone_question"]
    assert any("rewritten" in note for note in output["notes"])
    assert [turn["question"] for turn in output["history"]] == [first]
    standalone = "Which medicines interact with warfarin?"
    again = client.runs.wait(
        thread["thread_id"], "prefrag", input={"question": standalone}, context=context
    )
    assert isinstance(again, dict) and again["standalone_question"] == standalone


@pytest.mark.slow
@pytest.mark.parametrize(
    ("run_input", "extra_context", "error", "message"),
    [
        ({"question": 42}, {}, "InvalidQuestionError", "must be text, not int"),
        ({"question": "why " * 250_000}, {}, "InvalidQuestionError", "over the limit of 2,000"),
        ({"question": "What is warfarin?"}, {"top_kk": 3}, "ConfigurationError", "['top_kk']"),
        (
            {"question": "What is warfarin?"},
            {"polyview_views": ["SAT"]},
            "ConfigurationError",
            "polyview_views takes one or more",
        ),
    ],
)
def test_studio_refuses_bad_input_in_one_sentence(
    studio_server: str, run_input: dict, extra_context: dict, error: str, message: str
) -> None:
    import time

    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=studio_server)
    thread = client.threads.create()
    context: dict[str, Any] = {"top_k": 3, "fallback_sources": [], **extra_context}
    start = time.monotonic()
    output = client.runs.wait(
        thread["thread_id"], "prefrag", input=run_input, context=context, raise_error=False
    )
    assert time.monotonic() - start < 30  # refused at once, the worker is not held
    assert isinstance(output, dict) and "__error__" in output, output
    assert output["__error__"]["error"] == error
    assert message in output["__error__"]["message"]
