"""The package's modules import each other without a cycle, even through function-level imports.

A function-level import can hide a cycle that a module-level one would expose at import time;
this test builds the import graph of every `prefrag` module from its source (all imports except
those under `if TYPE_CHECKING:`) and fails on any cycle, naming it.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _modules() -> dict[str, Path]:
    """Module name -> file, from the package-dir mapping in pyproject.toml."""
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"
    ]
    modules: dict[str, Path] = {}
    for package, folder in mapping.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            name = ".".join([package, *(p for p in parts if p != "__init__")])
            # A folder mapped to its own package (graphs/) is not also a module of another.
            if not any(
                other != package and other.startswith(package + ".") and name.startswith(other)
                for other in mapping
            ):
                modules[name] = path
    return modules


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for inner in ast.walk(node))
    return skipped


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Each module's imports of other package modules (at any depth, TYPE_CHECKING aside)."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _type_checking_nodes(tree)
        targets: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    child = f"{node.module}.{alias.name}"
                    targets.add(child if child in modules else node.module)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle (first module repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (cycle := visit(module)):
            return cycle
    return None


def test_the_package_has_no_import_cycle() -> None:
    modules = _modules()
    assert "prefrag.graphs.graph" in modules and "prefrag.index.docstore" in modules
    cycle = find_cycle(import_graph(modules))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_a_function_level_import_that_closes_a_cycle_is_found(tmp_path: Path) -> None:
    first, second = tmp_path / "first.py", tmp_path / "second.py"
    first.write_text("from pkg import second\n")
    second.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg import first\n"
        "def later():\n    from pkg.first import thing\n"
    )
    graph = import_graph({"pkg.first": first, "pkg.second": second})
    assert find_cycle(graph) == ["pkg.first", "pkg.second", "pkg.first"]
    second.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.first\n")
    assert find_cycle(import_graph({"pkg.first": first, "pkg.second": second})) is None


def test_training_reaches_datasets_without_the_evaluation_runner() -> None:
    """Dataset loading is its own module (`prefrag.datasets`); training never runs an eval."""
    graph = import_graph(_modules())
    training = [name for name in graph if name.startswith("prefrag.training")]
    assert "prefrag.datasets" in graph["prefrag.training.switcher_data"]
    forbidden = {"prefrag.eval.runner", "prefrag.eval.cli", "prefrag.eval.multisource"}
    reached = {(m, t) for m in training for t in graph[m] if t in forbidden}
    assert not reached, f"training imports the evaluation runner: {sorted(reached)}"
