"""How the default evidence filter's threshold trades gold recall for dropped distractors.

MiniLM cosine of each HotpotQA question with each of its paragraphs, then, per threshold,
the share of gold (supporting) paragraphs that pass and the share of distractors dropped.
`DEFAULT_THRESHOLD` in `prefrag.tools.evidence_filter` was chosen from this table on the
tuning items 1-200; items 201-350 give the held-out numbers.

Run: `nice -n 10 .venv/bin/python bench/bench_filter_threshold.py [START-END]` (1-based,
inclusive; default 1-200).
"""

from __future__ import annotations

import sys

import numpy as np
from _common import HOTPOT

from prefrag.index.embeddings import get_embedder
from prefrag.jsonl import read_rows

THRESHOLDS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4)


def main(items: str = "1-200") -> None:
    """Print gold pass rate and distractor drop rate per threshold for items START-END."""
    start, end = (int(part) for part in items.split("-"))
    embedder = get_embedder()
    rows = read_rows(HOTPOT)[start - 1 : end]
    gold: list[float] = []
    other: list[float] = []
    for row in rows:
        texts = [f"{c['title']}. {c['paragraph_text']}" for c in row["contexts"]]
        vectors = embedder.encode([row["question_text"], *texts])
        for context, similarity in zip(row["contexts"], vectors[1:] @ vectors[0], strict=True):
            (gold if context["is_supporting"] else other).append(float(similarity))
    gold_array, other_array = np.array(gold), np.array(other)
    print(f"{len(gold)} gold and {len(other)} distractor paragraphs (HotpotQA items {items})")
    print("threshold  gold kept  distractors dropped  precision of kept")
    for threshold in THRESHOLDS:
        kept_gold = (gold_array >= threshold).sum()
        kept_other = (other_array >= threshold).sum()
        dropped = (other_array < threshold).mean()
        precision = kept_gold / (kept_gold + kept_other)
        print(f"{threshold:9.2f}  {kept_gold / len(gold):9.3f}  {dropped:19.3f}  {precision:17.3f}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
