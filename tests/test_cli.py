"""The `prefrag` command line as a user drives it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prefrag.cli import app

runner = CliRunner()


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return _write_jsonl(
        tmp_path / "notes.jsonl",
        [
            {
                "id": "n1",
                "title": "Warfarin and NSAIDs",
                "text": "Ibuprofen raises the "
                "bleeding risk of warfarin; paracetamol is the usual alternative.",
                "date": "2020",
            },
            {
                "id": "n2",
                "title": "Statins and grapefruit",
                "text": "Grapefruit juice raises simvastatin levels through CYP3A4 inhibition.",
                "date": "2019",
            },
        ],
    )


def test_index_is_idempotent_and_listed(corpus: Path) -> None:
    first = runner.invoke(app, ["index", str(corpus), "--source", "notes"])
    assert first.exit_code == 0, first.output
    assert "added" in first.output
    again = runner.invoke(app, ["index", str(corpus), "--source", "notes"])
    assert again.exit_code == 0
    assert "0 chunks added" in again.output
    listing = runner.invoke(app, ["sources"])
    assert "notes" in listing.output


def test_ask_json_has_answer_citations_route_counters(corpus: Path) -> None:
    runner.invoke(app, ["index", str(corpus), "--source", "notes"])
    result = runner.invoke(
        app, ["ask", "What raises simvastatin levels?", "--source", "notes", "--json", "--no-web"]
    )
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert set(record) >= {"answer", "citations", "route", "counters"}
    # The note that says what raises simvastatin levels answers, and is cited.
    assert "grapefruit" in record["answer"].lower(), record["answer"]
    assert [c["title"] for c in record["citations"]] == ["Statins and grapefruit"]
    assert record["route"][0]["searched"] == ["notes"]
    assert {c["id"] for c in record["citations"]} <= {
        d for step in record["route"] for d in step["used"]
    }


@pytest.mark.slow
def test_thread_shows_a_stored_run(corpus: Path) -> None:
    runner.invoke(app, ["index", str(corpus), "--source", "notes"])
    args = ["ask", "What raises simvastatin levels?", "--source", "notes", "--no-web"]
    first = runner.invoke(app, [*args, "--json", "--thread", "t1"])
    shown = runner.invoke(app, ["ask", "--thread", "t1", "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["answer"] == json.loads(first.stdout)["answer"]
    # A follow-up question on the thread is a fresh episode; the first turn is history.
    other = runner.invoke(app, ["ask", "What does ibuprofen do with warfarin?", "--thread", "t1"])
    assert other.exit_code == 0, other.output
    latest = runner.invoke(app, ["ask", "--thread", "t1", "--json"])
    record = json.loads(latest.stdout)
    assert record["question"] == "What does ibuprofen do with warfarin?"
    assert [turn["question"] for turn in record["history"]] == ["What raises simvastatin levels?"]
    assert len(record["route"]) <= 3  # this episode's steps only


def test_runs_without_a_thread_store_nothing(corpus: Path, _isolated_home: Path) -> None:
    runner.invoke(app, ["index", str(corpus), "--source", "notes"])
    done = runner.invoke(app, ["ask", "What raises simvastatin levels?", "--no-web"])
    assert done.exit_code == 0, done.output
    assert not (_isolated_home / "checkpoints.sqlite").exists()


def test_resuming_a_thread_keeps_the_settings_it_started_with(corpus: Path) -> None:
    from prefrag.checkpoints import open_checkpointer
    from prefrag.graphs.context import Context
    from prefrag.graphs.graph import build_graph
    from prefrag.sources.defaults import default_sources

    runner.invoke(app, ["index", str(corpus), "--source", "notes"])
    settings = Context(preferred_source="notes", top_k=1, fallback_sources=[], max_reflections=0)
    with open_checkpointer() as checkpointer:  # a run interrupted after its first search
        graph = build_graph(sources=default_sources(web=False), checkpointer=checkpointer)
        graph.invoke(
            {"question": "What raises simvastatin levels?"},
            config={"configurable": {"thread_id": "t2"}},
            context=settings,
            interrupt_after=["retrieve_local"],
        )
    resumed = runner.invoke(app, ["ask", "--thread", "t2", "--json"])
    assert resumed.exit_code == 0, resumed.output
    record = json.loads(resumed.stdout)
    assert record["answer"]
    assert record["reflections"] == []  # max_reflections=0, not the default 1
    assert all(len(step["retrieved"]) <= 1 for step in record["route"])  # top_k=1
    assert not any("web" in note for note in record["notes"])  # no fallback configured


def test_every_run_setting_is_an_ask_option() -> None:
    from dataclasses import fields

    import typer

    from prefrag.graphs.context import Context
    from prefrag.run_options import option_name

    command = typer.main.get_command(app).commands["ask"]  # type: ignore[attr-defined]
    offered = {opt for param in command.params for opt in param.opts}
    for field in fields(Context):
        assert option_name(field.name) in offered, field.name


def test_ask_options_reach_the_run(corpus: Path) -> None:
    runner.invoke(app, ["index", str(corpus), "--source", "notes"])
    args = ["ask", "What raises simvastatin levels?", "-s", "notes", "--json", "--no-web"]
    result = runner.invoke(app, [*args, "--max-reflections", "0", "--top-k", "1"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["reflections"] == [] and len(record["route"][0]["retrieved"]) == 1
    for bad_k in ("0", "-3"):
        bad = runner.invoke(app, [*args, "--top-k", bad_k])
        assert bad.exit_code == 2 and "top_k" in bad.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ask", "   "], "empty"),
        (["ask", "q?", "--source", "nope", "--no-web"], "Unknown source 'nope'"),
        (["ask", "--thread", "never-ran"], "No stored run"),
    ],
)
def test_bad_input_is_one_sentence_and_exit_2(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_malformed_jsonl_names_the_line_and_writes_nothing(tmp_path: Path, corpus: Path) -> None:
    runner.invoke(app, ["index", str(corpus), "--source", "notes"])
    before = runner.invoke(app, ["sources"]).output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"title": "ok", "text": "fine"}\n{"title": broken\n')
    result = runner.invoke(app, ["index", str(bad), "--source", "notes"])
    assert result.exit_code == 2
    assert "bad.jsonl" in result.output and "2" in result.output
    assert runner.invoke(app, ["sources"]).output == before


def test_unreadable_file_is_a_clear_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["index", str(tmp_path / "missing.jsonl"), "--source", "x"])
    assert result.exit_code == 2
    assert "missing.jsonl" in result.output


@pytest.mark.slow
def test_mog_index_router_training_and_ask_with_tool_nodes(corpus: Path, tmp_path: Path) -> None:
    built = runner.invoke(app, ["index", str(corpus), "--source", "notes", "--mog"])
    assert built.exit_code == 0, built.output
    assert "MoG index built" in built.output
    train = _write_jsonl(
        tmp_path / "train.jsonl",
        [
            {"question": "What raises simvastatin levels?", "answer": "Grapefruit juice"},
            {"question": "What raises the bleeding risk of warfarin?", "answer": "Ibuprofen"},
        ],
    )
    trained = runner.invoke(
        app, ["train", "mog-router", "--source", "notes", "--data", str(train), "--epochs", "5"]
    )
    assert trained.exit_code == 0, trained.output
    result = runner.invoke(
        app,
        [
            "ask",
            "What raises simvastatin levels?",
            "--source",
            "notes",
            "--no-web",
            "--mog",
            "--polyview",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert any("MoG on 'notes'" in note and "trained router" in note for note in record["notes"])
    assert record["answer"]


def test_router_training_without_a_mog_index_is_a_clear_error(corpus: Path) -> None:
    runner.invoke(app, ["index", str(corpus), "--source", "notes"])
    result = runner.invoke(app, ["train", "mog-router", "--source", "notes", "--data", str(corpus)])
    assert result.exit_code == 2
    assert "has no MoG index" in result.output


def test_unreachable_model_endpoint_is_one_sentence_and_exit_2(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    from prefrag.config import get_settings

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    runner.invoke(app, ["index", str(corpus), "--source", "notes"])
    monkeypatch.setenv("PREFRAG_BACKEND", "openai")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("PREFRAG_MODEL", "tiny")
    monkeypatch.setenv("PREFRAG_MAX_RETRIES", "0")
    get_settings.cache_clear()
    result = runner.invoke(app, ["ask", "What raises simvastatin levels?", "--no-web"])
    assert result.exit_code == 2, result.output
    assert "Cannot reach the model 'tiny'" in result.output
    assert "Traceback" not in result.output


def test_version_is_printed() -> None:
    from importlib.metadata import version

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"prefrag {version('prefrag')}"


def test_flags_show_no_type_placeholder() -> None:
    for command in (["ask", "--help"], ["index", "--help"], ["eval", "--help"]):
        help_text = runner.invoke(app, command, terminal_width=200).output
        flag_lines = [line for line in help_text.splitlines() if "--help" not in line]
        assert not [line for line in flag_lines if "<bool>" in line], command


def test_unknown_source_is_rejected_before_anything_is_indexed(_isolated_home: Path) -> None:
    result = runner.invoke(app, ["ask", "What is warfarin?", "--source", "nope"])
    assert result.exit_code == 2
    assert "Unknown source 'nope'" in result.output
    assert not (_isolated_home / "sources").exists()


def test_combined_local_source_is_listed_and_sources_can_be_removed(
    corpus: Path, tmp_path: Path
) -> None:
    other = _write_jsonl(
        tmp_path / "other.jsonl", [{"id": "o1", "title": "Aspirin", "text": "Aspirin thins blood."}]
    )
    runner.invoke(app, ["index", str(corpus), "--source", "notes"])
    runner.invoke(app, ["index", str(other), "--source", "other"])
    listing = runner.invoke(app, ["sources"], terminal_width=200).output
    assert "combined: notes, other" in listing
    assert "`local` searches every local source" in listing

    removed = runner.invoke(app, ["sources", "remove", "other"])
    assert removed.exit_code == 0, removed.output
    listing = runner.invoke(app, ["sources"], terminal_width=200).output
    assert "other" not in listing and "combined" not in listing
    again = runner.invoke(app, ["sources", "remove", "other"])
    assert again.exit_code == 2
    assert "No source 'other' to remove (known: notes)" in again.output
