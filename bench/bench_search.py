"""Per-query search latency on HotpotQA-350: numpy exact index vs Qdrant vs lexical vs hybrid.

Run: `python bench/bench_search.py [--limit N] [--home DIR]` (needs ../shared/data; with
`--home` the index is kept there and reused by later runs).
Each of the 350 questions is searched for its top 5. "numpy" and "qdrant" time the dense
lookup alone (query vectors encoded beforehand); "encode" is the MiniLM query embedding;
"lexical", "dense" and "hybrid" are full `LocalSource.search` calls.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import hotpot_corpus_rows, hotpot_items, percentiles, write_jsonl

from prefrag.config import Settings
from prefrag.index.catalog import source_exists
from prefrag.index.dense import QdrantStore
from prefrag.index.embeddings import get_embedder
from prefrag.index.ingest import index_paths
from prefrag.sources.local import LocalSource

K = 5


def _latencies(items: list, call: Callable[[object], object]) -> list[float]:
    call(items[0])  # warm-up
    seconds = []
    for item in items:
        start = time.perf_counter()
        call(item)
        seconds.append(time.perf_counter() - start)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=None, help="index only the first N rows")
    parser.add_argument("--home", type=Path, default=None, help="keep and reuse the index here")
    args = parser.parse_args()
    rows = hotpot_corpus_rows()[: args.limit]
    questions = [item.question for item in hotpot_items()]
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(home=args.home or Path(folder) / "home")
        if not source_exists("hotpot", settings):
            corpus = write_jsonl(Path(folder) / "c.jsonl", rows)
            index_paths([corpus], "hotpot", settings=settings)
        embedder = get_embedder(settings)
        vectors = [embedder.encode_one(q) for q in questions]
        dense = LocalSource("hotpot", settings=settings, mode="dense")
        results = {
            "encode (query)": _latencies(questions, embedder.encode_one),
            "numpy exact": _latencies(vectors, lambda v: dense._numpy.search(v, K)),
        }
        with QdrantStore("hotpot", settings.sources_dir / "hotpot" / "qdrant", settings) as store:
            results["qdrant query_points"] = _latencies(vectors, lambda v: store.search(v, K))
        for mode in ("lexical", "dense", "hybrid"):
            source = LocalSource("hotpot", settings=settings, mode=mode)
            search = source.search
            results[f"LocalSource {mode}"] = _latencies(questions, lambda q, s=search: s(q, K))
    print(f"corpus: {len(rows)} paragraphs, {len(questions)} queries, top {K}")
    for name, seconds in results.items():
        stats = percentiles(seconds)
        print(f"{name:22s} p50 {stats['p50_ms']:7.2f} ms  p95 {stats['p95_ms']:7.2f} ms")


if __name__ == "__main__":
    main()
