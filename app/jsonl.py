"""JSONL files: every JSON-lines read and write of the package goes through this module.

Strict readers (`iter_jsonl`, `read_rows`, `read_jsonl`) refuse the first bad line by file and
line; `readable_rows` reads an append-only log, skipping a line a killed run cut short;
`write_jsonl` writes a whole file (optionally atomically) and `JsonlAppender` appends rows from
several threads.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from prefrag.errors import ConfigurationError, IngestError

__all__ = [
    "JsonlAppender",
    "iter_jsonl",
    "jsonl_line",
    "parse_line",
    "read_jsonl",
    "read_rows",
    "readable_rows",
    "utf8_lines",
    "write_jsonl",
]


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


def parse_line(text: str, where: str) -> Any:
    """One JSON line parsed; `IngestError` names `where` (e.g. "file:3") when it is not JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise IngestError(f"{where}: not valid JSON ({error.msg}).") from None
    except RecursionError:
        raise IngestError(f"{where}: JSON nested too deeply to read.") from None


def iter_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed row) of each non-blank line, refusing the first bad one."""
    for number, line in enumerate(utf8_lines(path), start=1):
        if line.strip():
            yield number, parse_line(line, f"{path}:{number}")


def read_rows(path: Path) -> list[Any]:
    """Every row of a JSONL file (blank lines skipped), refusing the first bad line."""
    return [row for _, row in iter_jsonl(path)]


def readable_rows(path: Path) -> Iterator[Any]:
    """Rows of an append-only log, skipping lines that are not JSON (cut short by a kill).

    A missing file has no rows.
    """
    if not path.exists():
        return
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue


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
    for number, row in iter_jsonl(path):
        wrong = problem(row)
        if wrong:
            raise IngestError(f"{path}:{number} is not {row_kind}: {wrong}.")
        rows.append(row)
        if limit is not None and len(rows) >= limit:
            break
    if not rows:
        raise IngestError(f"{path} holds no {rows_kind}.")
    return rows


def jsonl_line(row: Any, *, default: Callable[[Any], Any] | None = None) -> str:
    """One row as a JSONL line (UTF-8 kept, newline included)."""
    return json.dumps(row, ensure_ascii=False, default=default) + "\n"


def write_jsonl(rows: Iterable[Any], path: Path, *, atomic: bool = False) -> Path:
    """Write rows as JSONL (creating folders) and return the path.

    With `atomic`, the rows go to a temporary file renamed into place, so readers see the old
    file or the complete new one.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    target = path.with_name(path.name + ".tmp") if atomic else path
    with target.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(jsonl_line(row))
    if atomic:
        target.replace(path)
    return path


class JsonlAppender:
    """Append rows to a JSONL log from several threads, each row flushed as it is written.

    A last line a killed run cut short is ended first, so it stays apart (and
    `readable_rows` skips it). Use as a context manager; calling it appends one row.
    """

    def __init__(self, path: Path, *, default: Callable[[Any], Any] | None = None) -> None:
        self.path = path
        self._default = default
        self._lock = threading.Lock()
        self._handle: TextIO | None = None

    def __enter__(self) -> JsonlAppender:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        cut_short = _ends_mid_line(self.path)
        self._handle = self.path.open("a", encoding="utf-8")
        if cut_short:
            self._handle.write("\n")
        return self

    def __call__(self, row: Any) -> None:
        """Append one row and flush it."""
        if self._handle is None:
            raise RuntimeError("JsonlAppender is used outside its `with` block.")
        line = jsonl_line(row, default=self._default)
        with self._lock:
            self._handle.write(line)
            self._handle.flush()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def _ends_mid_line(path: Path) -> bool:
    if not path.exists():
        return False
    with path.open("rb") as handle:
        handle.seek(0, 2)
        if handle.tell() == 0:
            return False
        handle.seek(-1, 2)
        return handle.read(1) != b"\n"
