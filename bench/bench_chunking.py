"""Chunking: word windows (before) against word-piece windows (now), on MedQuAD retrieval.

Run: `python bench/bench_chunking.py [--snippets 600] [--seed 0]` (needs ../shared/data).
A seeded sample of MedQuAD snippets is cut both ways (200 words without overlap, the old
default; 254 word pieces with 32 shared, the new one), every chunk is embedded, and each
snippet's question searches the chunks by cosine; a snippet counts as found at k when one
of its chunks is among the first k distinct snippets. Reports chunks, the share of chunks
longer than MiniLM's window (their tail is never embedded), recall@1/@10 and CPU time.
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np
from _common import SHARED_DATA

from prefrag.config import get_settings
from prefrag.index.chunking import Chunking, chunk_texts, chunk_tokenizer
from prefrag.index.embeddings import get_embedder
from prefrag.jsonl import read_rows

WINDOW = 254  # MiniLM's 256 word pieces less [CLS] and [SEP]


def medquad_rows(count: int, seed: int) -> list[dict]:
    rows = [
        row for path in sorted((SHARED_DATA / "medquad").glob("*.jsonl")) for row in read_rows(path)
    ]
    rows = [r for r in rows if r.get("content", "").strip() and r.get("question", "").strip()]
    return random.Random(seed).sample(rows, count)


def evaluate(rows: list[dict], chunking: Chunking, queries: np.ndarray) -> dict[str, float]:
    settings = get_settings()
    tokenizer = chunk_tokenizer(settings)
    texts: list[str] = []
    owners: list[int] = []
    for row_index, row in enumerate(rows):
        for text in chunk_texts(row["content"], chunking, settings):
            texts.append(text)
            owners.append(row_index)
    pieces = [len(tokenizer.encode(t, add_special_tokens=False).ids) for t in texts]
    cpu = time.process_time()
    vectors = get_embedder(settings).encode(texts)
    cpu = time.process_time() - cpu
    owner = np.array(owners)
    found = {1: 0, 10: 0}
    for row_index, query in enumerate(queries):
        scores = vectors @ query
        ranked: list[int] = []
        for chunk in np.argsort(-scores):
            if owner[chunk] not in ranked:
                ranked.append(int(owner[chunk]))
            if len(ranked) == 10:
                break
        for k in found:
            found[k] += row_index in ranked[:k]
    return {
        "chunks": len(texts),
        "truncated": float(np.mean([n > WINDOW for n in pieces])),
        "mean_pieces": float(np.mean(pieces)),
        "recall@1": 100 * found[1] / len(rows),
        "recall@10": 100 * found[10] / len(rows),
        "ms_cpu_per_chunk": 1000 * cpu / len(texts),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--snippets", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rows = medquad_rows(args.snippets, args.seed)
    embedder = get_embedder()
    queries = embedder.encode([row["question"] for row in rows])
    print(f"{len(rows)} MedQuAD snippets (seed {args.seed}), dense search, {embedder.runtime}")
    print("chunking                   | chunks | > window | pieces | R@1  | R@10 | ms CPU/chunk")
    for name, chunking in (
        ("200 words, no overlap", Chunking("words", 200, 0)),
        ("254 pieces, 32 overlap", Chunking("tokens", 254, 32)),
    ):
        result = evaluate(rows, chunking, queries)
        print(
            f"{name:<26} | {result['chunks']:6d} | {result['truncated']:7.1%} | "
            f"{result['mean_pieces']:6.0f} | {result['recall@1']:4.1f} | "
            f"{result['recall@10']:4.1f} | {result['ms_cpu_per_chunk']:.1f}"
        )


if __name__ == "__main__":
    main()
