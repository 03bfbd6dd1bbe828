"""Rerun the CI-sized reproduction entries in prefrag/eval/expected/ and check their numbers."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from prefrag.eval.reproduce import all_entries, check, command_args, expected_block

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


def test_check_flags_values_out_of_tolerance():
    summary = {"prefrag": {"em": 30.0, "counters_mean": {"total": 3.0}}}
    assert check(summary, {"prefrag": {"em": 30.5, "counters_mean.total": 3.0}}, 1.0) == []
    problems = check(summary, {"prefrag": {"em": 33.0}, "react-both": {"em": 1.0}}, 1.0)
    assert len(problems) == 2
    assert expected_block(summary, ["em"]) == {"prefrag": {"em": 30.0}}


@pytest.mark.parametrize("entry", [e for _, e in ENTRIES if e.get("ci")], ids=lambda e: e["id"])
def test_ci_slice_reproduces(entry, shared_data, tmp_path):
    pytest.importorskip("prefrag.sources.local")
    from prefrag.cli import app

    out = tmp_path / "run"
    args = command_args(entry["command"], out=out, data_root=shared_data)
    result = CliRunner().invoke(app, [*args, "--no-progress"])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert check(summary, entry["expected"], float(entry["tolerance"])) == []
