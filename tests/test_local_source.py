"""The local source: the Source contract in every mode, fused ranking, notes, HotpotQA."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from source_contract import check_source_contract

from prefrag.config import Settings
from prefrag.errors import ConfigurationError
from prefrag.index.ingest import index_paths
from prefrag.sources.base import Source
from prefrag.sources.local import LocalSource

DOCS = [
    ("Warfarin", "Aspirin taken with warfarin raises the risk of serious bleeding."),
    ("Statins", "Grapefruit juice raises blood levels of simvastatin and lovastatin."),
    ("Metformin", "Metformin is the usual first medicine for type 2 diabetes."),
    ("Lithium", "Lithium levels rise with dehydration and with some diuretics."),
    ("Antibiotics", "Clarithromycin blocks the enzyme that clears many statins."),
]


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    folder = tmp_path_factory.mktemp("local-source")
    corpus = folder / "meds.jsonl"
    corpus.write_text(
        "\n".join(json.dumps({"title": t, "text": x, "date": "2024"}) for t, x in DOCS) + "\n"
    )
    settings = Settings(home=folder / "home")
    index_paths([corpus], "meds", settings=settings, authority=0.9, description="Drug notes")
    return settings


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_local_source_satisfies_the_source_contract(settings, mode) -> None:
    source = LocalSource("meds", settings=settings, mode=mode)
    assert isinstance(source, Source)
    assert (source.kind, source.authority, source.description) == ("local", 0.9, "Drug notes")
    hits = check_source_contract(source, hit_query="grapefruit simvastatin", miss_query="zzqx")
    assert hits[0].metadata["title"] == "Statins"


def test_hybrid_fuses_dense_and_lexical(settings) -> None:
    hybrid = LocalSource("meds", settings=settings)
    dense = LocalSource("meds", settings=settings, mode="dense")
    lexical = LocalSource("meds", settings=settings, mode="lexical")
    query = "which drugs make statin levels go up"
    fused = [d.metadata["title"] for d in hybrid.search(query, 5)]
    assert set(fused) >= {d.metadata["title"] for d in lexical.search(query, 5)}
    assert set(fused) <= {d.metadata["title"] for d in dense.search(query, 5)}
    assert fused[0] in {"Statins", "Antibiotics"}


def test_lexical_mode_drops_unknown_words_and_clips_k(settings) -> None:
    lexical = LocalSource("meds", settings=settings, mode="lexical")
    assert lexical.search("zzqx qqxz", 5) == []
    assert "No document" in (lexical.last_note or "")
    # k far beyond the corpus size must not raise (bm25s does for k > corpus).
    assert [d.metadata["title"] for d in lexical.search("lithium diuretics", 50)] == ["Lithium"]
    assert lexical.last_note is None
    assert lexical.search("   ", 5) == [] and "Empty query" in (lexical.last_note or "")


def test_dense_mode_returns_every_chunk_when_k_exceeds_corpus(settings) -> None:
    dense = LocalSource("meds", settings=settings, mode="dense")
    assert len(dense.search("medicine", 50)) == len(DOCS)


def test_unknown_mode_is_a_configuration_error(settings) -> None:
    with pytest.raises(ConfigurationError, match="hybrid"):
        LocalSource("meds", settings=settings, mode="fuzzy")  # type: ignore[arg-type]


def test_open_reader_survives_reindex_and_new_reader_sees_new_chunks(tmp_path) -> None:
    corpus = tmp_path / "meds.jsonl"
    corpus.write_text("\n".join(json.dumps({"title": t, "text": x}) for t, x in DOCS) + "\n")
    settings = Settings(home=tmp_path / "home")
    index_paths([corpus], "meds", settings=settings)
    old_reader = LocalSource("meds", settings=settings, mode="lexical")
    extra = tmp_path / "digoxin.md"
    extra.write_text("# Digoxin\n\nAmiodarone doubles digoxin levels; halve the dose.")
    assert index_paths([extra], "meds", settings=settings).total_chunks == len(DOCS) + 1
    assert old_reader.search("amiodarone digoxin", 1) == []
    assert old_reader.search("lithium", 1)[0].metadata["title"] == "Lithium"
    [hit] = LocalSource("meds", settings=settings).search("amiodarone digoxin", 1)
    assert hit.metadata["title"] == "Digoxin"
    assert hit.metadata["url"].startswith("file://")


@pytest.mark.slow
def test_hotpotqa_gold_paragraphs_are_retrieved(hotpot_slice, tmp_path: Path) -> None:
    questions, corpus = hotpot_slice(10, tmp_path)
    settings = Settings(home=tmp_path / "home")
    index_paths([corpus], "hotpot", settings=settings)
    source = LocalSource("hotpot", settings=settings)
    found = 0
    for item in questions:
        gold = {p.title for p in item.paragraphs if p.supporting}
        top = {d.metadata["title"] for d in source.search(item.question, 5)}
        found += bool(gold & top)
    assert found >= 9  # at least one gold paragraph in the top 5 for 90% of questions
