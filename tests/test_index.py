"""Indexing: loaders, chunking, idempotent ingest, atomic failure, locks, the catalog."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from prefrag.config import Settings
from prefrag.errors import (
    ConfigurationError,
    IngestError,
    StoreLockedError,
    StoreMissingError,
)
from prefrag.index.catalog import list_sources, source_exists
from prefrag.index.chunking import chunk_tokenizer, chunk_tokens, chunk_words
from prefrag.index.dense import NumpyDenseIndex
from prefrag.index.fusion import reciprocal_rank_fusion
from prefrag.index.ingest import index_paths
from prefrag.sources.local import LocalSource

DOCS: list[dict[str, Any]] = [
    {
        "id": "warfarin",
        "title": "Warfarin and aspirin",
        "text": "Aspirin taken with warfarin raises the risk of serious bleeding.",
        "url": "https://example.org/warfarin",
        "date": "2021-03-01",
        "source": "NIH",
    },
    {
        "title": "Statins",
        "content": "Grapefruit juice raises blood levels of simvastatin.",
        "authority": 0.95,
        "qtype": "interaction",
    },
    {
        "id": 7,
        "title": "Metformin",
        "text": "Metformin is the first medicine for type 2 diabetes.",
        "year": 2019,
    },
]


def _write_jsonl(path: Path, rows: list[dict], extra_lines: tuple[str, ...] = ()) -> Path:
    lines = [json.dumps(r) for r in rows] + list(extra_lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


@pytest.fixture()
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home")


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    return _write_jsonl(tmp_path / "docs.jsonl", DOCS)


def test_chunk_words_windows_with_overlap() -> None:
    words = " ".join(f"w{i}" for i in range(10))
    assert chunk_words(words, 4, 0) == ["w0 w1 w2 w3", "w4 w5 w6 w7", "w8 w9"]
    assert chunk_words(words, 4, 2) == ["w0 w1 w2 w3", "w2 w3 w4 w5", "w4 w5 w6 w7", "w6 w7 w8 w9"]
    assert chunk_words("  short\n text ", 200) == ["short text"]
    with pytest.raises(ConfigurationError):
        chunk_words(words, 4, 4)


def _pieces(text: str) -> int:
    return len(chunk_tokenizer(Settings()).encode(text, add_special_tokens=False).ids)


def test_token_chunks_fit_the_window_overlap_and_cover_the_text() -> None:
    tokenizer = chunk_tokenizer(Settings())
    text = " ".join(f"Hydroxychloroquine dose {i} needs monitoring." for i in range(60))
    chunks = chunk_tokens(text, tokenizer, 40, 8)
    assert len(chunks) > 5
    assert all(_pieces(chunk) <= 40 for chunk in chunks)
    for before, after in itertools.pairwise(chunks):  # each starts inside the one before
        assert before.endswith(" ".join(after.split()[:2]).split(" ", 1)[0]) or (
            " ".join(after.split()[:2]) in before[-80:]
        )
    assert " ".join(chunks).split()[:3] == text.split()[:3]
    assert chunks[-1].split()[-2:] == text.split()[-2:]
    without_overlap = chunk_tokens(text, tokenizer, 40, 0)
    assert " ".join(without_overlap) == text  # cuts fall between words, nothing is lost


def test_token_chunks_keep_lines_and_cut_at_a_line_break() -> None:
    tokenizer = chunk_tokenizer(Settings())
    lines = [f"Line {i} says   something\tabout kidneys." for i in range(12)]
    chunks = chunk_tokens("\n\n".join(lines), tokenizer, 30, 0)
    assert all("\n" in chunk for chunk in chunks[:-1])
    for chunk in chunks:  # every chunk starts and ends on a whole line
        assert chunk.startswith("Line ") and chunk.endswith("kidneys.")
        assert "  " not in chunk and "\t" not in chunk and "\n\n" not in chunk


def test_a_word_longer_than_the_window_is_cut_inside() -> None:
    tokenizer = chunk_tokenizer(Settings())
    chunks = chunk_tokens("x" * 400, tokenizer, 16, 0)
    assert "".join(chunks) == "x" * 400
    assert all(_pieces(chunk) <= 16 for chunk in chunks)


def test_a_chunk_size_beyond_the_window_is_refused(settings, corpus) -> None:
    wide = settings.model_copy(update={"chunk_size": 300})
    with pytest.raises(ConfigurationError, match="254"):
        index_paths(corpus, "meds", settings=wide)


def test_a_source_built_with_word_chunks_keeps_them(settings, corpus, tmp_path) -> None:
    from prefrag.index import docstore

    long_doc = {"id": "long", "title": "Long", "text": " ".join(f"term{i}" for i in range(500))}
    path = _write_jsonl(tmp_path / "long.jsonl", [long_doc])
    first = index_paths(path, "meds", settings=settings)
    folder = settings.sources_dir / "meds"
    manifest = docstore.read_manifest(folder)
    assert manifest is not None
    assert (manifest.chunk_unit, manifest.chunk_size, manifest.chunk_overlap) == ("tokens", 254, 32)
    # A manifest of the word-chunking era: the same files re-indexed are cut by words.
    manifest.chunk_unit, manifest.chunk_size, manifest.chunk_overlap = "words", 200, 0
    docstore.write_manifest(folder, manifest)
    again = index_paths(path, "meds", settings=settings)
    assert again.added == 3 and again.total_chunks == first.total_chunks + 3  # 200+200+100
    assert index_paths(path, "meds", settings=settings).added == 0


def test_index_reports_added_then_skipped_on_reindex(settings, corpus, tmp_path) -> None:
    markdown = tmp_path / "notes.md"
    markdown.write_text("# Lithium monitoring\n\nCheck lithium levels every three months.\n")
    text = tmp_path / "plain_note.txt"
    text.write_text("Ibuprofen can reduce the effect of blood pressure medicines.")

    first = index_paths([corpus, markdown, text], "meds", settings=settings)
    assert (first.files, first.documents, first.added, first.skipped) == (3, 5, 5, 0)
    assert first.total_chunks == 5 and first.total_documents == 5

    before = _snapshot(first.path)
    again = index_paths([corpus, markdown, text], "meds", settings=settings)
    assert (again.added, again.skipped, again.total_chunks) == (0, 5, 5)
    assert _snapshot(again.path) == before

    [info] = list_sources(settings)
    assert (info.name, info.documents, info.chunks, info.path) == ("meds", 5, 5, first.path)
    assert info.updated and source_exists("meds", settings)
    assert not source_exists("other", settings)


def test_chunks_keep_metadata_and_parent_ids(settings, corpus, tmp_path) -> None:
    long_doc = {"id": "long", "title": "Long", "text": " ".join(f"word{i}" for i in range(25))}
    path = _write_jsonl(tmp_path / "more.jsonl", [*DOCS, long_doc])
    small = settings.model_copy(update={"chunk_size": 20, "chunk_overlap": 4})
    report = index_paths(path, "meds", settings=small, authority=0.7)
    # The long document is 50 word pieces ("word", "##0"...) and has no sentence start to
    # overlap at: windows at 0, 20 and 40.
    assert report.added == 3 + 3

    source = LocalSource("meds", settings=small, mode="lexical")
    assert source.authority == 0.7
    [hit] = source.search("warfarin bleeding", 1)
    meta = hit.metadata
    assert (meta["title"], meta["url"], meta["date"]) == (
        "Warfarin and aspirin",
        "https://example.org/warfarin",
        "2021-03-01",
    )
    assert meta["parent_id"] == "warfarin" and meta["source"] == "meds"
    assert meta["origin"] == "NIH" and meta["authority"] == 0.7 and meta["kind"] == "local"
    [statin] = source.search("grapefruit simvastatin", 1)
    assert statin.metadata["authority"] == 0.95 and statin.metadata["qtype"] == "interaction"
    assert source.search("type 2 diabetes", 1)[0].metadata["date"] == "2019"
    parts = source.search("word3 word12 word20", 5)
    assert {d.metadata["parent_id"] for d in parts} == {"long"}
    assert len({d.metadata["id"] for d in parts}) == 3


@pytest.mark.parametrize(
    ("bad_line", "reason"),
    [
        ('{"title": "no text"}', "text"),
        ("{not json", "not valid JSON"),
        ('["a", "list"]', "JSON object"),
        ('{"text": "x", "authority": 3}', "authority"),
        ('{"text": "x", "title": 5}', "title"),
    ],
)
def test_malformed_line_names_file_and_line_and_leaves_store(
    settings, corpus, tmp_path, bad_line, reason
) -> None:
    index_paths(corpus, "meds", settings=settings)
    folder = settings.sources_dir / "meds"
    before = _snapshot(folder)
    bad = _write_jsonl(tmp_path / "bad.jsonl", [{"text": "A new fine document."}], ("", bad_line))
    with pytest.raises(IngestError) as caught:
        index_paths([bad], "meds", settings=settings)
    assert f"{bad}:3" in str(caught.value) and reason in str(caught.value)
    assert _snapshot(folder) == before


def test_bad_inputs_on_a_fresh_source_create_nothing(settings, tmp_path) -> None:
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(IngestError, match="no such file"):
        index_paths([missing], "fresh", settings=settings)
    unreadable = tmp_path / "locked.md"
    unreadable.write_text("# Hidden\n\ntext")
    unreadable.chmod(0)
    if os.access(unreadable, os.R_OK):  # root reads anything
        unreadable.chmod(0o644)
        unreadable.write_bytes(b"\xff\xfe not utf-8 \xff")
    with pytest.raises(IngestError, match="Cannot read"):
        index_paths([unreadable], "fresh", settings=settings)
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(b"%PDF")
    with pytest.raises(IngestError, match="unsupported"):
        index_paths([pdf], "fresh", settings=settings)
    with pytest.raises(ConfigurationError):
        index_paths([pdf], "../escape", settings=settings)
    assert list_sources(settings) == []
    with pytest.raises(StoreMissingError, match="prefrag index"):
        LocalSource("fresh", settings=settings)


def test_a_second_writer_gets_store_locked_and_readers_go_on(settings, corpus) -> None:
    from prefrag.index.docstore import writer_lock

    index_paths(corpus, "meds", settings=settings)
    folder = settings.sources_dir / "meds"
    with writer_lock(folder, "meds"):  # what another `prefrag index` of it holds
        more = corpus.parent / "more.md"
        more.write_text("# Another\n\nSomething new to write.")
        with pytest.raises(StoreLockedError) as caught:
            index_paths([more], "meds", settings=settings)
        assert "another PrefRAG process" in str(caught.value)
        # Readers take no lock: they read the generation's files while it is held.
        assert LocalSource("meds", settings=settings).search("warfarin", 2)
    assert index_paths([more], "meds", settings=settings).added == 1


def test_numpy_index_matches_qdrant_query_points(settings, corpus, tmp_path) -> None:
    from prefrag.index.edge_store import EdgeStore

    index_paths(corpus, "meds", settings=settings)
    source = LocalSource("meds", settings=settings, mode="dense")
    from prefrag.index.embeddings import get_embedder

    vector = get_embedder(settings).encode_one("bleeding with blood thinners")
    numpy_hits = [(source._records[row]["id"], s) for row, s in source._numpy.search(vector, 3)]  # type: ignore[union-attr]
    records = list(source._records)
    with EdgeStore("meds", tmp_path / "qdrant") as store:  # Qdrant's exact search, same vectors
        store.upsert(records, np.asarray(source.vectors_by_id([r["id"] for r in records])))
        assert store.count() == 3
        qdrant_hits = store.search(vector, 3)
    assert [i for i, _ in numpy_hits] == [i for i, _ in qdrant_hits]
    assert np.allclose([s for _, s in numpy_hits], [s for _, s in qdrant_hits], atol=1e-5)


def test_numpy_index_clips_k_and_orders_ties() -> None:
    index = NumpyDenseIndex(np.array([[1, 0], [0, 1], [1, 0]], dtype=np.float32))
    assert index.search(np.array([1, 0], dtype=np.float32), 10) == [(0, 1.0), (2, 1.0), (1, 0.0)]
    assert index.search(np.array([1, 0], dtype=np.float32), 0) == []


def test_reciprocal_rank_fusion_rewards_agreement() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["b", "d"]])
    assert [key for key, _ in fused] == ["b", "a", "d", "c"]
    assert reciprocal_rank_fusion([["a"], []], limit=0) == []


def test_query_vectors_are_cached_and_read_only() -> None:
    from prefrag.index.embeddings import get_embedder

    embedder = get_embedder()
    first = embedder.encode_one("warfarin and ibuprofen")
    again = embedder.encode_one("warfarin and ibuprofen")
    assert again is first
    assert not first.flags.writeable
    fresh = embedder.encode(["warfarin and ibuprofen"])[0]
    assert abs(float(fresh @ first) - 1.0) < 1e-5
