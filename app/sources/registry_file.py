"""Source registries from a YAML file: what each source holds and how to query it.

```yaml
sources:
  - name: guidelines              # what runs, plans and citations call it
    kind: text                    # text (= local), graph or web
    description: Clinical guidelines from ...   # what it holds (shown to a planner)
    query_format: a natural-language question   # optional; each kind has a default
    authority: 0.9                # optional, in [0, 1]
    store: guidelines-2024        # optional: the index it reads (default: name)
```

A `text` source reads the local index `store` (`prefrag index ... --source STORE`); a
`graph` source the graph `store` (`prefrag index --kind graph ... --source STORE`), or an
SQLite file when `store` ends in `.sqlite` (relative to the YAML file); `web` is the web
search.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from prefrag.errors import ConfigurationError, PrefRAGError
from prefrag.sources.base import DEFAULT_QUERY_FORMAT, Source, SourceKind, SourceRegistry

if TYPE_CHECKING:
    from prefrag.config import Settings

KINDS: dict[str, SourceKind] = {"text": "local", "local": "local", "graph": "graph", "web": "web"}
_FIELDS = ("name", "kind", "description", "query_format", "authority", "store")
_REQUIRED = ("name", "kind", "description")
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SourceSpec:
    """One source of a registry file.

    Attributes:
        name: The source's name in runs, plans and citations.
        kind: "local" (a text index), "graph" or "web".
        description: What the source holds, in a sentence or two.
        query_format: How a query to it should be phrased ("" = the kind's default).
        authority: Its authority in [0, 1], or None to keep the store's own.
        store: The index (or SQLite file) it reads; defaults to `name`.
    """

    name: str
    kind: SourceKind
    description: str
    query_format: str = ""
    authority: float | None = None
    store: str = ""

    @property
    def store_name(self) -> str:
        """The index the source reads."""
        return self.store or self.name


def load_registry_file(path: str | Path) -> list[SourceSpec]:
    """The source specs of a YAML registry file, in file order.

    Raises:
        ConfigurationError: The file is missing or not YAML, or a source lacks a field,
            has an unknown kind or field, a bad authority or a repeated name; the message
            names the file (and the source).
    """
    where = Path(path).expanduser()
    try:
        data = yaml.safe_load(where.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigurationError(
            f"Cannot read the source registry {where}: {error.strerror or error}."
        ) from None
    except UnicodeDecodeError as error:
        raise ConfigurationError(
            f"Source registry {where} is not UTF-8 text (byte {error.start}); save it as UTF-8."
        ) from None
    except yaml.YAMLError as error:
        raise ConfigurationError(f"Source registry {where} is not valid YAML: {error}.") from None
    rows = data.get("sources") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not rows:
        raise ConfigurationError(
            f"Source registry {where} must be a mapping with a non-empty 'sources' list."
        )
    specs: list[SourceSpec] = []
    for number, row in enumerate(rows, start=1):
        spec = _spec(row, f"{where}: source {number}")
        if any(spec.name == known.name for known in specs):
            raise ConfigurationError(f"{where}: source name '{spec.name}' is used twice.")
        specs.append(spec)
    return specs


def _spec(row: Any, where: str) -> SourceSpec:
    from prefrag.index.docstore import check_source_name

    if not isinstance(row, Mapping):
        raise ConfigurationError(f"{where} must be a mapping of {', '.join(_FIELDS)}.")
    name = row.get("name")
    if isinstance(name, str) and name:
        where = f"{where} ('{name}')"
    unknown = sorted(str(key) for key in row if key not in _FIELDS)
    if unknown:
        raise ConfigurationError(
            f"{where} has unknown field(s) {', '.join(unknown)} (known: {', '.join(_FIELDS)})."
        )
    missing = [key for key in _REQUIRED if not isinstance(row.get(key), str) or not row[key]]
    if missing:
        raise ConfigurationError(f"{where} lacks {', '.join(missing)} (non-empty text).")
    kind = KINDS.get(str(row["kind"]).strip().lower())
    if kind is None:
        raise ConfigurationError(
            f"{where} has unknown kind {row['kind']!r} (known: text, graph, web)."
        )
    try:
        check_source_name(str(name))
    except ConfigurationError as error:
        raise ConfigurationError(f"{where}: {error}") from None
    for key in ("query_format", "store"):
        if row.get(key) is not None and not isinstance(row[key], str):
            raise ConfigurationError(f"{where}: {key} must be text, not {row[key]!r}.")
    return SourceSpec(
        name=str(name),
        kind=kind,
        description=" ".join(str(row["description"]).split()),
        query_format=" ".join(str(row.get("query_format") or "").split()),
        authority=_authority(row.get("authority"), where),
        store=str(row.get("store") or ""),
    )


def _authority(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise ConfigurationError(f"{where}: authority must be a number in [0, 1], not {value!r}.")
    if not 0.0 <= float(value) <= 1.0:
        raise ConfigurationError(f"{where}: authority must be in [0, 1], not {value!r}.")
    return float(value)


def open_spec(spec: SourceSpec, settings: Settings, *, base: Path | None = None) -> Source:
    """The source a spec describes, opened.

    Raises:
        StoreMissingError: Its index has not been built.
    """
    if spec.kind == "web":
        from prefrag.sources.web import WebSource

        web = WebSource(settings, name=spec.name)
        web.description = spec.description
        web.query_format = spec.query_format or web.query_format
        if spec.authority is not None:
            web.authority = spec.authority
        return web
    if spec.kind == "graph":
        from prefrag.sources.graph import GRAPH_QUERY_FORMAT, GraphSource

        path = None
        if spec.store.endswith(".sqlite"):
            path = Path(spec.store).expanduser()
            if not path.is_absolute() and base is not None:
                path = base / path
        return GraphSource(
            spec.name,
            settings=settings,
            store=spec.store_name,
            path=path,
            description=spec.description,
            query_format=spec.query_format or GRAPH_QUERY_FORMAT,
            authority=spec.authority,
        )
    from prefrag.sources.local import LocalSource

    return LocalSource(
        spec.store_name,
        settings=settings,
        label=spec.name,
        description=spec.description,
        query_format=spec.query_format or DEFAULT_QUERY_FORMAT,
        authority=spec.authority,
    )


def registry_from_file(
    path: str | Path,
    settings: Settings | None = None,
    *,
    web: bool = True,
    require: str | None = None,
) -> SourceRegistry:
    """The sources of a registry file, with a combined `local` source first when several.

    The combined source searches every text and graph source (how is chosen per run by
    `multi_source_mode`); `web=False` leaves web sources out. A source whose store is
    missing or damaged is left out with a warning and raises its error only when asked
    for by name (at once when it is `require`), so it never blocks the healthy ones.

    Raises:
        ConfigurationError: The file is malformed (see `load_registry_file`).
        StoreMissingError: The `require`d source's index has not been built.
        DamagedStoreError: The `require`d source's index is damaged.
    """
    from prefrag.config import get_settings
    from prefrag.errors import DamagedStoreError, StoreMissingError
    from prefrag.sources.combined import CombinedSource

    settings = settings or get_settings()
    where = Path(path).expanduser()
    opened: list[Source] = []
    unavailable: dict[str, PrefRAGError] = {}
    for spec in load_registry_file(where):
        if not web and spec.kind == "web":
            continue
        try:
            opened.append(open_spec(spec, settings, base=where.parent))
        except (StoreMissingError, DamagedStoreError) as error:
            if spec.name == require:
                raise
            logger.warning("%s", error)
            unavailable[spec.name] = error
    members = [source for source in opened if source.kind != "web"]
    registry = SourceRegistry()
    if len(members) > 1 and "local" not in {source.name for source in opened}:
        registry.add(CombinedSource(members))
    for source in opened:
        registry.add(source)
    for name, why in unavailable.items():
        registry.add_unavailable(name, why)
    return registry


def describe_specs(
    specs: list[SourceSpec], settings: Settings, *, base: Path | None = None
) -> list[tuple[str, str, str, str, str, str]]:
    """Rows of `prefrag sources` for a registry, one per source.

    Each row: name, kind, description, query format, authority and how much the store
    holds ("not indexed" when it is missing).
    """
    from prefrag.index.catalog import list_sources
    from prefrag.index.graph_store import graph_path
    from prefrag.sources.graph import DEFAULT_GRAPH_AUTHORITY, GRAPH_QUERY_FORMAT, GraphSource

    indexed = {info.name: info for info in list_sources(settings)}
    rows: list[tuple[str, str, str, str, str, str]] = []
    for spec in specs:
        authority = spec.authority
        if spec.kind == "local":
            info = indexed.get(spec.store_name)
            size = f"{info.documents} documents" if info else "not indexed"
            authority = authority if authority is not None or not info else info.authority
            query_format = spec.query_format or DEFAULT_QUERY_FORMAT
        elif spec.kind == "graph":
            path = Path(spec.store) if spec.store.endswith(".sqlite") else None
            if path is not None and not path.is_absolute() and base is not None:
                path = base / path
            where = path or graph_path(spec.store_name, settings)
            size = graph_size(where)
            if authority is None:
                authority = (
                    GraphSource(spec.name, path=where).authority
                    if where.is_file()
                    else DEFAULT_GRAPH_AUTHORITY
                )
            query_format = spec.query_format or GRAPH_QUERY_FORMAT
        else:
            size = "search results"
            query_format = spec.query_format or "a few search-engine keywords or a short question"
        shown = "" if authority is None else f"{authority:.2f}"
        kind = "text" if spec.kind == "local" else spec.kind
        rows.append((spec.name, kind, spec.description, query_format, shown, size))
    return rows


def graph_size(path: Path) -> str:
    """How many concepts the graph at `path` holds, as shown by `prefrag sources`."""
    import sqlite3

    if not path.is_file():
        return "not indexed"
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            concepts = connection.execute("SELECT COUNT(*) FROM concepts").fetchone()[0]
        finally:
            connection.close()
    except sqlite3.DatabaseError:
        return "unreadable"
    return f"{concepts} concepts"
