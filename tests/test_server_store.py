"""On a Qdrant server (`QDRANT_URL`) a source's chunks live only in its collection.

The server here is qdrant-client's in-memory engine (the same API as a server), shared by
every client `prefrag` opens in the test, so `prefrag index` and `prefrag ask` run exactly
as with `QDRANT_URL` set: records, dense and BM25 vectors are written to the collection
and nowhere else, an add appends points, `prefrag ask` reads them back from it, and a
source indexed in process moves into the collection at its next `prefrag index`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_checks import no_traceback
from cli_checks import words as output_words
from store_paths import current_generation
from typer.testing import CliRunner

from prefrag.cli import app
from prefrag.index import docstore
from prefrag.index.sparse_lexical import VECTOR

runner = CliRunner(env={"COLUMNS": "1000"})

NOTES = [
    {
        "id": "kiln",
        "title": "Lime kiln",
        "text": "Burnt limestone from the kiln sweetens sour fields.",
    },
    {"id": "ford", "title": "Otter ford", "text": "The ford floods each spring; carters wait."},
    {"id": "inn", "title": "Drovers' inn", "text": "Drovers rest their herds behind the inn."},
]
ADDED = {"id": "weir", "title": "Eel weir", "text": "Wickerwork eel traps stand in the mill weir."}


@pytest.fixture
def server(monkeypatch, _isolated_home):
    """One in-memory Qdrant for every client opened while the test runs."""
    import qdrant_client

    from prefrag.config import get_settings

    shared = qdrant_client.QdrantClient(location=":memory:")

    class Client:
        def __init__(self, *args, **kwargs) -> None:
            pass

        def __getattr__(self, name: str):
            return getattr(shared, name)

        def close(self) -> None:  # the one engine outlives each client
            pass

    monkeypatch.setattr(qdrant_client, "QdrantClient", Client)
    monkeypatch.setenv("QDRANT_URL", "http://qdrant.invalid:6333")
    get_settings.cache_clear()
    return shared


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _index(path: Path):
    result = runner.invoke(app, ["index", str(path), "--source", "farm"])
    no_traceback(result)
    return result


def _cited(question: str) -> set[str]:
    asked = runner.invoke(app, ["ask", question, "--no-web", "--json", "--source", "farm"])
    no_traceback(asked)
    assert asked.exit_code == 0, asked.output
    return {c["document"] for c in json.loads(asked.stdout)["citations"]}


def _local_files(name: str = "farm") -> set[str]:
    """Every file of the source's folder on this machine (its lock file aside)."""
    from prefrag.config import get_settings

    folder = get_settings().sources_dir / name
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()} - {".lock"}


def test_on_a_server_index_writes_chunks_only_to_the_collection_and_ask_reads_them(
    server, tmp_path
):
    first = _index(_write(tmp_path / "a.jsonl", NOTES))
    assert first.exit_code == 0 and "3 chunks added" in output_words(first), first.output
    assert _local_files() == {"manifest.json"}  # no record, vector or lexical file here
    collection = server.get_collection("prefrag-farm")
    assert VECTOR in (collection.config.params.sparse_vectors or {})
    added = _index(_write(tmp_path / "b.jsonl", [ADDED]))
    assert added.exit_code == 0 and "1 chunks added" in output_words(added), added.output
    assert server.count("prefrag-farm").count == 4 and _local_files() == {"manifest.json"}
    again = _index(tmp_path / "b.jsonl")
    assert "0 chunks added" in output_words(again) and server.count("prefrag-farm").count == 4
    manifest = docstore.read_manifest(current_generation("farm").parent)
    assert manifest is not None and (manifest.chunks, manifest.documents) == (4, 4)

    from prefrag.sources.local import LocalSource

    lexical = LocalSource("farm", mode="lexical")
    assert [d.metadata["parent_id"] for d in lexical.search("wickerwork", 3)] == ["weir"]
    dense = LocalSource("farm", mode="dense")
    assert dense.dense_search == "qdrant-server" and len(dense) == 4
    (hit,) = dense.search("eel traps in the weir", 1)
    assert hit.metadata["parent_id"] == "weir" and "Wickerwork" in hit.page_content
    (vector,) = dense.vectors_of([hit])
    assert vector is not None and abs(float(vector @ vector) - 1.0) < 1e-4
    assert "weir" in _cited("What stands in the mill weir, made of wickerwork?")
    checked = runner.invoke(app, ["sources", "check", "farm"])
    assert checked.exit_code == 0 and "qdrant 4" in output_words(checked), checked.output
    listed = runner.invoke(app, ["sources"])
    assert listed.exit_code == 0 and "farm" in listed.output


