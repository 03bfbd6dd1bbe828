"""Run settings as command-line options, derived from the graph's `Context` fields.

`prefrag ask` and `prefrag eval` offer one option per `Context` field (its description is
the help text), so a run setting added to `Context` reaches both commands without being
restated. Options the user does not give stay unset, so the command (or a stored run) keeps
its own defaults. A few fields keep their short historical names (`CLI_NAMES`).
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Iterable
from dataclasses import MISSING, Field, fields
from typing import Annotated, Any, TypeVar

import typer

from prefrag.graphs.context import Context

F = TypeVar("F", bound=Callable[..., Any])

# Historical option names, kept so existing commands and scripts keep working.
CLI_NAMES: dict[str, tuple[str, ...]] = {
    "preferred_source": ("--source", "-s"),
    "use_mog": ("--mog",),
    "use_polyview": ("--polyview",),
}


def option_name(name: str) -> str:
    """The long option of `Context` field `name` (`top_k` -> `--top-k`)."""
    return CLI_NAMES.get(name, ("--" + name.replace("_", "-"),))[0]


def run_setting_fields(exclude: Iterable[str] = ()) -> list[Field[Any]]:
    """The `Context` fields offered as options, in declaration order."""
    skipped = set(exclude)
    return [f for f in fields(Context) if f.name not in skipped]


def with_run_settings(*, exclude: Iterable[str] = ()) -> Callable[[F], F]:
    """Give a typer command one option per `Context` field; it receives `run_settings`.

    The decorated function must take a keyword `run_settings: dict[str, Any]`: the
    `Context` fields the user set on the command line, already converted (lists from
    comma-separated values).
    """
    offered = run_setting_fields(exclude)

    def wrap(command: F) -> F:
        signature = inspect.signature(command, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name != "run_settings"]
        taken = {p.name for p in own}
        clash = taken & {f.name for f in offered}
        if clash:
            raise TypeError(f"Run settings {sorted(clash)} are already parameters.")

        @functools.wraps(command)
        def wrapper(**kwargs: Any) -> Any:
            given = {f.name: kwargs.pop(f.name, None) for f in offered}
            settings = {name: _convert(name, value) for name, value in given.items()}
            settings = {name: value for name, value in settings.items() if value is not None}
            return command(**kwargs, run_settings=settings)

        parameters = [*own, *(_parameter(f) for f in offered)]
        wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        # typer reads resolved annotations; the command's own are strings in its module.
        wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
        return typing.cast(F, wrapper)

    return wrap


def _parameter(field: Field[Any]) -> inspect.Parameter:
    kind = _option_type(field)
    default = field.default if field.default is not MISSING else _factory_default(field)
    help_text = field.metadata.get("description", "")
    if kind is bool:
        names = CLI_NAMES.get(field.name)
        flag = names[0] if names else "--" + field.name.replace("_", "-")
        # A flag that is off by default is given as `--flag`; one that is on can be
        # turned off with `--no-flag`.
        decls = (flag,) if default is False else (f"{flag}/--no-{flag.lstrip('-')}",)
        option = typer.Option(*decls, help=help_text, show_default=False, metavar="")
    else:
        shown = ",".join(default) if isinstance(default, list) else default
        if isinstance(default, list):
            help_text += " Comma-separated."
        if shown not in (None, ""):
            help_text += f" [default: {shown}]"
        option = typer.Option(*CLI_NAMES.get(field.name, ()), help=help_text, show_default=False)
    return inspect.Parameter(
        field.name,
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[kind | None, option],
    )


def _factory_default(field: Field[Any]) -> Any:
    factory: Any = field.default_factory
    return factory() if callable(factory) else None


def _option_type(field: Field[Any]) -> type:
    hints = typing.get_type_hints(Context)
    hint = hints[field.name]
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if hint in (bool, int, float, str):
        return hint
    if typing.get_origin(hint) is list or typing.get_origin(hint) is typing.Literal:
        return str
    if len(args) == 1 and args[0] in (bool, int, float, str):
        return args[0]
    return str


def _convert(name: str, value: Any) -> Any:
    if value is None:
        return None
    hint = typing.get_type_hints(Context)[name]
    if typing.get_origin(hint) is list:
        return [part.strip() for part in str(value).split(",") if part.strip()]
    return value
