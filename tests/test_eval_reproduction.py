"""Rerun the CI-sized reproduction entries in prefrag/eval/expected/ and check their numbers."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from prefrag.eval.reproduce import (
    all_entries,
    check,
    command_args,
    default_keys,
    expected_block,
    load_entries,
    write_expected,
)

ENTRIES = [(path.name, entry) for path, entry in all_entries()]
READY = [entry for _, entry in ENTRIES if entry.get("status") != "pending"]


def test_every_entry_has_a_command_numbers_and_a_tolerance():
    assert ENTRIES, "no reproduction entries shipped"
    for _, entry in ENTRIES:
        assert entry["command"].startswith("prefrag eval ")
        assert "--out" in entry["command"]
        assert float(entry["tolerance"]) >= 0
    for entry in READY:
        assert entry["expected"], entry["id"]
    assert any(e.get("ci") for e in READY), "no measured CI slice to rerun"


def test_check_flags_values_out_of_tolerance():
    summary = {"prefrag": {"em": 30.0, "counters_mean": {"total": 3.0}}}
    assert check(summary, {"prefrag": {"em": 30.5, "counters_mean.total": 3.0}}, 1.0) == []
    problems = check(summary, {"prefrag": {"em": 33.0}, "react-both": {"em": 1.0}}, 1.0)
    assert len(problems) == 2
    assert expected_block(summary, ["em"]) == {"prefrag": {"em": 30.0}}


def test_measured_numbers_are_written_into_the_entry_keeping_the_header(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text(
        "# how to rerun\nentries:\n  - id: a\n    ci: true\n    status: pending\n"
        "    tolerance: 1.0\n    command: prefrag eval --dataset d --out o\n    expected: {}\n"
    )
    summary = {"prefrag": {"em": 12.345, "counters_mean": {"total": 2.0}}, "_run": {"task": "qa"}}
    block = expected_block(summary, ["em", "counters_mean.total"])
    write_expected(path, "a", block)
    assert path.read_text().startswith("# how to rerun\n")
    (entry,) = load_entries(path)
    assert entry["status"] == "measured"
    assert entry["expected"] == {"prefrag": {"em": 12.35, "counters_mean.total": 2.0}}
    assert "recall@5" in default_keys({"_run": {"task": "retrieval"}})
    assert "evidence_recall" in default_keys(summary)


@pytest.mark.slow
@pytest.mark.parametrize("entry", [e for e in READY if e.get("ci")], ids=lambda e: e["id"])
def test_ci_slice_reproduces(entry, shared_data, tmp_path):
    pytest.importorskip("prefrag.sources.local")
    from prefrag.cli import app

    out = tmp_path / "run"
    args = command_args(entry["command"], out=out, data_root=shared_data)
    result = CliRunner().invoke(app, [*args, "--no-progress"])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert check(summary, entry["expected"], float(entry["tolerance"])) == []


def test_ci_flag_regenerates_every_ci_entry_into_its_own_folder(tmp_path, monkeypatch):
    import prefrag.eval.reproduce as reproduce

    ran = []

    def fake_rerun(entry, out, data_root=None):
        ran.append((entry["id"], out))
        summary = {"_run": {"task": "qa"}}
        fresh = {"m": dict.fromkeys(reproduce.QA_KEYS, 1.0)}
        for method, values in (entry.get("expected") or fresh).items():
            for key, value in values.items():
                *parents, last = key.split(".")
                node = summary.setdefault(method, {})
                for parent in parents:
                    node = node.setdefault(parent, {})
                node[last] = value
        return summary

    monkeypatch.setattr(reproduce, "rerun", fake_rerun)
    reproduce.main(["--ci", str(tmp_path)])
    ci_ids = [e["id"] for _, e in all_entries() if e.get("ci")]
    assert ran == [(i, tmp_path / i) for i in ci_ids] and len(ci_ids) >= 2
    with pytest.raises(SystemExit, match="No reproduction entry 'nope'"):
        reproduce.main(["nope", str(tmp_path)])
