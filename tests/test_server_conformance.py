"""Replies in the shapes real OpenAI-compatible servers send, replayed through a loopback stub.

Every reply shape here is one a real server returns: vLLM's and llama.cpp's JSON-schema
output, llama.cpp's refusal of `response_format: json_schema` (it takes `json_object` with
a schema), `content: null` with tool calls, a reasoning model's `reasoning_content`,
refusals, empty choices, a garbage body and a reply cut at `max_tokens`. Each is sent to the
LLM reasoner as `prefrag ask --reasoner llm` builds it (ChatOpenAI, structured "auto"), and
a few go end to end through the CLI and the API. The documents are invented.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from stub_server import Reply, StubChatServer
from typer.testing import CliRunner

from prefrag.cli import app
from prefrag.config import Settings
from prefrag.documents import make_document
from prefrag.reasoners.factory import build_reasoner

runner = CliRunner()

QUESTION = "Which glaze did the potter Ilse Marrow fire at cone ten?"
HELD = [
    make_document(
        "Ilse Marrow ran a pottery on the Vell estuary from 1961.",
        id="held-1",
        source="notes",
        title="Marrow pottery",
    )
]
NEW = [
    make_document(
        'Marrow fired a celadon glaze at cone ten; her kiln log reads {"status": false}.',
        id="new-1",
        source="notes",
        title="Marrow kiln log",
    )
]
# llama-cpp-python 0.3.36's server refuses `json_schema` with HTTP 500 and this body (its
# pydantic validation error); other llama.cpp front ends answer 422 with a `detail` list.
LLAMA_CPP_REFUSAL = {
    "error": {
        "message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
        "'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", "
        "'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}",
        "type": "internal_server_error",
        "param": None,
        "code": None,
    }
}
LLAMA_CPP_422 = {
    "detail": [
        {
            "type": "literal_error",
            "loc": ["body", "response_format", "type"],
            "msg": "Input should be 'text' or 'json_object'",
            "input": "json_schema",
        }
    ]
}


def completion(message: dict[str, Any], *, finish_reason: str = "stop") -> dict[str, Any]:
    """A chat completion with one choice holding `message`."""
    return {
        "id": "chatcmpl-conformance",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "served-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", **message},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 50, "completion_tokens": 9, "total_tokens": 59},
    }


def text(content: str | None, **extra: Any) -> Callable[[dict[str, Any]], Reply]:
    """A server that answers every request with `content` (and `extra` message fields)."""
    return lambda request: completion({"content": content, **extra})


def cut(content: str) -> Callable[[dict[str, Any]], Reply]:
    """A server whose every reply stops at `max_tokens` after `content`."""
    return lambda request: completion({"content": content}, finish_reason="length")


def schema_kind(request: dict[str, Any]) -> str:
    return str((request.get("response_format") or {}).get("type") or "text")


def vllm(verdict: str) -> Callable[[dict[str, Any]], Reply]:
    """vLLM: honours `json_schema` (guided decoding), compact JSON; text otherwise."""

    def reply(request: dict[str, Any]) -> Reply:
        if schema_kind(request) == "json_schema":
            return completion({"content": verdict})
        return completion({"content": "I think so."})

    return reply


def llama_cpp(verdict: str, refusal: int = 500) -> Callable[[dict[str, Any]], Reply]:
    """llama.cpp's server: refuses `json_schema` (500, or 422); `json_object` + schema works."""

    def reply(request: dict[str, Any]) -> Reply:
        kind = schema_kind(request)
        if kind == "json_schema":
            return (500, LLAMA_CPP_REFUSAL) if refusal == 500 else (422, LLAMA_CPP_422)
        if kind == "json_object" and request["response_format"].get("schema"):
            return completion({"content": verdict})
        return completion({"content": "I think so."})

    return reply


