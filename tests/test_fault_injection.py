"""Fault injection: hostile or broken inputs end in one clear sentence, never a traceback."""

from __future__ import annotations

import time

import pytest
from langchain_core.documents import Document
from typer.testing import CliRunner

from prefrag.cli import app
from prefrag.config import Settings
from prefrag.errors import ModelEndpointError
from prefrag.eval.stub_server import StubChatServer
from prefrag.models import make_chat_model
from prefrag.reasoners.llm import LLMReasoner

runner = CliRunner()
EVIDENCE = [Document("Warfarin interacts with ibuprofen.", metadata={"id": "d1", "title": "W"})]


def _reasoner(url: str, *, deadline: float | None = None) -> LLMReasoner:
    settings = Settings(openai_base_url=url, request_timeout=5, max_retries=0)
    model = make_chat_model("openai", "stub", settings)
    return LLMReasoner({"default": model}, structured=False, deadline=deadline)


# --- model endpoint -----------------------------------------------------------------------


def test_a_reply_without_choices_is_a_recorded_fallback():
    empty = {"id": "x", "object": "chat.completion", "created": 0, "model": "stub", "choices": []}
    with StubChatServer(reply=lambda request: empty) as server:
        reasoner = _reasoner(server.url)
        verdict = reasoner.compare("Does warfarin interact?", [], EVIDENCE)
        draft = reasoner.answer("What interacts with warfarin?", [], EVIDENCE)
    assert verdict.fallback and verdict.status is True  # keeps local, as documented
    assert draft.fallback


def test_a_hanging_endpoint_fails_at_the_role_deadline():
    with StubChatServer(latency=30) as server:
        reasoner = _reasoner(server.url, deadline=1.0)
        start = time.monotonic()
        with pytest.raises(ModelEndpointError, match="within 1 s"):
            reasoner.compare("Does warfarin interact?", [], EVIDENCE)
        assert time.monotonic() - start < 10  # not the client's 5 s x attempts


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("PREFRAG_BACKEND", "bogus", "Invalid setting PREFRAG_BACKEND='bogus'"),
        ("PREFRAG_REQUEST_TIMEOUT", "abc", "Invalid setting PREFRAG_REQUEST_TIMEOUT='abc'"),
    ],
)
def test_invalid_settings_are_one_sentence_and_exit_2(monkeypatch, variable, value, message):
    from prefrag.config import get_settings

    monkeypatch.setenv(variable, value)
    get_settings.cache_clear()
    result = runner.invoke(app, ["sources"])
    get_settings.cache_clear()
    assert result.exit_code == 2
    assert message in result.output.replace("\n", " ")
    assert "Traceback" not in result.output


# --- the checkpoint store -------------------------------------------------------------------


def _tiny_source(tmp_path) -> None:
    corpus = tmp_path / "notes.jsonl"
    corpus.write_text('{"id": "n1", "title": "Warfarin", "text": "Ibuprofen raises INR."}\n')
    assert runner.invoke(app, ["index", str(corpus), "--source", "notes"]).exit_code == 0


def test_a_corrupt_checkpoint_store_fails_thread_runs_only(tmp_path, _isolated_home):
    _tiny_source(tmp_path)
    (_isolated_home / "checkpoints.sqlite").write_bytes(b"not a database at all" * 100)
    args = ["ask", "What raises INR?", "--source", "notes", "--no-web"]
    threaded = runner.invoke(app, [*args, "--thread", "t1"])
    assert threaded.exit_code == 2
    assert "checkpoint store" in threaded.output and "cannot be used" in threaded.output
    assert "Traceback" not in threaded.output
    assert runner.invoke(app, args).exit_code == 0  # no --thread: the store is not touched


def test_an_unwritable_checkpoint_folder_is_one_sentence(tmp_path, monkeypatch):
    import sqlite3

    _tiny_source(tmp_path)

    def refuse(*args, **kwargs):
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(sqlite3, "connect", refuse)
    result = runner.invoke(
        app, ["ask", "What raises INR?", "--source", "notes", "--no-web", "--thread", "t2"]
    )
    assert result.exit_code == 2
    assert "unable to open database file" in result.output.replace("\n", " ")
