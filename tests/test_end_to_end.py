"""End to end on real indexes: the demo corpus and HotpotQA, with the extractive reasoner."""

from __future__ import annotations

import pytest

from prefrag import ask
from prefrag.index.ingest import index_paths
from prefrag.reasoners.extractive import ExtractiveReasoner
from prefrag.sources import SourceRegistry
from prefrag.sources.defaults import default_sources
from prefrag.sources.local import LocalSource


def test_demo_corpus_is_indexed_on_first_use_and_answers_with_citations() -> None:
    registry = default_sources(web=False)
    assert registry.names() == ["demo"]
    result = ask("Which medicines interact with warfarin?", sources=registry)
    assert result["answer"]
    assert result["citations"]
    assert all(c["source"] == "demo" and c["date"] for c in result["citations"])
    # A second start finds the index and does not re-index.
    assert default_sources(web=False).names() == ["demo"]


@pytest.fixture(scope="module")
def hotpot_index(hotpot_slice, tmp_path_factory: pytest.TempPathFactory):
    from prefrag.config import Settings

    folder = tmp_path_factory.mktemp("hotpot")
    questions, corpus = hotpot_slice(25, folder)
    settings = Settings(home=folder / "home")
    index_paths([corpus], "hotpot", settings=settings, progress=False)
    return LocalSource("hotpot", settings=settings), questions


@pytest.mark.slow
def test_hotpotqa_answers_cite_documents_in_the_index(hotpot_index) -> None:
    source, questions = hotpot_index
    reasoner = ExtractiveReasoner(use_embeddings=False)
    registry = SourceRegistry([source])
    answered = 0
    for item in questions[:8]:
        question = item.question
        result = ask(question, reasoner=reasoner, sources=registry, fallback_sources=[])
        if result["abstained"]:  # precision first: an abstention says why and cites nothing
            assert result["answer"].startswith("The sources I could reach do not answer this")
            continue
        assert result["citations"], question
        for cite in result["citations"]:
            hits = source.search(cite["title"], 5)
            assert cite["id"] in {d.metadata["id"] for d in hits} or any(
                h.metadata["title"] == cite["title"] for h in hits
            )
        answered += 1
    # Precision first: since stop 33's refit gate withholds more doubtful multi-hop spans
    # (three of these eight are answered; the CI slice's EM rose from 15 to 20 with it).
    assert answered >= 3
