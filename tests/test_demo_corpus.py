"""The shipped demo corpus is complete, well-formed and matches its question set."""

from __future__ import annotations

import json
from collections import defaultdict
from urllib.parse import urlparse

import pytest

from prefrag.demo_corpus import DEMO_SOURCE, demo_corpus_path, demo_questions

REQUIRED = ("id", "title", "text", "source", "publisher", "url", "date", "authority", "topic")
EXAMPLE_HOSTS = ("example.org", "example.com")


@pytest.fixture(scope="module")
def docs() -> list[dict]:
    lines = demo_corpus_path().read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def by_id(docs: list[dict]) -> dict[str, dict]:
    return {doc["id"]: doc for doc in docs}


@pytest.fixture(scope="module")
def questions() -> list[dict]:
    return demo_questions()


def _is_example_url(url: str) -> bool:
    parsed = urlparse(url)
    host = parsed.hostname or ""
    return parsed.scheme == "https" and any(
        host == allowed or host.endswith("." + allowed) for allowed in EXAMPLE_HOSTS
    )


def _searchable(doc: dict) -> str:
    return f"{doc['title']} {doc['text']}".lower()


def test_corpus_size_and_unique_ids(docs, by_id):
    assert 40 <= len(docs) <= 80
    assert len(by_id) == len(docs)
    assert all(doc["id"].startswith("demo-") for doc in docs)


def test_every_document_has_complete_metadata(docs):
    for doc in docs:
        missing = [key for key in REQUIRED if not doc.get(key) and doc.get(key) != 0]
        assert not missing, (doc.get("id"), missing)
        assert doc["source"] == DEMO_SOURCE
        assert _is_example_url(doc["url"]), doc["url"]
        assert 0.0 <= doc["authority"] <= 1.0
        year, month, day = doc["date"].split("-")
        assert len(year) == 4 and len(month) == 2 and len(day) == 2
        assert 2012 <= int(year) <= 2025
        assert 60 <= len(doc["text"].split()) <= 180, doc["id"]


def test_urls_are_unique(docs):
    urls = [doc["url"] for doc in docs]
    assert len(set(urls)) == len(urls)


def test_authority_distinguishes_publishers(docs):
    authority = {doc["publisher"]: doc["authority"] for doc in docs}
    assert authority["PrefRAG Formulary Notes"] > authority["Hospital Pharmacy Bulletin"]
    assert authority["Hospital Pharmacy Bulletin"] > authority["Patient Forum Digest"]


def test_at_least_four_topics_with_older_and_newer_documents(docs):
    dates = defaultdict(set)
    for doc in docs:
        dates[doc["topic"]].add(doc["date"])
    assert sum(1 for found in dates.values() if len(found) >= 2) >= 4


def test_supporting_ids_exist(questions, by_id):
    assert 15 <= len(questions) <= 25
    for question in questions:
        assert question["kind"] in {"local", "web", "conflict", "multihop"}
        for doc_id in question["supporting_ids"]:
            assert doc_id in by_id, (question["question"], doc_id)


def test_each_question_kind_is_present(questions):
    kinds = {question["kind"] for question in questions}
    assert kinds == {"local", "web", "conflict", "multihop"}


@pytest.mark.parametrize("kind", ["local", "multihop"])
def test_answer_occurs_in_a_supporting_document(questions, by_id, kind):
    for question in (q for q in questions if q["kind"] == kind):
        assert question["supporting_ids"], question["question"]
        answer = question["answer"].lower()
        assert any(answer in _searchable(by_id[i]) for i in question["supporting_ids"]), question


def test_multihop_questions_span_two_documents(questions):
    for question in (q for q in questions if q["kind"] == "multihop"):
        assert len(set(question["supporting_ids"])) >= 2, question["question"]


def test_conflict_questions_pair_an_older_and_a_newer_document_on_one_topic(questions, by_id):
    conflicts = [q for q in questions if q["kind"] == "conflict"]
    topics = set()
    for question in conflicts:
        supporting = [by_id[i] for i in question["supporting_ids"]]
        assert len({doc["topic"] for doc in supporting}) == 1, question["question"]
        assert len({doc["date"] for doc in supporting}) >= 2, question["question"]
        topics.add(supporting[0]["topic"])
        newest = max(supporting, key=lambda doc: doc["date"])
        oldest = min(supporting, key=lambda doc: doc["date"])
        # The expected answer follows the newer guidance, which the older one does not give.
        assert question["answer"].lower() in _searchable(newest), question["question"]
        assert question["answer"].lower() not in _searchable(oldest), question["question"]
    assert len(topics) >= 4


def test_web_answers_are_absent_from_the_corpus(questions, docs):
    corpus = " ".join(_searchable(doc) for doc in docs)
    web = [q for q in questions if q["kind"] == "web"]
    assert web
    for question in web:
        assert not question["supporting_ids"], question["question"]
        assert question["answer"].lower() not in corpus, question["question"]
