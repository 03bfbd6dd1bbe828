"""Loading the repository's scripts and Studio entry the way their users run them."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]


def load_file(path: Path, name: str) -> ModuleType:
    """The Python file at `path` (a bench script, the Studio module) imported as `name`."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def studio_factory() -> Any:
    """The graph factory `langgraph dev` serves, found through the repo's langgraph.json."""
    entry = json.loads((REPO_ROOT / "langgraph.json").read_text())["graphs"]["prefrag"]
    path, name = entry.split(":")
    return getattr(load_file(REPO_ROOT / path, "studio_entry"), name)
