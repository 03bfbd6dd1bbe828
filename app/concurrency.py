"""Running independent jobs on a thread pool, with a progress bar, as each one finishes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import TypeVar

__all__ = ["run_jobs"]

T = TypeVar("T")


def run_jobs(
    jobs: Sequence[Callable[[], T]],
    finish: Callable[[T], None],
    *,
    label: str,
    concurrency: int,
    progress: bool,
) -> None:
    """Run `jobs` on `concurrency` threads and hand each result to `finish` as it arrives.

    `finish` runs on the calling thread in completion order (not submission order), so it
    may write to a file without a lock of its own against other `finish` calls. A rich
    progress bar named `label` counts finished jobs when `progress` is true. The first job
    that raises cancels the jobs not yet started, and its error is raised here.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    columns = (
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, disable=not progress, transient=False) as bar:
        task = bar.add_task(label, total=len(jobs))
        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            futures = [pool.submit(job) for job in jobs]
            try:
                for future in as_completed(futures):
                    finish(future.result())
                    bar.advance(task)
            except BaseException:
                for pending in futures:
                    pending.cancel()
                raise
