"""A persistent cache of web search results, keyed by query, with a time to live."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from prefrag.config import Settings, get_settings

CACHE_FILE = "web_cache.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS web_results (
    key TEXT PRIMARY KEY,
    created REAL NOT NULL,
    results TEXT NOT NULL
)
"""


class WebCache:
    """Query -> raw result dicts, stored in SQLite and valid for `ttl_hours`.

    The key is the normalised query (Unicode NFKC, case-folded, whitespace collapsed) plus
    `k`, backend and region, so "Aspirin  dose" and "aspirin dose" share an entry. Values
    are the result dicts as the search client returned them (JSON), so a changed
    authority table applies to cached results too. Safe to share between threads: every
    call opens its own connection and writes are serialised by a lock; SQLite's own
    locking covers other processes.
    """

    def __init__(
        self,
        path: Path | str,
        *,
        ttl_hours: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Open (and create if needed) the cache database at `path`.

        Args:
            path: SQLite file; its folder is created.
            ttl_hours: How long an entry stays valid; 0 or less makes every entry stale.
            clock: Seconds since the epoch; injectable so tests can move time.
        """
        self.path = Path(path).expanduser()
        self.ttl_seconds = float(ttl_hours) * 3600.0
        self._clock = clock
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, self._connect() as conn:
            # WAL lets concurrent readers proceed while one writer commits.
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(_SCHEMA)

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> WebCache:
        """The cache at `Settings.cache_dir / web_cache.sqlite` with `web_cache_ttl_hours`.

        Args:
            settings: Process settings; None uses `get_settings()`.

        Returns:
            The cache.
        """
        settings = settings or get_settings()
        return cls(settings.cache_dir / CACHE_FILE, ttl_hours=settings.web_cache_ttl_hours)

    @staticmethod
    def key(query: str, k: int, *, backend: str = "", region: str = "") -> str:
        """The cache key of a search: normalised query, k, backend and region.

        Args:
            query: The query as the user wrote it.
            k: Number of results asked for.
            backend: Search backend(s), e.g. "auto".
            region: Search region, e.g. "wt-wt".

        Returns:
            A JSON string identifying the search.
        """
        return json.dumps([normalise_query(query), int(k), backend, region], ensure_ascii=False)

    def get(
        self, query: str, k: int, *, backend: str = "", region: str = ""
    ) -> list[dict[str, Any]] | None:
        """The cached results of a search, or None when absent or older than the TTL.

        Args:
            query: The query.
            k: Number of results asked for.
            backend: Search backend(s).
            region: Search region.

        Returns:
            The stored result dicts, or None on a miss.
        """
        key = self.key(query, k, backend=backend, region=region)
        with self._connect() as conn:
            row = conn.execute(
                "SELECT created, results FROM web_results WHERE key = ?", (key,)
            ).fetchone()
        if row is None or self._expired(row[0]):
            return None
        results = json.loads(row[1])
        return results if isinstance(results, list) else None

    def put(
        self,
        query: str,
        k: int,
        results: list[dict[str, Any]],
        *,
        backend: str = "",
        region: str = "",
    ) -> None:
        """Store the results of a search (replacing an older entry) and drop stale rows.

        Args:
            query: The query.
            k: Number of results asked for.
            results: JSON-serialisable result dicts.
            backend: Search backend(s).
            region: Search region.
        """
        key = self.key(query, k, backend=backend, region=region)
        now = self._clock()
        payload = json.dumps(results, ensure_ascii=False, default=str)
        with self._lock, self._connect() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO web_results (key, created, results) VALUES (?, ?, ?)",
                (key, now, payload),
            )
            conn.execute("DELETE FROM web_results WHERE created < ?", (now - self.ttl_seconds,))

    def clear(self) -> None:
        """Remove every entry."""
        with self._lock, self._connect() as conn:
            conn.execute("DELETE FROM web_results")

    def __len__(self) -> int:
        with self._connect() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM web_results").fetchone()[0])

    def _expired(self, created: float) -> bool:
        return self._clock() - created >= self.ttl_seconds

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        # A connection per call keeps threads independent; `with conn` commits or rolls back.
        with closing(sqlite3.connect(self.path, timeout=30.0)) as conn, conn:
            yield conn


def normalise_query(query: str) -> str:
    """A query folded for cache lookups: NFKC, case-folded, whitespace collapsed.

    Args:
        query: The query as written.

    Returns:
        The normalised query.
    """
    return " ".join(unicodedata.normalize("NFKC", query).casefold().split())
