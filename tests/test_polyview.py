from __future__ import annotations

from datetime import date

import numpy as np
import pytest
from fake_encoders import BagOfWords
from langchain_core.language_models.fake_chat_models import (
    FakeListChatModel,
    GenericFakeChatModel,
)
from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from prefrag.documents import make_document
from prefrag.graphs import tool_nodes
from prefrag.graphs.context import Context
from prefrag.tools.dates import document_date, find_date_in_text, parse_date, recency_score
from prefrag.tools.polyview import (
    PolyviewReranker,
    profile_weights,
    select_with_coverage,
)

TODAY = date(2025, 1, 1)


class Table:
    def score(self, url: str) -> float:
        return 0.9 if "nih.gov" in url else 0.2


def doc(text, id, **meta):
    return make_document(text, id=id, source="s", **meta)


def reranker(**kwargs):
    kwargs.setdefault("embedder", BagOfWords())
    kwargs.setdefault("now", TODAY)
    kwargs.setdefault("authority_table", Table())
    return PolyviewReranker(**kwargs)


# ----- views ---------------------------------------------------------------------------
def test_relevance_prefers_the_document_about_the_question():
    r = reranker()
    docs = [doc("metformin treats type 2 diabetes", "a"), doc("the weather is sunny", "b")]
    q = r._encode(["how does metformin treat diabetes"])[0]
    scores = r.relevance(q, r._encode([d.page_content for d in docs]))
    assert scores[0] > scores[1]
    assert np.all((scores >= 0) & (scores <= 1))


def test_authority_uses_metadata_then_domain_table_then_neutral():
    docs = [
        doc("x", "a", authority=0.95),
        doc("x", "b", url="https://www.ncbi.nlm.nih.gov/x"),
        doc("x", "c", url="https://someblog.example/x"),
        doc("x", "d"),
    ]
    assert reranker().authority(docs).tolist() == pytest.approx([0.95, 0.9, 0.2, 0.5])


def test_timeliness_halves_every_half_life_and_undated_is_neutral():
    r = reranker(half_life_days=365)
    docs = [
        doc("x", "new", date="2025-01-01"),
        doc("x", "year", date="2024-01-02"),
        doc("x", "undated"),
    ]
    scores, dates = r.timeliness(docs)
    assert scores[0] == pytest.approx(1.0)
    assert scores[1] == pytest.approx(0.5, abs=0.01)
    assert scores[2] == 0.5
    assert dates[2] is None


def test_clusters_put_near_duplicates_together():
    r = reranker()
    vectors = r._encode(
        [
            "insulin dose for type 1 diabetes",
            "insulin dose for type 1 diabetes adults",
            "hip fracture surgery",
        ]
    )
    labels = r.clusters(vectors, k=3)
    assert labels[0] == labels[1] != labels[2]
    kmeans = reranker(cluster_method="kmeans").clusters(vectors, k=2)
    assert kmeans[0] == kmeans[1] != kmeans[2]


@pytest.mark.parametrize("seed", range(6))
def test_the_numpy_clustering_labels_exactly_as_scikit_learns_dbscan(seed):
    pytest.importorskip("sklearn")  # the dev extra compares against it
    from sklearn.cluster import DBSCAN

    from prefrag.tools.polyview import linked_clusters

    rng = np.random.default_rng(seed)
    # Groups of near-duplicates plus loners, as retrieved documents often are.
    centres = rng.normal(size=(4, 24))
    rows = [centres[i % 4] + rng.normal(scale=0.35, size=24) for i in range(9 + seed)]
    rows += list(rng.normal(size=(3, 24)))
    vectors = np.array(rows)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    distances = np.clip(1.0 - vectors @ vectors.T, 0.0, 2.0)
    for eps in (0.05, 0.15, 0.3, 0.6):
        expected = DBSCAN(eps=eps, min_samples=1, metric="precomputed").fit_predict(distances)
        assert linked_clusters(distances, eps).tolist() == expected.tolist(), eps


# ----- integration ---------------------------------------------------------------------
def test_profiles_renormalise_away_views_that_are_off():
    offline = profile_weights("inquiry", active=["R", "A", "T"])
    assert offline == pytest.approx({"R": 0.35 / 0.55, "A": 0.1 / 0.55, "T": 0.1 / 0.55})
    care = profile_weights("care", active=["R", "A", "T"])
    assert care == pytest.approx({"R": 0.35 / 0.55, "A": 0.2 / 0.55, "T": 0.0})
    assert sum(profile_weights("policy").values()) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="Unknown polyview profile"):
        profile_weights("surgery")


