"""Retrieval sources: the preferred local index, the web, and anything else with `search`."""

from prefrag.sources.base import Source, SourceKind, SourceRegistry

__all__ = ["Source", "SourceKind", "SourceRegistry"]
