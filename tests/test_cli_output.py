"""What `prefrag ask` prints: users' own ids, and hostile document text kept inert."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from prefrag.cli import app
from prefrag.cli_text import plain

runner = CliRunner()


def _index(tmp_path: Path, rows: list[dict]) -> None:
    corpus = tmp_path / "notes.jsonl"
    corpus.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    result = runner.invoke(app, ["index", str(corpus), "--source", "notes"])
    assert result.exit_code == 0, result.output


def test_citations_name_the_users_document_id_and_chunk(tmp_path: Path) -> None:
    long_text = "Simvastatin levels rise with grapefruit juice. " + "Filler words here. " * 120
    _index(tmp_path, [{"id": "statins-07", "title": "Statins and grapefruit", "text": long_text}])
    args = ["ask", "What raises simvastatin levels?", "--source", "notes", "--no-web"]
    record = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    cited = record["citations"][0]
    assert cited["document"] == "statins-07"
    assert cited["chunk"] == 1
    text = runner.invoke(app, args, terminal_width=200).output
    assert "(statins-07#1)" in text


def test_hostile_titles_print_as_plain_text(tmp_path: Path) -> None:
    hostile = "Warfarin [/bold] [link=https://evil.example]click[/link] \x1b[31mred\x00"
    _index(
        tmp_path,
        [{"id": "w1", "title": hostile, "text": "Warfarin interacts with ibuprofen."}],
    )
    result = runner.invoke(
        app,
        ["ask", "What interacts with warfarin?", "--source", "notes", "--no-web"],
        terminal_width=200,
    )
    assert result.exit_code == 0, result.output
    assert "[/bold] [link=https://evil.example]click[/link]" in result.output
    assert "\x1b" not in result.output and "\x00" not in result.output


def test_printed_data_is_bounded_and_free_of_escape_sequences() -> None:
    assert len(plain("x" * 200_000)) == 2000
    assert plain("a\x1b]8;;https://evil\x07b\x1b[0m") == "ab"