def test_authority_can_outrank_slightly_better_relevance_with_care_profile():
    docs = [
        doc("aspirin dose for adults with fever", "blog", authority=0.1),
        doc("aspirin dose for adults", "nih", authority=1.0),
    ]
    relevance_only = reranker(weights=[1, 0, 0, 0, 0]).rerank(
        "aspirin dose for adults with fever", docs, 1
    )
    care = reranker(profile="care").rerank("aspirin dose for adults with fever", docs, 1)
    assert relevance_only.documents[0].metadata["id"] == "blog"
    assert care.documents[0].metadata["id"] == "nih"


def test_per_view_scores_are_kept_on_each_document():
    docs = [doc("statins lower cholesterol", "a", date="2020-05-01", authority=0.8)]
    result = reranker().rerank("do statins lower cholesterol", docs, 1)
    views = result.documents[0].metadata["polyview"]
    assert set(views) >= {"R", "A", "T", "score", "cluster", "weights", "date"}
    assert views["A"] == 0.8 and views["date"] == "2020-05-01"
    assert "U" not in views  # no chat model: utility is off
    assert "metadata" not in docs[0].metadata.get("polyview", {})  # inputs untouched
    assert "polyview" not in docs[0].metadata


def test_chat_model_turns_on_utility_and_supplement_views():
    reply = '{"scores": {"a": 0.1, "b": 0.95}}'
    model = FakeListChatModel(responses=[reply, reply, reply])
    docs = [doc("diabetes diet advice", "a"), doc("diabetes diet advice too", "b")]
    result = reranker(chat_model=model).rerank("diabetes diet", docs, 2)
    top = result.documents[0].metadata["polyview"]
    assert result.documents[0].metadata["id"] == "b"
    assert top["U"] == 0.95 and top["S"] == 0.95 and top["R"] == 0.95


def test_unparseable_judge_turns_view_off_with_a_note():
    model = FakeListChatModel(responses=["no idea", "no idea", "no idea"])
    result = reranker(chat_model=model).rerank("q", [doc("text", "a")], 1)
    assert "U" not in result.documents[0].metadata["polyview"]
    assert any("U judge" in n for n in result.notes)


def test_coverage_constraint_covers_every_topic_before_a_second_document():
    scores = np.array([0.9, 0.85, 0.8, 0.3, 0.2])
    clusters = np.array([0, 0, 0, 1, 2])
    assert select_with_coverage(scores, clusters, 3) == [0, 3, 4]
    assert select_with_coverage(scores, clusters, 4) == [0, 1, 3, 4]
    assert select_with_coverage(scores, np.array([0, 0, 0, 0, 0]), 2) == [0, 1]


def test_rerank_keeps_a_distinct_topic_in_the_top_k():
    docs = [
        doc("insulin dose for type 1 diabetes", "a"),
        doc("insulin dose for type 1 diabetes in adults", "b"),
        doc("diabetes diet and exercise", "c"),
    ]
    q = "insulin dose for type 1 diabetes"
    covered = reranker().rerank(q, docs, 2)
    plain = reranker(coverage=False).rerank(q, docs, 2)
    assert {d.metadata["id"] for d in covered.documents} == {"a", "c"}
    assert {d.metadata["id"] for d in plain.documents} == {"a", "b"}


def test_conflict_flag_names_the_newer_and_the_more_authoritative_document():
    docs = [
        doc(
            "Aspirin is recommended daily for heart attack prevention in adults.",
            "guideline",
            authority=0.95,
            date="2009-06-01",
        ),
        doc(
            "Aspirin is no longer recommended daily for heart attack prevention in adults.",
            "blog",
            authority=0.3,
            date="2023-02-01",
        ),
    ]
    result = reranker().rerank("daily aspirin heart attack prevention", docs, 2)
    assert len(result.conflicts) == 1
    conflict = result.conflicts[0]
    assert (conflict.authoritative_id, conflict.newer_id) == ("guideline", "blog")
    assert "[blog] is newer" in conflict.note()
    assert "Say which" not in conflict.note()  # prompt text never reaches the user
    assert any("more authoritative" in n for n in result.notes)
    assert all("conflict" in d.metadata["polyview"] for d in result.documents)


def test_no_conflict_when_documents_agree_or_the_newer_one_is_authoritative():
    agree = [
        doc("Aspirin is recommended for prevention.", "g", authority=0.95, date="2009-06-01"),
        doc(
            "Aspirin is recommended for prevention in adults.",
            "b",
            authority=0.3,
            date="2023-02-01",
        ),
    ]
    assert reranker().rerank("aspirin prevention", agree, 2).conflicts == []
    newer_authoritative = [
        doc("Aspirin is recommended for prevention.", "b", authority=0.3, date="2009-06-01"),
        doc(
            "Aspirin is no longer recommended for prevention.",
            "g",
            authority=0.95,
            date="2023-02-01",
        ),
    ]
    assert reranker().rerank("aspirin prevention", newer_authoritative, 2).conflicts == []


