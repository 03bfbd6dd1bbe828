"""`langgraph dev` serves the graph offline; one question runs through its HTTP API."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
LANGGRAPH = Path(sys.executable).parent / "langgraph"


def _free_port() -> int:
    # Port 2024 may be taken; the server would then silently pick another, so choose ours.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def studio_server(tmp_path: Path, _isolated_home: Path) -> Iterator[str]:
    if not LANGGRAPH.exists() and shutil.which("langgraph") is None:
        pytest.skip("langgraph-cli is not installed (dev extra)")
    port = _free_port()
    env = os.environ | {
        "PREFRAG_HOME": str(_isolated_home),
        "PREFRAG_WEB_ENABLED": "false",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "HF_HUB_OFFLINE": "1",
    }
    command = [
        str(LANGGRAPH) if LANGGRAPH.exists() else "langgraph",
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
    assert nodes[0] == "think" and nodes[1] == "retrieve_local"
    assert nodes[-2:] == ["answer", "self_reflect"]
    state = client.threads.get_state(thread["thread_id"])
    values = state["values"]
    assert values["answer"]
    assert values["citations"] and values["citations"][0]["source"] == "demo"
