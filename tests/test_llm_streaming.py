"""Model tokens stream from an OpenAI-compatible server through the graph, deadline on.

The server is the loopback stub answering `"stream": true` with server-sent chunks as
vLLM and llama.cpp do; the reasoner is the one a run with `reasoner="llm"` builds from the
settings (ChatOpenAI, structured output "auto"), and the graph is the one `langgraph dev`
serves. The notes are invented.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from stub_server import StubChatServer
from typer.testing import CliRunner

from prefrag.cli import app
from prefrag.config import Settings, get_settings
from prefrag.graphs.context import Context
from prefrag.graphs.graph import build_graph

QUESTION = "Which glaze did the potter Ilse Marrow fire at cone ten?"
ROWS = [
    {"id": "m1", "title": "Marrow pottery", "text": "Ilse Marrow ran a pottery from 1961."},
    {"id": "m2", "title": "Marrow kiln log", "text": "Marrow fired a celadon glaze at cone ten."},
]


@pytest.fixture
def served_notes(tmp_path, monkeypatch) -> Iterator[StubChatServer]:
    """Indexed notes and a streaming-capable stub server the settings point at."""
    corpus = tmp_path / "notes.jsonl"
    corpus.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    assert CliRunner().invoke(app, ["index", str(corpus), "--source", "notes"]).exit_code == 0
    server = StubChatServer().start()
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("PREFRAG_MODEL", "served-model")
    monkeypatch.setenv("PREFRAG_REQUEST_TIMEOUT", "5")
    get_settings.cache_clear()
    yield server
    server.stop()


def test_a_streaming_server_s_tokens_reach_stream_mode_messages(served_notes) -> None:
    deadline = Settings().role_deadline
    events: list[Any] = list(
        build_graph().stream(
            {"question": QUESTION},
            context=Context(reasoner="llm", preferred_source="notes", fallback_sources=[]),
            stream_mode="messages",
        )
    )
    asked = served_notes.received
    streamed = [request for request in asked if request.get("stream")]
    by_node: dict[str, list[str]] = {}
    for chunk, metadata in events:
        by_node.setdefault(metadata["langgraph_node"], []).append(str(chunk.content))
    assert deadline > 0  # the default role deadline is on
    assert streamed and len(streamed) == len(asked)  # every role call asked to stream
    assert {"think", "answer", "self_reflect"} <= set(by_node)
    # Tokens, not whole replies: the answer role's reply came in several pieces.
    answer_pieces = [piece for piece in by_node["answer"] if piece]
    assert len(answer_pieces) > 3
    assert "stub answer" in "".join(answer_pieces)