def test_as_tool_reranks_plain_dicts():
    tool = reranker().as_tool()
    out = tool.invoke(
        {
            "question": "metformin for diabetes",
            "documents": [
                {"id": "x", "content": "the weather today"},
                {"id": "y", "content": "metformin for type 2 diabetes"},
            ],
            "k": 1,
        }
    )
    assert tool.name == "polyview_rerank"
    assert [d["id"] for d in out["documents"]] == ["y"]


# ----- dates ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2021-03-05", date(2021, 3, 5)),
        ("2021-03", date(2021, 3, 15)),
        ("2019", date(2019, 7, 1)),
        (2018, date(2018, 7, 1)),
        ("", None),
    ],
)
def test_parse_metadata_dates(value, expected):
    assert parse_date(value) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Page last updated: March 5, 2021. Diabetes is ...", date(2021, 3, 5)),
        ("Published 2019-04-02 by the CDC", date(2019, 4, 2)),
        ("Reviewed 5 June 2020 by our board", date(2020, 6, 5)),
        ("Last reviewed: 06/2020", date(2020, 6, 15)),
        ("Updated in 2017. Flu shots ...", date(2017, 7, 1)),
        ("The guideline of January 2015 says", date(2015, 1, 15)),
        ("In 1990 researchers found that 20 patients improved.", None),
    ],
)
def test_dates_are_extracted_from_text(text, expected):
    assert find_date_in_text(text) == expected


def test_metadata_date_wins_over_text_and_recency_is_bounded():
    d = doc("Updated: March 5, 2021", "a", date="2010-01-01")
    assert document_date(d) == date(2010, 1, 1)
    assert recency_score(date(2030, 1, 1), now=TODAY, half_life_days=10) == 1.0
    assert recency_score(None, now=TODAY, half_life_days=10) == 0.5


# ----- node ----------------------------------------------------------------------------
def _provider(**kwargs):
    from prefrag.graphs.resources import ResourceProvider
    from prefrag.sources.base import SourceRegistry

    return ResourceProvider(sources=SourceRegistry(), **kwargs)


def test_polyview_node_passes_through_when_off_and_reranks_when_on():
    docs = [doc("the weather today", "x"), doc("metformin for type 2 diabetes", "y")]
    state = {"question": "metformin for diabetes", "query": "metformin", "pending_local": docs}
    care = reranker(profile="care")
    run = _provider(rerankers={"care": care})
    assert tool_nodes.polyview_rerank(state, Runtime(context=None), resources=run) == {}
    out = tool_nodes.polyview_rerank(
        state,
        Runtime(context=Context(use_polyview=True, polyview_profile="care", top_k=1)),
        resources=run,
    )
    assert [d.metadata["id"] for d in out["pending_local"]] == ["y"]
    assert out["notes"] and "Polyview (care" in out["notes"][0]
    assert care.cache_info()["size"] > 0  # the provider's reranker did the work


# ----- vector cache --------------------------------------------------------------------
class CountingBagOfWords(BagOfWords):
    def __init__(self):
        self.texts: list[str] = []

    def encode(self, texts):
        self.texts.extend(texts)
        return super().encode(texts)


def test_documents_seen_before_are_not_embedded_again():
    embedder = CountingBagOfWords()
    r = reranker(embedder=embedder)
    docs = [doc("metformin treats type 2 diabetes", "a"), doc("insulin dosing guide", "b")]
    first = r.rerank("metformin for diabetes", docs, 2)
    embedded = len(embedder.texts)
    again = r.rerank("metformin for diabetes", [*docs, doc("sunny weather", "c")], 2)
    assert embedder.texts[embedded:] == ["sunny weather"]
    assert [d.metadata["id"] for d in again.documents] == [
        d.metadata["id"] for d in first.documents
    ]
    info = r.cache_info()
    assert info["hits"] == 3 and info["size"] == 4  # two documents + one more + the query


def test_changed_text_under_the_same_id_is_embedded_afresh():
    embedder = CountingBagOfWords()
    r = reranker(embedder=embedder)
    r.rerank("q", [doc("old text about pH", "a")], 1)
    result = r.rerank("q", [doc("new text about soils", "a")], 1)
    assert "new text about soils" in embedder.texts
    assert result.documents[0].page_content == "new text about soils"


