"""Training-job configuration: dataclass configs parsed by TRL's own parser.

Every trainer in `prefrag.training` declares its settings as dataclasses and reads them
with `parse_config`: YAML via `--config FILE.yaml`, then command-line overrides, exactly as
TRL's example scripts do. (Minimal version; the shared scaffolding may extend it.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prefrag.errors import ConfigurationError, PrefRAGError


def parse_config(types: Sequence[type], argv: Sequence[str] | None = None) -> tuple[Any, ...]:
    """Instances of the dataclasses `types` from `argv` (and a `--config` YAML file).

    A thin wrapper over `trl.TrlParser(types).parse_args_and_config(args=argv)`; `--help`
    prints every field with its help text. A YAML file that is not a mapping or names
    unknown fields is a `ConfigurationError`.
    """
    from trl import TrlParser

    parser = TrlParser(list(types))  # type: ignore[arg-type]
    try:
        return tuple(parser.parse_args_and_config(args=list(argv) if argv is not None else None))
    except PrefRAGError:
        raise  # a config's own check, already one sentence
    except (ValueError, OSError) as error:
        raise ConfigurationError(f"Bad training configuration: {error}") from None
