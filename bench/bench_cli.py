"""Cold start and peak memory of `prefrag ask` on the demo corpus.

    .venv/bin/python bench/bench_cli.py [--runs 3]

Runs the real CLI in fresh processes with the demo index already built (a first run builds
it and is reported separately). Baseline in the same run: `python -c "import torch"` and
`python -c "pass"`, so the numbers read as ratios on whatever machine runs them.
Target: cold start ≤ 4 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PREFRAG = Path(sys.executable).parent / "prefrag"
QUESTION = "Can I take ibuprofen while I am on warfarin?"


_WRAPPER = (
    "import resource, subprocess, sys; "
    "code = subprocess.run(sys.argv[1:], capture_output=True).returncode; "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(code)"
)


def _run(command: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Wall seconds and the peak RSS (MiB) of this one command, measured by a wrapper."""
    start = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *command], env=env, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - start
    if completed.returncode != 0:
        raise SystemExit(f"{command} failed (exit {completed.returncode})")
    return elapsed, int(completed.stdout.strip().splitlines()[-1]) // 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = os.environ | {
            "PREFRAG_HOME": home,
            "PREFRAG_WEB_ENABLED": "false",
            "HF_HUB_OFFLINE": "1",
        }
        ask = [str(PREFRAG), "ask", QUESTION, "--json"]
        first, first_peak = _run(ask, env)
        runs = [_run(ask, env) for _ in range(args.runs)]
        python = [_run([sys.executable, "-c", "pass"], env)[0] for _ in range(args.runs)]
        torch = [_run([sys.executable, "-c", "import torch"], env) for _ in range(args.runs)]
    warm = [seconds for seconds, _ in runs]
    cold = statistics.median(warm)
    torch_seconds = statistics.median(seconds for seconds, _ in torch)
    print(
        json.dumps(
            {
                "first_run_with_indexing_s": round(first, 2),
                "cold_start_s": round(cold, 2),
                "cold_start_runs_s": [round(t, 2) for t in warm],
                "baseline_python_s": round(statistics.median(python), 2),
                "baseline_import_torch_s": round(torch_seconds, 2),
                "cold_start_over_import_torch": round(cold / torch_seconds, 2),
                "peak_rss_mib_prefrag_ask": max(peak for _, peak in runs),
                "peak_rss_mib_first_run_with_indexing": first_peak,
                "peak_rss_mib_import_torch": max(peak for _, peak in torch),
                "target_cold_start_s": 4.0,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