def test_a_run_killed_after_its_upsert_is_completed_by_the_next(server, tmp_path, monkeypatch):
    assert _index(_write(tmp_path / "a.jsonl", NOTES)).exit_code == 0
    real = docstore.write_manifest

    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # the process dies after its points are upserted

    monkeypatch.setattr(docstore, "write_manifest", killed)
    more = _write(tmp_path / "b.jsonl", [ADDED])
    assert runner.invoke(app, ["index", str(more), "--source", "farm"]).exit_code != 0
    assert server.count("prefrag-farm").count == 4  # upserted, not yet in the manifest
    monkeypatch.setattr(docstore, "write_manifest", real)
    done = _index(more)
    assert done.exit_code == 0 and "0 chunks added" in output_words(done), done.output
    manifest = docstore.read_manifest(current_generation("farm").parent)
    # The killed run's new document is counted although this run added nothing.
    assert manifest is not None and (manifest.chunks, manifest.documents) == (4, 4)
    checked = runner.invoke(app, ["sources", "check", "farm"])
    assert checked.exit_code == 0, checked.output
    assert "weir" in _cited("What stands in the mill weir, made of wickerwork?")


def test_a_source_indexed_in_process_moves_into_the_collection(server, monkeypatch, tmp_path):
    from prefrag.config import get_settings

    notes = _write(tmp_path / "a.jsonl", NOTES)
    monkeypatch.delenv("QDRANT_URL")
    get_settings.cache_clear()
    assert runner.invoke(app, ["index", str(notes), "--source", "farm"]).exit_code == 0
    assert "chunks.jsonl" in {Path(name).name for name in _local_files()}

    monkeypatch.setenv("QDRANT_URL", "http://qdrant.invalid:6333")
    get_settings.cache_clear()
    checked = runner.invoke(app, ["sources", "check", "farm"])  # not damage: not moved yet
    assert checked.exit_code == 0 and "moves it into" in output_words(checked), checked.output
    folder = get_settings().sources_dir / "farm"
    opened = docstore.read_manifest(folder)  # a reader that has just read the manifest
    assert opened is not None
    moved = runner.invoke(app, ["index", str(notes), "--source", "farm"])
    no_traceback(moved)
    assert moved.exit_code == 0 and "0 chunks added" in output_words(moved), moved.output
    assert "moved into its Qdrant server collection" in output_words(moved)
    assert "held 0 points" not in output_words(moved)  # a move is no damage to report
    assert server.count("prefrag-farm").count == 3
    # ... still finds the generation it named, until the next write removes it.
    kept = docstore.load_records(folder / opened.generation)
    assert {r["parent_id"] for r in kept} == {"kiln", "ford", "inn"}
    manifest = docstore.read_manifest(folder)
    assert manifest is not None and (manifest.chunks, manifest.documents) == (3, 3)
    assert "kiln" in _cited("What sweetens sour fields?")
    again = runner.invoke(app, ["index", str(notes), "--source", "farm"])
    assert again.exit_code == 0 and "moved" not in output_words(again)
    assert _local_files() == {"manifest.json"}

    # Without the server, the source says where its chunks are instead of failing.
    monkeypatch.delenv("QDRANT_URL")
    get_settings.cache_clear()
    asked = runner.invoke(app, ["ask", "What sweetens fields?", "--no-web", "--source", "farm"])
    no_traceback(asked)
    assert asked.exit_code == 2 and "set QDRANT_URL" in output_words(asked)
    adding = runner.invoke(app, ["index", str(notes), "--source", "farm"])
    no_traceback(adding)
    assert adding.exit_code == 2 and "set QDRANT_URL" in output_words(adding)


