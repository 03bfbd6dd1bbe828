from __future__ import annotations

import numpy as np
import pytest
from fake_encoders import BagOfWords
from langgraph.runtime import Runtime

from prefrag.documents import make_document
from prefrag.graphs import tool_nodes
from prefrag.graphs.context import Context
from prefrag.tools import granularity_index
from prefrag.tools.granularity_index import GranularityIndex, chunk_sizes
from prefrag.tools.mog import MoGSelector, Router, UniformRouter, finest_relevance, load_router
from prefrag.tools.mogg import GraphGranularityIndex, bm25_edges, split_nodes
from prefrag.training.mog_router import (
    RouterTrainConfig,
    fit_router,
    soft_labels,
    train_router,
)


def words_doc(doc: str, n: int, **meta):
    return make_document(
        " ".join(f"{doc}w{i}" for i in range(n)), id=doc, source="s", title=doc.upper(), **meta
    )


def fixed_router(weights):
    """A router whose output is `weights` for every query."""
    w = np.asarray(weights, dtype=np.float32)
    logits = np.log(w / (1 - w))
    return Router([(np.zeros((len(w), 64), np.float32), logits.astype(np.float32))])


@pytest.fixture
def index():
    docs = [words_doc("a", 37, url="https://a.example", date="2020-01-01"), words_doc("b", 5)]
    return GranularityIndex.build(docs, base_size=4, encoder=BagOfWords())


# ----- index ---------------------------------------------------------------------------
def test_five_levels_double_in_size_without_overlap(index):
    assert chunk_sizes(200) == [100, 200, 400, 800, 1600]
    assert index.n_levels == 5
    # Document a: 37 words in 2-word finest chunks -> 19, then 10, 5, 3, 2 chunks.
    counts = [int(np.sum(level.doc == 0)) for level in index.levels]
    assert counts == [19, 10, 5, 3, 2]
    for level in range(1, 5):
        for chunk in range(len(index.levels[level].doc)):
            children = index.children(level, chunk)
            assert 1 <= len(children) <= 2
            assert all(index.parent(level - 1, c) == chunk for c in children)
            # A chunk's text is exactly its children's texts, in order, nothing else.
            joined = " ".join(index.chunk_text(level - 1, c) for c in children)
            assert index.chunk_text(level, chunk) == joined


def test_text_is_stored_once_and_chunks_are_spans(index):
    assert len(index.texts) == 2
    text = index.texts[0]
    doc = index.chunk_document(2, 1, score=0.5)
    start, end = doc.metadata["span"]
    assert doc.page_content == text[start:end]
    assert doc.metadata["id"] == "a/g2/1"
    assert doc.metadata["parent_id"] == "a"
    assert doc.metadata["container_id"] == "a/g3/0"
    assert doc.metadata["granularity"] == 2
    assert doc.metadata["title"] == "A" and doc.metadata["date"] == "2020-01-01"
    assert doc.page_content == "aw8 aw9 aw10 aw11 aw12 aw13 aw14 aw15"


def test_save_and_load_round_trip(index, tmp_path):
    index.save(tmp_path)
    loaded = GranularityIndex.load(tmp_path, encoder=BagOfWords())
    assert loaded.n_levels == 5 and loaded.base_size == 4
    assert loaded.chunk_text(3, 1) == index.chunk_text(3, 1)
    np.testing.assert_allclose(loaded.levels[1].vectors, index.levels[1].vectors, atol=1e-3)
    report = index.size_report()
    assert report["chunks_0"] == 19 + 3 and report["total_bytes"] > report["text_bytes"]


# ----- selection rule ------------------------------------------------------------------
@pytest.fixture
def small():
    # One document, 8 one-word finest chunks; three levels of 1, 2 and 4 words.
    doc = make_document("w0 w1 w2 w3 w4 w5 w6 w7", id="d", source="s")
    return GranularityIndex.build([doc], base_size=2, n_levels=3, encoder=BagOfWords())


def hand_hits():
    # Level 0 retrieves finest chunk 5; level 1 chunk 0 (w0 w1); level 2 chunk 0 (w0..w3).
    return [
        (np.array([5]), np.array([0.9])),
        (np.array([0]), np.array([0.6])),
        (np.array([0]), np.array([0.7])),
    ]


def test_finest_relevance_matrix_takes_each_levels_score_or_zero(small):
    finest, matrix = finest_relevance(small, hand_hits())
    rows = dict(zip(finest.tolist(), matrix.tolist(), strict=True))
    assert rows[5] == pytest.approx([0.9, 0.0, 0.0])
    assert rows[0] == pytest.approx([0.0, 0.6, 0.7])
    assert rows[3] == pytest.approx([0.0, 0.0, 0.7])
    assert 6 not in rows


