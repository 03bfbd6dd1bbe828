"""Fault injection on the web client and untrusted text: bounded reads, warned sizes,
no bidirectional controls on the terminal."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from typer.testing import CliRunner

from prefrag.cli import app

runner = CliRunner(env={"COLUMNS": "1000"})  # long temporary paths never wrap mid-word


def _serve(body) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            try:
                body(self.wfile)
            except OSError:  # the client hung up, as it should
                pass

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def endless():
    def flood(out) -> None:
        while True:
            out.write(b"<p>" + b"x" * 65_536 + b"</p>")

    yield from _serve(flood)


@pytest.fixture
def trickle():
    def drip(out) -> None:
        while True:
            out.write(b"<p>x</p>")
            out.flush()
            time.sleep(0.05)

    yield from _serve(drip)


def _bounded_client(timeout: float):
    from ddgs.http_client import HttpClient

    from prefrag.sources.web import bound_reads

    client = HttpClient(timeout=int(timeout))
    bound_reads(client, timeout)
    return client


def test_a_body_that_never_ends_stops_at_the_size_cap(endless):
    from ddgs.exceptions import DDGSException

    from prefrag.sources.web import MAX_RESPONSE_BYTES

    started = time.monotonic()
    with pytest.raises(DDGSException, match=f"over {MAX_RESPONSE_BYTES:,} bytes"):
        _bounded_client(5).get(endless)
    assert time.monotonic() - started < 5


def test_a_body_that_trickles_forever_stops_at_the_timeout(trickle):
    from ddgs.exceptions import TimeoutException

    started = time.monotonic()
    with pytest.raises(TimeoutException, match="not complete within 1 s"):
        _bounded_client(1).get(trickle)
    assert time.monotonic() - started < 4


def test_every_search_engine_reads_bounded():
    from prefrag.config import Settings
    from prefrag.sources.web import _ddgs_client

    client = _ddgs_client(Settings(web_timeout=3))
    engines = client._get_engines("text", "auto")  # type: ignore[attr-defined]
    assert engines and all(e.http_client._prefrag_bounded for e in engines)


# --- sizes and untrusted text -------------------------------------------------------------


def test_one_huge_document_gets_a_warning_with_its_size(tmp_path, monkeypatch):
    from prefrag.index import ingest_steps

    monkeypatch.setattr(ingest_steps, "LARGE_DOCUMENT_CHUNKS", 20)
    path = tmp_path / "tome.jsonl"
    words = " ".join(f"word{i}" for i in range(6_000))
    path.write_text(json.dumps({"id": "tome", "title": "The Tome", "text": words}) + "\n")
    result = runner.invoke(app, ["index", str(path), "--source", "tome"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    found = re.search(r"Document 'The Tome' \(0\.1 MB of text\) alone becomes (\d+) chunks", said)
    assert found and int(found.group(1)) > 20
    assert f"Embedding the {found.group(1)} new chunks took" in said


def test_bidirectional_controls_never_reach_the_terminal(tmp_path):
    path = tmp_path / "notes.jsonl"
    title = "Sage tea \u202eeulav on\u202c"
    path.write_text(
        json.dumps({"id": "s1", "title": title, "text": "Sage tea soothes sore throats."}) + "\n"
    )
    assert runner.invoke(app, ["index", str(path), "--source", "notes"]).exit_code == 0
    args = ["ask", "What soothes sore throats?", "--source", "notes", "--no-web"]
    shown = runner.invoke(app, args)
    assert shown.exit_code == 0 and "Sage tea" in shown.output
    assert "\u202e" not in shown.output and "\u202c" not in shown.output
    as_json = runner.invoke(app, [*args, "--json"])
    assert as_json.exit_code == 0
    assert "\u202e" not in as_json.stdout
    cited = json.loads(as_json.stdout)["citations"]
    assert any(c.get("title") == title for c in cited)  # the data itself is unchanged
