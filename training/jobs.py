"""The training jobs `prefrag train <job>` runs: one row per trainer module."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Job:
    """A training job: its command name, the module whose `main(argv)` runs it, and help."""

    name: str
    module: str
    help: str


JOBS: tuple[Job, ...] = (
    Job(
        "switcher-data",
        "prefrag.training.switcher_data",
        "Build switcher preference pairs (TRL format) from real graph runs.",
    ),
    Job(
        "switcher-small",
        "prefrag.training.switcher_small",
        "Train the small CPU switcher (MiniLM features, pairwise loss) from pairs.",
    ),
)


def find_job(name: str) -> Job | None:
    """The job called `name`, or None."""
    return next((job for job in JOBS if job.name == name), None)
