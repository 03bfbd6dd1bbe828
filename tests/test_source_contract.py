"""One contract, run against every `Source` implementation PrefRAG ships."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from source_contract import check_source_contract

from prefrag.config import Settings
from prefrag.index.graph_store import index_graph
from prefrag.index.ingest import index_paths
from prefrag.sources.balanced import BalancedSource, RelevanceScorer
from prefrag.sources.base import Source
from prefrag.sources.combined import CombinedSource
from prefrag.sources.graph import GraphSource
from prefrag.sources.local import LocalSource
from prefrag.sources.web import WebSource

ROWS = [
    {
        "id": "a",
        "title": "Grapefruit and simvastatin",
        "text": "Grapefruit juice raises simvastatin exposure by inhibiting CYP3A4.",
        "date": "2021-05-01",
        "url": "https://example.org/a",
    },
    {
        "id": "b",
        "title": "Warfarin and NSAIDs",
        "text": "Ibuprofen increases the bleeding risk of warfarin.",
        "date": "2019-02-01",
    },
    {
        "id": "c",
        "title": "Lithium and diuretics",
        "text": "Thiazide diuretics raise lithium levels.",
    },
]


class _FakeDDGS:
    def text(self, query: str, max_results: int = 10, **_: object) -> list[dict[str, str]]:
        if not query.strip() or "zzqx" in query:
            return []
        return [
            {
                "title": f"{query} {i}",
                "href": f"https://www.nih.gov/r/{i}",
                "body": f"about {query}",
            }
            for i in range(max_results)
        ]


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    home = tmp_path_factory.mktemp("contract")
    settings = Settings(home=home / "home", web_cache_ttl_hours=0)
    for name, rows in (("one", ROWS[:2]), ("two", ROWS[2:])):
        path = home / f"{name}.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
        index_paths([path], name, settings=settings)
    triples = home / "graph.jsonl"
    triples.write_text(
        json.dumps({"subject": "simvastatin", "relation": "synonym", "object": "Zocor"})
        + "\n"
        + json.dumps(
            {"subject": "grapefruit", "relation": "raises_exposure_of", "object": "simvastatin"}
        )
        + "\n"
    )
    index_graph([triples], "graph", settings=settings)
    return settings


SOURCES: dict[str, Callable[[Settings], Source]] = {
    "local-hybrid": lambda s: LocalSource("one", settings=s),
    "local-dense": lambda s: LocalSource("one", settings=s, mode="dense"),
    "local-lexical": lambda s: LocalSource("one", settings=s, mode="lexical"),
    "combined": lambda s: CombinedSource(
        [LocalSource("one", settings=s), LocalSource("two", settings=s)]
    ),
    "web": lambda s: WebSource(s, client=_FakeDDGS()),
    "graph": lambda s: GraphSource("graph", settings=s),
    "balanced": lambda s: BalancedSource(
        [LocalSource("one", settings=s), LocalSource("two", settings=s)], RelevanceScorer()
    ),
}


@pytest.mark.parametrize("name", SOURCES)
def test_every_source_honours_the_contract(name: str, settings: Settings) -> None:
    source = SOURCES[name](settings)
    hits = check_source_contract(source, hit_query="grapefruit simvastatin", miss_query="zzqx")
    assert hits


def test_combined_source_interleaves_members_by_rank(settings: Settings) -> None:
    combined = CombinedSource(
        [LocalSource("one", settings=settings), LocalSource("two", settings=settings)]
    )
    ids = [d.metadata["id"] for d in combined.search("lithium warfarin", 3)]
    assert len(ids) == 3 and len(set(ids)) == 3
    assert {d.metadata["source"] for d in combined.search("lithium warfarin", 3)} == {"one", "two"}


def test_local_source_of_missing_store_is_a_typed_error(tmp_path: Path) -> None:
    from prefrag.errors import StoreMissingError

    with pytest.raises(StoreMissingError):
        LocalSource("nothing-here", settings=Settings(home=tmp_path))


def test_combined_source_fuses_with_the_one_reciprocal_rank_fusion() -> None:
    from graph_helpers import ListSource, doc

    from prefrag.index.fusion import RRF_K

    one = ListSource("one", default=[doc("a", "a", "one"), doc("shared", "s", "one")])
    two = ListSource("two", default=[doc("shared", "s", "two"), doc("b", "b", "two")])
    fused = CombinedSource([one, two]).search("anything", 3)
    # A document both members return adds its two reciprocal ranks and comes first; ties
    # between members' equal ranks keep member order.
    assert [d.metadata["id"] for d in fused] == ["shared", "a", "b"]
    assert fused[0].metadata["score"] == pytest.approx(1 / (RRF_K + 2) + 1 / (RRF_K + 1))
