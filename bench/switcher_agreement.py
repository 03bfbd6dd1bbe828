"""Switcher agreement with the teacher of a pairs file: the heuristic vs a trained switcher.

    .venv/bin/python bench/switcher_agreement.py --pairs runs/report/pairs.jsonl \
        --switcher runs/switcher

Each pair's prompt is read back into (question, held evidence, new documents); the chosen
verdict's status is the teacher's label. Prints accuracy and per-class recall (keep /
switch) of the extractive reasoner's heuristic `compare` and of the switcher. Measure on
pairs built from the report half (items 201-350), never the ones the switcher trained on.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from prefrag.reasoners.extractive import ExtractiveReasoner
from prefrag.reasoners.small_switcher import load_switcher
from prefrag.training.pairs import pair_status, read_compare_prompt, read_pairs


def scores(truth: np.ndarray, predicted: np.ndarray) -> dict[str, float | int]:
    return {
        "n": len(truth),
        "accuracy": round(float(np.mean(truth == predicted)), 3),
        "keep_n": int(truth.sum()),
        "keep_recall": round(float(np.mean(predicted[truth])), 3),
        "switch_n": int((~truth).sum()),
        "switch_recall": round(float(np.mean(~predicted[~truth])), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=Path, required=True)
    parser.add_argument("--switcher", type=Path, required=True)
    args = parser.parse_args()
    heuristic = ExtractiveReasoner(use_embeddings=False)
    switcher = load_switcher(args.switcher)
    truth, by_heuristic, by_switcher = [], [], []
    for pair in read_pairs(args.pairs):
        inputs = read_compare_prompt(pair["prompt"][-1]["content"])
        truth.append(pair_status(pair, "chosen"))
        by_heuristic.append(heuristic.compare(inputs.question, inputs.held, inputs.new).status)
        by_switcher.append(switcher.compare(inputs.question, inputs.held, inputs.new).status)
    labels = np.array(truth, dtype=bool)
    print(
        json.dumps(
            {
                "pairs": str(args.pairs),
                "heuristic": scores(labels, np.array(by_heuristic, dtype=bool)),
                "small switcher": scores(labels, np.array(by_switcher, dtype=bool)),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
