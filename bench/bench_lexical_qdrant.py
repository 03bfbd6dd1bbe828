"""Lexical and hybrid retrieval: Qdrant BM25 sparse vectors vs the bm25s index, same chunks.

Run:
  python bench/bench_lexical_qdrant.py --medquad-home HOME [--source medquad-gard ...]

Issue 21 moves a source's lexical side into Qdrant's model: a sparse BM25 vector per
chunk with Qdrant's IDF (`prefrag.index.sparse_lexical`, what `prefrag index` writes from
lexical format 3) instead of a bm25s index (format 2). The chunks of each MedQuAD site
source in HOME (built by `prefrag index`) are indexed both ways from their stored
records, with the text `prefrag index` indexes (title + text), through the product's own
classes:

- **bm25s**: `prefrag.index.lexical.LexicalIndex` (format 2);
- **Qdrant BM25**: `prefrag.index.sparse_lexical.SparseLexicalIndex`, saved as a Qdrant
  Edge shard and loaded as a search loads it (Qdrant's `Bm25`: its tokenizer, English
  stemmer and stop words, k 1.2, b 0.75, the corpus' mean length in words; IDF as Qdrant's
  `Modifier.Idf`).

Hybrid is the product's fusion (`LocalSource`: reciprocal rank fusion of the top
`_FUSION_DEPTH` dense and lexical rows) with the source's stored vectors searched exactly
and each question embedded at the source's precision. Each MedQuAD question of the site's
snippets (seeded sample) is asked of all four; reported: recall@1 and recall@10 (the
question's snippet among the first 1 / 10 chunks' documents), build and query time.
MedQuAD is not tuning data; nothing here was tuned on it.
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


def _source(home: Path, source: str) -> tuple[list[dict[str, Any]], np.ndarray, Any]:
    from prefrag.config import Settings
    from prefrag.index import docstore

    folder = Settings(home=home).sources_dir / source
    manifest = docstore.require_manifest(folder, source)
    generation = folder / manifest.generation
    return docstore.load_records(generation), docstore.load_vectors(generation), manifest


def run(home: Path, source: str, data: Path, limit: int) -> dict[str, Any]:
    """Both lexical indexes over the source's chunks, alone and fused with dense search."""
    from prefrag.config import Settings
    from prefrag.index.dense import NumpyDenseIndex
    from prefrag.index.embeddings import get_embedder, with_precision
    from prefrag.index.fusion import reciprocal_rank_fusion
    from prefrag.index.lexical import LexicalIndex, record_texts
    from prefrag.index.sparse_lexical import SparseLexicalIndex
    from prefrag.sources.local import _FUSION_DEPTH
    from prefrag.sources.medquad_demo import read_medquad

    records, vectors, manifest = _source(home, source)
    texts = record_texts(records)
    parents = [r["parent_id"] for r in records]
    started = time.perf_counter()
    bm25s = LexicalIndex.build(texts)
    build = {"bm25s": time.perf_counter() - started}
    work = Path(tempfile.mkdtemp(prefix="bench-lexical-qdrant-"))
    try:
        started = time.perf_counter()
        SparseLexicalIndex.build(texts).save(work / "lexical")
        build["qdrant"] = time.perf_counter() - started
        sparse = SparseLexicalIndex.load(work / "lexical")
        lexical = {"bm25s": bm25s, "qdrant": sparse}
        dense = NumpyDenseIndex(vectors)
        embedder = get_embedder(with_precision(Settings(home=home), manifest.embedding_precision))
        known = set(parents)
        rows = [r for r in read_medquad(data) if r["id"] in known]
        rows = random.Random(SEED).sample(rows, min(limit, len(rows)))
        names = ["bm25s", "qdrant", "hybrid-bm25s", "hybrid-qdrant"]
        found: dict[str, list[list[str]]] = {name: [] for name in names}
        seconds = {"bm25s": 0.0, "qdrant": 0.0}
        for row in rows:
            near = [r for r, _ in dense.search(embedder.encode_one(row["question"]), _FUSION_DEPTH)]
            for name, index in lexical.items():
                began = time.perf_counter()
                hits = index.search(row["question"], _FUSION_DEPTH)
                seconds[name] += time.perf_counter() - began
                found[name].append([parents[i] for i, _ in hits[:K]])
                fused = reciprocal_rank_fusion([near, [i for i, _ in hits]], limit=K)
                found[f"hybrid-{name}"].append([parents[i] for i, _ in fused])
        sparse.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report: dict[str, Any] = {
        "source": source,
        "chunks": len(records),
        "questions": len(rows),
        "build_s": build,
        "ms_per_query": {n: 1000 * s / max(1, len(rows)) for n, s in seconds.items()},
    }
    for name, lists in found.items():
        report[name] = {
            "recall_at_1": float(
                np.mean([r["id"] in top[:1] for r, top in zip(rows, lists, strict=True)])
            ),
            "recall_at_10": float(
                np.mean([r["id"] in top for r, top in zip(rows, lists, strict=True)])
            ),
        }
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
    reports: list[dict[str, Any]] = []
    for source in args.source or ["medquad-gard"]:
        report = run(Path(args.medquad_home), source, Path(args.data), args.questions)
        reports.append(report)
        print(json.dumps(report), flush=True)
    names = ["bm25s", "qdrant", "hybrid-bm25s", "hybrid-qdrant"]
    mean = {
        name: {
            key: float(np.mean([r[name][key] for r in reports]))
            for key in ("recall_at_1", "recall_at_10")
        }
        for name in names
    }
    print(json.dumps({"mean_of_sources": mean}), flush=True)


if __name__ == "__main__":
    main()
