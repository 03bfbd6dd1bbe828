"""An HNSW index of a generation's vectors, held by a Qdrant Edge shard in process.

Exact search reads every vector for every query: fine up to `Settings.hnsw_min_chunks`
chunks, linear beyond. Past that size `prefrag index` also writes the generation's vectors
into a Qdrant Edge shard (`qdrant-edge-py`: Qdrant's own Rust engine and data model,
without a server) with an HNSW graph, and searches go there.

Point ids are row numbers of the generation, so a hit maps straight to its chunk record;
the vectors themselves stay in `vectors.npy` too (the exact path, repairs, `vectors_of`).
The shard is part of the immutable generation: it is built in the generation's staging
folder and never written after the generation is published, so any number of readers can
open it at once. An add copies the previous generation's shard and appends the new rows
(the HNSW graph of the old rows is kept, not rebuilt).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

import numpy as np

HNSW = "hnsw"  # the shard's folder inside a generation
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


def build(
    target: Path,
    vectors: Any,
    previous: Path | None = None,
    *,
    m: int = _M,
    ef_construct: int = _EF_CONSTRUCT,
    int8: bool = False,
) -> None:
    """Write a shard of `vectors` (point id = row) with its HNSW graph into `target`.

    `m` and `ef_construct` are the graph's edges per node and its build-time beam (Qdrant's
    defaults); `int8` adds Qdrant's scalar quantisation (int8 vectors in memory, float32
    on disk to rescore), which `bench/bench_scale.py --dense-only --int8` measures.

    When `previous` is the shard of a generation whose rows are the first rows of
    `vectors`, it is copied and only the rows after them are added (only those rows are
    read: `vectors` may be memory-mapped parts, `prefrag.index.rows.VectorRows`);
    otherwise every row is written and indexed.
    """
    from qdrant_edge import CountRequest, EdgeShard

    start = 0
    if previous is not None and previous.is_dir():
        shutil.copytree(previous, target)
        try:
            config = _config(
                vectors.shape[1], _APPEND_INDEXING_KIB, m=m, ef_construct=ef_construct, int8=int8
            )
            shard = EdgeShard.load(str(target), config)
            start = int(shard.count(CountRequest(exact=True)))
        except Exception as error:  # a damaged previous shard: build from scratch
            logger.warning("HNSW shard %s unreadable (%s); building it again.", previous, error)
            shutil.rmtree(target, ignore_errors=True)
            start = 0
        else:
            if start > len(vectors):
                shard.close()
                shutil.rmtree(target, ignore_errors=True)
                start = 0
    if start == 0:
        # Index every segment whatever its size: this shard exists because the source is big.
        config = _config(vectors.shape[1], 1, m=m, ef_construct=ef_construct, int8=int8)
        shard = EdgeShard.create(str(target), config)
    _upsert(shard, vectors, start)
    unindexed = len(vectors) - int(shard.info().indexed_vectors_count)
    if start == 0 or unindexed * vectors.shape[1] * 4 > _APPEND_INDEXING_KIB * 1024:
        # Qdrant's optimizers index (and may merge) segments past the threshold; a small
        # append is left in its appendable segment, searched exactly beside the graph.
        shard.optimize()
    shard.flush()
    shard.close()
    # The first load after a build settles the shard's files; later loads change nothing.
    EdgeShard.load(str(target)).close()


def _upsert(shard: Any, vectors: Any, start: int) -> None:
    from qdrant_edge import Point, UpdateOperation

    for first in range(start, len(vectors), _UPSERT_BATCH):
        stop = min(len(vectors), first + _UPSERT_BATCH)
        batch = np.asarray(vectors[first:stop], dtype=np.float32)
        points = [
            Point(id=row, vector=vector.tolist(), payload=None)
            for row, vector in zip(range(first, stop), batch, strict=True)
        ]
        shard.update(UpdateOperation.upsert_points(points))


class HnswIndex:
    """Approximate cosine search over a generation's rows in its Qdrant Edge shard.

    Raises:
        Exception: Whatever Qdrant Edge raises for a shard it cannot load.
    """

    def __init__(self, folder: Path, ef: int) -> None:
        from qdrant_edge import CountRequest, EdgeShard

        self._shard = EdgeShard.load(str(folder))
        self.ef = ef
        self.size = int(self._shard.count(CountRequest(exact=True)))

    @property
    def indexed(self) -> int:
        """How many vectors the HNSW graph holds (the rest are scanned exactly)."""
        return int(self._shard.info().indexed_vectors_count)

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Up to `k` (row, cosine) pairs, best first."""
        from qdrant_edge import Query, QueryRequest, SearchParams

        if k <= 0:
            return []
        hits = self._shard.query(
            QueryRequest(
                limit=k,
                query=Query.Nearest(np.asarray(query, dtype=np.float32).tolist()),
                with_payload=False,
                with_vector=False,
                params=SearchParams(hnsw_ef=max(self.ef, k)),
            )
        )
        return [(int(hit.id), float(hit.score)) for hit in hits]

    def close(self) -> None:
        """Release the shard."""
        self._shard.close()
