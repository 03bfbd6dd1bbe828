"""Checks on a CLI result shared by the fault-injection suites."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def no_traceback(result: Any) -> None:
    """The command ended by itself: exit 0 or 2 with its sentence, no uncaught exception.

    (Checked on the result, not by searching the captured output for "Traceback": a
    server thread of another test may print one there.)
    """
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback (most recent call last)" not in result.stdout


def words(result: Any) -> str:
    """The command's output with its line wrapping undone."""
    return " ".join(result.output.split())


def garble_store_of_record(source_folder: Path) -> None:
    """Overwrite every file of a source's Qdrant Edge store of record with garbage."""
    files = [p for p in (source_folder / "qdrant").rglob("*") if p.is_file()]
    assert any(p.name == "edge_config.json" for p in files), files
    for path in files:
        path.write_bytes(b"garbage, not a Qdrant shard")
