"""Dense vector search: an exact in-process numpy index, and Qdrant (embedded or server).

Qdrant is the store of record and the path for a server or cluster (`QDRANT_URL`). For
the embedded default the numpy index answers queries: exact cosine search over a few
thousand to a few hundred thousand unit vectors is one matrix-vector product, several
times faster than embedded Qdrant's pure-Python scan, and it needs no lock, so any
number of processes can read a source while one writes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from prefrag.errors import StoreLockedError

if TYPE_CHECKING:
    from prefrag.config import Settings

_UPSERT_BATCH = 256


class NumpyDenseIndex:
    """Exact cosine search over unit row vectors held in memory."""

    def __init__(self, vectors: np.ndarray) -> None:
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, dimension); a malformed file that loaded as another shape shows here."""
        if self.vectors.ndim != 2:
            return (len(self.vectors) if self.vectors.ndim else 0, 0)
        return (int(self.vectors.shape[0]), int(self.vectors.shape[1]))

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Up to `k` (row, cosine) pairs, best first."""
        size = len(self.vectors)
        k = min(k, size)
        if k <= 0:
            return []
        from prefrag.index.threads import single_blas_thread

        with single_blas_thread():
            scores = self.vectors @ np.asarray(query, dtype=np.float32)
        if k < size:
            top = np.argpartition(-scores, k - 1)[:k]
        else:
            top = np.arange(size)
        # Ties broken by row so results are stable from run to run.
        top = top[np.lexsort((top, -scores[top]))]
        return [(int(row), float(scores[row])) for row in top]


def collection_name(source: str) -> str:
    """The Qdrant collection of a source (prefixed so a shared server stays tidy)."""
    return f"prefrag-{source}"


class QdrantStore:
    """One source's collection in embedded Qdrant or on a Qdrant server.

    Opening the embedded store takes its folder lock; a second process gets
    `StoreLockedError`. Use as a context manager so the lock is released.
    """

    def __init__(self, source: str, folder: Path, settings: Settings) -> None:
        from qdrant_client import QdrantClient

        self.collection = collection_name(source)
        self.server = settings.qdrant_url is not None
        if self.server:
            self.client = QdrantClient(
                url=settings.qdrant_url,
                api_key=settings.qdrant_api_key,
                timeout=int(settings.request_timeout),
            )
            return
        folder.mkdir(parents=True, exist_ok=True)
        try:
            self.client = QdrantClient(path=str(folder))
        except RuntimeError as error:
            if "already accessed" not in str(error):
                raise
            raise StoreLockedError(
                f"Source '{source}' is open in another PrefRAG process; close it first or "
                "set QDRANT_URL to a Qdrant server for concurrent use."
            ) from None

    def __enter__(self) -> QdrantStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the client (and the embedded store's lock)."""
        self.client.close()

    def ensure_collection(self, dimension: int) -> None:
        """Create the collection (cosine distance) unless it exists."""
        from qdrant_client import models

        if not self.client.collection_exists(self.collection):
            self.client.create_collection(
                self.collection,
                vectors_config=models.VectorParams(size=dimension, distance=models.Distance.COSINE),
            )
        if not self.server:
            self._relax_embedded_fsync()

    def _relax_embedded_fsync(self) -> None:
        """Let embedded Qdrant commit points without an fsync each.

        Its sqlite persistence commits every point separately; with the default rollback
        journal each commit is an fsync (15 ms on a busy disk, a minute for 3,600 chunks).
        WAL with synchronous=NORMAL stays crash-safe (no corruption) and may only lose the
        last commits on power loss, which the next `index_paths` re-upserts (ids are
        content-derived and the docstore is compared with the point count). This reaches
        into qdrant-client's private local storage, so any mismatch just keeps the default.
        """
        import sqlite3

        try:
            local = self.client._client.collections[self.collection]  # type: ignore[attr-defined]
            connection = local.storage.storage
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
        except (AttributeError, KeyError, TypeError, sqlite3.Error):
            return

    def count(self) -> int:
        """How many points the collection holds (0 when it does not exist)."""
        if not self.client.collection_exists(self.collection):
            return 0
        return int(self.client.count(self.collection, exact=True).count)

    def upsert(self, records: Sequence[dict[str, Any]], vectors: np.ndarray) -> None:
        """Write chunk records (as payload) and their vectors under the chunk ids."""
        from qdrant_client import models

        for start in range(0, len(records), _UPSERT_BATCH):
            stop = start + _UPSERT_BATCH
            points = [
                models.PointStruct(id=record["id"], vector=vector.tolist(), payload=record)
                for record, vector in zip(records[start:stop], vectors[start:stop], strict=True)
            ]
            self.client.upsert(self.collection, points=points, wait=True)

    def search(self, query: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Up to `k` (chunk id, cosine) pairs, best first, via `query_points`."""
        if k <= 0:
            return []
        response = self.client.query_points(
            self.collection,
            query=np.asarray(query, dtype=np.float32).tolist(),
            limit=k,
            with_payload=False,
        )
        return [(str(point.id), float(point.score)) for point in response.points]

    def ids(self) -> set[str]:
        """The ids of every point in the collection (empty when it does not exist)."""
        return {point_id for point_id, _, _ in self.points(with_payload=False, with_vectors=False)}

    def points(
        self,
        ids: Sequence[str] | None = None,
        *,
        with_payload: bool = True,
        with_vectors: bool = True,
    ) -> list[tuple[str, dict[str, Any], np.ndarray | None]]:
        """(id, payload, vector) of the points `ids` (every point when None).

        The payload is the chunk record upserted with the point, so a source whose own
        files are damaged can take its records and vectors back from here.
        """
        if not self.client.collection_exists(self.collection):
            return []
        if ids is not None:
            found = []
            for start in range(0, len(ids), _UPSERT_BATCH):
                found.extend(
                    self.client.retrieve(
                        self.collection,
                        ids=list(ids[start : start + _UPSERT_BATCH]),
                        with_payload=with_payload,
                        with_vectors=with_vectors,
                    )
                )
        else:
            found, offset = [], None
            while True:
                page, offset = self.client.scroll(
                    self.collection,
                    limit=_UPSERT_BATCH,
                    offset=offset,
                    with_payload=with_payload,
                    with_vectors=with_vectors,
                )
                found.extend(page)
                if offset is None:
                    break
        return [
            (
                str(point.id),
                dict(point.payload or {}),
                None if point.vector is None else np.asarray(point.vector, dtype=np.float32),
            )
            for point in found
        ]

    def replace_all(self, records: Sequence[dict[str, Any]], vectors: np.ndarray) -> None:
        """Make the collection hold exactly `records` (dropping every other point)."""
        if self.client.collection_exists(self.collection):
            self.client.delete_collection(self.collection)
        self.ensure_collection(int(vectors.shape[1]))
        self.upsert(records, vectors)
