"""The SQLite knowledge-graph source: indexing triples, term lookup, ranking, the CLI."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from source_contract import check_source_contract
from typer.testing import CliRunner

from prefrag.cli import app
from prefrag.errors import IngestError, StoreMissingError
from prefrag.index.graph_store import graph_path, index_graph
from prefrag.sources.graph import GraphSource, split_graph_query

runner = CliRunner()

TRIPLES = [
    {
        "subject": "Hurler syndrome",
        "relation": "definition",
        "object": "A lysosomal storage disease from a missing enzyme.",
        "source": "reference",
        "priority": 0,
        "url": "https://example.org/hurler",
        "ref": "doc-1",
    },
    {
        "subject": "Hurler syndrome",
        "relation": "definition",
        "object": "A worse, later definition.",
        "source": "overview",
        "priority": 5,
    },
    {"subject": "Hurler syndrome", "relation": "synonym", "object": "MPS I-H"},
    {"subject": "Hurler syndrome", "relation": "has_semantic_type", "object": "Disease"},
    {"subject": "Hurler syndrome", "relation": "is_inherited_in", "object": "recessive pattern"},
    {"subject": "Hurler syndrome", "relation": "is_covered_by", "object": "GARD"},
    {"subject": "Hurler syndrome", "relation": "is_covered_by", "object": "GHR"},
    {"subject": "Leukemia, Hairy Cell", "relation": "definition", "object": "A rare blood cancer."},
    {"subject": "Leukemia, Hairy Cell", "relation": "is_treated_with", "object": "cladribine"},
    {"subject": "Leukemia", "relation": "definition", "object": "Cancer of blood cells."},
]


def _write(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture
def graph(tmp_path: Path) -> GraphSource:
    index_graph([_write(tmp_path / "g.jsonl", TRIPLES)], "kg")
    return GraphSource("kg")


def _texts(source: GraphSource, query: str, k: int = 10) -> list[str]:
    return [d.page_content for d in source.search(query, k)]


def test_graph_source_honours_the_contract(graph: GraphSource) -> None:
    hits = check_source_contract(graph, hit_query="Hurler syndrome", miss_query="zzqx")
    assert all(d.metadata["kind"] == "graph" for d in hits)


def test_exact_name_gives_the_definition_first_chosen_by_priority(graph: GraphSource) -> None:
    found = graph.search("Hurler syndrome", 10)
    assert found[0].page_content == (
        "Hurler syndrome: A lysosomal storage disease from a missing enzyme."
    )
    assert found[0].metadata["url"] == "https://example.org/hurler"
    assert found[0].metadata["ref"] == "doc-1"
    assert not any("worse" in d.page_content for d in found)


def test_a_synonym_finds_the_same_concept(graph: GraphSource) -> None:
    by_synonym = _texts(graph, "mps i-h")
    assert by_synonym[0].startswith("Hurler syndrome:")
    assert "Hurler syndrome is also called MPS I-H." in by_synonym


def test_misspelt_or_inflected_names_are_found_by_full_text_match(graph: GraphSource) -> None:
    assert _texts(graph, "hurlers")[0].startswith("Hurler syndrome:")
    assert _texts(graph, "What causes hairy cell leukemia?")[0].startswith("Leukemia, Hairy Cell:")


def test_comma_inside_a_term_uses_the_longest_known_name(graph: GraphSource) -> None:
    texts = _texts(graph, "Leukemia, Hairy Cell , what treats it")
    assert texts[0] == "Leukemia, Hairy Cell: A rare blood cancer."
    assert texts[1] == "Leukemia, Hairy Cell is treated with cladribine."
    # An unknown comma-term falls back to the first comma, as the format says.
    assert split_graph_query("Foo, bar , baz", lambda term: False).term == "Foo"


def test_relations_are_ranked_by_the_question(graph: GraphSource) -> None:
    inheritance = _texts(graph, "Hurler syndrome , how is it inherited")
    # The definition, then only the relation the question asks about.
    assert inheritance[1:] == ["Hurler syndrome is inherited in recessive pattern."]
    coverage = _texts(graph, "Hurler syndrome , which sites cover it")
    assert coverage[1:] == [
        "Hurler syndrome is covered by GARD.",
        "Hurler syndrome is covered by GHR.",
    ]
    # A bare term is a lookup: every relation; a plain question keeps what it asks about.
    assert len(_texts(graph, "Hurler syndrome")) == 1 + 5
    assert _texts(graph, "How is Hurler syndrome inherited?")[1:] == [
        "Hurler syndrome is inherited in recessive pattern."
    ]


def test_incoming_relations_are_one_hop_too(graph: GraphSource) -> None:
    assert "Hurler syndrome is covered by GHR." in _texts(graph, "GHR")


def test_unknown_terms_return_nothing_with_a_note(graph: GraphSource) -> None:
    assert graph.search("zzqx", 5) == []
    assert "zzqx" in (graph.last_note or "")


def test_reindexing_adds_nothing_and_keeps_the_graph(tmp_path: Path) -> None:
    path = _write(tmp_path / "g.jsonl", TRIPLES)
    first = index_graph([path], "kg")
    again = index_graph([path], "kg")
    assert first.added == len(TRIPLES) and again.added == 0
    assert again.skipped == len(TRIPLES)
    assert (again.concepts, again.relations) == (first.concepts, first.relations)
    more = _write(
        tmp_path / "more.jsonl", [{"subject": "MPS I-H", "relation": "affects", "object": "bones"}]
    )
    grown = index_graph([more], "kg")
    assert grown.added == 1
    assert "Hurler syndrome affects bones." in _texts(GraphSource("kg"), "Hurler syndrome")


def test_csv_triples_are_read_too(tmp_path: Path) -> None:
    path = tmp_path / "g.csv"
    path.write_text("subject,relation,object\nAspirin,inhibits,COX-1\nAspirin,synonym,ASA\n")
    index_graph([path], "csvkg")
    assert _texts(GraphSource("csvkg"), "asa") == [
        "Aspirin is also called ASA.",
        "Aspirin inhibits COX-1.",
    ]


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        ('{"subject": "a", "relation": "r"}\n', "g.jsonl", "line 1: 'object'"),
        ('{"subject": "a", "relation": "r", "object": "b"}\n{oops\n', "g.jsonl", "line 2"),
        (
            '{"subject": "a", "relation": "r", "object": "b", "priority": "high"}\n',
            "g.jsonl",
            "priority",
        ),
        ("subject,object\na,b\n", "g.csv", "line 1"),
        ("subject,relation,object\na,r,\n", "g.csv", "line 2: 'object'"),
    ],
)
def test_malformed_rows_name_file_and_line_and_change_nothing(
    tmp_path: Path, content: str, name: str, message: str
) -> None:
    index_graph([_write(tmp_path / "good.jsonl", TRIPLES)], "kg")
    before = graph_path("kg").read_bytes()
    bad = tmp_path / name
    bad.write_text(content)
    with pytest.raises(IngestError) as error:
        index_graph([bad], "kg")
    assert str(bad) in str(error.value) and message in str(error.value)
    assert graph_path("kg").read_bytes() == before


@pytest.mark.slow
def test_a_missing_or_damaged_graph_is_a_clear_error() -> None:
    from prefrag.errors import DamagedStoreError

    with pytest.raises(StoreMissingError, match="prefrag index --kind graph"):
        GraphSource("nothing")
    graph_path("broken").parent.mkdir(parents=True, exist_ok=True)
    graph_path("broken").write_bytes(b"not a database" * 100)
    with pytest.raises(DamagedStoreError, match="index the triples again"):
        GraphSource("broken")
    from prefrag.sources.defaults import default_sources

    assert "broken" not in default_sources(web=False)  # the others still work
    with pytest.raises(DamagedStoreError):
        default_sources(web=False, require="broken")


def test_cli_indexes_a_graph_idempotently(tmp_path: Path) -> None:
    path = _write(tmp_path / "g.jsonl", TRIPLES)
    first = runner.invoke(app, ["index", "--kind", "graph", str(path), "--source", "kg"])
    assert first.exit_code == 0, first.output
    assert f"{len(TRIPLES)} triples added" in first.output
    again = runner.invoke(app, ["index", "--kind", "graph", str(path), "--source", "kg"])
    assert "0 triples added" in again.output
    assert GraphSource("kg").authority == 0.8
    runner.invoke(app, ["index", "--kind", "graph", str(path), "-s", "kg", "--authority", "0.6"])
    assert GraphSource("kg").authority == 0.6  # kept for later runs
    bad = runner.invoke(app, ["index", "--kind", "tree", str(path), "--source", "kg"])
    assert bad.exit_code == 2 and "--kind" in bad.output
    with sqlite3.connect(graph_path("kg")) as connection:
        assert connection.execute("SELECT COUNT(*) FROM triples").fetchone()[0] == len(TRIPLES)


def test_medquad_graph_triples_link_names_ids_types_and_definitions(tmp_path: Path) -> None:
    from prefrag.sources.medquad_demo import graph_triples

    rows = [
        {
            "id": "s1",
            "title": "Kaposi Sarcoma",
            "content": "Kaposi sarcoma is a cancer. More.",
            "qtype": "information",
            "source": "CancerGov",
            "url": "u1",
            "umls_cuis": ["C0036220"],
            "semantic_types": ["T191"],
        },
        {
            "id": "s2",
            "title": "Kaposi sarcoma",
            "content": "A GARD answer.",
            "qtype": "information",
            "source": "GARD",
            "url": "u2",
            "umls_cuis": ["C0036220"],
            "semantic_types": ["T191"],
        },
        {
            "id": "s3",
            "title": "Kaposi's Sarcoma",
            "content": "Symptoms.",
            "qtype": "symptoms",
            "source": "MPlusHealthTopics",
            "url": "u3",
            "umls_cuis": ["C0036220"],
            "semantic_types": [],
        },
    ]
    index_graph([_write(tmp_path / "mq.jsonl", graph_triples(rows))], "mq")
    texts = _texts(GraphSource("mq"), "Kaposi's Sarcoma")
    # Titles sharing one UMLS id are one concept; CancerGov's definition outranks GARD's.
    assert texts[0] == "Kaposi Sarcoma: Kaposi sarcoma is a cancer. More."
    assert "Kaposi Sarcoma has semantic type Neoplastic Process (T191)." in texts
    assert "Kaposi Sarcoma has umls concept id C0036220." in texts
    assert "Kaposi Sarcoma is also called Kaposi's Sarcoma." in texts
    assert {"Kaposi Sarcoma is covered by CancerGov.", "Kaposi Sarcoma is covered by GARD."} <= set(
        texts
    )


@pytest.mark.slow
def test_an_indexed_graph_joins_the_default_sources_and_the_listing(tmp_path: Path) -> None:
    from prefrag.sources.defaults import default_sources

    report = index_graph([_write(tmp_path / "g.jsonl", TRIPLES)], "kg")
    registry = default_sources(web=False)  # indexes the demo corpus first
    # The graph is the user's own source: the demo is searched only when a run names it.
    assert registry.names() == ["kg"] and "demo" in registry
    assert registry.get("kg").kind == "graph"
    shown = runner.invoke(app, ["sources"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0 and f"{report.concepts} concepts" in shown.output
    asked = runner.invoke(app, ["ask", "Hurler syndrome", "--source", "kg", "--no-web", "--json"])
    assert asked.exit_code == 0, asked.output
    assert {c["source"] for c in json.loads(asked.output)["citations"]} <= {"kg"}
