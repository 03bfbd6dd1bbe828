"""An HNSW index of a generation's vectors, held by Qdrant Edge shards in process.

Exact search reads every vector for every query: fine up to `Settings.hnsw_min_chunks`
chunks, linear beyond. Past that size `prefrag index` also writes the generation's vectors
into Qdrant Edge shards (`qdrant-edge-py`: Qdrant's own Rust engine and data model,
without a server) with HNSW graphs, and searches go there.

The rows are cut into parts of `PART_ROWS` (`hnsw/part-000`, `part-001`, ...), each its own
shard, searched one after the other and their hits merged (as Qdrant merges the segments
of one shard): the graph a build holds in memory stays bounded, and an add that folds new
rows in extends only the last part (the full ones are hard links to the previous
generation's). Each shard keeps Qdrant's scalar int8 quantisation in memory for the graph
walk and the float32 vectors on disk, with which the best candidates (twice the hits asked
for) are rescored: less memory and less build time than float32 graphs at the same recall
(docs/scale.md).

Point ids are row numbers of the generation, so a hit maps straight to its chunk record;
the vectors themselves stay in `vectors.npy` too (the exact path, repairs, `vectors_of`).
The shards are part of the immutable generation: built in the generation's staging folder
and never written after the generation is published, so any number of readers can open
them at once. A generation written before parts holds one float32 shard in `hnsw/` itself;
it is still searched, and replaced by int8 parts at the source's next full write.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

import numpy as np

HNSW = "hnsw"  # the folder of the shards inside a generation
PART_ROWS = 125_000  # rows per shard (the part size the 1M benchmark measured)
_OVERSAMPLING = 2.0  # int8 candidates rescored with float32 vectors, per hit asked for
_CONFIG = "edge_config.json"  # what marks a folder as one shard
_UPSERT_BATCH = 1_024
_M = 16  # edges per node (Qdrant's default)
_EF_CONSTRUCT = 100  # Qdrant's default
# Segments smaller than this (KiB of vectors) are searched by a full scan of that segment
# and, once the shard exists, not indexed on append: a handful of added chunks is searched
# exactly beside the HNSW graph of the rest instead of rebuilding anything.
_APPEND_INDEXING_KIB = 20_000

logger = logging.getLogger(__name__)


def available() -> bool:
    """Whether Qdrant Edge (`qdrant-edge-py`, a dependency) can be imported."""
    try:
        import qdrant_edge  # noqa: F401
    except ImportError:
        return False
    return True


def _config(
    dimension: int,
    indexing_kib: int,
    *,
    m: int = _M,
    ef_construct: int = _EF_CONSTRUCT,
    int8: bool = False,
) -> Any:
    from qdrant_edge import (
        Distance,
        EdgeConfig,
        EdgeOptimizersConfig,
        EdgeVectorParams,
        HnswIndexConfig,
        Memory,
        ScalarQuantizationConfig,
        ScalarType,
    )

    quantization = None
    if int8:  # int8 copies in RAM for the graph walk, float32 on disk for the rescoring
        quantization = ScalarQuantizationConfig(type=ScalarType.Int8, quantile=0.99)
    return EdgeConfig(
        vectors=EdgeVectorParams(
            size=dimension,
            distance=Distance.Cosine,
            memory=Memory.Cold if int8 else None,
        ),
        hnsw_config=HnswIndexConfig(
            m=m, ef_construct=ef_construct, full_scan_threshold=indexing_kib
        ),
        quantization_config=quantization,
        optimizers=EdgeOptimizersConfig(indexing_threshold=indexing_kib),
        # Staged and flushed before it is published: a killed build leaves no half shard.
        wal_enabled=False,
    )


def shards(folder: Path) -> list[Path]:
    """The shard folders of an HNSW index in row order (one for a pre-parts generation)."""
    if (folder / _CONFIG).is_file():
        return [folder]
    return sorted(p for p in folder.glob("part-*") if (p / _CONFIG).is_file())


def build(
    target: Path,
    vectors: Any,
    previous: Path | None = None,
    *,
    m: int = _M,
    ef_construct: int = _EF_CONSTRUCT,
    int8: bool = False,
    part_rows: int | None = None,
) -> None:
    """Write `vectors` (point id = row) as shards of `part_rows` rows with HNSW graphs.

    `m` and `ef_construct` are the graphs' edges per node and build-time beam (Qdrant's
    defaults); `int8` adds Qdrant's scalar quantisation (int8 vectors in memory, float32
    on disk to rescore). `part_rows` defaults to `PART_ROWS`.

    When `previous` is the index of a generation whose rows are the first rows of
    `vectors`, its full parts are hard-linked, its last part is copied and only the rows
    after it are added (only those rows are read: `vectors` may be memory-mapped parts,
    `prefrag.index.rows.VectorRows`); otherwise every row is written and indexed.
    """
    size = part_rows or PART_ROWS
    target.mkdir(parents=True, exist_ok=True)
    # A pre-parts shard (float32, one for all rows) is not extended: int8 parts replace it.
    reusable = [] if previous is None or (previous / _CONFIG).is_file() else shards(previous)
    for number, first in enumerate(range(0, len(vectors), size)):
        stop = min(len(vectors), first + size)
        folder = target / f"part-{number:03d}"
        old = reusable[number] if number < len(reusable) else None
        if old is not None and old.name == folder.name and _count(old) == stop - first:
            shutil.copytree(old, folder, copy_function=_link)  # a full part: unchanged
            continue
        _build_shard(folder, vectors, first, stop, old, m=m, ef_construct=ef_construct, int8=int8)


def _build_shard(
    target: Path,
    vectors: Any,
    first: int,
    stop: int,
    previous: Path | None,
    *,
    m: int,
    ef_construct: int,
    int8: bool,
) -> None:
    """One shard of rows `first`..`stop`, extending a copy of `previous` when it holds a start."""
    from qdrant_edge import CountRequest, EdgeShard

    start = first
    if previous is not None and previous.is_dir():
        shutil.copytree(previous, target)
        try:
            config = _config(
                vectors.shape[1], _APPEND_INDEXING_KIB, m=m, ef_construct=ef_construct, int8=int8
            )
            shard = EdgeShard.load(str(target), config)
            start = first + int(shard.count(CountRequest(exact=True)))
        except Exception as error:  # a damaged previous shard: build from scratch
            logger.warning("HNSW shard %s unreadable (%s); building it again.", previous, error)
            shutil.rmtree(target, ignore_errors=True)
        else:
            if start > stop:
                shard.close()
                shutil.rmtree(target, ignore_errors=True)
                start = first
    if start == first:
        # Index every segment whatever its size: this shard exists because the source is big.
        config = _config(vectors.shape[1], 1, m=m, ef_construct=ef_construct, int8=int8)
        shard = EdgeShard.create(str(target), config)
    _upsert(shard, vectors, start, stop)
    unindexed = (stop - first) - int(shard.info().indexed_vectors_count)
    if start == first or unindexed * vectors.shape[1] * 4 > _APPEND_INDEXING_KIB * 1024:
        # Qdrant's optimizers index (and may merge) segments past the threshold; a small
        # append is left in its appendable segment, searched exactly beside the graph.
        shard.optimize()
    shard.flush()
    shard.close()
    # The first load after a build settles the shard's files; later loads change nothing.
    EdgeShard.load(str(target)).close()


def _count(folder: Path) -> int:
    """Points in a published shard (-1 when it cannot be read)."""
    from qdrant_edge import CountRequest, EdgeShard

    try:
        shard = EdgeShard.load(str(folder))
    except Exception:
        return -1
    try:
        return int(shard.count(CountRequest(exact=True)))
    finally:
        shard.close()


def _link(source: str, target: str) -> None:
    """Hard-link a published shard's file (a copy where the file system has no links)."""
    import os

    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _upsert(shard: Any, vectors: Any, start: int, end: int) -> None:
    from qdrant_edge import Point, UpdateOperation

    for first in range(start, end, _UPSERT_BATCH):
        stop = min(end, first + _UPSERT_BATCH)
        batch = np.asarray(vectors[first:stop], dtype=np.float32)
        points = [
            Point(id=row, vector=vector.tolist(), payload=None)
            for row, vector in zip(range(first, stop), batch, strict=True)
        ]
        shard.update(UpdateOperation.upsert_points(points))


