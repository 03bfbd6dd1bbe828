"""A tiny OpenAI-chat-compatible server with fixed latency, for throughput tests offline.

It answers `POST /v1/chat/completions` (and `GET /v1/models`) on the loopback interface
only. Replies are deterministic: with a JSON-schema `response_format` it returns an object
that fits the schema (two searches then an answer, then an answer; a
"True" switcher verdict; a CORRECT reflection); otherwise a ReAct-style text answer. Each
request waits `latency` seconds before replying, like a remote model would, and the server
refuses to start on a non-loopback address and stops accepting after `max_requests`.
A request with `"stream": true` gets the same reply as server-sent events, the way
OpenAI-compatible servers stream: `chat.completion.chunk` objects, the role first, then
the content a few characters at a time, a last chunk with the `finish_reason` (and a usage
chunk when `stream_options.include_usage` asks for one), then `data: [DONE]`.

    with StubChatServer(latency=0.2) as server:
        settings = settings.model_copy(update={"openai_base_url": server.url, ...})
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# What a reply function returns: a 200 JSON payload, or (HTTP status, JSON payload or text).
Reply = dict[str, Any] | tuple[int, dict[str, Any] | str]

_MAX_BODY = 4 * 1024 * 1024
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_QUERY = "alpha beta stub query"


class StubChatServer:
    """Serve fixed-latency OpenAI chat completions on a free loopback port."""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        max_requests: int = 100_000,
        reply: Callable[[dict[str, Any]], Reply] | None = None,
    ) -> None:
        """Serve on `host:port` (0: a free port).

        `reply` replaces the default completion (for fault and conformance tests): it gets
        the request body and returns the JSON payload of a 200 reply, or `(status, body)`
        with a JSON payload or raw text (a garbage body); `latency` is waited before every
        reply. Every request body is kept in `received`.
        """
        if host not in _LOOPBACK:
            raise ValueError("The stub server only listens on the loopback interface.")
        self.latency = latency
        self.max_requests = max_requests
        self.reply = reply or completion
        self.requests = 0
        self.received: list[dict[str, Any]] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, port), _handler_for(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL for OpenAI clients (`.../v1`)."""
        host, port = self._server.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else host
        return f"http://{name}:{port}/v1"

    def start(self) -> StubChatServer:
        """Serve in a background thread."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="stub-chat", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()
        if self._thread:
            self._thread.join(timeout=5)

    def __enter__(self) -> StubChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _admit(self) -> bool:
        with self._lock:
            if self.requests >= self.max_requests:
                return False
            self.requests += 1
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            return True

    def _release(self) -> None:
        with self._lock:
            self._in_flight -= 1


def _handler_for(server: StubChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return  # quiet: benchmarks print their own numbers

        def _send(self, status: int, payload: dict[str, Any] | str) -> None:
            raw = isinstance(payload, str)
            body = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/html" if raw else "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _send_events(self, chunks: list[dict[str, Any]]) -> None:
            events = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks]
            body = "".join([*events, "data: [DONE]\n\n"]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": "stub", "object": "model"}]})
            else:
                self._send(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length > _MAX_BODY:
                self._send(413, {"error": {"message": "request too large"}})
                return
            try:
                request = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                self._send(400, {"error": {"message": "invalid JSON"}})
                return
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": "not found"}})
                return
            if not server._admit():
                self._send(429, {"error": {"message": "stub request budget spent"}})
                return
            try:
                if server.latency > 0:
                    time.sleep(server.latency)  # the simulated model time
                with server._lock:
                    server.received.append(request)
                reply = server.reply(request)
                status, payload = reply if isinstance(reply, tuple) else (200, reply)
                if status == 200 and request.get("stream") and isinstance(payload, dict):
                    self._send_events(stream_chunks(payload, request))
                else:
                    self._send(status, payload)
            finally:
                server._release()

    return Handler


def completion(request: dict[str, Any]) -> dict[str, Any]:
    """The chat completion the stub returns for `request`."""
    prompt = "\n".join(str(m.get("content", "")) for m in request.get("messages", []))
    response_format = request.get("response_format") or {}
    schema = (response_format.get("json_schema") or {}).get("schema")
    if schema:
        content = json.dumps(_instance(schema, prompt, schema))
    else:
        content = _text_reply(prompt)
    prompt_tokens = len(prompt.split())
    completion_tokens = len(content.split())
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "stub"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _streamable(payload: Any) -> bool:
    """Whether `payload` is a chat completion whose one message can be sent as chunks."""
    choices = payload.get("choices") if isinstance(payload, dict) else None
    return (
        isinstance(choices, list) and bool(choices) and isinstance(choices[0].get("message"), dict)
    )


def stream_chunks(payload: dict[str, Any], request: dict[str, Any]) -> list[dict[str, Any]]:
    """The chat completion `payload` as the chunks a streaming server sends for `request`.

    A payload with no message to stream (empty choices, an error object) goes out as one
    event, as a server would send its error.

    Content goes out in pieces of a few characters (several tokens' worth, as servers
    batch them); tool calls, when the message has them, go in one delta.
    """
    if not _streamable(payload):
        return [payload]
    message = payload["choices"][0]["message"]
    finish = payload["choices"][0].get("finish_reason") or "stop"
    content = message.get("content") or ""
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"content": content[i : i + 6]} for i in range(0, len(content), 6)]
    if message.get("tool_calls"):
        deltas.append(
            {"tool_calls": [{"index": n, **call} for n, call in enumerate(message["tool_calls"])]}
        )
    head = {key: payload[key] for key in ("id", "created", "model") if key in payload}
    choices: list[dict[str, Any]] = [
        *({"index": 0, "delta": delta, "finish_reason": None} for delta in deltas),
        {"index": 0, "delta": {}, "finish_reason": finish},
    ]
    chunks = [{**head, "object": "chat.completion.chunk", "choices": [c]} for c in choices]
    if (request.get("stream_options") or {}).get("include_usage") and payload.get("usage"):
        chunks.append(
            {**head, "object": "chat.completion.chunk", "choices": [], "usage": payload["usage"]}
        )
    return chunks


def _text_reply(prompt: str) -> str:
    if '"status"' in prompt or ("status" in prompt.lower() and "analysis" in prompt.lower()):
        return '{"analysis": "The new documents add information.", "status": "True"}'
    if "Self-Evaluation" in prompt or "self-evaluation" in prompt.lower():
        return "Final Answer: stub\nSelf-Evaluation: CORRECT\nExplanation: supported."
    return "Thought: I know enough.\nFinal Answer: stub"


def _instance(schema: dict[str, Any], prompt: str, root: dict[str, Any], key: str = "") -> Any:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return _instance(root.get("$defs", {}).get(name, {}), prompt, root, key)
    for combo in ("anyOf", "oneOf", "allOf"):
        if combo in schema:
            options = [s for s in schema[combo] if s.get("type") != "null"] or schema[combo]
            return _instance(options[0], prompt, root, key)
    if "enum" in schema:
        return _choose(schema["enum"], prompt, key)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return {
            name: _instance(sub, prompt, root, name)
            for name, sub in schema.get("properties", {}).items()
        }
    if kind == "array":
        return []
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return 0
    if key == "status":
        return "True"
    if key == "label":
        return "CORRECT"
    if key == "query":
        return _QUERY
    if key == "answer":
        return "stub answer"
    return "stub"


def _choose(options: list[Any], prompt: str, key: str) -> Any:
    if key == "action" and {"search", "answer"} <= set(options):
        # Search twice (the stub's own earlier queries show in the scratchpad), then answer.
        return "answer" if prompt.count(_QUERY) >= 2 else "search"
    for preferred in ("CORRECT", "True", True):
        if preferred in options:
            return preferred
    return options[0]
