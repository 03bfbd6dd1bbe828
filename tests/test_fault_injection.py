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
