"""The README and docs/: their Python examples run as written (fresh data directory,
offline), their links lead somewhere, and the README's drawing is the generated one."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
SNAPSHOT = ROOT / "tests" / "snapshots" / "graph.mmd"


def _python_blocks() -> list[str]:
    return [
        block
        for page in PAGES
        for block in re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.DOTALL)
    ]


def test_the_readme_is_a_short_page_whose_drawing_is_the_generated_one() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 200
    drawings = re.findall(r"```mermaid\n(.*?)```", text, flags=re.DOTALL)
    assert drawings == [SNAPSHOT.read_text()]  # one diagram, generated from graph.py
    assert "make demo" in text and "make test" in text


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_relative_link_leads_to_a_file(page: Path) -> None:
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text())
    local = [link for link in links if "://" not in link]
    missing = [link for link in local if not (page.parent / link).exists()]
    assert not missing, f"{page.name} links to missing files: {missing}"


def test_readme_has_an_embedding_example() -> None:
    blocks = _python_blocks()
    assert blocks and any("build_graph" in block for block in blocks)


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(_python_blocks())))
def test_readme_python_block_runs_as_written(index: int, tmp_path: Path) -> None:
    code = _python_blocks()[index]
    env = os.environ | {"PREFRAG_HOME": str(tmp_path / "home"), "PREFRAG_WEB_ENABLED": "false"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    if "index_paths" in code:
        # The example's own source answered: its citations name it.
        assert "'source': 'guidelines'" in done.stdout
