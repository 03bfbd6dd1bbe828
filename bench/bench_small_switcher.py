"""Latency of one `compare` call: the small switcher against the heuristic, in the same run.

    .venv/bin/python bench/bench_small_switcher.py [--items 40] [--dataset PATH]

Compare steps are built from HotpotQA-style items the way a run meets them: the item's
paragraphs in a seeded order, three new documents per step, everything earlier held (so a
step's new documents are unseen, and held ones were new a step before). The small switcher
is fitted (scikit-learn) on steps of tuning items 1-200 with the gold rule (keep exactly
when a supporting paragraph is new), their documents embedded by the feature extractor.
Latency is measured on steps of items 201-350 whose paragraphs were first indexed with
`prefrag index` (the API, into a temporary PREFRAG_HOME; not timed), so the judged
documents are the chunks a run retrieves and the small switcher reads their stored vectors
(`StoredVectors`, as the graph wires it) instead of embedding them; it still embeds each
new question once. The heuristic (`ExtractiveReasoner(use_embeddings=False).compare`) and
the small switcher alternate step by step, so that load from other processes hits both
alike. MiniLM is loaded before timing; the small switcher starts with an empty document
cache. Prints p50/p95 per call and their ratios (target: small switcher p95 <= 10x the
heuristic's); `--no-stored` embeds the judged documents instead (what documents no index
holds cost).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import HOTPOT

from prefrag.datasets import load_dataset
from prefrag.documents import make_document
from prefrag.jsonl import write_jsonl
from prefrag.reasoners.extractive import ExtractiveReasoner
from prefrag.reasoners.small_switcher import FeatureExtractor, SmallSwitcher
from prefrag.sources.stored_vectors import StoredVectors
from prefrag.training.switcher_small import SwitcherSmallConfig, train_network

DATASET = HOTPOT  # ../shared/data beside the repository (--dataset elsewhere)
PER_STEP = 3


def indexed(items, home: Path):
    """(source, {paragraph key: its first chunk as retrieved}) after `prefrag index`."""
    os.environ["PREFRAG_HOME"] = str(home)
    from prefrag.config import get_settings
    from prefrag.eval.twosource import corpus_rows
    from prefrag.index import docstore
    from prefrag.index.ingest import index_paths
    from prefrag.sources.local import LocalSource

    get_settings.cache_clear()
    corpus = write_jsonl(corpus_rows(items), home / "paragraphs.jsonl")
    index_paths([corpus], "bench")
    source = LocalSource("bench")
    folder = get_settings().sources_dir / "bench"
    chunks: dict[str, object] = {}
    for record in docstore.load_records(folder / source.manifest.generation):
        chunks.setdefault(record["parent_id"], docstore.record_to_document(record, 0.0))
    return source, chunks


def steps(item, seed: int = 0, chunks=None):
    """(question, held, new, keep) per step of one item."""
    from prefrag.eval.twosource import paragraph_key

    docs = [
        chunks[paragraph_key(p)]
        if chunks is not None
        else make_document(p.text, id=f"{item.id}-{i}", source="local", title=p.title)
        for i, p in enumerate(item.paragraphs)
    ]
    random.Random(f"{seed}:{item.id}").shuffle(docs)
    gold = set(item.gold_titles)
    out = []
    for start in range(0, len(docs) - PER_STEP + 1, PER_STEP):
        held, new = docs[:start], docs[start : start + PER_STEP]
        held_titles = {d.metadata["title"] for d in held}
        keep = any(d.metadata["title"] in gold - held_titles for d in new)
        out.append((item.question, held, new, keep))
    return out


def percentiles(seconds: list[float]) -> dict[str, float]:
    values = np.array(seconds) * 1000
    return {
        "p50_ms": round(float(np.percentile(values, 50)), 2),
        "p95_ms": round(float(np.percentile(values, 95)), 2),
        "mean_ms": round(float(values.mean()), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", type=Path, default=DATASET)
    parser.add_argument("--items", type=int, default=40, help="Report items timed (from 201).")
    parser.add_argument("--train-items", type=int, default=200)
    parser.add_argument(
        "--no-stored", action="store_true", help="Embed judged documents, not stored vectors."
    )
    args = parser.parse_args()
    items = load_dataset(args.dataset).items
    train_steps = [s for item in items[: args.train_items] for s in steps(item)]
    timed_items = items[200 : 200 + args.items]
    source, chunks = indexed(timed_items, Path(tempfile.mkdtemp(prefix="bench-switcher-")))
    timed_steps = [s for item in timed_items for s in steps(item, chunks=chunks)]

    start = time.perf_counter()
    fitting = FeatureExtractor()
    features = np.stack([fitting.features(q, h, n) for q, h, n, _ in train_steps])
    labels = np.array([1.0 if keep else 0.0 for *_, keep in train_steps])
    network, _ = train_network(features, labels, SwitcherSmallConfig(pairs="-", out="-"))
    fit_seconds = time.perf_counter() - start

    heuristic = ExtractiveReasoner(use_embeddings=False)
    # A fresh document cache; the embedder (process-wide) is already loaded by the fit.
    switcher = SmallSwitcher(network, FeatureExtractor(fitting.embedder))
    if not args.no_stored:
        switcher.use_stored_vectors(StoredVectors([source]))
    times: dict[str, list[float]] = {"heuristic": [], "small switcher": []}
    agree = {"heuristic": 0, "small switcher": 0}
    for question, held, new, keep in timed_steps:
        for name, judge in (("heuristic", heuristic), ("small switcher", switcher)):
            t0 = time.perf_counter()
            verdict = judge.compare(question, held, new)
            times[name].append(time.perf_counter() - t0)
            agree[name] += verdict.status == keep
    result = {name: percentiles(values) for name, values in times.items()}
    ratio = {
        f"{key} ratio": round(result["small switcher"][key] / result["heuristic"][key], 1)
        for key in ("p50_ms", "p95_ms")
    }
    print(
        json.dumps(
            {
                "steps timed": len(timed_steps),
                "judged documents' vectors": "embedded" if args.no_stored else "stored",
                "fit: steps, seconds (features + sklearn)": [
                    len(train_steps),
                    round(fit_seconds, 1),
                ],
                **result,
                **ratio,
                "gold agreement": {k: round(v / len(timed_steps), 3) for k, v in agree.items()},
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
