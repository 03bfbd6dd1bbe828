"""Shared helpers for the benchmarks: corpora from ../shared/data and timing summaries."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from prefrag import jsonl

REPO_ROOT = Path(__file__).resolve().parents[1]
# ../shared/data beside a clone; beside the repository's parent for a worktree under wt/.
SHARED_DATA = next(
    (
        folder / "shared" / "data"
        for folder in (REPO_ROOT.parent, REPO_ROOT.parents[1])
        if (folder / "shared" / "data").is_dir()
    ),
    REPO_ROOT.parent / "shared" / "data",
)
HOTPOT = SHARED_DATA / "hotpotqa" / "hotpotqa_dev_350.jsonl"


def hotpot_items() -> list:
    """The HotpotQA-350 questions as evaluation items."""
    from prefrag.datasets import load_hotpotqa

    return load_hotpotqa(HOTPOT).items


def hotpot_corpus_rows() -> list[dict]:
    """Every distinct HotpotQA-350 paragraph as an indexable JSONL row."""
    from prefrag.dataset_sources import corpus_rows

    return corpus_rows(hotpot_items())


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    """Write `rows` as JSONL."""
    return jsonl.write_jsonl(rows, path)


def timed(fn: Callable[[], object]) -> float:
    """Seconds one call of `fn` takes."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def percentiles(seconds: list[float]) -> dict[str, float]:
    """p50 / p95 / mean in milliseconds."""
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "p50_ms": 1000 * statistics.median(ordered),
        "p95_ms": 1000 * p95,
        "mean_ms": 1000 * statistics.fmean(ordered),
    }


def batched(items: list, size: int) -> Iterator[list]:
    """`items` in chunks of `size`."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
