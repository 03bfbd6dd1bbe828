"""Lexical search speed: bm25s (our `LexicalIndex`) versus rank-bm25 on HotpotQA-350.

Run: `python bench/bench_lexical.py` (needs ../shared/data; target: ratio >= 25).
Both libraries get the same tokens (bm25s' tokenizer, English stop words, Snowball
stemmer); each of the 350 questions retrieves its top 10.
"""

from __future__ import annotations

import time

import numpy as np
from _common import hotpot_corpus_rows, hotpot_items
from rank_bm25 import BM25Okapi

from prefrag.index.lexical import LexicalIndex, tokenize

K = 10


def main() -> None:
    texts = [row["text"] for row in hotpot_corpus_rows()]
    questions = [item.question for item in hotpot_items()]
    ours = LexicalIndex.build(texts)
    reference = BM25Okapi(tokenize(texts))

    start = time.perf_counter()
    for question in questions:
        ours.search(question, K)
    ours_seconds = time.perf_counter() - start

    start = time.perf_counter()
    for question in questions:
        # rank-bm25 has no tokenizer: tokenising is part of its query, as it is of ours.
        scores = reference.get_scores(tokenize([question])[0])
        np.argsort(-scores)[:K]
    reference_seconds = time.perf_counter() - start

    n = len(questions)
    print(f"corpus: {len(texts)} paragraphs, {n} queries, top {K}")
    print(f"bm25s (LexicalIndex.search): {1000 * ours_seconds / n:.2f} ms/query")
    print(f"rank-bm25 (BM25Okapi):       {1000 * reference_seconds / n:.2f} ms/query")
    print(f"ratio: {reference_seconds / ours_seconds:.1f}x faster (target >= 25x)")


if __name__ == "__main__":
    main()
