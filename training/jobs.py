"""The training jobs `prefrag train` offers: one row per job (name, module, help).

Each job's module has `main(argv: Sequence[str] | None = None)`, whose dataclass configs
are parsed by `prefrag.training.config.parse_config`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["JOBS", "Job"]


@dataclass(frozen=True)
class Job:
    """One training job: its `prefrag train` name, its module and a one-line help."""

    name: str
    module: str
    help: str


JOBS: tuple[Job, ...] = (
    Job(
        "spo-explore",
        "prefrag.training.spo_explore",
        "SPO exploration: an expert writes n diverse queries per source per training "
        "question; each retrieves its documents.",
    ),
    Job(
        "spo-judge",
        "prefrag.training.spo_judge",
        "SPO judging: label each explored query by whether its documents support the gold "
        "answer; write SFT and DPO plan datasets.",
    ),
)
