"""Both kinds of Qdrant points keep one contract: a Qdrant Edge shard and a collection.

`EdgeStore` is the store of record earlier versions wrote in process (read once to repair,
then removed); `QdrantStore` is a source's collection on a server (`QDRANT_URL`), here on
qdrant-client's in-memory engine, which speaks the same API.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from prefrag.index.dense import QdrantStore, collection_name
from prefrag.index.edge_store import EdgeStore
from prefrag.index.point_store import PointStore


def _records(n: int, start: int = 0) -> tuple[list[dict[str, str]], np.ndarray]:
    ids = [str(uuid.uuid5(uuid.NAMESPACE_URL, f"note-{i}")) for i in range(start, start + n)]
    records = [{"id": chunk, "text": f"note {i}"} for i, chunk in enumerate(ids, start)]
    vectors = np.eye(8, dtype=np.float32)[start : start + n]
    return records, vectors


@pytest.fixture(params=["edge", "server"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PointStore]:
    if request.param == "edge":
        with EdgeStore("notes", tmp_path / "edge") as edge:
            yield edge
        return
    from qdrant_client import QdrantClient

    server = QdrantStore.__new__(QdrantStore)
    server.collection = collection_name("notes")
    server.client = QdrantClient(location=":memory:")
    server._dimension, server._exists_known = None, False
    with server:
        yield server


def test_a_store_is_empty_before_its_first_write(store: PointStore) -> None:
    assert store.count() == 0 and store.ids() == set() and store.points() == []
    assert store.search(np.eye(8, dtype=np.float32)[0], 3) == []


def test_points_written_are_searched_listed_read_and_deleted(store: PointStore) -> None:
    records, vectors = _records(4)
    store.ensure_collection(8)
    store.upsert(records, vectors)
    assert store.count() == 4
    assert store.ids() == {r["id"] for r in records}
    best = store.search(vectors[2], 2)
    assert best[0][0] == records[2]["id"] and best[0][1] == pytest.approx(1.0)
    [(point_id, payload, vector)] = store.points([records[1]["id"]])
    assert point_id == records[1]["id"] and payload == records[1]
    assert vector is not None and np.allclose(vector, vectors[1])
    bare = store.points(with_payload=False, with_vectors=False)
    assert sorted(p[0] for p in bare) == sorted(r["id"] for r in records)
    assert all(payload == {} and vector is None for _, payload, vector in bare)
    store.delete([records[0]["id"]])
    assert store.ids() == {r["id"] for r in records[1:]}


def test_replace_all_keeps_exactly_the_given_points(store: PointStore) -> None:
    old, old_vectors = _records(3)
    store.ensure_collection(8)
    store.upsert(old, old_vectors)
    new, new_vectors = _records(2, start=5)
    store.replace_all(new, new_vectors)
    assert store.ids() == {r["id"] for r in new} and store.count() == 2
    assert store.search(new_vectors[1], 1)[0][0] == new[1]["id"]
