"""SQLite checkpoints for CLI runs, so `--thread ID` can show or resume a run."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from pydantic import TypeAdapter, ValidationError

from prefrag.config import get_settings
from prefrag.errors import CheckpointStoreError, PrefRAGError
from prefrag.graphs.context import Context, context_from
from prefrag.graphs.state import PrefRAGState


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


@cache
def _state_shape() -> TypeAdapter[PrefRAGState]:
    return TypeAdapter(PrefRAGState)


def _damaged_thread(thread_id: str, error: BaseException | str) -> CheckpointStoreError:
    path = get_settings().checkpoint_db
    detail = error if isinstance(error, str) else " ".join(str(error).split())
    return CheckpointStoreError(
        f"The checkpoint store {path} holds a damaged record for thread '{thread_id}' "
        f"({detail or type(error).__name__}); move the file away to start afresh (its "
        "threads are lost), or use another --thread id; asks without --thread do not need it."
    )


def _store_error(path: Any, error: BaseException) -> CheckpointStoreError:
    detail = " ".join(str(error).split()) or type(error).__name__
    return CheckpointStoreError(
        f"The checkpoint store {path} cannot be used ({detail}). Move the file away, make its "
        "folder writable, or set PREFRAG_HOME; asks without --thread do not need it."
    )


def stored_run(graph: CompiledStateGraph[Any, Any, Any, Any], thread_id: str) -> StoredRun | None:
    """The stored run of `thread_id`, or None when the thread is unknown.

    Raises:
        CheckpointStoreError: The thread's latest checkpoint cannot be decoded, or decodes
            to values that are not a PrefRAG state (damaged pages of a file whose header
            is intact); SQLite itself does not notice either.
    """
    try:
        snapshot = graph.get_state({"configurable": {"thread_id": thread_id}})
    except (sqlite3.Error, PrefRAGError):
        raise
    except Exception as error:  # msgpack, UTF-8 or type errors from a damaged record
        raise _damaged_thread(thread_id, error) from None
    if not snapshot.values:
        return None
    values = dict(snapshot.values)
    try:
        _state_shape().validate_python(values, strict=True)
    except ValidationError as error:
        where = ".".join(str(part) for part in error.errors()[0]["loc"])
        raise _damaged_thread(thread_id, f"'{where}' holds the wrong kind of value") from None
    return StoredRun(
        str(values.get("question", "")),
        values,
        finished=not snapshot.next,
        context=context_from(values.get("run_context") or {}),
    )