def test_a_server_source_whose_manifest_was_lost_indexes_again(server, tmp_path):
    notes = _write(tmp_path / "a.jsonl", NOTES)
    assert _index(notes).exit_code == 0
    folder = current_generation("farm").parent
    (folder / docstore.MANIFEST).unlink()
    again = _index(notes)
    assert again.exit_code == 0 and "0 chunks added" in output_words(again), again.output
    assert server.count("prefrag-farm").count == 3
    manifest = docstore.read_manifest(folder)
    assert manifest is not None and (manifest.chunks, manifest.documents) == (3, 3)
    assert "kiln" in _cited("What sweetens sour fields?")


def test_moving_into_a_collection_holding_other_chunks_is_refused(server, monkeypatch, tmp_path):
    from prefrag.config import get_settings

    other = _write(tmp_path / "other.jsonl", [ADDED])
    assert _index(other).exit_code == 0  # another home's 'farm' on the same server
    shutil.rmtree(get_settings().sources_dir / "farm")
    monkeypatch.delenv("QDRANT_URL")
    get_settings.cache_clear()
    notes = _write(tmp_path / "a.jsonl", NOTES)
    assert runner.invoke(app, ["index", str(notes), "--source", "farm"]).exit_code == 0
    kept = _local_files()

    monkeypatch.setenv("QDRANT_URL", "http://qdrant.invalid:6333")
    get_settings.cache_clear()
    moved = runner.invoke(app, ["index", str(notes), "--source", "farm"])
    no_traceback(moved)
    assert moved.exit_code == 2, moved.output
    assert "already holds 1 chunks this source does not have" in output_words(moved)
    assert _local_files() == kept and server.count("prefrag-farm").count == 1


def _serving(server) -> str:
    """The collection the source's alias names on the server."""
    (name,) = [
        a.collection_name for a in server.get_aliases().aliases if a.alias_name == "prefrag-farm"
    ]
    return name


def _collections(server) -> set[str]:
    return {c.name for c in server.get_collections().collections}


def test_rebuild_fills_a_new_collection_and_switches_the_alias(server, tmp_path):
    assert _index(_write(tmp_path / "a.jsonl", NOTES)).exit_code == 0
    first = _serving(server)
    assert _collections(server) == {first}
    rebuilt = runner.invoke(
        app, ["index", str(_write(tmp_path / "b.jsonl", [ADDED])), "--source", "farm", "--rebuild"]
    )
    no_traceback(rebuilt)
    assert rebuilt.exit_code == 0, rebuilt.output
    second = _serving(server)
    assert second != first and _collections(server) == {second}  # the old one dropped
    assert server.count("prefrag-farm").count == 1
    manifest = docstore.read_manifest(current_generation("farm").parent)
    assert manifest is not None and (manifest.chunks, manifest.documents) == (1, 1)
    assert "weir" in _cited("What stands in the mill weir, made of wickerwork?")
    from prefrag import ask

    answered = ask("What stands in the mill weir?", fallback_sources=[], preferred_source="farm")
    assert {c["document"] for c in answered["citations"]} == {"weir"}
    removed = runner.invoke(app, ["sources", "remove", "farm"])
    assert removed.exit_code == 0, removed.output
    assert _collections(server) == set() and server.get_aliases().aliases == []


