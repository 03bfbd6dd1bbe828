"""Lexical retrieval in Qdrant's model vs the bm25s index, same chunks, same questions.

Run:
  python bench/bench_lexical_qdrant.py --medquad-home HOME [--source medquad-gard]

Issue 21 asks for the lexical side inside the source's Qdrant collection: a sparse
BM25-style vector per point with Qdrant's IDF modifier, so a Qdrant server holds
everything. Before anything switches, this measures whether it retrieves as well. The
chunks of a MedQuAD site source in HOME (built by `prefrag index`) are indexed twice from
their stored records, with the text `prefrag index` gives bm25s (title + text):

- **bm25s**: `prefrag.index.lexical.LexicalIndex`, what every local source searches now;
- **Qdrant BM25**: a Qdrant Edge shard whose points carry one sparse vector, Qdrant's own
  `Bm25` embedder (`qdrant-edge-py`: its tokenizer, English stemmer and stop words; the
  documents' term-frequency part with k 1.2, b 0.75 and the corpus' mean length), searched
  with `Modifier.Idf` (IDF computed by the shard over its points at query time).

Each MedQuAD question of the site's snippets (seeded sample) is asked of both; reported:
recall@1 and recall@10 (the question's snippet among the first 1 / 10 chunks' documents),
how often both top 10 are the same set, build time and query time.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

K = 10
SEED = 0


def _records(home: Path, source: str) -> list[dict[str, Any]]:
    from prefrag.config import Settings
    from prefrag.index import docstore

    folder = Settings(home=home).sources_dir / source
    manifest = docstore.require_manifest(folder, source)
    return docstore.load_records(folder / manifest.generation)


def _qdrant_bm25(texts: list[str], folder: Path) -> tuple[Any, Any, float]:
    """A shard of one IDF-modified sparse vector per text; (shard, embedder, build s)."""
    from qdrant_edge import (
        Bm25,
        Bm25Config,
        EdgeConfig,
        EdgeShard,
        EdgeSparseVectorParams,
        Modifier,
        Point,
        UpdateOperation,
    )

    started = time.perf_counter()
    mean_words = float(np.mean([len(t.split()) for t in texts]))
    embedder = Bm25(Bm25Config(avg_len=mean_words))
    config = EdgeConfig(
        vectors={}, sparse_vectors={"bm25": EdgeSparseVectorParams(modifier=Modifier.Idf)}
    )
    shard = EdgeShard.create(str(folder), config)
    for start in range(0, len(texts), 512):
        points = [
            Point(id=row, vector={"bm25": embedder.embed_document(text)}, payload=None)
            for row, text in enumerate(texts[start : start + 512], start=start)
        ]
        shard.update(UpdateOperation.upsert_points(points))
    shard.flush()
    return shard, embedder, time.perf_counter() - started


def run(home: Path, source: str, data: Path, limit: int) -> dict[str, Any]:
    """Both indexes over the source's chunks, asked the same questions."""
    from qdrant_edge import Query, QueryRequest

    from prefrag.index.lexical import LexicalIndex, record_texts
    from prefrag.sources.medquad_demo import read_medquad

    records = _records(home, source)
    texts = record_texts(records)
    parents = [r["parent_id"] for r in records]
    started = time.perf_counter()
    lexical = LexicalIndex.build(texts)
    bm25s_build = time.perf_counter() - started
    work = Path(tempfile.mkdtemp(prefix="bench-lexical-qdrant-"))
    try:
        shard, embedder, qdrant_build = _qdrant_bm25(texts, work / "shard")
        known = set(parents)
        rows = [r for r in read_medquad(data) if r["id"] in known]
        rows = random.Random(SEED).sample(rows, min(limit, len(rows)))
        found: dict[str, list[list[str]]] = {"bm25s": [], "qdrant": []}
        seconds: dict[str, float] = {"bm25s": 0.0, "qdrant": 0.0}
        for row in rows:
            began = time.perf_counter()
            hits = lexical.search(row["question"], K)
            seconds["bm25s"] += time.perf_counter() - began
            found["bm25s"].append([parents[i] for i, _ in hits])
            began = time.perf_counter()
            points = shard.query(
                QueryRequest(
                    limit=K,
                    query=Query.Nearest(embedder.embed_query(row["question"]), using="bm25"),
                    with_payload=False,
                    with_vector=False,
                )
            )
            seconds["qdrant"] += time.perf_counter() - began
            found["qdrant"].append([parents[int(p.id)] for p in points])
        shard.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report: dict[str, Any] = {
        "source": source,
        "chunks": len(records),
        "questions": len(rows),
        "build_s": {"bm25s": bm25s_build, "qdrant": qdrant_build},
    }
    for name, lists in found.items():
        report[name] = {
            "recall_at_1": float(
                np.mean([r["id"] in top[:1] for r, top in zip(rows, lists, strict=True)])
            ),
            "recall_at_10": float(
                np.mean([r["id"] in top for r, top in zip(rows, lists, strict=True)])
            ),
            "ms_per_query": 1000 * seconds[name] / max(1, len(rows)),
        }
    report["same_top10_set"] = int(
        sum(set(a) == set(b) for a, b in zip(found["bm25s"], found["qdrant"], strict=True))
    )
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--medquad-home", required=True, help="home with MedQuAD site sources")
    parser.add_argument("--source", action="append", help="site source(s); default GARD")
    parser.add_argument(
        "--data", default=str(Path(__file__).parents[1].parent / "shared/data/medquad")
    )
    parser.add_argument("--questions", type=int, default=600, help="per source")
    args = parser.parse_args()
    for source in args.source or ["medquad-gard"]:
        report = run(Path(args.medquad_home), source, Path(args.data), args.questions)
        print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