def reasoner_for(url: str) -> Any:
    """The reasoner `prefrag ask --reasoner llm` builds against the server at `url`."""
    settings = Settings(openai_base_url=url, model="served-model", request_timeout=5)
    return build_reasoner(settings, reasoner="llm")


# --- the compare role against each server shape -------------------------------------------

TOOL_CALL = {
    "content": None,
    "tool_calls": [
        {
            "id": "call-1",
            "type": "function",
            "function": {
                "name": "CompareWire",
                "arguments": '{"analysis": "names the glaze", "status": true}',
            },
        }
    ],
}

# (server, expected status, expected fallback)
SHAPES: dict[str, tuple[Callable[[dict[str, Any]], Reply], bool, bool]] = {
    "vllm json_schema": (vllm('{"analysis":"names the glaze","status":true}'), True, False),
    "llama.cpp json_object+schema": (
        llama_cpp('{\n  "analysis": "true",\n  "status": false\n}'),
        False,
        False,
    ),
    # Gemma 3 270M behind llama.cpp copied the prompt's format example: no verdict.
    "llama.cpp json_object echoing the format example": (
        llama_cpp('{"analysis": "<your analysis here>", "status": false}'),
        True,
        True,
    ),
    "content null with a tool call": (text(None, tool_calls=TOOL_CALL["tool_calls"]), True, False),
    "reasoning_content beside the content": (
        text(
            '{"analysis": "names the glaze", "status": true}',
            reasoning_content='Maybe {"status": false}? No: it names the glaze.',
        ),
        True,
        False,
    ),
    "reasoning_content only (cut while thinking)": (
        text(None, reasoning_content='It could be {"status": false} but'),
        True,
        True,
    ),
    "refusal": (text(None, refusal="I can't help with that."), True, True),
    "empty choices": (
        lambda request: {**completion({"content": "x"}), "choices": []},
        True,
        True,
    ),
    "null choices": (lambda request: {**completion({"content": "x"}), "choices": None}, True, True),
    "garbage body": (lambda request: (200, "<html><body>Bad gateway</body></html>"), True, True),
    "truncated at max_tokens before the status": (
        cut('{"analysis": "The new document names the gla'),
        True,
        True,
    ),
    "truncated at max_tokens after the status": (
        cut('{"status": false, "analysis": "Already kno'),
        False,
        False,
    ),
    "own verdict first, then a quoted document object": (
        text(
            '{"analysis": "The log names the glaze.", "status": true}\n'
            'The kiln log itself reads {"status": false}.'
        ),
        True,
        False,
    ),
    # A server whose chat template does not match the model: the turn markers come back
    # and what follows them is the model writing the next turns, not its verdict.
    "chat-template tokens around a verdict": (
        text('[/INST] {"analysis": "Already known.", "status": false} </s><s>[INST]'),
        True,
        True,
    ),
    "Gemma turn markers around a verdict": (
        text('<start_of_turn>model\n{"analysis": "Already known.", "status": false}'),
        True,
        True,
    ),
    "quoted document object first, then the own verdict": (
        text(
            'The kiln log reads {"status": false}.\n'
            '{"analysis": "It names the glaze, which was missing.", "status": "False"}'
        ),
        False,
        False,
    ),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_compare_reads_each_server_shape_or_falls_back_safely(shape: str) -> None:
    server_reply, status, fallback = SHAPES[shape]
    with StubChatServer(reply=server_reply) as server:
        verdict = reasoner_for(server.url).compare(QUESTION, HELD, NEW)
    assert (verdict.status, verdict.fallback) == (status, fallback)
    # Structured, then text, then one repair: never more than three requests.
    # (llama.cpp: its 500 refusal is retried once by the client, then json_object.)
    assert 1 <= server.requests <= 3 + (2 if "llama" in shape else 0)


@pytest.mark.parametrize("refusal", [500, 422])
def test_llama_cpp_is_asked_for_json_object_once_refused_then_directly(refusal: int):
    verdict = '{"analysis": "new", "status": true}'
    with StubChatServer(reply=llama_cpp(verdict, refusal)) as server:
        reasoner = reasoner_for(server.url)
        first = reasoner.compare(QUESTION, HELD, NEW)
        second = reasoner.compare(QUESTION, HELD, NEW)
    kinds = [schema_kind(request) for request in server.received]
    # The OpenAI client retries a 500 once (PREFRAG_MAX_RETRIES), as any server error.
    refused = ["json_schema"] * (2 if refusal == 500 else 1)
    assert kinds == [*refused, "json_object", "json_object"]
    assert server.received[len(refused)]["response_format"]["schema"]["properties"]["status"] == {
        "description": "True if the new information is new and useful.",
        "title": "Status",
        "type": "boolean",
    }
    assert not first.fallback and not second.fallback


def test_an_unreadable_answer_abstains_and_a_quoted_id_is_not_invented():
    with StubChatServer(reply=text("")) as server:
        draft = reasoner_for(server.url).answer(QUESTION, [], NEW)
    assert draft.fallback and draft.abstained and draft.cited_ids == []


def echo(tail: str = "") -> Callable[[dict[str, Any]], Reply]:
    """A server whose model sends each prompt back (as a pretrained model does), then `tail`."""
    return lambda request: completion({"content": request["messages"][-1]["content"] + tail})


# Replies the answer role must not read as an answer: each parsed as one on the old code
# (the prompt's own `Final Answer: 1974 [doc-12]` example, or an answer after template
# tokens), and the echoes cited every document they repeated.
UNREADABLE_ANSWERS: dict[str, Callable[[dict[str, Any]], Reply]] = {
    "the prompt echoed": echo(),
    "the prompt echoed, then [/INST]": echo("\n[/INST] Final Answer: a celadon glaze [new-1]"),
    "Llama/Mistral markers": text("[INST] Final Answer: a celadon glaze [new-1] [/INST]"),
    "Gemma turn markers": text(
        "Final Answer: a celadon glaze [new-1]<end_of_turn>\n<start_of_turn>user"
    ),
    "ChatML markers": text(
        "<|im_start|>assistant\nFinal Answer: a celadon glaze [new-1]<|im_end|>"
    ),
    "Llama 3 markers": text("<|start_header_id|>assistant<|end_header_id|>\n\na celadon glaze"),
}


@pytest.mark.parametrize("shape", list(UNREADABLE_ANSWERS))
def test_an_answer_holding_the_template_or_the_prompt_is_no_answer(shape: str) -> None:
    with StubChatServer(reply=UNREADABLE_ANSWERS[shape]) as server:
        draft = reasoner_for(server.url).answer(QUESTION, [], [*HELD, *NEW])
    assert (draft.fallback, draft.abstained, draft.cited_ids) == (True, True, [])
    assert "celadon" not in draft.answer and "Question:" not in draft.answer


@pytest.mark.parametrize(
    "reply",
    [
        "Final Answer: a celadon glaze [new-1]",
        # quoting a document the prompt showed, and the question once, is still an answer
        "Thought: the kiln log says 'Marrow fired a celadon glaze at cone ten'.\n"
        f"Question: {QUESTION}\nFinal Answer: a celadon glaze [new-1]",
    ],
)
def test_an_answer_quoting_a_document_or_the_question_is_still_read(reply: str) -> None:
    with StubChatServer(reply=text(reply)) as server:
        draft = reasoner_for(server.url).answer(QUESTION, [], [*HELD, *NEW])
    assert (draft.answer, draft.cited_ids, draft.abstained) == ("a celadon glaze", ["new-1"], False)


# --- end to end: the CLI and the API ---------------------------------------------------------


@pytest.fixture
def notes(tmp_path, monkeypatch) -> None:
    corpus = tmp_path / "notes.jsonl"
    rows = [
        {"id": "m1", "title": "Marrow pottery", "text": HELD[0].page_content},
        {"id": "m2", "title": "Marrow kiln log", "text": NEW[0].page_content},
    ]
    corpus.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    assert runner.invoke(app, ["index", str(corpus), "--source", "notes"]).exit_code == 0


def _serve(monkeypatch: pytest.MonkeyPatch, server: StubChatServer) -> None:
    from prefrag.config import get_settings

    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("PREFRAG_MODEL", "served-model")
    monkeypatch.setenv("PREFRAG_REQUEST_TIMEOUT", "5")
    get_settings.cache_clear()


def _ask(*extra: str) -> dict[str, Any]:
    args = ["ask", QUESTION, "--source", "notes", "--no-web", "--json", *extra]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_cli_garbage_from_every_role_abstains_and_says_so(notes, monkeypatch):
    with StubChatServer(reply=text("~~ lorem ipsum ~~")) as server:
        _serve(monkeypatch, server)
        record = _ask("--reasoner", "llm")
    assert record["abstained"] is True
    assert record["citations"] == []
    assert all(r["label"] != "CORRECT" for r in record["reflections"])
    assert record["role_fallbacks"] == record["role_decisions"] and record["role_decisions"]
    assert any("Every role's reply was unreadable" in note for note in record["notes"])


@pytest.mark.parametrize("tail", ["", "\n[/INST] Question:"])
def test_cli_a_model_echoing_every_prompt_abstains(notes, monkeypatch, tail):
    """What the pretrained Gemma 3 270M did behind llama.cpp: each reply was the prompt
    again ("Question: ... [/INST] ..."). The old code read the echoed format example as
    the answer and the echoed label list as a CORRECT self-evaluation."""
    with StubChatServer(reply=echo(tail)) as server:
        _serve(monkeypatch, server)
        record = _ask("--reasoner", "llm")
    assert record["abstained"] is True
    assert record["citations"] == []
    assert "Question:" not in record["answer"] and "1974" not in record["answer"]
    assert all(r["label"] != "CORRECT" for r in record["reflections"])
    assert record["role_fallbacks"] == record["role_decisions"] and record["role_decisions"]


def test_cli_against_a_llama_cpp_server_answers_from_the_model(notes, monkeypatch):
    def reply(request: dict[str, Any]) -> Reply:
        kind = schema_kind(request)
        if kind == "json_schema":
            return 500, LLAMA_CPP_REFUSAL
        properties = (request.get("response_format") or {}).get("schema", {}).get("properties")
        if kind != "json_object" or not properties:
            return completion({"content": "?"})
        if "status" in properties:
            content = {"analysis": "names the glaze", "status": True}
        elif "label" in properties:
            content = {"label": "CORRECT", "explanation": "the log says so", "suggestion": ""}
        elif "cited_ids" in properties:
            prompt = request["messages"][-1]["content"]
            shown = re.findall(r"\[([^\]\s]+)\][^\[]*celadon", prompt)  # the kiln log's id
            content = {"rationale": "log", "answer": "a celadon glaze", "cited_ids": shown[:1]}
        elif "celadon" in request["messages"][-1]["content"]:  # the log was retrieved
            content = {
                "thought": "enough",
                "action": "answer",
                "query": "",
                "source": "",
                "answer": "a celadon glaze",
            }
        else:
            content = {
                "thought": "find the kiln log",
                "action": "search",
                "query": "Marrow glaze cone ten",
                "source": "",
                "answer": "",
            }
        return completion({"content": json.dumps(content)})

    with StubChatServer(reply=reply) as server:
        _serve(monkeypatch, server)
        record = _ask("--reasoner", "llm")
    assert record["abstained"] is False
    assert "celadon" in record["answer"]
    assert [c["title"] for c in record["citations"]] == ["Marrow kiln log"]
    assert sum(record["role_fallbacks"].values()) == 0
    assert record["reflections"][-1]["label"] == "CORRECT"


def test_cli_reasoner_option_is_honoured(notes, monkeypatch):
    with StubChatServer(reply=text("~~")) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        extractive = _ask("--reasoner", "extractive")
        assert server.requests == 0
        _serve(monkeypatch, server)
        llm = _ask("--reasoner", "llm")
    assert extractive["role_decisions"] and sum(extractive["role_fallbacks"].values()) == 0
    assert server.requests > 0 and llm["abstained"] is True


def test_api_reasoner_name_chooses_the_llm_reasoner(notes, monkeypatch):
    import prefrag

    with StubChatServer(reply=text("~~")) as server:
        _serve(monkeypatch, server)
        result = prefrag.ask(
            QUESTION, reasoner="llm", preferred_source="notes", fallback_sources=[]
        )
    assert server.requests > 0
    assert result["abstained"] is True and result["citations"] == []


def test_a_model_option_without_an_llm_reasoner_is_noted(notes):
    record = _ask("--plan-model", "hf:/nowhere/planner", "--use-planning")
    assert any("--plan-model hf:/nowhere/planner: no effect" in n for n in record["notes"])


def test_the_reasoner_flag_wins_over_an_environment_configured_for_a_model(notes, monkeypatch):
    """Env says "llm" (backend, URL, model all set); `--reasoner extractive` still wins, and a
    `--compare-model` flag wins over `PREFRAG_COMPARE_MODEL`."""
    import prefrag

    seen: list[str] = []

    def reply(request: dict[str, Any]) -> Reply:
        seen.append(request["model"])
        return completion({"content": "~~"})

    with StubChatServer(reply=reply) as server:
        _serve(monkeypatch, server)
        monkeypatch.setenv("PREFRAG_BACKEND", "openai")
        monkeypatch.setenv("PREFRAG_COMPARE_MODEL", "env-judge")
        extractive = _ask("--reasoner", "extractive")
        api_extractive = prefrag.ask(
            QUESTION, reasoner="extractive", preferred_source="notes", fallback_sources=[]
        )
        assert server.requests == 0
        assert extractive["abstained"] is False and api_extractive["abstained"] is False
        auto = _ask()  # the environment's choice: the model
        assert server.requests > 0 and auto["abstained"] is True
        assert "env-judge" in seen
        seen.clear()
        _ask("--compare-model", "flag-judge")
    assert "flag-judge" in seen and "env-judge" not in seen


def test_a_self_hosted_server_gets_the_reply_limit_as_max_tokens_too():
    """llama-cpp-python ignores `max_completion_tokens`: without `max_tokens` a reply ran on
    until the context was full (a 120 s request timeout against the real server)."""
    seen: list[dict[str, Any]] = []

    def reply(request: dict[str, Any]) -> Reply:
        seen.append(request)
        return completion({"content": '{"analysis": "new", "status": true}'})

    with StubChatServer(reply=reply) as server:
        settings = Settings(
            openai_base_url=server.url, model="served-model", request_timeout=5, max_tokens=7
        )
        build_reasoner(settings, reasoner="llm").compare(QUESTION, HELD, NEW)
    assert seen and all(r["max_tokens"] == 7 == r["max_completion_tokens"] for r in seen)


def test_json_object_requests_keep_the_reply_limit():
    """The `json_object` form llama.cpp is asked with keeps `max_tokens`: binding its
    response format must not drop the model's other request fields (a dropped limit let a
    real server generate until its context was full, minutes per call on two cores)."""
    with StubChatServer(reply=llama_cpp('{"analysis": "new", "status": true}', 422)) as server:
        settings = Settings(
            openai_base_url=server.url, model="served-model", request_timeout=5, max_tokens=7
        )
        build_reasoner(settings, reasoner="llm").compare(QUESTION, HELD, NEW)
    asked = [r for r in server.received if schema_kind(r) == "json_object"]
    assert asked and all(r["max_tokens"] == 7 for r in asked)
