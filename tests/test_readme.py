"""The README's Python examples run as written, on a fresh data directory, offline."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


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
