"""`prefrag train`: one subcommand per training job, arguments passed through untouched.

The jobs come from `prefrag.training.jobs.JOBS`. Typer parses nothing here: every
argument after the job name (including `--help`) goes to the job's own parser, TRL's
`TrlParser`, so YAML configs and overrides behave as in TRL's scripts.
"""

from __future__ import annotations

from collections.abc import Callable

import typer

from prefrag.cli_text import clear_errors
from prefrag.training.jobs import JOBS, Job

__all__ = ["register"]

_PASS_THROUGH = {
    "allow_extra_args": True,
    "ignore_unknown_options": True,
    "help_option_names": [],
}


def register(app: typer.Typer) -> None:
    """Add the `train` group, one command per job in `JOBS`, to the `prefrag` CLI."""
    train = typer.Typer(
        help="Train PrefRAG's models. `prefrag train JOB --help` lists a job's settings.",
        no_args_is_help=True,
    )
    for job in JOBS:
        train.command(
            job.name, help=job.help, context_settings=_PASS_THROUGH, add_help_option=False
        )(_command(job))
    app.add_typer(train, name="train")


def _command(job: Job) -> Callable[[typer.Context], None]:
    def run(ctx: typer.Context) -> None:
        from prefrag.training.jobs import run_job

        with clear_errors():
            run_job(job.name, ctx.args)

    run.__doc__ = job.help
    return run
