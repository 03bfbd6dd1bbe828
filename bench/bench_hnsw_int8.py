"""HNSW on real vectors: float32 vs Qdrant's int8 scalar quantisation, same run.

Run:
  python bench/bench_hnsw_int8.py --vectors W/derived.npy --rows 25097 --queries W/queries.npy

`--vectors` is a `.npy` matrix whose first `--rows` rows are real chunk embeddings (the
1M benchmark's `derived.npy` starts with the 25,097 vectors of the full MedQuAD home);
`--queries` real question vectors (its `queries.npy`: 200 MedQuAD questions). One shard
is built each way with `prefrag.index.hnsw.build` (m 16, ef_construct 100), its build
wall and CPU time taken, and every query searched at each ef: float32; int8 with Qdrant's
default rescoring (k candidates); int8 rescoring 2k candidates (what `HnswIndex` asks).
Reported: recall@10 against the exact top 10 and the p50 query time.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

K = 10


def main() -> None:
    from qdrant_edge import EdgeShard, QuantizationSearchParams, Query, QueryRequest, SearchParams

    from prefrag.index import hnsw
    from prefrag.index.dense import NumpyDenseIndex

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--vectors", required=True)
    parser.add_argument("--rows", type=int, default=25_097)
    parser.add_argument("--queries", required=True)
    parser.add_argument("--efs", default="64,128,256")
    args = parser.parse_args()
    vectors = np.asarray(np.load(args.vectors, mmap_mode="r")[: args.rows], dtype=np.float32)
    queries = np.load(args.queries)
    exact = NumpyDenseIndex(vectors)
    truth = [{row for row, _ in exact.search(q, K)} for q in queries]
    variants = {
        "float32": (False, None),
        "int8, rescoring k": (True, None),
        "int8, rescoring 2k": (True, QuantizationSearchParams(rescore=True, oversampling=2.0)),
    }
    work = Path(tempfile.mkdtemp(prefix="bench-hnsw-int8-"))
    try:
        built: dict[bool, dict] = {}
        for int8 in (False, True):
            started, cpu = time.perf_counter(), time.process_time()
            hnsw.build(work / str(int8), vectors, int8=int8)
            built[int8] = {
                "build_s": time.perf_counter() - started,
                "build_cpu_s": time.process_time() - cpu,
            }
        for name, (int8, quantization) in variants.items():
            [folder] = hnsw.shards(work / str(int8))
            shard = EdgeShard.load(str(folder))
            report: dict = {"variant": name, **built[int8]}
            for ef in (int(e) for e in args.efs.split(",")):
                recall, seconds = [], []
                for query, expected in zip(queries, truth, strict=True):
                    began = time.perf_counter()
                    hits = shard.query(
                        QueryRequest(
                            limit=K,
                            query=Query.Nearest(query.tolist()),
                            with_payload=False,
                            with_vector=False,
                            params=SearchParams(hnsw_ef=ef, quantization=quantization),
                        )
                    )
                    seconds.append(time.perf_counter() - began)
                    recall.append(len({int(h.id) for h in hits} & expected) / K)
                report[f"ef{ef}"] = {
                    "recall_at_10": float(np.mean(recall)),
                    "p50_ms": 1000 * float(np.median(seconds)),
                }
            shard.close()
            print(json.dumps(report), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
