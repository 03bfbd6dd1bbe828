"""Reproduction files (pyserini `2cr` style): the exact command and the numbers it gives.

A file in `prefrag/eval/expected/` holds entries like::

    - id: hotpotqa-slice20-twosource50-extractive
      ci: true                      # small enough to rerun in CI
      tolerance: 1.0                # absolute, in metric points (percent) or counts
      command: prefrag eval --dataset ../shared/data/... --method all --out runs/x
      expected:
        prefrag: {em: 20.0, f1: 25.1, counters_mean.total: 3.9}

`check` compares a run's summary with `expected` and lists every value out of tolerance.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import yaml


def expected_files() -> list[Path]:
    """The reproduction files shipped with the package."""
    folder = resources.files("prefrag.eval").joinpath("expected")
    return sorted(Path(str(p)) for p in folder.iterdir() if str(p).endswith(".yaml"))


def load_entries(path: Path) -> list[dict[str, Any]]:
    """The entries of one reproduction file."""
    data = yaml.safe_load(Path(path).read_text()) or {}
    return list(data.get("entries", []))


def all_entries() -> Iterator[tuple[Path, dict[str, Any]]]:
    """(file, entry) for every shipped reproduction entry."""
    for path in expected_files():
        for entry in load_entries(path):
            yield path, entry


def command_args(command: str, *, out: Path, data_root: Path | None = None) -> list[str]:
    """The CLI arguments of `command` after `prefrag`, ready to rerun elsewhere.

    `--out` is replaced by `out` and the `../shared/data` prefix of `--dataset` points at
    `data_root`.
    """
    args = shlex.split(command)
    if args[:1] == ["prefrag"]:
        args = args[1:]
    fixed: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--out":
            fixed += ["--out", str(out)]
            i += 2
            continue
        if arg == "--dataset" and data_root is not None:
            value = args[i + 1]
            marker = "shared/data/"
            if marker in value:
                value = str(data_root / value.split(marker, 1)[1])
            fixed += ["--dataset", value]
            i += 2
            continue
        fixed.append(arg)
        i += 1
    return fixed


def lookup(entry: dict[str, Any], dotted: str) -> Any:
    """`summary[method]["counters_mean"]["total"]` for the key "counters_mean.total"."""
    value: Any = entry
    for part in dotted.split("."):
        value = value[part]
    return value


def check(
    summary: dict[str, Any], expected: dict[str, dict[str, float]], tolerance: float
) -> list[str]:
    """Every expected value the summary misses by more than `tolerance`."""
    problems = []
    for method, values in expected.items():
        if method not in summary:
            problems.append(f"{method}: missing from the run")
            continue
        for key, want in values.items():
            try:
                got = float(lookup(summary[method], key))
            except (KeyError, TypeError):
                problems.append(f"{method}.{key}: missing")
                continue
            if abs(got - float(want)) > tolerance:
                problems.append(f"{method}.{key}: got {got:.2f}, expected {want} ± {tolerance}")
    return problems


def expected_block(summary: dict[str, Any], keys: list[str]) -> dict[str, dict[str, float]]:
    """The `expected:` mapping of a finished run (for writing a new reproduction entry)."""
    return {
        method: {key: round(float(lookup(entry, key)), 2) for key in keys}
        for method, entry in summary.items()
        if not method.startswith("_")
    }


def main() -> None:
    """Rerun one entry and print its fresh `expected:` block.

    `python -m prefrag.eval.reproduce ENTRY_ID OUT_DIR [DATA_ROOT]`
    """
    import sys

    from typer.testing import CliRunner

    from prefrag.cli import app

    entry_id, out = sys.argv[1], Path(sys.argv[2])
    data_root = Path(sys.argv[3]) if len(sys.argv) > 3 else None
    entry = next(e for _, e in all_entries() if e["id"] == entry_id)
    result = CliRunner().invoke(
        app, [*command_args(entry["command"], out=out, data_root=data_root), "--no-progress"]
    )
    if result.exit_code != 0:
        raise SystemExit(result.output)
    summary = json.loads((out / "summary.json").read_text())
    keys = sorted({k for values in entry["expected"].values() for k in values})
    print(yaml.safe_dump({"expected": expected_block(summary, keys)}, sort_keys=False))


if __name__ == "__main__":
    main()
