"""How often self-reflection's label agrees with the real outcome, from a `prefrag eval` folder.

Reads `items.jsonl` of a HotpotQA run and, for one method (default `prefrag`), compares the
first reflection label of each question (on the first answer) with whether that first answer
was right. The final prediction is scored by the eval; the first answer is scored here with
the same EM/F1 functions. "Right" is EM = 1 or F1 >= 0.5 (`--f1`). Prints precision and recall
of CORRECT, the share labelled CORRECT, the negative rate, the supplement rate (questions whose
route holds a supplement: a negative reflection that found evidence missing) and how many
supplemented answers went from wrong to right or back.

    .venv/bin/python bench/reflection_agreement.py runs/after [--method prefrag]

With `--tuning FILE` it reads the JSON of `bench/tuning_set.py --json FILE` instead: each
item's first reflection against whether the answer it labelled is right by the tuning
set's rule (an abstention or any answer to an unanswerable item is not right), overall and
per split.

    .venv/bin/python bench/reflection_agreement.py --tuning runs/tuning.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from prefrag.eval.metrics import exact_match, f1
from prefrag.jsonl import read_rows


def _agreement(pairs: list[tuple[bool, bool]]) -> dict[str, float | int]:
    """Precision/recall of CORRECT over (labelled CORRECT, right) pairs."""
    tp = sum(c and r for c, r in pairs)
    fp = sum(c and not r for c, r in pairs)
    fn = sum(r and not c for c, r in pairs)
    tn = sum(not c and not r for c, r in pairs)
    return {
        "n": len(pairs),
        "correct_labels": tp + fp,
        "right": tp + fn,
        "precision": tp / (tp + fp) if tp + fp else 0.0,
        "recall": tp / (tp + fn) if tp + fn else 0.0,
        "agreement": (tp + tn) / len(pairs) if pairs else 0.0,
    }


def tuning_agreement(path: Path, set_dir: Path | None = None) -> dict[str, dict[str, float | int]]:
    """Agreement of each item's first reflection with its answer's rightness, per split.

    `set_dir` is the question set the rows were scored on (default bench/tuning).
    """
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "tuning_set", Path(__file__).with_name("tuning_set.py")
    )
    assert spec is not None and spec.loader is not None
    scorer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scorer)
    chosen = scorer.TUNING if set_dir is None else set_dir
    every = [
        *scorer.load_questions("all", None, chosen),
        *scorer.load_questions(scorer.UNSEEN, None, chosen),
    ]
    items = {item["id"]: item for item in every}
    rows = json.loads(path.read_text())["rows"]
    pairs: dict[str, list[tuple[bool, bool]]] = {"all": []}
    for row in rows:
        label = row.get("first_reflection", row.get("reflection"))
        answer = row.get("first_reflection_answer", row.get("reflection_answer")) or ""
        if label is None:
            continue
        abstained = row["abstained"] if answer == row["answer"] else False
        right = not abstained and scorer.is_right(items[row["id"]], answer)
        pair = (label == "CORRECT", right)
        pairs["all"].append(pair)
        pairs.setdefault(row["split"], []).append(pair)
    return {split: _agreement(found) for split, found in pairs.items()}


def main() -> None:
    """Print reflection agreement for one method of an eval folder (or the tuning set)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, nargs="?")
    parser.add_argument("--method", default="prefrag")
    parser.add_argument("--f1", type=float, default=0.5, help="F1 at which an answer is right")
    parser.add_argument("--tuning", type=Path, help="a bench/tuning_set.py --json file")
    parser.add_argument(
        "--set",
        dest="set_dir",
        type=Path,
        help="the set the --tuning file was scored on (default bench/tuning)",
    )
    args = parser.parse_args()
    if args.tuning is not None:
        for split, s in tuning_agreement(args.tuning, args.set_dir).items():
            print(
                f"{split}: {s['n']} reflections, {s['correct_labels']} CORRECT, {s['right']} "
                f"right; precision {s['precision']:.1%}, recall {s['recall']:.1%}, "
                f"agreement {s['agreement']:.1%}"
            )
        return
    if args.folder is None:
        parser.error("give an eval folder or --tuning FILE")
    tp = fp = fn = tn = supplements = mended = spoiled = n = 0
    for item in read_rows(args.folder / "items.jsonl"):
        if item.get("method") != args.method or item.get("error"):
            continue
        reflections = item.get("reflections") or []
        if not reflections:
            continue
        n += 1
        first = reflections[0]
        golds = list(item["golds"])
        answer = str(first.get("answer", ""))
        right = exact_match(answer, golds) == 1.0 or f1(answer, golds) >= args.f1
        correct = first.get("label") == "CORRECT"
        if any(step.get("kind") == "supplement" for step in item.get("route") or []):
            supplements += 1
            final = item["scores"]["em"] == 1.0 or item["scores"]["f1"] >= args.f1
            mended += int(final and not right)
            spoiled += int(right and not final)
        tp += int(correct and right)
        fp += int(correct and not right)
        fn += int(not correct and right)
        tn += int(not correct and not right)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    print(f"{args.method}: {n} questions with a reflection")
    labelled, right = (tp + fp) / max(n, 1), (tp + fn) / max(n, 1)
    print(f"  labelled CORRECT: {labelled:.1%}; first answer right: {right:.1%}")
    print(f"  precision of CORRECT: {precision:.1%}  recall of CORRECT: {recall:.1%}")
    print(f"  agreement (label matches outcome): {(tp + tn) / max(n, 1):.1%}")
    print(f"  negative rate (first reflection not CORRECT): {(fn + tn) / max(n, 1):.1%}")
    print(f"  supplement rate (negative, evidence missing): {supplements / max(n, 1):.1%}")
    print(f"  supplemented answers: {mended} wrong -> right, {spoiled} right -> wrong")


if __name__ == "__main__":
    main()
