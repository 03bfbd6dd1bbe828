"""Bulk embedding: the numpy MiniLM forward pass against sentence-transformers.

Run: `python bench/bench_embedder.py [--limit 400] [--rounds 3]` (needs ../shared/data and
sentence-transformers, from the `hf` or `dev` extra; target: numpy throughput >= 0.8x).
Both encoders see the same HotpotQA paragraphs; rounds alternate between them and the best
round of each is reported, so load from other processes hits both alike. Also prints the
largest absolute difference between the two sets of vectors (target: < 1e-5).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import hotpot_corpus_rows

from prefrag.index.embeddings import get_embedder, resolve_model_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=400, help="paragraphs to encode")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from sentence_transformers import SentenceTransformer

    texts = [row["text"] for row in hotpot_corpus_rows()[: args.limit]]
    ours = get_embedder()
    theirs = SentenceTransformer(str(resolve_model_dir("bundled:all-MiniLM-L6-v2")), device="cpu")
    ours.encode(texts[:16])
    theirs.encode(texts[:16])
    best = {"numpy": float("inf"), "sentence-transformers": float("inf")}
    for _ in range(args.rounds):
        start = time.perf_counter()
        mine = ours.encode(texts)
        best["numpy"] = min(best["numpy"], time.perf_counter() - start)
        start = time.perf_counter()
        reference = theirs.encode(texts, batch_size=32, normalize_embeddings=True)
        best["sentence-transformers"] = min(
            best["sentence-transformers"], time.perf_counter() - start
        )
    for name, seconds in best.items():
        print(f"{name:>22}: {seconds:.1f} s ({len(texts) / seconds:.1f} texts/s)")
    print(
        f"throughput ratio numpy / sentence-transformers: "
        f"{best['sentence-transformers'] / best['numpy']:.2f} (target >= 0.8)"
    )
    print(f"max |difference|: {np.abs(mine - reference).max():.1e} (target < 1e-5)")


if __name__ == "__main__":
    main()
