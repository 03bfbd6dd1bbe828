"""An exclusive lock on a file, across processes and the threads of one process (`filelock`).

Used by a source's writer lock (`prefrag.index.docstore.writer_lock`) and by the writer lock
of a conversation thread (`prefrag.thread_locks`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

__all__ = ["hold_file_lock"]


@contextmanager
def hold_file_lock(
    path: Path, *, on_busy: Callable[[], None] | None = None, reentrant: bool = False
) -> Iterator[None]:
    """Hold the exclusive lock of file `path` (its folder is created when missing).

    When another process or thread holds it, `on_busy()` is called once, then this waits;
    an `on_busy` that raises gives up instead. With `reentrant`, a thread already holding
    the lock takes it again at once; otherwise a second hold is busy like any other.

    Raises:
        OSError: The lock file cannot be created (a read-only folder, a file in its place).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    # A singleton per path counts a thread's holds; a fresh lock opens its own descriptor.
    lock = FileLock(path, is_singleton=reentrant)
    try:
        lock.acquire(blocking=False)
    except Timeout:
        if on_busy is not None:
            on_busy()
        lock.acquire()
    try:
        yield
    finally:
        lock.release()
