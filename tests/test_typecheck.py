"""Type checking sees the `prefrag` package: a type error across modules is reported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy")

REPO = Path(__file__).resolve().parents[1]
MAPPED = {"graphs": "graphs", "prompts": "prompts", "training": "training", "eval": "eval"}


def _package_view(root: Path) -> Path:
    """The same view `make typecheck` builds: app/ as `prefrag`, the other folders inside."""
    package = root / "prefrag"
    package.mkdir(parents=True)
    for entry in (REPO / "app").iterdir():
        (package / entry.name).symlink_to(entry)
    for name, folder in MAPPED.items():
        (package / name).symlink_to(REPO / folder)
    return root


def _mypy(tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    view = _package_view(tmp_path / "view")
    probe = tmp_path / "probe.py"
    probe.write_text(code)
    config = tmp_path / "mypy.ini"
    config.write_text(f"[mypy]\nmypy_path = {view}\nfollow_imports = silent\n")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(config),
            "--cache-dir",
            str(REPO / ".mypy_cache"),
            str(probe),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )


@pytest.mark.slow
def test_a_deliberate_type_error_across_modules_is_caught(tmp_path):
    result = _mypy(tmp_path, "from prefrag import build_graph\nx: int = build_graph()\n")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "probe.py:2: error: Incompatible types in assignment" in result.stdout


@pytest.mark.slow
def test_correct_use_of_the_api_type_checks(tmp_path):
    code = (
        "from prefrag import ask\nfrom prefrag.graphs.context import Context\n"
        "result: dict = ask('q', top_k=3)\ncontext = Context(top_k=3)\n"
    )
    result = _mypy(tmp_path, code)
    assert result.returncode == 0, result.stdout + result.stderr
