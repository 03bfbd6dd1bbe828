"""JSONL files: reading rows that are refused by file and line, and writing rows."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from prefrag.errors import ConfigurationError, IngestError

__all__ = ["read_jsonl", "utf8_lines", "write_jsonl"]


def utf8_lines(path: Path) -> Iterator[str]:
    """The lines of a UTF-8 text file; `IngestError` names the first one that is not UTF-8."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError:
                raise IngestError(
                    f"{path}:{number} is not UTF-8 text; save the file as UTF-8."
                ) from None


def read_jsonl(
    path: Path,
    *,
    file_kind: str,
    row_kind: str,
    rows_kind: str,
    problem: Callable[[Any], str | None],
    limit: int | None = None,
) -> list[Any]:
    """Read a JSONL file of rows, refusing the first malformed one by file and line.

    Args:
        path: The JSONL file; blank lines are skipped.
        file_kind: What the file is, for "The {file_kind} file PATH does not exist."
        row_kind: One row, for "PATH:LINE is not {row_kind}: {problem}."
        rows_kind: The rows, for "PATH holds no {rows_kind}."
        problem: What is wrong with a parsed row, or None when it is fine.
        limit: Keep at most this many rows (file order).

    Returns:
        The parsed rows.

    Raises:
        ConfigurationError: The file does not exist.
        IngestError: A line is not JSON or not a valid row, or the file holds no row.
    """
    if not path.is_file():
        raise ConfigurationError(f"The {file_kind} file {path} does not exist.")
    rows: list[Any] = []
    for number, line in enumerate(utf8_lines(path), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise IngestError(f"{path}:{number} is not a JSON object.") from None
        wrong = problem(row)
        if wrong:
            raise IngestError(f"{path}:{number} is not {row_kind}: {wrong}.")
        rows.append(row)
        if limit is not None and len(rows) >= limit:
            break
    if not rows:
        raise IngestError(f"{path} holds no {rows_kind}.")
    return rows


def write_jsonl(rows: Iterable[dict[str, Any]], path: Path) -> Path:
    """Write rows as JSONL (creating folders) and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path
