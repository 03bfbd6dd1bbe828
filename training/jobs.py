"""The training jobs `prefrag train` runs: one row per job, one module per trainer.

Each job is a module in `prefrag.training` whose `main(argv)` parses its own arguments
with `prefrag.training.config.parse_config` (a YAML `--config` file plus command-line
overrides). `prefrag train <job> [args...]` forwards the raw arguments to that `main`, so
`prefrag train <job> --help` shows the job's dataclass fields. Adding a trainer is one
module plus one `Job` row here.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prefrag.errors import ConfigurationError

__all__ = ["JOBS", "Job", "find_job", "run_job"]


@dataclass(frozen=True)
class Job:
    """One training job of `prefrag train`.

    Attributes:
        name: The command name (`prefrag train <name>`).
        module: The module whose `main(argv)` runs the job.
        help: One line shown by `prefrag train --help`.
    """

    name: str
    module: str
    help: str


JOBS: tuple[Job, ...] = (
    Job(
        "mog-router",
        "prefrag.training.mog_router",
        "Train the Mix-of-Granularity router of a source (soft labels, BCE, Adam).",
    ),
    Job(
        "hotpot-convert",
        "prefrag.training.hotpot_convert",
        "Convert HotpotQA's official JSON into the IRCoT JSONL that switcher-data reads.",
    ),
    Job(
        "switcher-data",
        "prefrag.training.switcher_data",
        "Build switcher preference pairs (TRL format) from real graph runs.",
    ),
    Job(
        "dpo",
        "prefrag.training.dpo",
        "DPO-train the switcher behind `compare` on preference pairs (TRL; LoRA optional).",
    ),
    Job(
        "switcher-small",
        "prefrag.training.switcher_small",
        "Train the small CPU switcher (MiniLM features, pairwise loss) from pairs.",
    ),
    Job(
        "filter-labels",
        "prefrag.training.filter_labels",
        "Label snippets helpful or not for the evidence filter (RAG²: rationale ΔPPL + "
        "answer correctness).",
    ),
    Job(
        "filter",
        "prefrag.training.snippet_filter",
        "Train the evidence filter: a two-label (question, snippet) classifier (RAG²).",
    ),
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
    Job(
        "spo-sft",
        "prefrag.training.spo_sft",
        "Fine-tune the source planner on positive plans (SPO; TRL SFT, LoRA).",
    ),
    Job(
        "spo-dpo",
        "prefrag.training.spo_dpo",
        "Preference-train the source planner on positive vs negative plans (SPO; TRL DPO).",
    ),
)


def find_job(name: str) -> Job:
    """The job called `name`.

    Raises:
        ConfigurationError: No job has that name (the message lists the known ones).
    """
    for job in JOBS:
        if job.name == name:
            return job
    known = ", ".join(job.name for job in JOBS)
    raise ConfigurationError(f"Unknown training job '{name}' (known: {known}).")


def run_job(name: str, argv: Sequence[str] | None = None) -> Any:
    """Run the job called `name` with its raw arguments; returns what its `main` returns."""
    job = find_job(name)
    try:
        module = importlib.import_module(job.module)
        return module.main(list(argv) if argv is not None else None)
    except ModuleNotFoundError as error:
        missing = (error.name or "").partition(".")[0]
        if missing not in _TRAIN_EXTRA:
            raise
        raise ConfigurationError(
            f"`prefrag train {name}` needs {missing}, which the main install leaves out; "
            "install the training extra with `pip install 'prefrag[train]'`."
        ) from None


# Top-level modules of the `train` extra's packages (pyproject.toml).
_TRAIN_EXTRA = frozenset(
    {"torch", "transformers", "trl", "peft", "datasets", "accelerate", "sklearn", "scipy"}
)
