"""bm25s (our lexical index) ranks like the reference rank-bm25 implementation.

The index covers each chunk's title and text, so the reference is built over title + text too.
"""

from __future__ import annotations

import numpy as np
import pytest

from prefrag.index.lexical import (
    STOPWORDS_EN,
    LexicalIndex,
    record_texts,
    searchable_text,
    terms,
    tokenize,
)

rank_bm25 = pytest.importorskip("rank_bm25")

CORPUS = [
    "Aspirin taken with warfarin raises the risk of serious bleeding.",
    "Grapefruit juice raises blood levels of simvastatin and lovastatin.",
    "Metformin is the usual first medicine for type 2 diabetes.",
    "Lithium levels rise with dehydration and with some diuretics.",
    "Clarithromycin blocks the enzyme that clears many statins from the blood.",
    "Warfarin doses are adjusted by measuring the INR blood test.",
    "Insulin lowers blood sugar; metformin lowers liver glucose output.",
    "NSAIDs such as ibuprofen can raise lithium levels and harm kidneys.",
    "Statins lower LDL cholesterol and the risk of heart attacks.",
    "Bleeding on warfarin is reversed with vitamin K.",
]
QUERIES = [
    "warfarin bleeding",
    "statin levels grapefruit",
    "lithium kidneys ibuprofen",
    "blood sugar metformin",
    "cholesterol heart",
    "vitamin K reversal",
]


def _reference_ranking(query: str) -> list[int]:
    reference = rank_bm25.BM25Okapi(tokenize(CORPUS), k1=1.5, b=0.75, epsilon=0.25)
    scores = reference.get_scores(tokenize([query])[0])
    return [int(i) for i in np.argsort(-scores, kind="stable") if scores[i] > 0]


@pytest.mark.parametrize("query", QUERIES)
def test_robertson_bm25_ranks_exactly_like_rank_bm25(query: str) -> None:
    ours = LexicalIndex.build(CORPUS, method="robertson")
    assert [row for row, _ in ours.search(query, len(CORPUS))] == _reference_ranking(query)


@pytest.mark.parametrize("query", QUERIES)
def test_default_lucene_bm25_agrees_on_the_top_results(query: str) -> None:
    # Lucene's idf differs from Okapi's for common terms, so only the head must agree.
    ours = [row for row, _ in LexicalIndex.build(CORPUS).search(query, 5)]
    reference = _reference_ranking(query)
    assert ours[0] == reference[0]
    assert set(reference[:3]) <= set(ours)


def test_scores_are_positive_and_best_first() -> None:
    hits = LexicalIndex.build(CORPUS).search("warfarin bleeding vitamin", 10)
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)
    assert {row for row, _ in hits} == {0, 5, 9}


@pytest.mark.parametrize(
    "text", ["Warfarin's bleeding RISKS, in 2021!", "the a of", "émigré naïve café", "x y zz"]
)
def test_queries_are_tokenised_exactly_like_the_corpus(text: str) -> None:
    assert LexicalIndex.build(CORPUS).query_terms(text) == tokenize([text])[0]
    # An add's new chunks (a delta part) are tokenised the same way, without bm25s.
    assert terms([text]) == tokenize([text])


def test_the_stop_words_are_bm25s_own() -> None:
    from bm25s.stopwords import STOPWORDS_EN as BM25S_STOPWORDS

    assert STOPWORDS_EN == BM25S_STOPWORDS


TITLED = [
    {"title": "Warfarin", "text": "Doses are adjusted by measuring the INR blood test."},
    {"title": "Lithium", "text": "Levels rise with dehydration and with some diuretics."},
    {"title": "Grapefruit and statins", "text": "The juice raises blood levels of simvastatin."},
    {"title": "", "text": "Bleeding on warfarin is reversed with vitamin K."},
    {"title": "Metformin", "text": "The usual first medicine for type 2 diabetes; lowers glucose."},
    {"title": "Vitamin K", "text": "Found in leafy greens; it lowers the effect of warfarin."},
]
TITLED_QUERIES = ["warfarin", "lithium diuretics", "statins grapefruit", "vitamin K warfarin"]


@pytest.mark.parametrize("query", TITLED_QUERIES)
def test_title_and_text_rank_exactly_like_rank_bm25_over_title_plus_text(query: str) -> None:
    texts = [f"{r['title']} {r['text']}" for r in TITLED]
    reference = rank_bm25.BM25Okapi(tokenize(texts), k1=1.5, b=0.75, epsilon=0.25)
    scores = reference.get_scores(tokenize([query])[0])
    expected = [int(i) for i in np.argsort(-scores, kind="stable") if scores[i] > 0]
    ours = LexicalIndex.build(record_texts(TITLED), method="robertson")
    assert [row for row, _ in ours.search(query, len(TITLED))] == expected


def test_a_query_naming_only_the_title_finds_the_chunk() -> None:
    # "Lithium" appears in no text of the corpus, only in a title.
    assert LexicalIndex.build([r["text"] for r in TITLED]).search("lithium", 3) == []
    hits = LexicalIndex.build(record_texts(TITLED)).search("lithium", 3)
    assert [row for row, _ in hits] == [1]


def test_searchable_text_puts_the_title_first_and_skips_an_empty_one() -> None:
    assert searchable_text("Warfarin", "Doses vary.") == "Warfarin\nDoses vary."
    assert searchable_text("  ", "Doses vary.") == searchable_text(None, "Doses vary.")
