"""Helpers for store tests: where a source's current generation lives."""

from __future__ import annotations

from pathlib import Path

from prefrag.index import docstore


def current_generation(name: str) -> Path:
    """The folder of the generation the source `name`'s manifest points at."""
    from prefrag.config import get_settings

    folder = get_settings().sources_dir / name
    manifest = docstore.read_manifest(folder)
    assert manifest is not None
    return folder / manifest.generation
