from __future__ import annotations

import pytest
from _eval_fakes import KeywordSource

from prefrag.dataset_sources import IndexSearchClient, paragraph_key, split_paragraphs
from prefrag.datasets import EvalItem, Paragraph, load_dataset


def _items(n=40):
    items = []
    for q in range(n):
        paragraphs = [
            Paragraph(str(i), f"Q{q} T{i}", f"text {q} {i}", supporting=i in (3, 7))
            for i in range(10)
        ]
        items.append(
            EvalItem(
                id=f"q{q}", question=f"question {q}", answers=("a",), paragraphs=tuple(paragraphs)
            )
        )
    return items


def _local_titles(split):
    return {r["title"] for r in split.local_rows}


def test_first_gold_always_local_second_by_share_web_holds_everything():
    items = _items(200)
    split = split_paragraphs(items, local_share=0.5, seed=1)
    local = _local_titles(split)
    for item in items:
        first, second = item.gold_titles
        assert first in local
        assert (second in local) == split.second_gold_local[item.id]
    share = sum(split.second_gold_local.values()) / len(items)
    assert 0.4 < share < 0.6
    assert len(split.web_rows) == 2000
    # Distractors are split, not all local.
    assert 0.3 < (len(local) - 200 - sum(split.second_gold_local.values())) / 1600 < 0.7


def test_share_extremes():
    items = _items(30)
    assert all(split_paragraphs(items, local_share=1.0).second_gold_local.values())
    assert not any(split_paragraphs(items, local_share=0.0).second_gold_local.values())
    with pytest.raises(ValueError):
        split_paragraphs(items, local_share=1.5)


def test_split_is_deterministic_and_independent_of_other_questions():
    items = _items(50)
    a = split_paragraphs(items, seed=3)
    b = split_paragraphs(list(reversed(items)), seed=3)
    assert _local_titles(a) == _local_titles(b)
    small = split_paragraphs(items[:10], seed=3)
    assert {
        k: v for k, v in a.second_gold_local.items() if k in small.second_gold_local
    } == small.second_gold_local
    assert _local_titles(split_paragraphs(items, seed=4)) != _local_titles(a)


def test_shared_paragraph_made_web_only_stays_out_of_local():
    shared = Paragraph("9", "Shared", "shared text", supporting=True)
    items = []
    for q in range(20):
        first = Paragraph("0", f"First {q}", f"first {q}", supporting=True)
        # The shared paragraph is a second hop here, and a distractor in every other item.
        distractor = Paragraph("9", "Shared", "shared text", supporting=False)
        items.append(
            EvalItem(id=f"q{q}", question="q", paragraphs=(first, shared if q == 0 else distractor))
        )
    split = split_paragraphs(items, local_share=0.0)
    assert "Shared" not in _local_titles(split)
    assert paragraph_key(shared) in {r["id"] for r in split.web_rows}


def test_index_search_client_speaks_ddgs_and_feeds_the_real_web_source():
    from prefrag.config import Settings
    from prefrag.sources.web import WebSource

    corpus = KeywordSource("web-corpus", "local", [("Paris", "Paris is the capital of France")])
    client = IndexSearchClient(corpus)
    (result,) = client.text("capital France", max_results=3, region="wt-wt")
    assert set(result) == {"title", "href", "body"}
    web = WebSource(Settings(web_cache_ttl_hours=0), client=client, sleep=lambda s: None)
    (doc,) = web.search("capital of France", 3)
    assert doc.metadata["kind"] == "web"
    assert doc.metadata["title"] == "Paris"
    assert doc.metadata["url"].startswith("https://")
    assert web.search("zzz unknown", 3) == []
    assert web.last_note


def test_shared_hotpotqa_split_counts(shared_data):
    items = load_dataset(shared_data / "hotpotqa" / "hotpotqa_dev_350.jsonl").items
    split = split_paragraphs(items, local_share=0.5, seed=0)
    summary = split.summary()
    assert summary["questions"] == 350
    assert 140 <= summary["second_gold_local"] <= 210
    assert summary["local_paragraphs"] < summary["web_paragraphs"]
    local = _local_titles(split)
    assert all(item.gold_titles[0] in local for item in items)
