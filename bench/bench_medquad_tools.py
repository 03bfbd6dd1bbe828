"""MedQuAD retrieval with the tool nodes: fixed granularities, MoG, MoGG, MoG + polyview.

Query = the snippet's `question`, gold = the snippet `id` (a returned chunk hits when its
parent document is the gold snippet; duplicates of a parent count once). The router is
trained on a sample of sources 1-4 and evaluated on a sample of sources 5-7; each sample
is also the retrieval corpus of its split. Embeddings are cached by text under the work
folder, so the phases can be re-run cheaply.

Run (from the repository root, about 20-30 min on 2 busy CPU cores):

    python bench/bench_medquad_tools.py build-train &
    python bench/bench_medquad_tools.py build-eval
    python bench/bench_medquad_tools.py build-graph
    python bench/bench_medquad_tools.py train-router
    python bench/bench_medquad_tools.py evaluate
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import time
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

from prefrag.documents import make_document
from prefrag.jsonl import read_rows

TRAIN_FILES = ("1_", "2_", "3_", "4_")
EVAL_FILES = ("5_", "6_", "7_")
DATA = Path("/work/shared/data/medquad")


class CachedEncoder:
    """The configured embedder with a persistent text -> vector cache."""

    def __init__(self, folder: Path, part: str) -> None:
        from prefrag.index.embeddings import get_embedder

        self.embedder = get_embedder()
        self.folder = folder
        self.path = folder / f"emb_{part}.npz"
        self.cache: dict[str, np.ndarray] = {}
        for file in folder.glob("emb_*.npz"):
            with np.load(file) as data:
                for key, vec in zip(data["keys"], data["vectors"], strict=True):
                    self.cache[str(key)] = vec.astype(np.float32)
        self.new: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self.cache))
        if missing:
            lookup = dict(zip(keys, texts, strict=True))
            todo = [lookup[k] for k in missing]
            for start in range(0, len(todo), 256):
                vecs = self.embedder.encode(todo[start : start + 256])
                for key, vec in zip(missing[start : start + 256], vecs, strict=True):
                    self.cache[key] = vec
                    self.new[key] = vec
                if len(todo) > 256:
                    print(f"  encoded {min(start + 256, len(todo))}/{len(todo)}", flush=True)
                    self.save()
        if not texts:
            return np.zeros((0, self.embedder.dimension), np.float32)
        return np.stack([self.cache[k] for k in keys]).astype(np.float32)

    def save(self) -> None:
        if not self.new:
            return
        old: dict[str, np.ndarray] = {}
        if self.path.exists():
            with np.load(self.path) as data:
                old = {str(k): v for k, v in zip(data["keys"], data["vectors"], strict=True)}
        old.update(self.new)
        np.savez(self.path, keys=np.array(list(old)), vectors=np.stack(list(old.values())))
        self.new = {}


def load_records(prefixes: Sequence[str], per_source: int, seed: int = 0) -> list[dict]:
    """A fixed random sample of `per_source` snippets from each source file group."""
    records: list[dict] = []
    for prefix in prefixes:
        pool = []
        for file in sorted(DATA.glob(f"{prefix}*.jsonl")):
            pool.extend(read_rows(file))
        pool = [r for r in pool if r.get("content", "").strip() and r.get("question")]
        random.Random(seed).shuffle(pool)
        records.extend(pool[:per_source])
    return records


def to_documents(records: list[dict]):
    from prefrag.sources.authority import AuthorityTable

    table = AuthorityTable.load()
    return [
        make_document(
            r["content"],
            id=r["id"],
            source="medquad",
            title=r.get("title", ""),
            url=r.get("url", ""),
            authority=table.score(r.get("url", "")),
            qtype=r.get("qtype", ""),
            site=r.get("source", ""),
        )
        for r in records
    ]


def build(args: argparse.Namespace, part: str) -> None:
    import torch

    from prefrag.tools.granularity_index import GranularityIndex
    from prefrag.tools.mogg import GraphGranularityIndex

    torch.set_num_threads(1)
    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    split = "train" if part == "train" else "eval"
    prefixes, per_source = (
        (TRAIN_FILES, args.train_per_source)
        if split == "train"
        else (EVAL_FILES, args.eval_per_source)
    )
    records = load_records(prefixes, per_source)
    (work / f"{split}_records.json").write_text(json.dumps(records))
    encoder = CachedEncoder(work, part)
    start = time.perf_counter()
    questions = encoder.encode([r["question"] for r in records])
    np.save(work / f"{split}_questions.npy", questions)
    encoder.save()
    documents = to_documents(records)
    if part == "graph":
        index = GraphGranularityIndex.build(documents, encoder=encoder)
        index.save(work / "eval_mogg")
        print(f"graph: {index.n_nodes} nodes", flush=True)
    else:
        if split == "train":
            qa = encoder.encode([f"{r['question']} {r['content']}" for r in records])
            np.save(work / "train_qa.npy", qa)
            encoder.save()
        index = GranularityIndex.build(documents, base_size=args.base_size, encoder=encoder)
        index.save(work / f"{split}_mog")
        print(f"{split}: {index.size_report()}", flush=True)
    encoder.save()
    print(f"{part} built in {time.perf_counter() - start:.0f}s", flush=True)


# ----- metrics ------------------------------------------------------------------------
def parent_ranking(documents, k: int) -> list[str]:
    seen: list[str] = []
    for document in documents[:k]:
        parent = document.metadata.get("parent_id")
        if parent not in seen:
            seen.append(parent)
    return seen


def recall_ndcg(ranked: list[str], gold: str) -> tuple[float, float]:
    if gold in ranked:
        return 1.0, 1.0 / math.log2(ranked.index(gold) + 2)
    return 0.0, 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "phase", choices=["build-train", "build-eval", "build-graph", "train-router", "evaluate"]
    )
    parser.add_argument("--work-dir", default="/tmp/prefrag-medquad-bench")
    parser.add_argument("--train-per-source", type=int, default=60)
    parser.add_argument("--eval-per-source", type=int, default=100)
    parser.add_argument("--base-size", type=int, default=64)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--max-queries", type=int, default=0)
    args = parser.parse_args()
    if args.phase.startswith("build-"):
        build(args, args.phase.removeprefix("build-"))
    elif args.phase == "train-router":
        train_router(args)
    else:
        evaluate(args)


def train_router(args: argparse.Namespace) -> None:
    from prefrag.tools.granularity_index import GranularityIndex
    from prefrag.training.mog_router import RouterTrainConfig, fit_router

    work = Path(args.work_dir)
    index = GranularityIndex.load(work / "train_mog")
    questions = np.load(work / "train_questions.npy")
    qa = np.load(work / "train_qa.npy")
    config = RouterTrainConfig(epochs=args.epochs, hidden=128, lr=1e-3, batch_size=32)
    start = time.perf_counter()
    result = fit_router(index, questions, qa, config)
    result.router.save(work / "router.npz")
    summary = {
        "examples": len(questions),
        "epochs": config.epochs,
        "first_loss": round(result.losses[0], 4),
        "final_loss": round(result.losses[-1], 4),
        "label_agreement_train": round(result.label_agreement, 3),
        "best_level_histogram_train": result.label_histogram,
        "seconds": round(time.perf_counter() - start, 1),
    }
    (work / "router.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))


def _score(rankings: list[list], golds: list[str], k: int) -> dict[str, float]:
    pairs = [
        recall_ndcg(parent_ranking(docs, k), gold)
        for docs, gold in zip(rankings, golds, strict=True)
    ]
    n = max(len(pairs), 1)
    return {
        "recall@5": round(sum(p[0] for p in pairs) / n, 4),
        "ndcg@5": round(sum(p[1] for p in pairs) / n, 4),
    }


def evaluate(args: argparse.Namespace) -> None:
    from prefrag.tools.granularity_index import GranularityIndex
    from prefrag.tools.mog import MoGSelector, Router
    from prefrag.tools.mogg import GraphGranularityIndex
    from prefrag.tools.polyview import PolyviewReranker

    work = Path(args.work_dir)
    k = args.k
    records = json.loads((work / "eval_records.json").read_text())
    if args.max_queries:
        records = records[: args.max_queries]
    golds = [r["id"] for r in records]
    qvecs = np.load(work / "eval_questions.npy")[: len(records)]
    encoder = CachedEncoder(work, "evaluate")
    index = GranularityIndex.load(work / "eval_mog", encoder=encoder)
    router = Router.load(work / "router.npz") if (work / "router.npz").exists() else None
    rows: dict[str, dict] = {}

    def run(name: str, fn) -> list[list]:
        start = time.perf_counter()
        rankings = [fn(q, r) for q, r in zip(qvecs, records, strict=True)]
        rows[name] = {
            **_score(rankings, golds, k),
            "ms/query": round(1000 * (time.perf_counter() - start) / len(records), 2),
        }
        print(name, rows[name], flush=True)
        return rankings

    # Fixed granularities: the top-k chunks of one level.
    for level in range(index.n_levels):
        size = index.base_size // 2 * 2**level
        run(
            f"fixed level {level} ({size} words)",
            lambda q, r, level=level: [
                index.chunk_document(level, int(i)) for i in index.search(level, q, k)[0]
            ],
        )
    fixed = [[index.search(g, q, k)[0] for g in range(index.n_levels)] for q in qvecs]
    oracle_hits = []
    for per_level, gold in zip(fixed, golds, strict=True):
        best = 0.0
        for level, ids in enumerate(per_level):
            docs = [index.chunk_document(level, int(i)) for i in ids]
            best = max(best, recall_ndcg(parent_ranking(docs, k), gold)[0])
        oracle_hits.append(best)
    rows["oracle: best fixed level per query (upper bound)"] = {
        "recall@5": round(float(np.mean(oracle_hits)), 4),
        "ndcg@5": None,
        "ms/query": None,
    }

    selectors = (
        {"MoG (trained router, k_r=3)": MoGSelector(index, router=router, k_r=3)} if router else {}
    )
    selectors["MoG without router (uniform, level 1)"] = MoGSelector(index, k_r=3)
    if router:
        selectors["MoG (trained router, k_r=8)"] = MoGSelector(index, router=router, k_r=8)
        selectors["MoG (trained router, k_r=16)"] = MoGSelector(index, router=router, k_r=16)
    chosen_levels: list[int] = []
    for name, selector in selectors.items():

        def pick(q, r, selector=selector, name=name):
            result = selector.select_vector(q, k)
            if name.startswith("MoG (trained router, k_r=3)"):
                chosen_levels.append(result.level)
            return result.documents

        run(name, pick)
    if chosen_levels:
        rows["_router_levels_eval"] = {
            "histogram": np.bincount(chosen_levels, minlength=5).tolist()
        }

    if router:
        # Ablations of the selection rule (appendix A): route then search one level, and the
        # naive rule that compares weighted scores across levels directly.
        def routed(q, r):
            level = int(np.argmax(router.weights(q)))
            return [index.chunk_document(level, int(i)) for i in index.search(level, q, k)[0]]

        def naive(q, r):
            w = router.weights(q)
            pool = []
            for level in range(index.n_levels):
                ids, scores = index.search(level, q, k)
                pool += [
                    (float(s) * float(w[level]), level, int(i))
                    for i, s in zip(ids, scores, strict=True)
                ]
            pool.sort(reverse=True)
            return [index.chunk_document(level, i) for _, level, i in pool[:k]]

        run("ablation: router's level, plain top-k at that level", routed)
        run("ablation: naive top-k across levels by weighted score", naive)

    # MoG + polyview: MoG proposes a pool of 3k chunks, polyview keeps k.
    pool_selector = (
        MoGSelector(index, router=router, k_r=16) if router else MoGSelector(index, k_r=16)
    )
    pools = [pool_selector.select_vector(q, 3 * k).documents for q in qvecs]
    base_pools = [
        [
            index.chunk_document(1, int(i), score=float(s))
            for i, s in zip(*index.search(1, q, 3 * k), strict=True)
        ]
        for q in qvecs
    ]
    variants = {
        "R only, no coverage": dict(views=["R"], coverage=False),
        "R + coverage (C)": dict(views=["R"], coverage=True),
        "R + A": dict(views=["R", "A"], coverage=False),
        "R + T": dict(views=["R", "T"], coverage=False),
        "R + A + T (inquiry), no coverage": dict(coverage=False),
        "R + A + T + C (inquiry, DBSCAN)": dict(),
        "R + A + T + C (inquiry, k-means)": dict(cluster_method="kmeans"),
        "R + A + T + C (care)": dict(profile="care"),
    }
    for label, kwargs in variants.items():
        reranker = PolyviewReranker(embedder=encoder, **kwargs)

        def rerank(q, r, reranker=reranker, pools=pools):
            pool = pools[golds.index(r["id"])]
            vecs = encoder.encode([d.page_content for d in pool])
            return reranker.rerank(
                r["question"], pool, k, query_vector=q, doc_vectors=vecs
            ).documents

        run(f"MoG pool(15) + polyview: {label}", rerank)
    for label in ("R + A + T + C (inquiry, DBSCAN)",):
        reranker = PolyviewReranker(embedder=encoder)

        def rerank_base(q, r, reranker=reranker):
            pool = base_pools[golds.index(r["id"])]
            vecs = encoder.encode([d.page_content for d in pool])
            return reranker.rerank(
                r["question"], pool, k, query_vector=q, doc_vectors=vecs
            ).documents

        run(f"fixed level 1 pool(15) + polyview: {label}", rerank_base)

    if (work / "eval_mogg" / "graph.json").exists():
        graph = GraphGranularityIndex.load(work / "eval_mogg", encoder=encoder)
        for level in range(graph.n_levels):
            run(
                f"MoGG fixed hop range {level}",
                lambda q, r, level=level: [
                    graph.chunk_document(level, int(i)) for i in graph.search(level, q, k)[0]
                ],
            )
        run(
            "MoGG without router (uniform, 1 hop)",
            lambda q, r: MoGSelector(graph, k_r=3).select_vector(q, k).documents,
        )
        if router:
            run(
                "MoGG with the MoG router (levels reused as hop ranges)",
                lambda q, r: MoGSelector(graph, router=router, k_r=3).select_vector(q, k).documents,
            )
        rows["_mogg_graph"] = {
            "nodes": graph.n_nodes,
            "edges": int(sum(len(n) for n in graph.neighbours) // 2),
            **graph.params,
        }
    rows["_setup"] = {
        "eval_queries": len(records),
        "eval_corpus_snippets": len(index.texts),
        "base_size_words": index.base_size,
        "index_size": index.size_report(),
    }
    (work / "results.json").write_text(json.dumps(rows, indent=2))
    print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
