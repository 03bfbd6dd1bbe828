"""SQLite checkpoints for CLI runs, so `--thread ID` can show or resume a run."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from prefrag.config import get_settings
from prefrag.errors import CheckpointStoreError
from prefrag.graphs.context import Context, context_from


@dataclass
class StoredRun:
    """A checkpointed run: question, latest values, whether it ended, its run settings."""

    question: str
    values: dict[str, Any]
    finished: bool
    context: Context


@contextmanager
def open_checkpointer() -> Iterator[Any]:
    """A `SqliteSaver` on the data directory's checkpoint database.

    Raises:
        CheckpointStoreError: The database is damaged, or its folder is not writable (runs
            without `--thread` never open it).
    """
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = get_settings().checkpoint_db
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(str(path), check_same_thread=False)
    except (OSError, sqlite3.Error) as error:
        raise _store_error(path, error) from None
    try:
        yield SqliteSaver(connection)
    except sqlite3.Error as error:
        raise _store_error(path, error) from None
    finally:
        connection.close()


def _store_error(path: Any, error: BaseException) -> CheckpointStoreError:
    detail = " ".join(str(error).split()) or type(error).__name__
    return CheckpointStoreError(
        f"The checkpoint store {path} cannot be used ({detail}). Move the file away, make its "
        "folder writable, or set PREFRAG_HOME; asks without --thread do not need it."
    )


def stored_run(graph: CompiledStateGraph, thread_id: str) -> StoredRun | None:
    """The stored run of `thread_id`, or None when the thread is unknown."""
    snapshot = graph.get_state({"configurable": {"thread_id": thread_id}})
    if not snapshot.values:
        return None
    values = dict(snapshot.values)
    return StoredRun(
        str(values.get("question", "")),
        values,
        finished=not snapshot.next,
        context=context_from(values.get("run_context") or {}),
    )
