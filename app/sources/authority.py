"""Domain authority: how much to trust a web page, looked up by its host's domain suffix."""

from __future__ import annotations

import math
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from prefrag.errors import ConfigurationError

DEFAULT_WEB_AUTHORITY = 0.4
_BUNDLED = "authority.yaml"


class AuthorityTable:
    """Scores in [0, 1] per domain suffix, with a default for unknown hosts.

    A host matches a suffix when it equals it or ends with `"." + suffix`; the longest
    matching suffix wins, so `ncbi.nlm.nih.gov` takes the `nih.gov` score over `gov`.
    """

    def __init__(
        self, domains: Mapping[str, float], *, default: float = DEFAULT_WEB_AUTHORITY
    ) -> None:
        """Build a table from `{suffix: score}`; scores outside [0, 1] are rejected.

        Args:
            domains: Domain suffix (e.g. "nih.gov", "gov") to score.
            default: Score for hosts that match no suffix.

        Raises:
            ConfigurationError: A score is not a number in [0, 1] or a suffix is empty.
        """
        self.default = _checked_score("default", default)
        self._domains: dict[str, float] = {}
        for suffix, score in domains.items():
            key = _normalise_suffix(str(suffix))
            if not key:
                raise ConfigurationError(f"Authority table has an empty domain ({suffix!r}).")
            self._domains[key] = _checked_score(key, score)

    @classmethod
    def load(cls, path: Path | str | None = None) -> AuthorityTable:
        """Read a YAML table (`default: float`, `domains: {suffix: float}`).

        Args:
            path: The YAML file; None reads the table bundled with PrefRAG.

        Returns:
            The table.

        Raises:
            ConfigurationError: The file is missing, not YAML, or has the wrong shape.
        """
        where = str(path) if path is not None else f"bundled {_BUNDLED}"
        try:
            if path is None:
                text = _bundled_text()
            else:
                text = Path(path).expanduser().read_text(encoding="utf-8")
            data = yaml.safe_load(text)
        except (OSError, yaml.YAMLError) as error:
            raise ConfigurationError(
                f"Cannot read the authority table {where}: {error}."
            ) from error
        if not isinstance(data, dict) or not isinstance(data.get("domains", {}), dict):
            raise ConfigurationError(
                f"Authority table {where} must be a mapping with 'default' and 'domains'."
            )
        return cls(data.get("domains") or {}, default=data.get("default", DEFAULT_WEB_AUTHORITY))

    @property
    def domains(self) -> dict[str, float]:
        """A copy of the suffix-to-score mapping."""
        return dict(self._domains)

    def score(self, url: str) -> float:
        """The authority of `url` (a full URL or a bare host), the default when unknown.

        Args:
            url: e.g. "https://www.ncbi.nlm.nih.gov/books/NBK1/" or "cdc.gov".

        Returns:
            The score of the longest matching domain suffix, else `default`.
        """
        labels = _host(url).split(".")
        # Longest suffix first: try "a.b.c.d", then "b.c.d", ... down to "d".
        for start in range(len(labels)):
            score = self._domains.get(".".join(labels[start:]))
            if score is not None:
                return score
        return self.default


def _bundled_text() -> str:
    try:
        return resources.files("prefrag").joinpath("data", _BUNDLED).read_text("utf-8")
    except (TypeError, NotADirectoryError):
        # While `prefrag` is a namespace package under an editable install, Python 3.11's
        # resources cannot open it; the data folder sits next to this package either way.
        return (Path(__file__).resolve().parent.parent / "data" / _BUNDLED).read_text("utf-8")


def _host(url: str) -> str:
    text = url.strip()
    if "://" not in text:
        # urlsplit only finds the host after "//"; bare "cdc.gov/flu" would parse as a path.
        text = "//" + text
    try:
        host = urlsplit(text).hostname or ""
    except ValueError:
        return ""
    return host.rstrip(".").lower()


def _normalise_suffix(suffix: str) -> str:
    return suffix.strip().strip(".").lower()


def _checked_score(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigurationError(f"Authority for '{name}' must be a number, not {value!r}.")
    score = float(value)
    if not (0.0 <= score <= 1.0) or math.isnan(score):
        raise ConfigurationError(f"Authority for '{name}' must be in [0, 1], not {value!r}.")
    return score
