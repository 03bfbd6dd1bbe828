"""Fault injection on model files and encodings: one sentence and exit 2, never a traceback."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cli_checks import no_traceback
from cli_checks import words as output_words
from typer.testing import CliRunner

from prefrag.cli import app

runner = CliRunner()


def _run(*args: str, env: dict[str, str] | None = None):
    # Wide enough that long temporary paths are never wrapped mid-word.
    result = runner.invoke(app, list(args), env={"COLUMNS": "1000", **(env or {})})
    no_traceback(result)
    return result


@pytest.fixture
def notes(tmp_path, _isolated_home):
    path = tmp_path / "notes.jsonl"
    path.write_text(
        json.dumps({"id": "n1", "title": "Sage", "text": "Sage tea soothes sore throats."}) + "\n"
    )
    assert _run("index", str(path), "--source", "notes").exit_code == 0
    return tmp_path


def _reset_settings():
    from prefrag.config import get_settings

    get_settings.cache_clear()


# --- model files --------------------------------------------------------------------------


def test_a_truncated_switcher_file_is_one_sentence(notes, monkeypatch):
    from prefrag.reasoners.small_switcher import FEATURES, MODEL_FILE, SwitcherNetwork

    folder = notes / "switcher"
    folder.mkdir()
    width = len(FEATURES)
    SwitcherNetwork(
        mean=np.zeros(width),
        scale=np.ones(width),
        hidden_weights=np.zeros((width, 4)),
        hidden_bias=np.zeros(4),
        out_weights=np.zeros(4),
        out_bias=0.0,
        threshold=0.5,
    ).save(folder / MODEL_FILE)
    data = (folder / MODEL_FILE).read_bytes()
    (folder / MODEL_FILE).write_bytes(data[: len(data) // 2])
    monkeypatch.setenv("PREFRAG_SWITCHER", str(folder))
    _reset_settings()
    result = _run("ask", "What soothes sore throats?", "--source", "notes", "--no-web")
    assert result.exit_code == 2
    assert "is not a small switcher model (BadZipFile)" in output_words(result)


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"filter.json": "{not json"}, "filter.json is not valid JSON"),
        ({"filter.json": '{"threshold": "high"}'}, "threshold must be a number in [0, 1]"),
        ({"filter.json": '{"threshold": 0.5}'}, "lacks the filter's config.json"),
    ],
)
def test_a_broken_evidence_filter_folder_fails_before_retrieval(
    notes, monkeypatch, files, expected
):
    folder = notes / "filter"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    monkeypatch.setenv("PREFRAG_EVIDENCE_FILTER", str(folder))
    _reset_settings()
    searched = []
    from prefrag.sources.local import LocalSource

    real_search = LocalSource.search
    monkeypatch.setattr(
        LocalSource, "search", lambda self, *a, **k: searched.append(a) or real_search(self, *a)
    )
    result = _run(
        "ask", "What soothes sore throats?", "--source", "notes", "--no-web",
        "--use-evidence-filter",
    )  # fmt: skip
    assert result.exit_code == 2
    assert expected in output_words(result)
    assert not searched  # refused at start-up, not inside filter_evidence after retrieval


@pytest.mark.slow  # imports TRL and transformers (about 45 s on 2 cores)
def test_dpo_with_a_missing_base_model_is_one_sentence(tmp_path):
    pytest.importorskip("trl")
    pairs = tmp_path / "pairs.jsonl"
    pair = {
        "prompt": [{"role": "user", "content": "Keep the sage note?"}],
        "chosen": [{"role": "assistant", "content": "Status: True"}],
        "rejected": [{"role": "assistant", "content": "Status: False"}],
    }
    pairs.write_text(json.dumps(pair) + "\n")
    result = _run(
        "train", "dpo", "--data", str(pairs), "--model_name_or_path", str(tmp_path / "nowhere"),
        "--output_dir", str(tmp_path / "out"),
    )  # fmt: skip
    assert result.exit_code == 2
    said = output_words(result)
    assert "is neither a model folder nor a model in the local Hugging Face cache" in said


def test_a_missing_base_model_path_is_refused_before_loading(tmp_path):
    from types import SimpleNamespace

    from prefrag.errors import ConfigurationError
    from prefrag.training.hf_jobs import load_tokenizer

    args = SimpleNamespace(model_name_or_path=str(tmp_path / "nowhere"))
    with pytest.raises(ConfigurationError, match="neither a model folder nor a model in the"):
        load_tokenizer(args, SimpleNamespace())


def test_switcher_small_out_naming_a_file_is_refused_before_training(tmp_path):
    taken = tmp_path / "taken"
    taken.write_text("keep me")
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"prompt": "x"}\n')
    result = _run("train", "switcher-small", "--pairs", str(pairs), "--out", str(taken))
    assert result.exit_code == 2
    assert "is a file, not a folder" in output_words(result)
    assert taken.read_text() == "keep me"


# --- encodings and sizes ------------------------------------------------------------------


def test_a_registry_file_that_is_not_utf8_is_one_sentence(notes):
    registry = notes / "sources.yaml"
    registry.write_bytes(
        "sources:\n  - {name: notes, kind: text, description: Tisanes à la française}\n".encode(
            "latin-1"
        )
    )
    result = _run("ask", "What soothes?", "--sources", str(registry), "--no-web")
    assert result.exit_code == 2
    said = output_words(result)
    assert "is not UTF-8 text" in said and "save it as UTF-8" in said


CSV = (
    "subject,relation,object\nSage,definition,A herb for tisanes à boire.\n"
    "Sage,treats,Sore throat\n"
)


@pytest.mark.parametrize("encoding", ["latin-1", "utf-16"])
def test_graph_files_in_other_encodings(tmp_path, encoding):
    path = tmp_path / "herbs.csv"
    path.write_bytes(CSV.encode(encoding))
    result = _run("index", "--kind", "graph", str(path), "--source", "g")
    if encoding == "utf-16":  # a byte-order mark says what it is: read as such
        assert result.exit_code == 0, result.output
        from prefrag.sources.graph import GraphSource

        found = GraphSource("g").search("Sage", 2)
        assert any("à boire" in d.page_content for d in found)
    else:
        assert result.exit_code == 2
        assert f"{path}, line 2: not UTF-8 text" in output_words(result)


def test_a_graph_jsonl_that_is_not_utf8_names_the_line(tmp_path):
    path = tmp_path / "herbs.jsonl"
    row = {"subject": "Sage", "relation": "definition", "object": "Tisane"}
    path.write_bytes((json.dumps(row) + "\n").encode() + b'{"subject": "Th\xe9"}\n')
    result = _run("index", "--kind", "graph", str(path), "--source", "g")
    assert result.exit_code == 2 and f"{path}, line 2: not UTF-8 text" in output_words(result)


def test_a_csv_field_over_the_csv_limit_is_one_sentence(tmp_path):
    path = tmp_path / "huge.csv"
    path.write_text("subject,relation,object\nSage,definition," + "x" * 140_000 + "\n")
    result = _run("index", "--kind", "graph", str(path), "--source", "g")
    assert result.exit_code == 2
    assert f"{path}, line" in output_words(result) and "not readable as CSV" in output_words(result)


def test_a_pairs_file_that_is_not_utf8_names_the_line(tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_bytes(b'{"prompt": [{"role": "user", "content": "Caf\xe9?"}]}\n')
    result = _run("train", "switcher-small", "--pairs", str(pairs), "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert f"{pairs}:1 is not UTF-8 text" in output_words(result)