def test_selection_returns_the_chunk_at_the_routers_best_level(small):
    q = np.zeros(64, np.float32)
    # Router favours level 1: finest chunks 0 and 1 score 0.8*0.6 + 0.7*0.7 = 0.97, the
    # best; both map to level-1 chunk 0, so the second pick is the next finest (2 -> chunk 1).
    selector = MoGSelector(small, router=fixed_router([0.1, 0.8, 0.7]))
    result = selector.combine(q, hand_hits(), k=2)
    assert result.level == 1
    assert [d.metadata["id"] for d in result.documents] == ["d/g1/0", "d/g1/1"]
    assert result.documents[0].page_content == "w0 w1"
    # Router favouring the finest level: finest chunk 5 (0.81) wins and comes back alone,
    # even though the coarse chunks had the higher raw scores.
    fine = MoGSelector(small, router=fixed_router([0.9, 0.1, 0.1])).combine(q, hand_hits(), k=1)
    assert fine.level == 0
    assert [d.page_content for d in fine.documents] == ["w5"]
    assert fine.documents[0].metadata["mog"]["relevance"] == pytest.approx([0.9, 0.0, 0.0])


def test_uniform_router_uses_the_base_level(small):
    selector = MoGSelector(small)
    assert isinstance(selector.router, UniformRouter)
    result = selector.select("w4 w5", k=1)
    assert result.level == 1
    assert result.documents[0].page_content == "w4 w5"


def test_router_level_count_must_match_index(small):
    with pytest.raises(ValueError, match="levels"):
        MoGSelector(small, router=fixed_router([0.5] * 5))


# ----- router training -----------------------------------------------------------------
def test_soft_labels_match_the_paper_examples():
    sims = np.array([[0, 0.32, 0.11, 0.88, 0.45], [0.95, 0.07, 0.22, 0.11, 0.19]])
    expected = [[0, 0, 0, 0.8, 0.2], [0.8, 0, 0.2, 0, 0]]
    np.testing.assert_allclose(soft_labels(sims), expected)


def test_router_learns_which_level_each_kind_of_query_needs(tmp_path):
    rng = np.random.default_rng(0)
    centre_a, centre_b = rng.normal(size=64), rng.normal(size=64)
    queries = np.vstack(
        [centre_a + 0.1 * rng.normal(size=(20, 64)), centre_b + 0.1 * rng.normal(size=(20, 64))]
    )
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    sims = np.zeros((40, 5))
    sims[:20, 0], sims[:20, 1] = 0.9, 0.5  # factoid-like: finest level best
    sims[20:, 4], sims[20:, 3] = 0.9, 0.5  # broad: coarsest level best
    result = train_router(
        queries, soft_labels(sims), RouterTrainConfig(epochs=100, batch_size=40, lr=1e-2)
    )
    assert result.losses[-1] < result.losses[0]
    assert result.label_agreement == 1.0
    assert np.argmax(result.router.weights(queries[0])) == 0
    assert np.argmax(result.router.weights(queries[-1])) == 4
    result.router.save(tmp_path / "router.npz")
    loaded = load_router(tmp_path)
    np.testing.assert_allclose(
        loaded.weights(queries[0]), result.router.weights(queries[0]), rtol=1e-5
    )


def test_fit_router_builds_labels_from_the_index(index):
    encoder = BagOfWords()
    questions = encoder.encode(["aw0", "bw1"])
    answers = encoder.encode(["aw0 aw1 aw2 aw3", "bw0 bw1 bw2 bw3 bw4"])
    result = fit_router(index, questions, answers, RouterTrainConfig(epochs=5))
    assert result.router.n_levels == 5
    assert sum(result.label_histogram) == 2


# ----- MoGG ----------------------------------------------------------------------------
def test_nodes_hold_one_or_two_sentences():
    text = "Asthma narrows airways. It causes wheezing. Inhalers help. Triggers vary widely."
    nodes = [text[s:e] for s, e in split_nodes(text)]
    assert nodes == [
        "Asthma narrows airways. It causes wheezing.",
        "Inhalers help. Triggers vary widely.",
    ]
    long_sentence = " ".join(["word"] * 130) + "."
    assert len(split_nodes(long_sentence, max_node_words=60)) == 3


def test_bm25_edges_link_related_nodes_above_threshold():
    nodes = [
        "insulin pumps deliver insulin",
        "insulin pumps need training",
        "gout affects the big toe",
        "gout attacks the toe joint",
        "weather report",
    ]
    edges = bm25_edges(nodes, k_graph=1, t_graph=0.1)
    assert 1 in edges[0].tolist() and 0 in edges[1].tolist()
    assert 3 in edges[2].tolist()
    assert edges[4].tolist() == []
    assert bm25_edges(nodes, k_graph=1, t_graph=2.0)[0].tolist() == []


