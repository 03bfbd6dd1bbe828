"""What a source's Qdrant points do the same on a server and in a Qdrant Edge shard.

`QdrantStore` (a collection on a server, `prefrag.index.dense`: a source's one copy with
`QDRANT_URL`) and `EdgeStore` (the Qdrant Edge store of record earlier versions kept in
process, `prefrag.index.edge_store`) differ in their client calls only: each says how to
reach its points (`_exists`, `_nearest`, `_retrieve`, `_scroll`, `_drop`), and this base
turns those into the store's methods (`search`, `ids`, `points`, `replace_all`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Self

import numpy as np

__all__ = ["PointStore"]


class PointStore(ABC):
    """A source's chunks as points: id, dense vector, and the chunk record as payload."""

    server: bool
    batch: int  # points per retrieve or scroll call

    @abstractmethod
    def ensure_collection(self, dimension: int) -> None:
        """Create the collection (cosine distance) unless it exists."""

    @abstractmethod
    def count(self) -> int:
        """How many points the store holds (0 before it exists)."""

    @abstractmethod
    def upsert(self, records: Sequence[dict[str, Any]], vectors: np.ndarray) -> None:
        """Write chunk records (as payload) and their vectors under the chunk ids."""

    @abstractmethod
    def delete(self, ids: Sequence[str]) -> None:
        """Remove the points `ids`."""

    @abstractmethod
    def close(self) -> None:
        """Release the client or shard."""

    @abstractmethod
    def _exists(self) -> bool:
        """Whether the collection exists (nothing to read before the first write)."""

    @abstractmethod
    def _nearest(self, vector: list[float], k: int) -> Sequence[Any]:
        """The `k` nearest points to `vector` (each with `id` and `score`), best first.

        None exist before the first write.
        """

    @abstractmethod
    def _retrieve(self, ids: Sequence[str], with_payload: bool, with_vectors: bool) -> list[Any]:
        """The points `ids` (each with `id`, `payload`, `vector`)."""

    @abstractmethod
    def _scroll(self, offset: Any, with_payload: bool, with_vectors: bool) -> tuple[list[Any], Any]:
        """One page of points from `offset` (None: the first) and the next page's offset."""

    @abstractmethod
    def _drop(self) -> None:
        """Delete the collection and every point in it."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def search(self, query: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Up to `k` (chunk id, cosine) pairs, best first."""
        if k <= 0:
            return []
        hits = self._nearest(np.asarray(query, dtype=np.float32).tolist(), k)
        return [(str(hit.id), float(hit.score)) for hit in hits]

    def ids(self) -> set[str]:
        """The ids of every point (empty before the first write)."""
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
        if not self._exists():
            return []
        found: list[Any] = []
        if ids is not None:
            for start in range(0, len(ids), self.batch):
                found.extend(
                    self._retrieve(ids[start : start + self.batch], with_payload, with_vectors)
                )
        else:
            offset = None
            while True:
                page, offset = self._scroll(offset, with_payload, with_vectors)
                found.extend(page)
                if offset is None:
                    break
        return [
            (
                str(point.id),
                dict(point.payload or {}) if with_payload else {},
                np.asarray(_dense(point.vector), dtype=np.float32)
                if with_vectors and point.vector is not None
                else None,
            )
            for point in found
        ]

    def replace_all(self, records: Sequence[dict[str, Any]], vectors: np.ndarray) -> None:
        """Make the store hold exactly `records` (dropping every other point)."""
        self._drop()
        self.ensure_collection(int(vectors.shape[1]))
        self.upsert(records, vectors)


def _dense(vector: Any) -> Any:
    """The dense vector of a point (a server's points also hold a named sparse one)."""
    return vector.get("", vector) if isinstance(vector, dict) else vector
