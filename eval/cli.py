"""`prefrag eval`: run methods over a dataset and write items, summary, report and plots.

The command's options are derived from `EvalConfig`: one per field that carries help text
(`prefrag.eval.runner._option`), plus one per `Context` field (`prefrag.run_options`), so a
field added to the configuration reaches the command line without being restated.
"""

from __future__ import annotations

import inspect
import typing
from dataclasses import MISSING, Field, fields
from pathlib import Path
from typing import Annotated, Any

import typer

from prefrag.cli_text import clear_errors
from prefrag.eval.runner import EvalConfig, option_of, run_eval
from prefrag.run_options import with_run_settings

_SCALARS = (bool, int, float, str)


def _option_type(spec: Field[Any]) -> type:
    hint = typing.get_type_hints(EvalConfig)[spec.name]
    if hint in _SCALARS:
        return typing.cast(type, hint)
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if len(args) == 1 and args[0] in _SCALARS:
        return typing.cast(type, args[0])
    return str  # list[str]: comma-separated


def _parameter(spec: Field[Any]) -> inspect.Parameter:
    meta = spec.metadata
    kind = _option_type(spec)
    default = meta["cli_default"] if meta["cli_default"] is not MISSING else spec.default
    help_text = meta["help"]
    if meta["choices"]:
        help_text += f" One of: {', '.join(meta['choices'])}."
    if kind is bool:
        option = typer.Option(option_of(spec.name), metavar="", help=help_text)
    else:
        option = typer.Option(option_of(spec.name), help=help_text)
    optional = default is None or default is MISSING
    return inspect.Parameter(
        spec.name,
        inspect.Parameter.KEYWORD_ONLY,
        default=inspect.Parameter.empty if default is MISSING else default,
        annotation=Annotated[kind | None if optional else kind, option],
    )


def _command_parameters() -> list[inspect.Parameter]:
    offered = [_parameter(spec) for spec in fields(EvalConfig) if "help" in spec.metadata]
    no_progress = inspect.Parameter(
        "no_progress",
        inspect.Parameter.KEYWORD_ONLY,
        default=False,
        annotation=Annotated[
            bool, typer.Option("--no-progress", metavar="", help="No progress bar.")
        ],
    )
    run_settings = inspect.Parameter(
        "run_settings", inspect.Parameter.KEYWORD_ONLY, annotation=dict[str, Any]
    )
    return [*offered, no_progress, run_settings]


def _eval(*, run_settings: dict[str, Any], no_progress: bool = False, **values: Any) -> None:
    """Evaluate methods on a dataset: items.jsonl, summary.json, report.md and plots in OUT.

    Every run setting of the graph's context is an option too (`--top-k`, `--source`,
    `--polyview`, `--polyview-views`, `--mog`, ...); the tool options act on the
    graph-backed methods (prefrag*), the baselines ignore them.
    """
    from rich.console import Console

    values["methods"] = _parse_methods(values["methods"])
    if values["corpus"] is None:
        values["corpus"] = "items" if values["limit"] is not None or values["items"] else "all"
    config = EvalConfig(**values, context=run_settings)
    with clear_errors():
        config.check()
        run_eval(config, progress=not no_progress)
    out, console = Path(config.out), Console()
    # The report as written: rich would wrap its table rows and read `[...]` as markup.
    console.print((out / "report.md").read_text(), markup=False, highlight=False, soft_wrap=True)
    console.print(f"[dim]Results in {out}[/]")


_eval.__signature__ = inspect.Signature(_command_parameters())  # type: ignore[attr-defined]
eval_command = with_run_settings(exclude=("reasoner",))(_eval)


def _parse_methods(value: str) -> list[str]:
    from prefrag.graphs.baselines import METHODS

    names = [m.strip() for m in value.split(",") if m.strip()]
    if names == ["all"]:
        return list(METHODS)
    return names


def register(app: typer.Typer) -> None:
    """Add `eval` to the main `prefrag` command line."""
    app.command("eval")(eval_command)
    from prefrag.eval.multisource import eval_sources_command

    app.command("eval-sources")(eval_sources_command)
