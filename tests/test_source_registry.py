"""Source registries from YAML: parsing, opening, `prefrag sources` and `PREFRAG_SOURCES_FILE`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prefrag.cli import app
from prefrag.config import Settings, get_settings
from prefrag.errors import ConfigurationError, StoreMissingError
from prefrag.index.graph_store import index_graph
from prefrag.index.ingest import index_paths
from prefrag.sources.registry_file import load_registry_file, registry_from_file

runner = CliRunner()

REGISTRY = """
sources:
  - name: guidelines
    kind: text
    store: guide-index
    authority: 0.9
    description: >-
      Clinical guidance on drug
      interactions.
    query_format: a short clinical question
  - name: concepts
    kind: graph
    store: kg
    description: Drug concepts and what they interact with.
  - name: web
    kind: web
    description: The open web.
"""


@pytest.fixture
def stores(tmp_path: Path) -> Path:
    rows = [
        {
            "id": "g1",
            "title": "Warfarin",
            "text": "Ibuprofen increases the bleeding risk of warfarin.",
        },
        {"id": "g2", "title": "Statins", "text": "Grapefruit raises simvastatin levels."},
    ]
    corpus = tmp_path / "guide.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
    index_paths([corpus], "guide-index")
    triples = tmp_path / "kg.jsonl"
    triples.write_text(
        json.dumps({"subject": "Warfarin", "relation": "interacts_with", "object": "Ibuprofen"})
        + "\n"
    )
    index_graph([triples], "kg")
    registry = tmp_path / "sources.yaml"
    registry.write_text(REGISTRY)
    return registry


def _registry(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    return path


def test_a_registry_file_is_parsed_in_order_with_defaults(tmp_path: Path) -> None:
    specs = load_registry_file(_registry(tmp_path, REGISTRY))
    assert [(s.name, s.kind) for s in specs] == [
        ("guidelines", "local"),
        ("concepts", "graph"),
        ("web", "web"),
    ]
    guide = specs[0]
    assert guide.description == "Clinical guidance on drug interactions."
    assert (guide.query_format, guide.authority, guide.store_name) == (
        "a short clinical question",
        0.9,
        "guide-index",
    )
    assert specs[2].store_name == "web" and specs[2].authority is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sources:\n  - {name: a, kind: table, description: d}\n", "unknown kind 'table'"),
        ("sources:\n  - {name: a, kind: text}\n", "lacks description"),
        ("sources:\n  - {kind: text, description: d}\n", "lacks name"),
        ("sources:\n  - {name: a, kind: text, description: d, colour: red}\n", "unknown field"),
        ("sources:\n  - {name: a, kind: text, description: d, authority: 2}\n", "authority"),
        (
            "sources:\n  - {name: a, kind: text, description: d}\n"
            "  - {name: a, kind: web, description: e}\n",
            "used twice",
        ),
        ("sources: []\n", "non-empty 'sources'"),
        ("sources: [\n", "not valid YAML"),
        ("sources:\n  - {name: 'a b', kind: text, description: d}\n", "Source name"),
    ],
)
def test_a_malformed_registry_is_one_error_naming_the_file(
    tmp_path: Path, text: str, message: str
) -> None:
    path = _registry(tmp_path, text)
    with pytest.raises(ConfigurationError) as error:
        load_registry_file(path)
    assert str(path) in str(error.value) and message in str(error.value)


def test_a_missing_registry_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="Cannot read the source registry"):
        load_registry_file(tmp_path / "nope.yaml")


def test_the_registry_opens_its_sources_under_their_names(stores: Path) -> None:
    registry = registry_from_file(stores)
    assert registry.names() == ["local", "guidelines", "concepts", "web"]
    guide = registry.get("guidelines")
    assert guide.description == "Clinical guidance on drug interactions."
    assert guide.query_format == "a short clinical question" and guide.authority == 0.9
    found = guide.search("warfarin bleeding", 1)
    assert found[0].metadata["source"] == "guidelines"
    graph = registry.get("concepts")
    assert graph.kind == "graph" and "," in graph.query_format
    assert graph.search("Warfarin", 3)[0].page_content == "Warfarin interacts with Ibuprofen."
    combined = registry.get("local")
    assert {m.name for m in combined.members} == {"guidelines", "concepts"}  # type: ignore[attr-defined]
    assert "web" not in registry_from_file(stores, web=False)


def test_a_registry_naming_an_unbuilt_store_says_how_to_build_it(tmp_path: Path) -> None:
    path = _registry(tmp_path, "sources:\n  - {name: g, kind: graph, description: d}\n")
    with pytest.raises(StoreMissingError, match="prefrag index --kind graph"):
        registry_from_file(path, require="g")
    with pytest.raises(StoreMissingError, match="prefrag index --kind graph"):
        registry_from_file(path).get("g")  # asked for by name later: the same sentence


def test_prefrag_sources_shows_the_registry(stores: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["sources", "--sources", str(stores)], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    for text in (
        "guidelines",
        "Clinical guidance on drug interactions.",
        "a short clinical question",
        "2 documents",
        "concepts",
        "graph",
        "2 concepts",
        "0.90",
    ):
        assert text in result.output
    missing = _registry(tmp_path, "sources:\n  - {name: x, kind: text, description: Some notes.}\n")
    shown = runner.invoke(app, ["sources", "--sources", str(missing)], env={"COLUMNS": "250"})
    assert shown.exit_code == 0 and "not indexed" in shown.output
    bad = _registry(tmp_path, "sources:\n  - {name: x, kind: tree, description: d}\n")
    failed = runner.invoke(app, ["sources", "--sources", str(bad)])
    assert failed.exit_code == 2 and "unknown kind" in failed.output


def test_the_setting_makes_runs_use_the_registry(
    stores: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prefrag.sources.defaults import default_sources

    assert "guidelines" not in default_sources(web=False)
    monkeypatch.setenv("PREFRAG_SOURCES_FILE", str(stores))
    get_settings.cache_clear()
    assert get_settings().sources_file == stores
    assert default_sources(web=False).names() == ["local", "guidelines", "concepts"]
    shown = runner.invoke(app, ["sources"], env={"COLUMNS": "250"})
    assert "Clinical guidance on drug interactions." in shown.output


def test_ask_answers_from_a_registry(stores: Path) -> None:
    result = runner.invoke(
        app,
        [
            "ask",
            "What raises the bleeding risk of warfarin?",
            "--sources",
            str(stores),
            "--no-web",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    cited = {c["source"] for c in json.loads(result.output)["citations"]}
    assert cited and cited <= {"guidelines", "concepts"}


def test_bundled_medquad_registry_parses_and_describes_every_site() -> None:
    from prefrag.sources.medquad_demo import SITE_STORES, registry_path

    specs = load_registry_file(registry_path())
    stores = {s.store_name for s in specs}
    assert set(SITE_STORES.values()) <= stores and "medquad-graph" in stores
    assert all(len(s.description.split()) >= 10 for s in specs)


def test_settings_accept_no_registry() -> None:
    assert Settings().sources_file is None


def test_the_medquad_registry_read_is_the_shipped_one_until_a_build_writes_one(
    _isolated_home: Path,
) -> None:
    from prefrag.sources.medquad_demo import bundled_registry_path, registry_path

    assert registry_path() == bundled_registry_path()
    written = _isolated_home / "medquad_sources.yaml"
    written.write_text(
        "sources:\n  - name: mine\n    kind: text\n    store: demo\n    description: My notes.\n"
    )
    assert registry_path() == written
    assert [s.name for s in load_registry_file(registry_path())] == ["mine"]


@pytest.mark.slow
def test_the_medquad_demo_builds_every_source_its_registry_names(
    tmp_path: Path, _isolated_home: Path
) -> None:
    import hashlib

    from test_eval_multisource import _medquad

    from prefrag.sources.medquad_demo import bundled_registry_path, registry_path

    shipped = hashlib.sha256(bundled_registry_path().read_bytes()).hexdigest()
    data = _medquad(tmp_path / "mq")
    built = runner.invoke(
        app, ["sources", "build-medquad-demo", "--data", str(data), "--per-site", "2"]
    )
    assert built.exit_code == 0, built.output
    assert "medquad-ghr: 2 snippets" in built.output
    # The registry is written in the user's data directory, never into the package.
    written = _isolated_home / "medquad_sources.yaml"
    assert registry_path() == written and written.is_file()
    assert hashlib.sha256(bundled_registry_path().read_bytes()).hexdigest() == shipped
    assert str(written) in " ".join(built.output.split())
    shown = runner.invoke(app, ["sources", "--sources", str(written)], env={"COLUMNS": "300"})
    assert shown.exit_code == 0, shown.output
    assert "not indexed" not in shown.output
    assert shown.output.count("2 documents") == 7
    registry = registry_from_file(registry_path(), web=False)
    assert registry.get("concepts").search("Glaucoma", 1)[0].metadata["title"] == "Glaucoma"
    again = runner.invoke(
        app, ["sources", "build-medquad-demo", "--data", str(data), "--per-site", "2"]
    )
    assert again.exit_code == 0 and "medquad-ghr: 2 snippets" in again.output