def test_a_rebuild_killed_before_its_switch_leaves_the_old_collection_serving(
    server, tmp_path, monkeypatch
):
    from prefrag.index.dense import QdrantStore

    notes = _write(tmp_path / "a.jsonl", NOTES)
    assert _index(notes).exit_code == 0
    first = _serving(server)
    real = QdrantStore._switch

    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # the new collection is filled, the alias not yet moved

    monkeypatch.setattr(QdrantStore, "_switch", killed)
    other = _write(tmp_path / "b.jsonl", [ADDED])
    cut = runner.invoke(app, ["index", str(other), "--source", "farm", "--rebuild"])
    assert cut.exit_code != 0
    assert _serving(server) == first and len(_collections(server)) == 2  # a half-done filling
    assert "kiln" in _cited("What sweetens sour fields?")  # the old collection answers
    checked = runner.invoke(app, ["sources", "check", "farm"])
    assert checked.exit_code == 0, checked.output

    monkeypatch.setattr(QdrantStore, "_switch", real)
    again = _index(notes)  # any later write removes the stray filling
    assert again.exit_code == 0 and "0 chunks added" in output_words(again), again.output
    assert _collections(server) == {first}
    manifest = docstore.read_manifest(current_generation("farm").parent)
    assert manifest is not None and (manifest.chunks, manifest.documents) == (3, 3)


def test_a_rebuild_killed_after_its_switch_is_counted_exactly_by_the_next_run(
    server, tmp_path, monkeypatch
):
    notes = _write(tmp_path / "a.jsonl", NOTES)
    assert _index(notes).exit_code == 0
    real = docstore.write_manifest

    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # switched and the old collection dropped; no manifest

    monkeypatch.setattr(docstore, "write_manifest", killed)
    # Two documents in three chunks: as many points as the manifest counts, fewer documents.
    long = {"id": "mill", "title": "Water mill", "text": " ".join(["Millstones grind oats."] * 50)}
    other = _write(tmp_path / "b.jsonl", [ADDED, long])
    cut = runner.invoke(app, ["index", str(other), "--source", "farm", "--rebuild"])
    assert cut.exit_code != 0 and server.count("prefrag-farm").count == 3
    monkeypatch.setattr(docstore, "write_manifest", real)
    # The manifest names the dropped collection: documents are counted on the server.
    done = _index(_write(tmp_path / "c.jsonl", [NOTES[1]]))
    assert done.exit_code == 0 and "1 chunks added" in output_words(done), done.output
    manifest = docstore.read_manifest(current_generation("farm").parent)
    assert manifest is not None and (manifest.chunks, manifest.documents) == (4, 3)


def test_a_collection_of_an_earlier_version_serves_and_is_replaced_at_rebuild(server, tmp_path):
    """Earlier versions named the collection as the alias is named now."""
    from qdrant_client import models

    notes = _write(tmp_path / "a.jsonl", NOTES)
    assert _index(notes).exit_code == 0
    filled = _serving(server)
    info = server.get_collection(filled)
    points = server.scroll(filled, limit=100, with_payload=True, with_vectors=True)[0]
    server.delete_collection(filled)  # its alias goes with it
    server.create_collection(
        "prefrag-farm",
        vectors_config=info.config.params.vectors,
        sparse_vectors_config=info.config.params.sparse_vectors,
        metadata=info.config.metadata,
    )
    server.upsert(
        "prefrag-farm",
        points=[models.PointStruct(id=p.id, vector=p.vector, payload=p.payload) for p in points],
    )
    assert server.get_aliases().aliases == []
    assert "kiln" in _cited("What sweetens sour fields?")
    added = _index(_write(tmp_path / "b.jsonl", [ADDED]))
    assert added.exit_code == 0 and "1 chunks added" in output_words(added), added.output
    assert _collections(server) == {"prefrag-farm"} and server.count("prefrag-farm").count == 4
    rebuilt = runner.invoke(app, ["index", str(notes), "--source", "farm", "--rebuild"])
    assert rebuilt.exit_code == 0, rebuilt.output
    assert _collections(server) == {_serving(server)} and _serving(server) != "prefrag-farm"
    assert server.count("prefrag-farm").count == 3
    assert "kiln" in _cited("What sweetens sour fields?")
