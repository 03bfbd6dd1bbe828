"""DPO training speed and peak memory on the tiny local model (`prefrag train dpo`).

Run: `python bench/bench_dpo.py [--steps 8] [--batch 2]` (needs the `train` extra; builds
the tiny model locally, no download). Three set-ups of the same job on the same pairs (demo
questions, real compare prompts), each in its own process so that peak memory is its own:
full fine-tuning with a reference model (the paper's recipe, the baseline), full
fine-tuning with precomputed reference log-probs, and LoRA (the reference is the base with
the adapter switched off). Reports optimizer steps per second and peak resident memory, as
ratios against the baseline measured in the same run (best of `--rounds` alternating runs,
so that load from other processes hits every set-up alike). The measured time includes the
reference pass (precomputed once over the pairs, or per step); the tiny model's own memory
is negligible, so peak memory shows the runtime's floor (torch, transformers, TRL).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the shared test data and training flags
SETUPS = {
    "full, reference model": [],
    "full, precomputed reference": ["--precompute_ref_log_probs", "true"],
    "LoRA r=16": ["--use_peft", "--lora_r", "16", "--lora_alpha", "32"],
}


def run_one(folder: Path, steps: int, batch: int, extra: list[str]) -> dict:
    from cpu_training import QUICK_CPU_RUN

    from prefrag.training.dpo import main

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = main(
        [
            "--model_name_or_path",
            str(folder / "tiny"),
            "--data",
            str(folder / "pairs.jsonl"),
            "--output_dir",
            str(folder / f"out-{len(extra)}"),
            "--max_steps",
            str(steps),
            # One epoch is exactly the measured steps, so the precomputing set-up scores
            # only the pairs it trains on.
            "--max_pairs",
            str(steps * batch),
            "--per_device_train_batch_size",
            str(batch),
            "--learning_rate",
            "1e-3",
            "--max_length",
            "2048",
            *QUICK_CPU_RUN,
            *extra,
        ]
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "steps_per_s": result.metrics["train/train_steps_per_second"],
        "seconds": result.metrics["train/train_runtime"],
        "peak_rss_mb": peak / 1024,
        "rss_growth_mb": (peak - before) / 1024,
    }


def prepare(folder: Path) -> None:
    from switcher_pairs import switcher_pairs, write_pairs

    from prefrag.training.tiny_model import build_tiny_causal_lm

    build_tiny_causal_lm(folder / "tiny")
    write_pairs(folder / "pairs.jsonl", switcher_pairs())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=8, help="optimizer steps per set-up")
    parser.add_argument("--batch", type=int, default=2, help="pairs per step")
    parser.add_argument("--rounds", type=int, default=2, help="runs per set-up (best kept)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        row = run_one(Path(args.folder), args.steps, args.batch, SETUPS[args.one])
        print("RESULT " + json.dumps(row))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        prepare(folder)
        rows: dict[str, dict] = {}
        for _ in range(args.rounds):  # rounds alternate set-ups: load hits them alike
            for name in SETUPS:
                command = [sys.executable, __file__, "--one", name, "--folder", tmp]
                command += ["--steps", str(args.steps), "--batch", str(args.batch)]
                output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
                line = next(x for x in output.splitlines() if x.startswith("RESULT "))
                row = json.loads(line.removeprefix("RESULT "))
                if name not in rows or row["steps_per_s"] > rows[name]["steps_per_s"]:
                    rows[name] = row
    base = rows["full, reference model"]
    print(
        f"DPO on the tiny model: {args.steps} steps of {args.batch} pairs each, "
        f"best of {args.rounds} rounds"
    )
    print(f"{'set-up':<30}{'steps/s':>9}{'ratio':>7}{'peak RSS MB':>13}{'ratio':>7}")
    for name, row in rows.items():
        print(
            f"{name:<30}{row['steps_per_s']:>9.3f}{row['steps_per_s'] / base['steps_per_s']:>7.2f}"
            f"{row['peak_rss_mb']:>13.0f}{row['peak_rss_mb'] / base['peak_rss_mb']:>7.2f}"
        )


if __name__ == "__main__":
    main()
