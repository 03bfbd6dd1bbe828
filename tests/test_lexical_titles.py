"""Titles in a store's lexical index, and stores written before titles were indexed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from prefrag.config import Settings
from prefrag.index import docstore
from prefrag.index.ingest import index_paths
from prefrag.index.lexical import FORMAT, LexicalIndex
from prefrag.sources.local import LocalSource

DOCS = [
    {"id": "lith", "title": "Lithium", "text": "Levels rise with dehydration and diuretics."},
    {"id": "warf", "title": "Warfarin", "text": "Doses follow the INR blood test."},
    {"id": "stat", "title": "Statins", "text": "Grapefruit juice raises simvastatin levels."},
]


def _corpus(tmp_path: Path) -> Path:
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    return path


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != ".lock" and "qdrant" not in p.parts
    }


def _make_text_only(folder: Path) -> None:
    """Turn a fresh store into one written before titles were indexed (format 1)."""
    manifest = docstore.read_manifest(folder)
    assert manifest is not None
    generation = folder / manifest.generation
    records = docstore.load_records(generation)
    shutil.rmtree(generation / docstore.LEXICAL)
    LexicalIndex.build([r["text"] for r in records]).save(generation / docstore.LEXICAL)
    data = json.loads((folder / docstore.MANIFEST).read_text())
    del data["lexical_format"]  # early manifests had no such field
    (folder / docstore.MANIFEST).write_text(json.dumps(data))


def _titles_found(settings: Settings, query: str) -> list[str]:
    source = LocalSource("meds", settings=settings, mode="lexical")
    return [d.metadata["parent_id"] for d in source.search(query, 3)]


@pytest.mark.slow
def test_an_old_text_only_store_keeps_working_and_reindexing_adds_titles_once(
    tmp_path: Path,
) -> None:
    settings = Settings(home=tmp_path / "home")
    corpus = _corpus(tmp_path)
    report = index_paths([corpus], "meds", settings=settings)
    assert _titles_found(settings, "lithium") == ["lith"]
    manifest = docstore.read_manifest(report.path)
    assert manifest is not None and manifest.lexical_format == FORMAT

    _make_text_only(report.path)
    # Still readable; the title-only query simply finds nothing in a text-only index.
    assert _titles_found(settings, "lithium") == []
    assert _titles_found(settings, "grapefruit") == ["stat"]

    migrated = index_paths([corpus], "meds", settings=settings)
    assert (migrated.added, migrated.total_chunks) == (0, 3)
    assert any("rebuilt over titles" in w for w in migrated.warnings)
    assert _titles_found(settings, "lithium") == ["lith"]
    manifest = docstore.read_manifest(report.path)
    assert manifest is not None and manifest.lexical_format == FORMAT

    before = _files(report.path)
    again = index_paths([corpus], "meds", settings=settings)
    assert again.warnings == () and again.added == 0
    assert _files(report.path) == before


@pytest.mark.slow
def test_new_chunks_added_to_an_old_store_bring_titles_to_every_chunk(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home")
    report = index_paths([_corpus(tmp_path)], "meds", settings=settings)
    _make_text_only(report.path)
    extra = tmp_path / "more.jsonl"
    extra.write_text(json.dumps({"id": "met", "title": "Metformin", "text": "First pill."}) + "\n")
    grown = index_paths([extra], "meds", settings=settings)
    assert grown.added == 1
    assert any("rebuilt over titles" in w for w in grown.warnings)
    assert _titles_found(settings, "lithium") == ["lith"]
    assert _titles_found(settings, "metformin") == ["met"]
