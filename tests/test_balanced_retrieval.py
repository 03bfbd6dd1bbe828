"""Balanced retrieval (RAG²) versus stacked fusion, in the graph and in the evaluation."""

from __future__ import annotations

import re

import numpy as np
import pytest
from graph_helpers import ListSource, doc
from langgraph.runtime import Runtime

from prefrag.errors import ConfigurationError
from prefrag.graphs import nodes
from prefrag.graphs.context import Context
from prefrag.graphs.resources import ResourceProvider
from prefrag.sources.balanced import BalancedSource, RelevanceScorer
from prefrag.sources.base import SourceRegistry
from prefrag.sources.combined import CombinedSource

_VOCABULARY = [
    "warfarin", "bleeding", "ibuprofen", "statin", "grapefruit", "liver", "kidney",
    "dose", "child", "pregnancy", "aspirin", "lithium",
]  # fmt: skip


class WordEmbedder:
    """Unit bag-of-words vectors over a small vocabulary (a stand-in for MiniLM)."""

    def __init__(self) -> None:
        self.encoded = 0

    def encode(self, texts: list[str]) -> np.ndarray:
        self.encoded += len(texts)
        rows = []
        for text in texts:
            words = re.findall(r"\w+", text.lower())
            vector = np.array([words.count(w) for w in _VOCABULARY], dtype=np.float32) + 1e-3
            rows.append(vector / np.linalg.norm(vector))
        return np.stack(rows)


def _sources() -> tuple[ListSource, ListSource, ListSource]:
    # The biggest corpus answers every query with many loosely related documents; the
    # small one holds the document that answers the question, at its rank 2.
    big = ListSource(
        "big",
        default=[doc(f"big{i}", f"statin dose note {i} liver", "big") for i in range(10)],
    )
    mid = ListSource(
        "mid", default=[doc(f"mid{i}", f"kidney dose note {i}", "mid") for i in range(10)]
    )
    small = ListSource(
        "small",
        default=[
            doc("small-off", "aspirin in pregnancy", "small"),
            doc("small-gold", "ibuprofen raises warfarin bleeding risk", "small"),
        ],
    )
    return big, mid, small


QUESTION = "Does ibuprofen raise the bleeding risk of warfarin?"


def test_balanced_gives_every_source_its_share_and_ranks_by_the_question() -> None:
    big, mid, small = _sources()
    balanced = BalancedSource([big, mid, small], RelevanceScorer(WordEmbedder()))
    found = balanced.search(QUESTION, 3)
    assert found[0].metadata["id"] == "small-gold"
    assert found[0].metadata["source"] == "small"
    # Every member was asked for the same k, so the pool held each one's top 3.
    assert [len(s.queries) for s in (big, mid, small)] == [1, 1, 1]
    scores = [d.metadata["score"] for d in found]
    assert scores == sorted(scores, reverse=True)
    assert "retrieval_score" in found[0].metadata


def test_stacked_fusion_can_be_crowded_by_the_other_sources() -> None:
    big, mid, small = _sources()
    stacked = CombinedSource([big, mid, small]).search(QUESTION, 3)
    ids = [d.metadata["id"] for d in stacked]
    # Reciprocal rank ties every member's rank 1; relevance never enters, so the answer
    # (rank 2 in the small source) is crowded out of the top 3.
    assert "small-gold" not in ids
    assert ids == ["big0", "mid0", "small-off"]


def test_balanced_reuses_stored_vectors_and_embeds_the_rest() -> None:
    big, _, small = _sources()
    embedder = WordEmbedder()
    stored = WordEmbedder().encode([d.page_content for d in big.default[:2]])
    big.vectors_of = lambda documents: [stored[int(d.metadata["id"][3:])] for d in documents]  # type: ignore[attr-defined]
    BalancedSource([big, small], RelevanceScorer(embedder)).search(QUESTION, 2)
    assert embedder.encoded == 2 + 1  # small's two documents and the question, not big's


def test_balanced_keeps_notes_of_empty_or_failing_members() -> None:
    big, _, _ = _sources()
    broken = ListSource("broken", fail=True)
    balanced = BalancedSource([big, broken], RelevanceScorer(WordEmbedder()))
    assert [d.metadata["source"] for d in balanced.search(QUESTION, 2)] == ["big", "big"]
    assert "broken unavailable" in (balanced.last_note or "")
    assert balanced.search(QUESTION, 0) == []


def _retrieve(context: Context) -> list[str]:
    big, mid, small = _sources()
    registry = SourceRegistry([CombinedSource([big, mid, small]), big, mid, small])
    provider = ResourceProvider(
        reasoner=object(),  # type: ignore[arg-type]
        sources=registry,
        relevance_scorer=RelevanceScorer(WordEmbedder()),
    )
    state = {"question": QUESTION, "query": "warfarin ibuprofen", "route": []}
    update = nodes.retrieve_local(state, Runtime(context=context), resources=provider)  # type: ignore[arg-type]
    assert update["counters"] == {"local_total": 1}
    return [d.metadata["id"] for d in update["pending_local"]]


def test_retrieve_local_balances_several_local_sources_by_default() -> None:
    assert Context().multi_source_mode == "balanced"
    assert _retrieve(Context(top_k=3))[0] == "small-gold"
    assert "small-gold" not in _retrieve(Context(top_k=3, multi_source_mode="stacked"))


def test_a_single_source_is_searched_as_it_is() -> None:
    big, *_ = _sources()
    provider = ResourceProvider(sources=SourceRegistry([big]))
    assert provider.multi_source(big, Context(), QUESTION) is big


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="multi_source_mode"):
        Context(multi_source_mode="mixed")  # type: ignore[arg-type]


def test_a_plan_searches_only_its_sources_with_its_queries() -> None:
    from prefrag.eval.multisource import planned_search

    big, mid, small = _sources()
    plan = {"small": ["warfarin bleeding", " "], "nowhere": ["x"], "big": []}
    found = planned_search(
        plan, [big, mid, small], QUESTION, 2, RelevanceScorer(WordEmbedder()), depth=20
    )
    assert [d.metadata["id"] for d in found] == ["small-gold", "small-off"]
    assert small.queries == ["warfarin bleeding"] and not big.queries and not mid.queries