def test_vector_cache_is_bounded_and_can_be_turned_off():
    embedder = CountingBagOfWords()
    r = reranker(embedder=embedder, vector_cache_size=3)
    for i in range(5):
        r.rerank("q", [doc(f"text {i}", f"d{i}")], 1)
    assert len(r.vector_cache) == 3
    embedder.texts.clear()
    r.rerank("q", [doc("text 0", "d0")], 1)  # evicted long ago: embedded again
    assert embedder.texts == ["text 0"]

    off = reranker(embedder=(counting := CountingBagOfWords()), vector_cache_size=0)
    off.rerank("q", [doc("same", "s")], 1)
    off.rerank("q", [doc("same", "s")], 1)
    assert counting.texts.count("same") == 2 and len(off.vector_cache) == 0


def test_added_reranker_is_chosen_by_profile_name():
    from prefrag.errors import ConfigurationError

    custom = reranker(views=("R",), coverage=False)
    run = _provider()
    run.add_reranker("only-relevance", custom)
    assert run.reranker(Context(polyview_profile="only-relevance")) is custom
    assert _provider().reranker(Context(polyview_profile="inquiry")) is not custom
    with pytest.raises(ConfigurationError, match="Unknown polyview profile"):
        run.reranker(Context(polyview_profile="nonsense"))
    docs = [doc("the weather today", "x"), doc("metformin for type 2 diabetes", "y")]
    state = {"question": "q", "query": "metformin", "pending_local": docs}
    out = tool_nodes.polyview_rerank(
        state,
        Runtime(context=Context(use_polyview=True, polyview_profile="only-relevance", top_k=1)),
        resources=run,
    )
    assert [d.metadata["id"] for d in out["pending_local"]] == ["y"]
    assert set(out["pending_local"][0].metadata["polyview"]) >= {"R", "score"}
    assert "A" not in out["pending_local"][0].metadata["polyview"]


def test_the_runs_chat_model_reaches_the_llm_views():
    from prefrag.reasoners.llm import LLMReasoner

    model = FakeListChatModel(responses=["unused"])
    run = _provider(reasoner=LLMReasoner({"default": model}, structured=False))
    built = run.reranker(Context(polyview_views=["R", "U", "S"]))
    assert built.chat_model is model
    # Without a model-backed reasoner (or with U and S and R switched off) there is none.
    assert run.reranker(Context(polyview_views=["A", "T"])).chat_model is None
    from prefrag.reasoners.extractive import ExtractiveReasoner

    plain = _provider(reasoner=ExtractiveReasoner(use_embeddings=False))
    assert plain.reranker(Context()).chat_model is None


def test_the_llm_views_calls_are_counted_in_the_runs_model_calls():
    reply = AIMessage(
        content='{"scores": {"a": 0.1, "b": 0.95}}',
        usage_metadata={"input_tokens": 40, "output_tokens": 10, "total_tokens": 50},
    )
    model = GenericFakeChatModel(messages=iter([reply] * 3))
    run = _provider(rerankers={"judged": reranker(chat_model=model)})
    docs = [doc("diabetes diet advice", "a"), doc("diabetes diet advice too", "b")]
    state = {"question": "diabetes diet", "query": "diabetes diet", "pending_local": docs}
    context = Context(use_polyview=True, polyview_profile="judged", top_k=2)
    out = tool_nodes.polyview_rerank(state, Runtime(context=context), resources=run)
    # R, U and S: one judged call each, with the tokens the replies report.
    assert out["model_calls"] == {"polyview": 3}
    assert out["tokens"] == {"polyview": 150}
    # Without a chat model nothing is counted.
    plain = _provider(rerankers={"plain": reranker()})
    context = Context(use_polyview=True, polyview_profile="plain", top_k=2)
    assert "model_calls" not in tool_nodes.polyview_rerank(
        state, Runtime(context=context), resources=plain
    )


def test_kmeans_without_scikit_learn_names_the_extra(monkeypatch):
    import sys

    from prefrag.errors import ConfigurationError

    monkeypatch.setitem(sys.modules, "sklearn", None)  # as in a main install
    monkeypatch.setitem(sys.modules, "sklearn.cluster", None)
    vectors = np.eye(3, dtype=np.float32)
    with pytest.raises(ConfigurationError, match=r"prefrag\[clustering\]"):
        reranker(cluster_method="kmeans").clusters(vectors, k=2)
    assert reranker().clusters(vectors, k=2).tolist() == [0, 1, 2]  # DBSCAN needs no sklearn
