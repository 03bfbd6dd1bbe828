"""One writer per thread: runs on the same thread id wait for each other.

A run reads its thread's latest checkpoint when it starts and writes on top of it, so two
runs on one thread at once would both build on the same turn and one of the two new turns
would vanish from `history`. Each thread therefore has a lock: a file lock beside a SQLite
checkpoint database (`prefrag.file_lock`: across processes and threads), or, for a
checkpointer without a file, a re-entrant lock of the process (`prefrag.shared`). Both are
re-entrant within a thread (the CLI's check-then-ask calls the API's ask).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from prefrag.errors import CheckpointStoreError
from prefrag.file_lock import hold_file_lock
from prefrag.shared import shared

__all__ = ["checkpoint_file", "thread_lock"]


def checkpoint_file(checkpointer: Any) -> Path | None:
    """The database file a SQLite checkpointer writes to, or None (in memory, or not SQLite)."""
    connection = getattr(checkpointer, "conn", None)
    if not isinstance(connection, sqlite3.Connection):
        return None
    try:
        rows = connection.execute("PRAGMA database_list").fetchall()
    except sqlite3.Error:
        return None
    files = [row[2] for row in rows if row[1] == "main" and row[2]]
    return Path(files[0]) if files else None


@contextmanager
def thread_lock(
    database: Path | None, thread_id: str, *, on_wait: Callable[[], None] | None = None
) -> Iterator[None]:
    """Hold the writer lock of `thread_id` (of the checkpoint `database`, when it is a file).

    Blocks while another run holds it, calling `on_wait` once first; re-entrant within a
    thread of this process.

    Raises:
        CheckpointStoreError: The lock file beside the database cannot be created.
    """
    if database is None:
        lock = shared().once(("thread lock", thread_id), threading.RLock)
        if not lock.acquire(blocking=False):
            if on_wait is not None:
                on_wait()
            lock.acquire()
        try:
            yield
        finally:
            lock.release()
        return
    database = database.resolve()
    folder = database.with_name(database.name + ".locks")
    name = hashlib.sha256(thread_id.encode("utf-8")).hexdigest()[:32]
    with ExitStack() as stack:
        try:
            stack.enter_context(
                hold_file_lock(folder / f"{name}.lock", on_busy=on_wait, reentrant=True)
            )
        except OSError as error:
            raise CheckpointStoreError(
                f"The thread lock folder {folder} cannot be used ({error.strerror or error}); "
                "make it writable or set PREFRAG_HOME."
            ) from None
        yield
