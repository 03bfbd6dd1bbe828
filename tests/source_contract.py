"""The contract every `prefrag.sources.base.Source` implementation must satisfy.

Use from a test module in this folder::

    from source_contract import check_source_contract

    def test_my_source_contract(my_source):
        check_source_contract(my_source, hit_query="aspirin", miss_query="zzqx")
"""

from __future__ import annotations

import math

from langchain_core.documents import Document

from prefrag.sources.base import Source

REQUIRED_METADATA = ("id", "source", "kind", "title", "url", "date", "authority", "score")
KINDS = ("local", "web", "graph")
ODD_QUERIES = (
    "",
    "   ",
    "\t\n",
    "?!*&^%$#@()[]{}<>|\\/",
    'title:"x" AND (y OR NOT z) -w +v ~u',
    "'; DROP TABLE documents; --",
    "中文 查询 ✓ émigré 🙂",
    "a",
    "word " * 1000,
)


def check_source_contract(
    source: object, *, hit_query: str, miss_query: str | None = None, k: int = 5
) -> list[Document]:
    """Assert the `Source` protocol on `source`; return the documents for `hit_query`.

    `hit_query` must find at least one document. `miss_query`, when given, is a query the
    source has nothing relevant for: it may return documents (dense retrieval always
    does) but they must be well-formed, or `[]` with a string `last_note`.
    """
    assert isinstance(source, Source), f"{source!r} does not implement Source"
    assert isinstance(source.name, str) and source.name.strip(), "name must be non-empty"
    assert isinstance(source.description, str) and source.description.strip()
    assert source.kind in KINDS, f"kind {source.kind!r} not in {KINDS}"
    query_format = getattr(source, "query_format", None)
    assert isinstance(query_format, str) and query_format.strip(), "query_format must be text"
    _check_unit_interval(source.authority, "source authority")

    hits = _search(source, hit_query, k)
    assert hits, f"{source.name}: hit query {hit_query!r} found nothing ({source.last_note})"
    assert source.last_note is None or isinstance(source.last_note, str)

    again = _search(source, hit_query, k)
    assert [_id(d) for d in again] == [_id(d) for d in hits], "same query, different ids"

    assert len(_search(source, hit_query, 1)) <= 1
    assert _search(source, hit_query, 0) == [], "k=0 must return no documents"

    if miss_query is not None:
        misses = _search(source, miss_query, k)
        if not misses:
            assert source.last_note is None or isinstance(source.last_note, str)

    for query in ODD_QUERIES:
        _search(source, query, k)
    return hits


def _search(source: Source, query: str, k: int) -> list[Document]:
    """One search, checked: list of well-formed Documents, at most k, unique, best first."""
    try:
        documents = source.search(query, k)
    except Exception as error:  # pragma: no cover - the assertion message is the point
        raise AssertionError(
            f"{source.name}.search({query[:40]!r}, {k}) raised {error!r}"
        ) from error
    assert isinstance(documents, list), f"search returned {type(documents).__name__}"
    assert len(documents) <= max(k, 0), f"{len(documents)} documents for k={k}"
    for document in documents:
        _check_document(source, document)
    ids = [_id(d) for d in documents]
    assert len(set(ids)) == len(ids), f"duplicate ids in {ids}"
    scores = [float(d.metadata["score"]) for d in documents]
    assert scores == sorted(scores, reverse=True), f"not best first: {scores}"
    note = source.last_note
    assert note is None or (isinstance(note, str) and note.strip())
    return documents


def _check_document(source: Source, document: Document) -> None:
    assert isinstance(document, Document), f"{document!r} is not a Document"
    assert isinstance(document.page_content, str) and document.page_content.strip()
    meta = document.metadata
    missing = [key for key in REQUIRED_METADATA if key not in meta]
    assert not missing, f"metadata lacks {missing}"
    assert isinstance(meta["id"], str) and meta["id"], "id must be a non-empty string"
    names = getattr(source, "member_names", {source.name})  # a combined source's members
    assert meta["source"] in names, f"source {meta['source']!r} not in {names!r}"
    assert meta["kind"] == source.kind, f"kind {meta['kind']!r} != {source.kind!r}"
    for key in ("title", "url", "date"):
        assert isinstance(meta[key], str), f"{key} must be a string, got {meta[key]!r}"
    _check_unit_interval(meta["authority"], "document authority")
    assert isinstance(meta["score"], int | float) and math.isfinite(meta["score"])


def _check_unit_interval(value: object, what: str) -> None:
    assert isinstance(value, int | float) and not isinstance(value, bool), f"{what}: {value!r}"
    assert 0.0 <= float(value) <= 1.0, f"{what} {value!r} outside [0, 1]"


def _id(document: Document) -> str:
    return str(document.metadata["id"])
