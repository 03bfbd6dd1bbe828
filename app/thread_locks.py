"""One writer per thread: runs on the same thread id wait for each other.

A run reads its thread's latest checkpoint when it starts and writes on top of it, so two
runs on one thread at once would both build on the same turn and one of the two new turns
would vanish from `history`. Each thread therefore has a lock: an `flock` on a small file
beside a SQLite checkpoint database (across processes), and a re-entrant lock within the
process (threads, and the CLI's check-then-ask calling the API's ask).
"""

from __future__ import annotations

import fcntl
import hashlib
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from prefrag.errors import CheckpointStoreError

__all__ = ["checkpoint_file", "thread_lock"]

_guard = threading.Lock()
_local_locks: dict[str, threading.RLock] = {}
_depth: dict[str, int] = {}


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
    """
    database = database.resolve() if database is not None else None
    key = f"{database}\0{thread_id}"
    with _guard:
        local = _local_locks.setdefault(key, threading.RLock())
    if not local.acquire(blocking=False):
        if on_wait is not None:
            on_wait()
        local.acquire()
    try:
        depth = _depth.get(key, 0)
        _depth[key] = depth + 1
        try:
            if depth == 0 and database is not None:
                with _file_lock(database, thread_id, on_wait):
                    yield
            else:
                yield
        finally:
            _depth[key] -= 1
    finally:
        local.release()


@contextmanager
def _file_lock(
    database: Path, thread_id: str, on_wait: Callable[[], None] | None
) -> Iterator[None]:
    folder = database.with_name(database.name + ".locks")
    name = hashlib.sha256(thread_id.encode("utf-8")).hexdigest()[:32]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle = open(folder / f"{name}.lock", "a+b")
    except OSError as error:
        raise CheckpointStoreError(
            f"The thread lock folder {folder} cannot be used ({error.strerror or error}); "
            "make it writable or set PREFRAG_HOME."
        ) from None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait()
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
