"""Speed and size of the tool nodes: polyview views, MoG selection overhead, index size.

Run from the repository root (reuses the MedQuAD work folder of
`bench/bench_medquad_tools.py` when it exists, for real vectors):

    python bench/bench_tools.py [--work-dir /tmp/prefrag-medquad-bench]

Measures
- polyview with the non-LLM views (R, A, T, C + coverage) on 15 documents totalling about
  8k tokens: p50 with the document vectors already at hand (the views' own cost) and p50
  including embedding the 15 documents with the bundled MiniLM (cold);
- `mog_select` overhead beyond the per-level searches (router + relevance matrix + mapping
  to the chosen level + building documents), p50, and the per-level searches themselves;
- index size with five levels versus one (level 1 = the base chunk size), and versus the
  corpus text.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from datetime import date
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

from prefrag.documents import make_document
from prefrag.jsonl import read_rows

DATA = Path("/work/shared/data/medquad")


class RandomEncoder:
    """Random unit vectors: timing of search and selection does not depend on content."""

    def __init__(self, dim: int = 384) -> None:
        self.rng = np.random.default_rng(0)
        self.dim = dim

    def encode(self, texts):
        v = self.rng.normal(size=(len(texts), self.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def p50(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 3)


def polyview_docs() -> list:
    records = []
    for file in sorted(DATA.glob("5_*.jsonl")):
        records += read_rows(file)
    # 15 snippets of about 400 words (~530 MiniLM tokens): ~8k tokens in total.
    long = [r for r in records if 350 <= len(r["content"].split()) <= 450][:15]
    docs = []
    for i, r in enumerate(long):
        docs.append(
            make_document(
                r["content"],
                id=r["id"],
                source="medquad",
                title=r["title"],
                url=r["url"],
                date=f"{2005 + i}-06-01" if i % 3 else "",
                authority=0.9 if i % 2 else 0.5,
            )
        )
    return docs


def bench_polyview(repeats: int) -> dict:
    from prefrag.index.embeddings import get_embedder
    from prefrag.tools.polyview import PolyviewReranker

    docs = polyview_docs()
    words = sum(len(d.page_content.split()) for d in docs)
    embedder = get_embedder()
    question = "What are the treatments for diabetes insipidus?"
    embedder.encode([question])
    q = embedder.encode([question])[0]
    vecs = embedder.encode([d.page_content for d in docs])
    reranker = PolyviewReranker(embedder=embedder, now=date(2025, 1, 1))
    warm, cold = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        reranker.rerank(question, docs, 5, query_vector=q, doc_vectors=vecs)
        warm.append(time.perf_counter() - start)
    for _ in range(max(3, repeats // 10)):
        fresh = PolyviewReranker(embedder=embedder, now=date(2025, 1, 1))
        start = time.perf_counter()
        fresh.rerank(question, docs, 5)
        cold.append(time.perf_counter() - start)
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(embedder.model_dir / "tokenizer.json"))
    tokenizer.no_truncation()
    tokens = sum(len(e.ids) for e in tokenizer.encode_batch([d.page_content for d in docs]))
    return {
        "documents": len(docs),
        "words": words,
        "minilm_tokens": tokens,
        "p50_ms_views_with_vectors": p50(warm),
        "p50_ms_including_embedding": p50(cold),
    }


def load_index(work: Path):
    from prefrag.tools.granularity_index import GranularityIndex

    if (work / "eval_mog" / "index.json").exists():
        return GranularityIndex.load(
            work / "eval_mog", encoder=RandomEncoder()
        ), "MedQuAD eval sample"
    records = []
    for prefix in ("5_", "6_", "7_"):
        for file in sorted(DATA.glob(f"{prefix}*.jsonl")):
            records += read_rows(file)
    random.Random(0).shuffle(records)
    docs = [make_document(r["content"], id=r["id"], source="medquad") for r in records[:300]]
    return GranularityIndex.build(docs, base_size=64, encoder=RandomEncoder()), "random vectors"


def bench_mog(work: Path, repeats: int) -> dict:
    from prefrag.tools.mog import MoGSelector, Router

    index, what = load_index(work)
    router_path = work / "router.npz"
    if router_path.exists():
        router = Router.load(router_path)
    else:
        rng = np.random.default_rng(0)
        router = Router(
            [
                (rng.normal(size=(128, 384)).astype(np.float32), np.zeros(128, np.float32)),
                (rng.normal(size=(5, 128)).astype(np.float32), np.zeros(5, np.float32)),
            ]
        )
    selector = MoGSelector(index, router=router, k_r=3)
    queries = RandomEncoder().encode(["q"] * repeats)
    search_t, combine_t = [], []
    for q in queries:
        start = time.perf_counter()
        hits = selector.search_levels(q)
        mid = time.perf_counter()
        selector.combine(q, hits, 5)
        end = time.perf_counter()
        search_t.append(mid - start)
        combine_t.append(end - mid)
    report = index.size_report()
    one_level = report["text_bytes"] + report["vector_bytes_1"] + report["span_bytes_1"]
    five = report["total_bytes"]
    chunks_five = sum(report[f"chunks_{j}"] for j in range(index.n_levels))
    return {
        "index": what,
        "documents": len(index.texts),
        "p50_ms_per_level_searches": p50(search_t),
        "p50_ms_overhead_beyond_searches": p50(combine_t),
        "chunks_five_levels": chunks_five,
        "chunks_level1": report["chunks_1"],
        "bytes_five_levels": five,
        "bytes_one_level": one_level,
        "five_vs_one": round(five / one_level, 2),
        "five_levels_vs_corpus_text": round(five / report["text_bytes"], 2),
        "one_level_vs_corpus_text": round(one_level / report["text_bytes"], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Speed and size of the tool nodes.")
    parser.add_argument("--work-dir", default="/tmp/prefrag-medquad-bench")
    parser.add_argument("--repeats", type=int, default=100)
    args = parser.parse_args()
    results = {
        "polyview": bench_polyview(args.repeats),
        "mog": bench_mog(Path(args.work_dir), args.repeats),
    }
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
