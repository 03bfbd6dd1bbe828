"""Search that scales: exact search below the HNSW size, Qdrant Edge's HNSW past it.

The switch is tested with a tiny `PREFRAG_HNSW_MIN_CHUNKS` on a small invented corpus
indexed through `index_paths`, and searched through `LocalSource` as a run does.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from prefrag.config import get_settings
from prefrag.index import docstore
from prefrag.index.ingest import index_paths
from prefrag.sources.local import LocalSource

_PLACES = ["harbour", "orchard", "quarry", "lighthouse", "bakery", "observatory", "glacier"]
_EVENTS = ["flooded", "was repainted", "hosted a chess final", "lost power", "reopened"]
QUERIES = [
    "Which bakery lost power?",
    "chess final at the observatory",
    "flooding near the glacier",
    "the lighthouse was painted again",
    "orchard reopening",
]


def _notes(count: int, start: int = 0) -> list[dict[str, str]]:
    pairs = list(itertools.product(_PLACES, _EVENTS))[start : start + count]
    return [
        {
            "id": f"note-{start + i}",
            "title": f"The {place} of Vellmor",
            "text": f"In week {start + i} the {place} of Vellmor {event}; the town council "
            f"recorded it in its ledger.",
        }
        for i, (place, event) in enumerate(pairs)
    ]


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def hnsw_past(monkeypatch):
    """Set the HNSW size (chunks) for the settings every call reads."""

    def set_size(chunks: int):
        monkeypatch.setenv("PREFRAG_HNSW_MIN_CHUNKS", str(chunks))
        get_settings.cache_clear()
        return get_settings()

    return set_size


def _dense_top(source: LocalSource, k: int = 5) -> list[list[str]]:
    return [[d.metadata["id"] for d in source.search(q, k)] for q in QUERIES]


def test_past_the_hnsw_size_search_uses_hnsw_with_the_exact_top_results(tmp_path, hnsw_past):
    settings = hnsw_past(10)
    index_paths(_write(tmp_path / "notes.jsonl", _notes(30)), "town", settings=settings)
    generation = (
        settings.sources_dir
        / "town"
        / docstore.read_manifest(settings.sources_dir / "town").generation
    )  # type: ignore[union-attr]
    assert (generation / "hnsw").is_dir()
    approximate = LocalSource("town", settings=settings, mode="dense")
    assert approximate.dense_search == "hnsw"
    exact = LocalSource("town", settings=hnsw_past(1_000), mode="dense")
    assert exact.dense_search == "exact"
    assert _dense_top(approximate) == _dense_top(exact)
    first = approximate.search(QUERIES[0], 3)
    again = exact.search(QUERIES[0], 3)
    assert np.allclose([d.metadata["score"] for d in first], [d.metadata["score"] for d in again])
    assert "bakery" in first[0].page_content and "lost power" in first[0].page_content


def test_below_the_hnsw_size_no_shard_is_written_and_vectors_are_mapped(tmp_path, hnsw_past):
    settings = hnsw_past(1_000)
    index_paths(_write(tmp_path / "notes.jsonl", _notes(12)), "town", settings=settings)
    folder = settings.sources_dir / "town"
    assert not list(folder.glob("gen-*/hnsw"))
    source = LocalSource("town", settings=settings)
    assert source.dense_search == "exact"
    assert all(isinstance(part, np.memmap) for part in source._vectors.arrays)  # not read at open
    stored = np.load(folder / docstore.read_manifest(folder).generation / "vectors.npy")  # type: ignore[union-attr]
    row = [r["parent_id"] for r in source._records].index("note-3")
    vectors = source.vectors_by_id([source._records[row]["id"], "no-such-chunk"])
    assert vectors[1] is None and np.array_equal(vectors[0], stored[row])


def test_an_add_extends_the_shard_and_finds_the_new_chunks(tmp_path, hnsw_past):
    settings = hnsw_past(10)
    index_paths(_write(tmp_path / "a.jsonl", _notes(30)), "town", settings=settings)
    report = index_paths(
        _write(tmp_path / "b.jsonl", _notes(4, start=30)), "town", settings=settings
    )
    assert report.added == 4 and report.total_chunks == 34
    source = LocalSource("town", settings=settings, mode="dense")
    assert source.dense_search == "hnsw"
    assert source._hnsw is not None and source._hnsw.size == 34
    # The 30 indexed before keep their graph; the 4 added are scanned beside it.
    assert source._hnsw.indexed == 30
    newest = _notes(4, start=30)[-1]
    hits = source.search(newest["text"], 1)
    assert hits[0].metadata["parent_id"] == newest["id"]
    exact = LocalSource("town", settings=hnsw_past(1_000), mode="dense")
    assert _dense_top(source) == _dense_top(exact)


def test_a_damaged_shard_falls_back_to_exact_search_and_the_next_index_rebuilds_it(
    tmp_path, hnsw_past, caplog
):
    settings = hnsw_past(10)
    index_paths(_write(tmp_path / "a.jsonl", _notes(30)), "town", settings=settings)
    folder = settings.sources_dir / "town"
    shard = folder / docstore.read_manifest(folder).generation / "hnsw"  # type: ignore[union-attr]
    for path in shard.rglob("*"):
        if path.is_file():
            path.write_bytes(b"garbage")
    source = LocalSource("town", settings=settings, mode="dense")
    assert source.dense_search == "exact" and "searching exactly" in caplog.text
    assert _dense_top(source) == _dense_top(
        LocalSource("town", settings=hnsw_past(1_000), mode="dense")
    )
    settings = hnsw_past(10)
    index_paths(_write(tmp_path / "b.jsonl", _notes(2, start=30)), "town", settings=settings)
    assert LocalSource("town", settings=settings, mode="dense").dense_search == "hnsw"


def test_a_run_naming_one_source_opens_only_that_one(tmp_path, hnsw_past):
    from prefrag.sources.defaults import default_sources

    settings = hnsw_past(1_000)
    index_paths(_write(tmp_path / "a.jsonl", _notes(6)), "town", settings=settings)
    index_paths(_write(tmp_path / "b.jsonl", _notes(6, start=6)), "harbour", settings=settings)
    registry = default_sources(settings, web=False, require="town")
    town, harbour = registry.get("town"), registry.get("harbour")
    assert isinstance(town, LocalSource) and isinstance(harbour, LocalSource)
    assert town._opened and not harbour._opened
    assert town.search("Which bakery lost power?", 2)
    assert not harbour._opened
    # The other source opens at its own first search and answers as before.
    assert harbour.search("Which bakery lost power?", 2) and harbour._opened


@pytest.mark.parametrize("int8", [False, True])
def test_hnsw_shard_finds_the_exact_neighbours_with_and_without_int8(tmp_path, int8):
    """The shard `hnsw.build` writes (also with Qdrant's int8 scalar quantisation, which the
    1M benchmark measures) returns the exact top 10 for nearly every query, and an int8
    shard really holds quantised vectors."""
    from prefrag.index import hnsw
    from prefrag.index.dense import NumpyDenseIndex

    rng = np.random.default_rng(7)
    centres = rng.normal(size=(40, 32))
    vectors = centres[rng.integers(0, 40, 2_000)] + 0.3 * rng.normal(size=(2_000, 32))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    hnsw.build(tmp_path / "shard", vectors, m=8, ef_construct=64, int8=int8)
    quantised = list((tmp_path / "shard").rglob("quantized.data"))
    assert bool(quantised) == int8
    index, exact = hnsw.HnswIndex(tmp_path / "shard", ef=64), NumpyDenseIndex(vectors)
    queries = vectors[:50] + 0.05 * rng.normal(size=(50, 32)).astype(np.float32)
    overlap = [
        len({row for row, _ in index.search(q, 10)} & {row for row, _ in exact.search(q, 10)})
        for q in queries
    ]
    index.close()
    assert np.mean(overlap) / 10 >= 0.9


def _shard_file(part: Path) -> Path:
    return next(path for path in sorted(part.rglob("*")) if path.is_file())


def test_past_the_part_size_the_rows_are_int8_parts_and_an_add_extends_only_the_last(
    tmp_path, hnsw_past, monkeypatch
):
    """Large sources are cut into int8 shards of `PART_ROWS` rows, searched together with
    the exact top results; an add links the full parts and extends the last one."""
    from prefrag.index import hnsw

    monkeypatch.setattr(hnsw, "PART_ROWS", 12)
    settings = hnsw_past(10)
    index_paths(_write(tmp_path / "a.jsonl", _notes(30)), "town", settings=settings)
    folder = settings.sources_dir / "town"
    before = folder / docstore.read_manifest(folder).generation / "hnsw"  # type: ignore[union-attr]
    parts = hnsw.shards(before)
    assert [p.name for p in parts] == ["part-000", "part-001", "part-002"]
    assert all(list(p.rglob("quantized.data")) for p in parts)  # int8 copies for the walk
    source = LocalSource("town", settings=settings, mode="dense")
    assert source.dense_search == "hnsw" and source._hnsw is not None
    assert source._hnsw.parts == 3 and source._hnsw.size == 30
    exact = LocalSource("town", settings=hnsw_past(1_000), mode="dense")
    assert _dense_top(source) == _dense_top(exact)
    first = source.search(QUERIES[0], 3)
    again = exact.search(QUERIES[0], 3)
    assert np.allclose(
        [d.metadata["score"] for d in first], [d.metadata["score"] for d in again], atol=1e-5
    )  # rescored with the float32 vectors, not the int8 ones
    settings = hnsw_past(10)
    index_paths(_write(tmp_path / "b.jsonl", _notes(4, start=30)), "town", settings=settings)
    after = folder / docstore.read_manifest(folder).generation / "hnsw"  # type: ignore[union-attr]
    assert [p.name for p in hnsw.shards(after)] == ["part-000", "part-001", "part-002"]
    for name, linked in (("part-000", True), ("part-001", True), ("part-002", False)):
        same = _shard_file(after / name).stat().st_ino == _shard_file(before / name).stat().st_ino
        assert same == linked, name
    source = LocalSource("town", settings=settings, mode="dense")
    assert source._hnsw is not None and source._hnsw.size == 34
    newest = _notes(4, start=30)[-1]
    assert source.search(newest["text"], 1)[0].metadata["parent_id"] == newest["id"]
    assert _dense_top(source) == _dense_top(
        LocalSource("town", settings=hnsw_past(1_000), mode="dense")
    )


def test_a_single_float32_shard_of_an_earlier_version_is_searched_then_replaced_by_parts(
    tmp_path, hnsw_past
):
    from prefrag.index import hnsw

    settings = hnsw_past(10)
    index_paths(_write(tmp_path / "a.jsonl", _notes(30)), "town", settings=settings)
    folder = settings.sources_dir / "town"
    generation = folder / docstore.read_manifest(folder).generation  # type: ignore[union-attr]
    import shutil

    shutil.rmtree(generation / "hnsw")  # as earlier versions wrote it: one shard, float32
    vectors = np.load(generation / "vectors.npy")
    hnsw._build_shard(generation / "hnsw", vectors, 0, 30, None, m=16, ef_construct=100, int8=False)
    assert hnsw.shards(generation / "hnsw") == [generation / "hnsw"]
    source = LocalSource("town", settings=settings, mode="dense")
    assert source.dense_search == "hnsw"
    assert _dense_top(source) == _dense_top(
        LocalSource("town", settings=hnsw_past(1_000), mode="dense")
    )
    settings = hnsw_past(10)
    index_paths(_write(tmp_path / "b.jsonl", _notes(2, start=30)), "town", settings=settings)
    generation = folder / docstore.read_manifest(folder).generation  # type: ignore[union-attr]
    parts = hnsw.shards(generation / "hnsw")
    assert [p.name for p in parts] == ["part-000"] and list(parts[0].rglob("quantized.data"))
    source = LocalSource("town", settings=settings, mode="dense")
    assert source._hnsw is not None and source._hnsw.size == 32