class HnswIndex:
    """Approximate cosine search over a generation's rows in its Qdrant Edge shards.

    Raises:
        Exception: Whatever Qdrant Edge raises for a shard it cannot load.
    """

    def __init__(self, folder: Path, ef: int) -> None:
        from qdrant_edge import CountRequest, EdgeShard

        folders = shards(folder)
        if not folders:
            raise FileNotFoundError(f"{folder} holds no Qdrant Edge shard")
        self._shards: list[Any] = []
        try:
            for path in folders:
                self._shards.append(EdgeShard.load(str(path)))
        except Exception:
            self.close()
            raise
        self.ef = ef
        self.size = sum(int(s.count(CountRequest(exact=True))) for s in self._shards)

    @property
    def parts(self) -> int:
        """How many shards the rows are cut into."""
        return len(self._shards)

    @property
    def indexed(self) -> int:
        """How many vectors the HNSW graphs hold (the rest are scanned exactly)."""
        return sum(int(shard.info().indexed_vectors_count) for shard in self._shards)

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Up to `k` (row, cosine) pairs, best first."""
        from qdrant_edge import QuantizationSearchParams, Query, QueryRequest, SearchParams

        if k <= 0:
            return []
        request = QueryRequest(
            limit=k,
            query=Query.Nearest(np.asarray(query, dtype=np.float32).tolist()),
            with_payload=False,
            with_vector=False,
            params=SearchParams(
                hnsw_ef=max(self.ef, k),
                quantization=QuantizationSearchParams(rescore=True, oversampling=_OVERSAMPLING),
            ),
        )
        hits = [
            (int(hit.id), float(hit.score))
            for shard in self._shards
            for hit in shard.query(request)
        ]
        return sorted(hits, key=lambda hit: (-hit[1], hit[0]))[:k]

    def close(self) -> None:
        """Release the shards."""
        for shard in self._shards:
            shard.close()
        self._shards = []
