"""The RAG² evidence filter trainers end to end: labels from a causal LM, then the filter.

Run: `python bench/bench_filter_training.py [--epochs 25]` (needs the `train` extra; no
download), or `--hotpot` for HotpotQA: labels from items 1-200 train the MiniLM filter and
labels from items 201-350 are held out. There the answers are simulated, not a model's:
without evidence the answer is wrong, with a paragraph it is right exactly when the
paragraph contains a gold answer (two supporting and two other paragraphs per question).

`filter-labels` scores the demo questions' rationales under the tiny local
causal LM (ΔPPL) and labels each snippet with the four-way rule; `filter` then trains two
classifiers on three quarters of the questions — one over the tiny model, one over the
bundled MiniLM — and reports precision and recall of "helpful" on the held-out quarter,
against the baseline of keeping every snippet, measured on the same labels.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from prefrag.jsonl import read_rows

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=25)
    parser.add_argument("--hotpot", action="store_true", help="HotpotQA 1-200 / 201-350")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "tests"))
    if args.hotpot:
        hotpot(args.epochs)
        return
    from filter_rows import filter_rows, write_rows

    from prefrag.training import filter_labels, snippet_filter
    from prefrag.training.tiny_model import build_tiny_causal_lm

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        tiny = build_tiny_causal_lm(folder / "tiny")
        rows = write_rows(folder / "rows.jsonl", filter_rows())
        labels = folder / "labels.jsonl"
        start = time.perf_counter()
        summary = filter_labels.main(
            ["--data", str(rows), "--output", str(labels), "--model_name_or_path", str(tiny)]
        )
        label_seconds = time.perf_counter() - start
        snippets = sum(summary.rules.values())
        print(
            f"filter-labels: {snippets} snippets in {label_seconds:.1f} s, "
            f"{len(summary.labels)} labelled, {summary.discarded} discarded, "
            f"ΔPPL threshold {summary.threshold:.3g}; rules {summary.rules}"
        )
        results = {}
        for name, base, rate in [("tiny LM", str(tiny), "3e-3"), ("MiniLM", None, "5e-5")]:
            start = time.perf_counter()
            argv = ["--data", str(labels), "--eval_fraction", "0.25", "--seed", "0"]
            argv += ["--output_dir", str(folder / name.replace(" ", "-"))]
            argv += ["--learning_rate", rate, "--num_train_epochs", str(args.epochs)]
            argv += ["--per_device_train_batch_size", "8", "--disable_tqdm", "true"]
            if base:
                argv += ["--model_name_or_path", base]
            result = snippet_filter.main(argv)
            results[name] = (result.metrics, time.perf_counter() - start)
    held_out = _held_out(summary.labels)
    helpful_share = sum(r["label"] == "helpful" for r in held_out) / max(len(held_out), 1)
    print(f"held-out snippets: {len(held_out)}, helpful share {helpful_share:.2f}")
    print(f"{'filter':<14}{'precision':>10}{'recall':>8}{'F1':>6}{'train s':>9}")
    base_f1 = 2 * helpful_share / (1 + helpful_share) if helpful_share else 0.0
    print(f"{'keep all':<14}{helpful_share:>10.2f}{1.0:>8.2f}{base_f1:>6.2f}{'-':>9}")
    for name, (metrics, seconds) in results.items():
        print(
            f"{name:<14}{metrics['eval/precision']:>10.2f}{metrics['eval/recall']:>8.2f}"
            f"{metrics['eval/f1']:>6.2f}{seconds:>9.1f}"
        )


def hotpot(epochs: int) -> None:
    from _common import hotpot_items
    from filter_rows import write_rows

    from prefrag.eval.metrics import acc
    from prefrag.training import filter_labels, snippet_filter
    from prefrag.training.tiny_model import build_tiny_causal_lm

    def rows(items: list) -> list[dict]:
        out = []
        for item in items:
            support = [p for p in item.paragraphs if p.supporting][:2]
            others = [p for p in item.paragraphs if not p.supporting][:2]
            snippets = [
                {
                    "id": p.id,
                    "title": p.title,
                    "text": p.text,
                    "correct_with": bool(acc(p.text, item.answers)),
                }
                for p in support + others
            ]
            out.append(
                {
                    "question": item.question,
                    "answer": list(item.answers),
                    "rationale": f"The question asks: {item.question} The answer is "
                    f"{item.answers[0]}.",
                    "correct_without": False,
                    "snippets": snippets,
                }
            )
        return out

    items = hotpot_items()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        tiny = build_tiny_causal_lm(folder / "tiny")
        files = {}
        for name, part in (("train", items[:200]), ("held_out", items[200:350])):
            source = write_rows(folder / f"{name}-rows.jsonl", rows(part))
            files[name] = folder / f"{name}-labels.jsonl"
            summary = filter_labels.main(
                [
                    *("--data", str(source), "--output", str(files[name])),
                    *("--model_name_or_path", str(tiny)),
                ]
            )
            print(f"{name}: {len(summary.labels)} labels, rules {summary.rules}")
        held_out = read_rows(files["held_out"])
        start = time.perf_counter()
        result = snippet_filter.main(
            [
                *("--data", str(files["train"]), "--eval_data", str(files["held_out"])),
                *("--output_dir", str(folder / "filter"), "--learning_rate", "5e-5"),
                *("--num_train_epochs", str(epochs), "--per_device_train_batch_size", "16"),
                *("--disable_tqdm", "true", "--seed", "0"),
            ]
        )
        seconds = time.perf_counter() - start
    share = sum(r["label"] == "helpful" for r in held_out) / max(len(held_out), 1)
    m = result.metrics
    print(f"held-out labels (items 201-350): {len(held_out)}, helpful share {share:.2f}")
    print(f"{'filter':<10}{'precision':>10}{'recall':>8}{'F1':>6}")
    print(f"{'keep all':<10}{share:>10.2f}{1.0:>8.2f}{2 * share / (1 + share):>6.2f}")
    print(
        f"{'MiniLM':<10}{m['eval/precision']:>10.2f}{m['eval/recall']:>8.2f}"
        f"{m['eval/f1']:>6.2f}  ({seconds:.0f} s training, {epochs} epochs)"
    )


def _held_out(rows: list[dict]) -> list[dict]:
    """The same held-out questions as `prefrag train filter --eval_fraction 0.25 --seed 0`."""
    from prefrag.training.snippet_filter import _split_by_question

    return _split_by_question(rows, 0.25, 0)[1]


if __name__ == "__main__":
    main()
