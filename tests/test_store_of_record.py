"""A local source's store of record is a Qdrant Edge shard: appended to, and moved into."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from prefrag.config import Settings
from prefrag.index import docstore
from prefrag.index.dense import open_store
from prefrag.index.edge_store import EdgeStore
from prefrag.index.ingest import index_paths
from prefrag.index.integrity import check_source
from prefrag.sources.local import LocalSource

NOTES = [
    {"id": "kiln", "title": "The kiln", "text": "The kiln at Marrow Lane fires pots on Fridays."},
    {"id": "ferry", "title": "The ferry", "text": "The Oskeby ferry stops running in January."},
    {"id": "choir", "title": "The choir", "text": "The choir rehearses in the old grain store."},
]


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home")


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_an_add_appends_to_the_store_of_record_without_rebuilding_it(
    tmp_path, settings, monkeypatch
):
    index_paths(_write(tmp_path / "a.jsonl", NOTES[:2]), "town", settings=settings)

    def no_rebuild(self, records, vectors):
        raise AssertionError("the store of record was rebuilt for an add")

    monkeypatch.setattr(EdgeStore, "replace_all", no_rebuild)
    report = index_paths(_write(tmp_path / "b.jsonl", NOTES[2:]), "town", settings=settings)
    assert report.added == 1 and not report.rebuilt and not report.repairs
    folder = settings.sources_dir / "town"
    with open_store("town", folder / "qdrant", settings) as store:
        points = {payload["parent_id"]: vector for _, payload, vector in store.points()}
    assert sorted(points) == ["choir", "ferry", "kiln"]
    source = LocalSource("town", settings=settings)
    records = {r["parent_id"]: r["id"] for r in source._records}
    for parent, vector in points.items():
        (stored,) = source.vectors_by_id([records[parent]])
        assert stored is not None and np.allclose(vector, stored, atol=1e-6)
    assert check_source("town", settings, qdrant=True).counts["qdrant"] == 3


def test_a_store_of_an_earlier_version_is_moved_on_the_next_index(tmp_path, settings):
    from qdrant_client import QdrantClient, models

    corpus = _write(tmp_path / "a.jsonl", NOTES)
    index_paths(corpus, "town", settings=settings)
    folder = settings.sources_dir / "town"
    generation = folder / docstore.read_manifest(folder).generation  # type: ignore[union-attr]
    records = docstore.load_records(generation)
    vectors = docstore.load_vectors(generation)
    # What earlier versions wrote: an embedded qdrant-client store with the same points.
    import shutil

    shutil.rmtree(folder / "qdrant")
    client = QdrantClient(path=str(folder / "qdrant"))
    client.create_collection(
        "prefrag-town",
        vectors_config=models.VectorParams(size=vectors.shape[1], distance=models.Distance.COSINE),
    )
    client.upsert(
        "prefrag-town",
        points=[
            models.PointStruct(id=r["id"], vector=v.tolist(), payload=r)
            for r, v in zip(records, vectors, strict=True)
        ],
    )
    client.close()
    before = check_source("town", settings, qdrant=True)
    assert before.sound and "earlier version" in " ".join(before.unchecked)

    report = index_paths(corpus, "town", settings=settings)
    assert report.added == 0 and not report.rebuilt and not report.repairs
    assert any("moved from embedded qdrant-client to Qdrant Edge" in w for w in report.warnings)
    assert (folder / "qdrant" / "edge_config.json").is_file()
    assert not list((folder / "qdrant").rglob("storage.sqlite"))
    after = check_source("town", settings, qdrant=True)
    assert after.sound and after.counts["qdrant"] == len(records) and not after.unchecked
    again = index_paths(corpus, "town", settings=settings)
    assert not again.warnings and not again.rebuilt
    hits = LocalSource("town", settings=settings).search("When does the ferry stop?", 1)
    assert hits[0].metadata["parent_id"] == "ferry"
