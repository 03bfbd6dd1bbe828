"""One configuration parser for every training job: TRL's, over dataclasses.

`parse_config` turns a job's command-line arguments into instances of its dataclasses with
`trl.TrlParser` (the parser of TRL's own scripts): a YAML file given as `--config FILE.yaml`
sets values, command-line flags (`--learning_rate 1e-6`, or `--learning-rate 1e-6`) override
them, and `--help` prints every field with its help text. Nothing is coerced by hand.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from prefrag.errors import ConfigurationError

__all__ = ["parse_config", "training_extra_missing"]


def parse_config(
    types: Sequence[Any],
    argv: Sequence[str] | None = None,
    *,
    prog: str | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> tuple[Any, ...]:
    """Parse a job's arguments (YAML `--config` plus overrides) into its dataclasses.

    A thin wrapper over `trl.TrlParser(types).parse_args_and_config(args=argv)`. `defaults`
    replaces dataclass defaults before the YAML file and the flags are applied (how a job
    sets e.g. the paper's learning rate on TRL's `DPOConfig`). Unknown flags, bad values and
    `--help` end the process the way argparse does (usage on stderr, exit code 2; help on
    stdout, exit code 0).

    Args:
        types: The job's dataclass types, in the order their instances are returned.
        argv: The arguments after the job name; `sys.argv[1:]` when None.
        prog: Program name shown in usage and help (e.g. "prefrag train dpo").
        defaults: Field values that replace the dataclass defaults.

    Returns:
        One instance per type in `types`.

    Raises:
        ConfigurationError: TRL (the `train` extra) is not installed, the YAML file is
            missing or not a mapping, it names a field no dataclass has, or a dataclass
            rejects a value.
    """
    try:
        from trl import TrlParser
    except ImportError as error:
        raise training_extra_missing() from error
    parser = TrlParser(list(types), prog=prog)
    if defaults:
        parser.set_defaults(**defaults)
    try:
        return tuple(parser.parse_args_and_config(args=argv))
    except FileNotFoundError as error:
        raise ConfigurationError(f"The config file {error.filename} does not exist.") from None
    except ValueError as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        raise ConfigurationError(
            f"Invalid training configuration: {first.split('. Please')[0]}"
        ) from None


def training_extra_missing() -> ConfigurationError:
    """The error raised when a training job runs without the `train` extra installed."""
    return ConfigurationError(
        "Training needs the train extra (trl, peft, datasets, accelerate): "
        "pip install 'prefrag[train]'."
    )