def test_graph_levels_are_hop_ranges_and_selection_works(tmp_path):
    docs = [
        make_document("Insulin pumps deliver insulin. Pumps need training.", id="p", source="s"),
        make_document("Gout affects the big toe.", id="g", source="s"),
        make_document(
            "Insulin pumps cost money. Insurance may cover insulin pumps.", id="c", source="s"
        ),
    ]
    graph = GraphGranularityIndex.build(docs, encoder=BagOfWords(), k_graph=2, t_graph=0.1)
    assert graph.n_nodes == 3
    assert graph.members(0, 0).tolist() == [0]
    assert 2 in graph.members(1, 0).tolist()  # the two insulin-pump nodes are neighbours
    assert graph.members(1, 1).tolist() == [1]  # gout has no neighbour
    result = MoGSelector(graph, router=fixed_router([0.1, 0.9, 0.1, 0.1, 0.1])).select(
        "insulin pumps", 1
    )
    top = result.documents[0]
    assert top.metadata["granularity"] == 1
    assert set(top.metadata["member_parents"]) == {"p", "c"}
    graph.save(tmp_path)
    loaded = GraphGranularityIndex.load(tmp_path, encoder=BagOfWords())
    assert loaded.members(1, 0).tolist() == graph.members(1, 0).tolist()


# ----- node ----------------------------------------------------------------------------
def _provider(**kwargs):
    from prefrag.graphs.resources import ResourceProvider
    from prefrag.sources.base import SourceRegistry

    return ResourceProvider(sources=SourceRegistry(), **kwargs)


def test_mog_node_passes_through_without_flag_or_index():
    # Every test has its own empty PREFRAG_HOME (conftest), so the default folder has no index.
    docs = [make_document("x", id="x", source="demo")]
    state = {"question": "q", "query": "q", "pending_local": docs}
    assert tool_nodes.mog_select(state, Runtime(context=None), resources=_provider()) == {}
    out = tool_nodes.mog_select(
        state, Runtime(context=Context(use_mog=True)), resources=_provider()
    )
    assert "pending_local" not in out and "no granularity index" in out["notes"][0]


def test_mog_node_reads_the_index_a_run_points_it_to(tmp_path, index):
    # The default folder (under this test's empty PREFRAG_HOME) has no index; the run's own
    # folder has it.
    index.save(tmp_path / "run" / "mog")
    state = {"question": "q", "query": "aw20 aw21", "pending_local": []}
    runtime = Runtime(context=Context(use_mog=True, preferred_source="demo", top_k=2))
    # The index is read from the saved files, with the test's encoder given to the provider.
    run = _provider(mog_indexes={"demo": tmp_path / "run" / "mog"}, embedder=BagOfWords())
    assert run.mog_folder("demo") == tmp_path / "run" / "mog"
    out = tool_nodes.mog_select(state, runtime, resources=run)
    assert len(out["pending_local"]) == 2
    # Another graph in the same process keeps reading the default folder.
    other = _provider()
    assert other.mog_folder("demo") == granularity_index.mog_index_dir("demo")
    assert other.mog_folder("demo") != run.mog_folder("demo")
    assert (
        "no granularity index" in tool_nodes.mog_select(state, runtime, resources=other)["notes"][0]
    )


def test_source_index_is_saved_under_the_given_settings(tmp_path):
    from prefrag.config import Settings

    settings = Settings(home=tmp_path / "home")
    docs = [words_doc("a", 300)]
    built = granularity_index.build_source_index(
        "demo", docs, settings=settings, encoder=BagOfWords(), base_size=50
    )
    folder = tmp_path / "home" / "sources" / "demo" / "mog"
    assert granularity_index.mog_index_dir("demo", settings) == folder
    assert GranularityIndex.load(folder, encoder=BagOfWords()).n_levels == built.n_levels


def test_mog_node_selects_from_the_index_prefrag_index_saved(tmp_path):
    from typer.testing import CliRunner

    from prefrag.cli import app

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "weirs.md").write_text(
        "# Weir keeping\n\nThe Marrow Weir on the Tollmere is lowered each spring by two keepers "
        "who turn the oak paddles at dawn so the barges can pass the shoals.\n"
    )
    (notes / "hives.md").write_text(
        "# Hive keeping\n\nThe Quillan hives are opened only in still weather; the keepers smoke "
        "them with dried fern and take the comb from the upper boxes in late August.\n"
    )
    built = CliRunner().invoke(app, ["index", str(notes), "--source", "notes", "--mog"])
    assert built.exit_code == 0, built.output
    assert "MoG index built" in built.output
    # A fresh provider, as a new process would have: the selector comes from the files
    # `prefrag index --mog` wrote, and this round brought no local chunks of its own.
    resources = _provider()
    assert (resources.mog_folder("notes") / "index.json").is_file()
    state = {"question": "q", "query": "When are the Quillan hives opened?", "pending_local": []}
    out = tool_nodes.mog_select(
        state,
        Runtime(context=Context(use_mog=True, preferred_source="notes", top_k=1)),
        resources=resources,
    )
    top = out["pending_local"][0]
    assert "opened only in still weather" in top.page_content
    assert "Marrow Weir" not in top.page_content
    assert top.metadata["source"] == "notes" and top.metadata["granularity"] == 1
    assert "MoG on 'notes'" in out["notes"][0] and "uniform" in out["notes"][0]
