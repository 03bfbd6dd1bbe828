"""Reproduction files (pyserini `2cr` style): the exact command and the numbers it gives.

A file in `prefrag/eval/expected/` holds entries like::

    - id: hotpotqa-slice20-twosource50-extractive
      ci: true                      # small enough to rerun in CI
      tolerance: 1.0                # absolute, in metric points (percent) or counts
      command: prefrag eval --dataset ../shared/data/... --method all --out runs/x
      expected:
        prefrag: {em: 20.0, f1: 25.1, counters_mean.total: 3.9}

`check` compares a run's summary with `expected` and lists every value out of tolerance.
`python -m prefrag.eval.reproduce ENTRY_ID OUT_DIR [DATA_ROOT] [--write]` reruns an entry (a
folder that already holds the run resumes it, so nothing is recomputed) and prints, or with
`--write` stores, the numbers it gave: expected values always come from a real run.
`--ci` (or `--all`) in place of ENTRY_ID reruns every CI entry (every entry) into
`OUT_DIR/<entry id>`.
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


# What an entry records when it names no keys yet: every reported metric of its task.
QA_KEYS = (
    "em",
    "f1",
    "acc",
    "acc_prefrag",
    "evidence_recall",
    "web_exposure",
    "counters_mean.local_total",
    "counters_mean.web_total",
    "counters_mean.local_used",
    "counters_mean.used",
    "counters_mean.total",
)
RETRIEVAL_KEYS = ("recall@1", "recall@5", "recall@10", "ndcg@5", "ndcg@10", "hit@5")
SNIPPET_QA_KEYS = (
    "cited_gold",
    "full_sentence",
    "rouge_l",
    "token_precision",
    "wrong_abstention",
    "abstention_withheld",
    "answer_words",
    "counters_mean.local_total",
)


def default_keys(summary: dict[str, Any]) -> list[str]:
    """The keys to record for a run whose entry names none (by the run's task)."""
    run = summary.get("_run", {})
    if "snippet_qa" in run:
        keys = list(SNIPPET_QA_KEYS)
        if not run["snippet_qa"].get("withheld"):
            keys.remove("abstention_withheld")
        return keys
    return list(RETRIEVAL_KEYS if run.get("task", "qa") == "retrieval" else QA_KEYS)


def rerun(entry: dict[str, Any], out: Path, data_root: Path | None = None) -> dict[str, Any]:
    """Run `entry`'s command into `out` (resuming what it holds) and return the summary."""
    from typer.testing import CliRunner

    from prefrag.cli import app

    args = command_args(entry["command"], out=out, data_root=data_root)
    result = CliRunner().invoke(app, [*args, "--no-progress"])
    if result.exit_code != 0:
        raise RuntimeError(result.output)
    return json.loads((out / "summary.json").read_text())


def write_expected(path: Path, entry_id: str, expected: dict[str, dict[str, float]]) -> None:
    """Store `expected` in entry `entry_id` of file `path`, marking it measured.

    The file's leading comment lines are kept; the entries are rewritten by YAML.
    """
    text = Path(path).read_text()
    head_lines = []
    for line in text.splitlines(keepends=True):
        if not line.startswith("#"):
            break
        head_lines.append(line)
    data = yaml.safe_load(text) or {}
    for entry in data.get("entries", []):
        if entry["id"] == entry_id:
            entry["expected"] = expected
            entry["status"] = "measured"
            break
    else:
        raise KeyError(f"No entry '{entry_id}' in {path}.")
    body = yaml.safe_dump(data, sort_keys=False, width=100, allow_unicode=True)
    Path(path).write_text("".join(head_lines) + body)


def regenerate(
    entry_id: str, out: Path, data_root: Path | None = None, *, write: bool = False
) -> dict[str, dict[str, float]]:
    """Rerun entry `entry_id` into `out` and return (with `write`, also store) its numbers.

    Raises:
        ValueError: No shipped entry has that id.
        RuntimeError: The run failed (the message is the command's output).
    """
    found = [(p, e) for p, e in all_entries() if e["id"] == entry_id]
    if not found:
        known = ", ".join(e["id"] for _, e in all_entries())
        raise ValueError(f"No reproduction entry '{entry_id}' (known: {known}).")
    path, entry = found[0]
    summary = rerun(entry, out, data_root)
    keys = sorted({k for values in (entry.get("expected") or {}).values() for k in values})
    block = expected_block(summary, keys or default_keys(summary))
    if write:
        write_expected(path, entry_id, block)
    return block


def main(argv: list[str] | None = None) -> None:
    """Rerun entries and print (or with `--write` store) their fresh `expected:` blocks.

    `python -m prefrag.eval.reproduce ENTRY_ID OUT_DIR [DATA_ROOT] [--write]` reruns one
    entry into OUT_DIR; `--ci` or `--all` in place of ENTRY_ID reruns every CI entry (or
    every entry) into `OUT_DIR/<entry id>`, e.g. after a change that moves the numbers.
    """
    import sys

    argv = sys.argv[1:] if argv is None else argv
    write = "--write" in argv
    args = [a for a in argv if a != "--write"]
    if len(args) < 2:
        raise SystemExit(
            "usage: python -m prefrag.eval.reproduce ENTRY_ID|--ci|--all OUT_DIR [DATA_ROOT] "
            "[--write]"
        )
    target, out = args[0], Path(args[1])
    data_root = Path(args[2]) if len(args) > 2 else None
    if target in ("--ci", "--all"):
        runs = [
            (e["id"], out / e["id"]) for _, e in all_entries() if target == "--all" or e.get("ci")
        ]
    else:
        runs = [(target, out)]
    for entry_id, folder in runs:
        try:
            block = regenerate(entry_id, folder, data_root, write=write)
        except (ValueError, RuntimeError) as failure:
            raise SystemExit(str(failure)) from None
        if write:
            print(f"Wrote {entry_id}")
        print(yaml.safe_dump({entry_id: {"expected": block}}, sort_keys=False))


if __name__ == "__main__":
    main()
