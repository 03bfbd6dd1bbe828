"""The store of record earlier versions kept in process: a Qdrant Edge shard in `qdrant/`.

Each point was a chunk: its id, its dense vector and its record (text and metadata) as
payload, a second copy of the generation's files. `prefrag index` no longer writes one:
it reads an existing shard once, to repair a damaged generation from it, and removes it
(`ingest._open_store`). The class keeps the same contract as a server collection
(`PointStore`), which tests check.

Opening the shard takes its write-ahead-log lock: a second process gets
`StoreLockedError`. Use it as a context manager so the lock is released.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from prefrag.errors import StoreLockedError
from prefrag.index.point_store import PointStore

_BATCH = 512
CONFIG = "edge_config.json"  # what marks a folder as a Qdrant Edge shard


class StoreUnreadableError(Exception):
    """The shard's files cannot be loaded (damaged); the caller rebuilds it."""


def is_edge_store(folder: Path) -> bool:
    """Whether `folder` holds a Qdrant Edge shard (not an older embedded qdrant-client store)."""
    return (folder / CONFIG).is_file()


def is_legacy_store(folder: Path) -> bool:
    """Whether `folder` holds the embedded qdrant-client store earlier versions wrote."""
    return (folder / "meta.json").is_file() or (folder / "collection").is_dir()


class EdgeStore(PointStore):
    """One source's points in a Qdrant Edge shard in `folder` (created on first write).

    Raises:
        StoreLockedError: Another process has the shard open.
        StoreUnreadableError: The shard's files cannot be loaded.
    """

    server = False
    batch = _BATCH

    def __init__(self, source: str, folder: Path) -> None:
        self.source = source
        self.folder = folder
        self._shard: Any = None
        self._created = False
        self._unflushed = False  # every write flushes; only a new empty shard may not be
        if is_edge_store(folder):
            self._shard = self._load()

    def _load(self) -> Any:
        from qdrant_edge import EdgeShard

        try:
            return EdgeShard.load(str(self.folder))
        except Exception as error:
            if "WouldBlock" in str(error) or "already" in str(error):
                raise StoreLockedError(
                    f"Source '{self.source}' is open in another PrefRAG process; close it "
                    "first or set QDRANT_URL to a Qdrant server for concurrent use."
                ) from None
            text = str(error)
            if "os error 13" in text or "os error 30" in text or "Permission denied" in text:
                message = f"cannot open {self.folder} for writing: {text}"
                raise PermissionError(13, message) from None
            raise StoreUnreadableError(text) from error

    def close(self) -> None:
        """Flush (if a write is pending) and release the shard (and its lock)."""
        if self._shard is None:
            return
        if self._unflushed:  # a flush costs ~0.1 s on a 100k-point shard even when clean
            self._shard.flush()
        self._shard.close()
        self._shard = None
        if self._created:
            # The first load of a new shard rewrites its config and journals once; doing it
            # here keeps a later run that writes nothing from changing any file.
            from qdrant_edge import EdgeShard

            EdgeShard.load(str(self.folder)).close()
            self._created = False

    def ensure_collection(self, dimension: int) -> None:
        """Create the shard (cosine distance) unless it exists."""
        if self._shard is not None:
            return
        from qdrant_edge import Distance, EdgeConfig, EdgeShard, EdgeVectorParams

        if self.folder.exists():
            shutil.rmtree(self.folder)
        config = EdgeConfig(vectors=EdgeVectorParams(size=dimension, distance=Distance.Cosine))
        self._shard = EdgeShard.create(str(self.folder), config)
        self._created = True
        self._unflushed = True

    def count(self) -> int:
        """How many points the shard holds (0 before the first write)."""
        if self._shard is None:
            return 0
        from qdrant_edge import CountRequest

        return int(self._shard.count(CountRequest(exact=True)))

    def upsert(self, records: Sequence[dict[str, Any]], vectors: np.ndarray) -> None:
        """Write chunk records (as payload) and their vectors under the chunk ids."""
        from qdrant_edge import Point, UpdateOperation

        if len(records) and self._shard is None:
            self.ensure_collection(int(vectors.shape[1]))
        for start in range(0, len(records), _BATCH):
            points = [
                Point(id=_point_id(record["id"]), vector=vector.tolist(), payload=dict(record))
                for record, vector in zip(
                    records[start : start + _BATCH], vectors[start : start + _BATCH], strict=True
                )
            ]
            self._shard.update(UpdateOperation.upsert_points(points))
        if len(records):
            self._shard.flush()
            self._unflushed = False

    def delete(self, ids: Sequence[str]) -> None:
        """Remove the points `ids`."""
        from qdrant_edge import UpdateOperation

        if self._shard is not None and ids:
            self._shard.update(UpdateOperation.delete_points([_point_id(i) for i in ids]))
            self._shard.flush()
            self._unflushed = False

    def _exists(self) -> bool:
        return self._shard is not None

    def _nearest(self, vector: list[float], k: int) -> Sequence[Any]:
        if self._shard is None:
            return []
        from qdrant_edge import Query, QueryRequest, SearchParams

        request = QueryRequest(
            limit=k,
            query=Query.Nearest(vector),
            with_payload=False,
            params=SearchParams(exact=True),
        )
        return list(self._shard.query(request))

    def _retrieve(self, ids: Sequence[str], with_payload: bool, with_vectors: bool) -> list[Any]:
        points = [_point_id(i) for i in ids]
        return list(
            self._shard.retrieve(points, with_payload=with_payload, with_vector=with_vectors)
        )

    def _scroll(self, offset: Any, with_payload: bool, with_vectors: bool) -> tuple[list[Any], Any]:
        from qdrant_edge import ScrollRequest

        request = ScrollRequest(
            offset=offset, limit=self.batch, with_payload=with_payload, with_vector=with_vectors
        )
        page, offset = self._shard.scroll(request)
        return list(page), offset

    def _drop(self) -> None:
        if self._shard is not None:
            self._shard.close()
            self._shard = None
        shutil.rmtree(self.folder, ignore_errors=True)


def _point_id(chunk_id: str) -> str:
    """Chunk ids are UUID strings (content-derived); anything else is mapped to one."""
    try:
        return str(uuid.UUID(chunk_id))
    except ValueError:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, chunk_id))
