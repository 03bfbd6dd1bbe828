"""`prefrag train`: the job table, pass-through arguments and the shared config parser."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prefrag.cli import app
from prefrag.errors import ConfigurationError
from prefrag.training.config import parse_config
from prefrag.training.jobs import JOBS, find_job

pytest.importorskip("trl")
runner = CliRunner()


@dataclass
class Settings:
    data: Path | None = None
    steps: int = 3
    rate: float = 0.5
    names: list[str] = field(default_factory=lambda: ["a"])
    merge: bool = False


def test_train_help_lists_every_job() -> None:
    result = runner.invoke(app, ["train", "--help"])
    assert result.exit_code == 0
    for job in JOBS:
        assert job.name in result.output


def test_job_help_shows_its_dataclass_fields() -> None:
    result = runner.invoke(app, ["train", "mog-router", "--help"])
    assert result.exit_code == 0
    assert "prefrag train mog-router" in result.output
    for flag in ("--data", "--source", "--epochs", "--limit"):
        assert flag in result.output


def test_yaml_config_then_command_line_overrides(tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text("steps: 7\nrate: 0.25\nnames: [x, y]\ndata: pairs.jsonl\n")
    (parsed,) = parse_config([Settings], ["--config", str(config), "--rate", "0.1", "--merge"])
    assert parsed == Settings(
        data=Path("pairs.jsonl"), steps=7, rate=0.1, names=["x", "y"], merge=True
    )
    (plain,) = parse_config([Settings], ["--steps", "2"], defaults={"rate": 0.9})
    assert (plain.steps, plain.rate, plain.merge) == (2, 0.9, False)


def test_unknown_yaml_key_and_missing_file_are_configuration_errors(tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text("stepz: 7\n")
    with pytest.raises(ConfigurationError, match="stepz"):
        parse_config([Settings], ["--config", str(config)])
    with pytest.raises(ConfigurationError, match="does not exist"):
        parse_config([Settings], ["--config", str(tmp_path / "nowhere.yaml")])


def test_cli_turns_a_bad_job_argument_into_one_sentence_and_exit_2() -> None:
    result = runner.invoke(app, ["train", "mog-router", "--no-such-flag", "1"])
    assert result.exit_code == 2
    assert "no-such-flag" in result.output
    missing = runner.invoke(app, ["train", "mog-router", "--data", "x.jsonl"])
    assert missing.exit_code == 2
    assert "--source" in missing.output


def test_unknown_job_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="mog-router"):
        find_job("no-such-job")


def test_a_job_without_the_train_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefrag.training import jobs

    # A job whose module needs a part of scikit-learn that is not installed, as every
    # training job's is in a main install (no `train` extra).
    absent = jobs.Job("switcher-small", "sklearn.prefrag_absent_module", "help")
    monkeypatch.setattr(jobs, "find_job", lambda name: absent)
    result = runner.invoke(app, ["train", "switcher-small", "--pairs", "p.jsonl"])
    assert result.exit_code == 2
    words = " ".join(result.output.split())
    assert "needs sklearn" in words and "pip install 'prefrag[train]'" in words
    # A module outside the extras is a real bug: not dressed up as a missing extra.
    monkeypatch.setattr(jobs, "find_job", lambda name: jobs.Job(name, "prefrag_nowhere", "h"))
    with pytest.raises(ModuleNotFoundError):
        jobs.run_job("switcher-small", [])
