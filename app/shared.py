"""What the process shares: the embedder, a stemmer per thread, the web search limit.

Loading MiniLM takes time and memory, so one embedder per model folder serves the whole
process; PyStemmer's stemmers are not thread-safe, so each thread gets its own; hung web
searches are bounded process-wide. All of them live in one `SharedResources` object, built
on first use and reached through `shared()`: no module keeps its own copy. A graph's
`ResourceProvider` hands these to what it builds, and takes its own instead when given one
(`ResourceProvider(embedder=...)`); a test swaps the whole set with `sharing(...)`.

This module imports nothing of the package, so every layer may use it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

__all__ = ["MAX_PENDING_WEB_SEARCHES", "SharedResources", "shared", "sharing"]

_T = TypeVar("_T")

MAX_PENDING_WEB_SEARCHES = 4  # hung web searches abandoned at once before new ones fail fast


class SharedResources:
    """The resources one process shares, each built on first use.

    Args:
        embedder: The embedder every caller gets instead of the configured one (a test's
            encoder: anything with `encode`, `encode_one` and `dimension`).
        max_pending_web_searches: Web searches that may hang at once (each in a daemon
            thread) before new ones fail at once.
    """

    def __init__(
        self,
        *,
        embedder: Any = None,
        max_pending_web_searches: int = MAX_PENDING_WEB_SEARCHES,
    ) -> None:
        self._embedder = embedder
        self._built: dict[Hashable, Any] = {}
        self._lock = threading.RLock()  # a build may ask for another (its embedder)
        self._threads = threading.local()
        self.web_searches = threading.BoundedSemaphore(max_pending_web_searches)

    def once(self, key: Hashable, build: Callable[[], _T]) -> _T:
        """What `build()` returned the first time `key` was asked for (built under a lock).

        `build` may itself ask for another shared resource (re-entrant).
        """
        with self._lock:
            if key not in self._built:
                self._built[key] = build()
            value: _T = self._built[key]
            return value

    def embedder(self, key: Hashable, build: Callable[[], _T]) -> _T | Any:
        """The injected embedder, else the one `build` makes for `key` (model folder, etc.)."""
        if self._embedder is not None:
            return self._embedder
        return self.once(("embedder", key), build)

    def stemmer(self) -> Any:
        """This thread's English Snowball stemmer (PyStemmer's are not thread-safe)."""
        stemmer = getattr(self._threads, "stemmer", None)
        if stemmer is None:
            import Stemmer

            stemmer = self._threads.stemmer = Stemmer.Stemmer("english")
        return stemmer


# The one process-wide holder (allowed by tests/test_module_resources.py).
_process = SharedResources()


def shared() -> SharedResources:
    """The process's shared resources."""
    return _process


@contextmanager
def sharing(resources: SharedResources) -> Iterator[SharedResources]:
    """Use `resources` as the process's shared resources inside the block (for tests)."""
    global _process
    previous, _process = _process, resources
    try:
        yield resources
    finally:
        _process = previous
