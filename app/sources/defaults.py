"""The sources a run gets when the caller names none: local indexes plus the web."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from pathlib import Path

from prefrag.config import Settings, get_settings
from prefrag.errors import PrefRAGError
from prefrag.shared import shared
from prefrag.sources.base import Source, SourceRegistry

logger = logging.getLogger(__name__)


def ensure_demo_index(settings: Settings | None = None) -> bool:
    """Index the bundled demo corpus when no local source exists yet; True if it did.

    A damaged source counts as existing: the demo is not indexed beside it.
    """
    from prefrag.demo_corpus import DEMO_SOURCE, demo_corpus_path
    from prefrag.index.catalog import damaged_sources, list_sources
    from prefrag.index.ingest import index_paths

    settings = settings or get_settings()
    with shared().once("demo index lock", threading.Lock):  # one indexer per process
        if list_sources(settings) or damaged_sources(settings):
            return False
        index_paths([demo_corpus_path()], DEMO_SOURCE, settings=settings, progress=False)
        return True


def demo_on_request(names: Iterable[str], settings: Settings | None = None) -> bool:
    """Whether the demo corpus is left out of the default sources, searched only when named.

    It is once the data directory holds a source of the user's own beside it, unless
    `Settings.include_demo` keeps it in: the demo is for the demo, and mixed into the
    combined `local` source it would change the answers about the user's own notes.
    """
    from prefrag.demo_corpus import DEMO_SOURCE

    settings = settings or get_settings()
    names = list(names)
    own = [name for name in names if name != DEMO_SOURCE]
    return DEMO_SOURCE in names and bool(own) and not settings.include_demo


def local_sources(
    settings: Settings | None = None,
    *,
    require: str | None = None,
    unavailable: dict[str, PrefRAGError] | None = None,
) -> list[Source]:
    """One `LocalSource` per sound indexed source under the data directory.

    Only `require` (the source a run asked for) is opened here; the others read their
    files at their first search, so a run opens only the sources it searches. A damaged
    source is skipped with a warning (and its error put in `unavailable`), unless it is
    `require`: then its `DamagedStoreError` is raised. Damage found at a later first
    search shows as that search's failure note.
    """
    from prefrag.errors import DamagedStoreError
    from prefrag.index.catalog import list_sources
    from prefrag.sources.local import LocalSource

    settings = settings or get_settings()
    sources: list[Source] = []
    for info in list_sources(settings):
        try:
            sources.append(LocalSource(info.name, settings=settings, lazy=info.name != require))
        except DamagedStoreError as error:
            if info.name == require:
                raise
            # One damaged source never stops the others.
            logger.warning("%s", error)
            if unavailable is not None:
                unavailable[info.name] = error
    return sources


def graph_sources(
    settings: Settings | None = None,
    *,
    require: str | None = None,
    unavailable: dict[str, PrefRAGError] | None = None,
) -> list[Source]:
    """One `GraphSource` per indexed knowledge graph (`prefrag index --kind graph`).

    A damaged graph is skipped with a warning (its error put in `unavailable`), unless
    it is `require`.
    """
    from prefrag.errors import DamagedStoreError
    from prefrag.index.graph_store import list_graphs
    from prefrag.sources.graph import GraphSource

    settings = settings or get_settings()
    sources: list[Source] = []
    for name in list_graphs(settings):
        try:
            sources.append(GraphSource(name, settings=settings))
        except DamagedStoreError as error:
            if name == require:
                raise
            logger.warning("%s", error)
            if unavailable is not None:
                unavailable[name] = error
    return sources


def default_sources(
    settings: Settings | None = None,
    *,
    web: bool = True,
    require: str | None = None,
    sources_file: Path | None = None,
) -> SourceRegistry:
    """Every local and graph source, a combined `local` first when there are several, and `web`.

    On a fresh data directory the demo corpus is indexed first, so a run always has a
    preferred source (the first local one, unless the run's context names another). Once
    the user has indexed a source of their own, the demo is registered on request only
    (`demo_on_request`): not in `local`, not preferred, not planned over, but still
    searched when a run names it. With a registry file (`sources_file`, else
    `Settings.sources_file`) the sources are the file's instead (see
    `prefrag.sources.registry_file`).
    """
    from prefrag.sources.combined import CombinedSource
    from prefrag.sources.web import WebSource

    settings = settings or get_settings()
    registry_file = sources_file or settings.sources_file
    if registry_file is not None:
        from prefrag.sources.registry_file import registry_from_file

        return registry_from_file(registry_file, settings, web=web, require=require)
    from prefrag.demo_corpus import DEMO_SOURCE
    from prefrag.index.catalog import damaged_sources

    ensure_demo_index(settings)
    # Damage stays with the damaged source: asking for it by name raises its error.
    unavailable: dict[str, PrefRAGError] = dict(damaged_sources(settings))
    if require in unavailable:
        raise unavailable[require]
    members = [
        *local_sources(settings, require=require, unavailable=unavailable),
        *graph_sources(settings, require=require, unavailable=unavailable),
    ]
    held_back = demo_on_request([m.name for m in members], settings)
    searched = [m for m in members if not (held_back and m.name == DEMO_SOURCE)]
    registry = SourceRegistry()
    if len(searched) > 1:
        registry.add(CombinedSource(searched))
    for source in searched:
        registry.add(source)
    for name, error in unavailable.items():
        registry.add_unavailable(name, error)
    if web:
        registry.add(WebSource(settings))
    for source in members:
        if source not in searched:
            registry.add(source, on_request=True)
    return registry
