"""Fault injection on stores: index real files with `prefrag index`, damage them on disk,
then repair through the CLI. No record a user did not ask to drop is ever lost."""

from __future__ import annotations

import json
import shutil
import sqlite3

import numpy as np
import pytest
from cli_checks import garble_store_of_record, no_traceback
from cli_checks import words as output_words
from typer.testing import CliRunner

from prefrag.cli import app

runner = CliRunner(env={"COLUMNS": "1000"})  # long temporary paths never wrap mid-word

NOTES = [
    {
        "id": f"n{i}",
        "title": f"Remedy {i}",
        "text": f"Remedy {i} is brewed from {herb} leaves and eases {ailment}.",
    }
    for i, (herb, ailment) in enumerate(
        [
            ("nettle", "hay fever"),
            ("sage", "sore throats"),
            ("yarrow", "small cuts"),
            ("chamomile", "sleeplessness"),
            ("fennel", "colic"),
            ("thyme", "coughs"),
            ("mallow", "dry skin"),
            ("lovage", "bloating"),
        ]
    )
]
EXTRA = {"id": "x1", "title": "Borage", "text": "Borage flowers are candied for cakes."}


def _write(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _index(*args: str):
    result = runner.invoke(app, ["index", *args])
    no_traceback(result)
    return result


@pytest.fixture
def notes(tmp_path, _isolated_home):
    """Source `herbs` indexed from a real file with the CLI; (files folder, source folder)."""
    files = tmp_path / "files"
    files.mkdir()
    _write(files / "herbs.jsonl", NOTES)
    _write(tmp_path / "extra.jsonl", [EXTRA])
    assert _index(str(files), "--source", "herbs").exit_code == 0
    return tmp_path, _isolated_home / "sources" / "herbs"


def _generation(folder):
    return folder / json.loads((folder / "manifest.json").read_text())["generation"]


def _parents(folder) -> list[str]:
    lines = (_generation(folder) / "chunks.jsonl").read_text().splitlines()
    return sorted(json.loads(line)["parent_id"] for line in lines)


def _vectors_by_id(folder) -> dict[str, np.ndarray]:
    generation = _generation(folder)
    lines = (generation / "chunks.jsonl").read_text().splitlines()
    vectors = np.load(generation / "vectors.npy")
    return {json.loads(line)["id"]: vectors[row] for row, line in enumerate(lines)}


def _check(name: str | None = None):
    result = runner.invoke(app, ["sources", "check", *([name] if name else [])])
    no_traceback(result)
    return result


def _ask(name: str, question: str):
    result = runner.invoke(app, ["ask", question, "--source", name, "--no-web", "--json"])
    no_traceback(result)
    return result


def _cut_vectors(folder):
    generation = _generation(folder)
    np.save(generation / "vectors.npy", np.load(generation / "vectors.npy")[:3])


def _truncate_vectors_file(folder):
    path = _generation(folder) / "vectors.npy"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _cut_chunks(folder):
    path = _generation(folder) / "chunks.jsonl"
    text = path.read_text()
    path.write_text(text[: len(text) // 2])


def _garbage_line(folder):
    path = _generation(folder) / "chunks.jsonl"
    lines = path.read_text().splitlines()
    lines[2] = lines[2][:40]  # a line cut mid-record; the id survives
    path.write_text("\n".join(lines) + "\n")


def _drop_manifest(folder):
    (folder / "manifest.json").unlink()


def _garbage_manifest(folder):
    (folder / "manifest.json").write_bytes(b"\x00\xff not json")


DAMAGE = {
    "vectors cut short": _cut_vectors,
    "vectors file truncated": _truncate_vectors_file,
    "chunks cut short": _cut_chunks,
    "one garbage chunk line": _garbage_line,
    "manifest deleted": _drop_manifest,
    "manifest garbage": _garbage_manifest,
}
RECORDS_LOST = {"chunks cut short", "one garbage chunk line"}  # the files must give them again


# --- 1. adding to a damaged source keeps every record -----------------------------------


@pytest.mark.parametrize("how", list(DAMAGE))
def test_adding_a_document_to_a_damaged_source_keeps_every_record(notes, how):
    tmp_path, folder = notes
    before = _vectors_by_id(folder)
    DAMAGE[how](folder)
    assert _check("herbs").exit_code == 2
    inputs = [str(tmp_path / "extra.jsonl")]
    if how in RECORDS_LOST:  # no second copy: the records come back from the files
        inputs.append(str(tmp_path / "files"))
    added = _index(*inputs, "--source", "herbs")
    assert added.exit_code == 0, added.output
    assert "was damaged" in output_words(added) and "repaired" in output_words(added)
    if how in RECORDS_LOST:
        assert "lost records from the files given" in output_words(added)
        # The kept chunks keep their vectors (found by their keys), nothing is embedded again.
        assert "whose vectors were lost" not in output_words(added)
        assert "1 chunks added" in output_words(added)
    else:
        assert "1 chunks added" in output_words(added)
    assert _parents(folder) == sorted([*(n["id"] for n in NOTES), EXTRA["id"]])
    check = _check("herbs")
    assert check.exit_code == 0 and "herbs: sound" in check.output
    assert "records 9" in output_words(check) and not (folder / "qdrant").exists()
    # Every old chunk has its own vector back (kept, or embedded again).
    after = _vectors_by_id(folder)
    for chunk_id, vector in before.items():
        assert np.allclose(after[chunk_id], vector, atol=1e-4), chunk_id
    answer = _ask("herbs", "Which remedy eases colic?")
    assert answer.exit_code == 0 and "Remedy 4" in answer.stdout
    again = _index(str(tmp_path / "extra.jsonl"), "--source", "herbs")
    assert "0 chunks added" in output_words(again) and "damaged" not in output_words(again)


@pytest.mark.parametrize("how", sorted(RECORDS_LOST))
def test_lost_records_the_files_do_not_hold_are_refused_with_the_fix(notes, how):
    tmp_path, folder = notes
    DAMAGE[how](folder)
    before = (_generation(folder) / "chunks.jsonl").read_bytes()
    refused = _index(str(tmp_path / "extra.jsonl"), "--source", "herbs")
    assert refused.exit_code == 2
    words = output_words(refused)
    assert "Source 'herbs' lost" in words and "of its 8 records" in words
    assert "--rebuild" in words and "prefrag sources remove herbs" in words
    assert (_generation(folder) / "chunks.jsonl").read_bytes() == before  # nothing changed
    rebuilt = _index(str(tmp_path / "files"), "--source", "herbs", "--rebuild")
    assert rebuilt.exit_code == 0, rebuilt.output
    assert _parents(folder) == sorted(n["id"] for n in NOTES)
    assert _check("herbs").exit_code == 0


# --- 2. every file of the lexical index -------------------------------------------------

LEXICAL_FILES = [  # the Qdrant BM25 shard's config, the term counts, the stats
    "shard/edge_config.json",
    "frequencies.npy",
    "prefrag.stats.json",
]


@pytest.mark.parametrize("damage", ["garbage", "missing"])
@pytest.mark.parametrize("name", LEXICAL_FILES)
def test_each_lexical_file_is_checked_and_reindexing_repairs_it(notes, name, damage):
    tmp_path, folder = notes
    path = _generation(folder) / "lexical" / name
    if damage == "missing":
        path.unlink()
    elif name.endswith(".json"):
        path.write_text('["not", "a", "map"]' if name.startswith("prefrag") else "{bad")
    else:
        np.save(path, np.array([7.5, -3.0, 1e9]))  # a valid .npy that disagrees
    check = _check("herbs")
    assert check.exit_code == 2
    assert "Source 'herbs' is damaged" in output_words(check) and "lexical" in output_words(check)
    asked = _ask("herbs", "Which remedy eases colic?")
    assert asked.exit_code == 2 and "Source 'herbs' is damaged" in output_words(asked)
    again = _index(str(tmp_path / "files"), "--source", "herbs")
    assert again.exit_code == 0 and "0 chunks added" in output_words(again)
    assert "rebuilt its lexical index" in output_words(again)
    assert _check("herbs").exit_code == 0
    assert _ask("herbs", "Which remedy eases colic?").exit_code == 0


# --- 3. the store of record earlier versions kept: a last repair, then removed --------


def _old_store_of_record(folder) -> None:
    """What earlier versions kept beside the generation: a Qdrant Edge shard of every
    chunk, its record as payload (`EdgeStore`, as they wrote it)."""
    from prefrag.index.edge_store import EdgeStore

    generation = _generation(folder)
    lines = (generation / "chunks.jsonl").read_text().splitlines()
    with EdgeStore("herbs", folder / "qdrant") as store:
        store.upsert([json.loads(line) for line in lines], np.load(generation / "vectors.npy"))


@pytest.mark.parametrize("state", ["sound", "garbage storage"])
def test_an_old_store_of_record_is_removed_by_the_next_index(notes, state):
    tmp_path, folder = notes
    assert not (folder / "qdrant").exists()  # `prefrag index` keeps no second copy
    _old_store_of_record(folder)
    if state == "garbage storage":
        garble_store_of_record(folder)
    check = _check("herbs")
    assert check.exit_code == 0 and "second copy earlier versions kept" in output_words(check)
    again = _index(str(tmp_path / "files"), "--source", "herbs")
    assert again.exit_code == 0 and "0 chunks added" in output_words(again)
    assert "no longer keeps a second copy" in output_words(again)
    assert "damaged" not in output_words(again)
    assert not (folder / "qdrant").exists() and _check("herbs").exit_code == 0
    assert "second copy" not in output_words(_check("herbs"))
    assert _parents(folder) == sorted(n["id"] for n in NOTES)
    answer = _ask("herbs", "Which remedy eases colic?")
    assert answer.exit_code == 0 and "Remedy 4" in answer.stdout


def test_an_old_store_of_record_restores_lost_records_one_last_time(notes):
    tmp_path, folder = notes
    _old_store_of_record(folder)
    _cut_chunks(folder)
    added = _index(str(tmp_path / "extra.jsonl"), "--source", "herbs")
    assert added.exit_code == 0, added.output
    assert "restored" in output_words(added) and "from its Qdrant store" in output_words(added)
    assert _parents(folder) == sorted([*(n["id"] for n in NOTES), EXTRA["id"]])
    assert not (folder / "qdrant").exists() and _check("herbs").exit_code == 0


# --- 4. check, list, remove: graphs, orphans, read-only homes, the API ------------------


@pytest.fixture
def graph(tmp_path, notes):
    triples = tmp_path / "herbs.csv"
    triples.write_text(
        "subject,relation,object\nNettle,definition,A stinging herb.\nNettle,treats,Hay fever\n"
    )
    assert _index("--kind", "graph", str(triples), "--source", "herbgraph").exit_code == 0
    return notes[1].parent.parent / "graphs" / "herbgraph.sqlite"


def test_check_reads_line_ends_not_records_and_full_parses_them(notes, monkeypatch):
    """`sources check` finds a line overwritten across its ends without parsing a record;
    a change inside a line keeps its ends, so only `--full` (which parses) finds it."""
    from prefrag.config import get_settings
    from prefrag.index import integrity

    _, folder = notes
    path = _generation(folder) / "chunks.jsonl"
    sound = path.read_bytes()
    parsed: list[str] = []
    original = integrity._count_records
    monkeypatch.setattr(
        integrity, "_count_records", lambda *a: parsed.append("all") or original(*a)
    )
    assert _check("herbs").exit_code == 0 and parsed == []
    third = sound.split(b"\n")[2]
    at = sound.index(third)
    path.write_bytes(sound[:at] + b"x" + sound[at + 1 :])  # same size, its "{" overwritten
    result = _check("herbs")
    assert result.exit_code == 2 and "line 3 is not where its offsets say" in output_words(result)
    assert parsed == []
    inside = sound.index(b'"text"', at)
    path.write_bytes(sound[:inside] + b"!" + sound[inside + 1 :])  # same size, mid-line
    assert _check("herbs").exit_code == 0
    full = runner.invoke(app, ["sources", "check", "herbs", "--full"])
    no_traceback(full)
    assert full.exit_code == 2 and "damaged" in output_words(full)
    problems = integrity.check_source("herbs", get_settings(), thorough=True).problems
    assert problems and "chunks.jsonl:3: not valid JSON" in problems[0]
    assert parsed == ["all", "all"]
    path.write_bytes(sound)
    assert runner.invoke(app, ["sources", "check", "herbs", "--full"]).exit_code == 0


def test_check_covers_graphs_and_remove_deletes_them(graph):
    assert "herbgraph: sound (graph" in _check().output
    graph.write_bytes(b"SQLite format 3\x00" + b"\x00" * 80 + b"garbage" * 500)
    check = _check()
    assert check.exit_code == 2
    assert "Graph source 'herbgraph' is damaged" in output_words(check)
    assert "herbs: sound" in check.output  # the text source is unaffected
    listing = runner.invoke(app, ["sources"])
    assert "damaged: Graph source 'herbgraph'" in output_words(listing)
    removed = runner.invoke(app, ["sources", "remove", "herbgraph"])
    assert removed.exit_code == 0 and not graph.exists()
    assert _check().exit_code == 0


def test_an_orphaned_folder_is_reported_and_recovered(notes):
    tmp_path, folder = notes
    _drop_manifest(folder)
    check = _check()
    assert check.exit_code == 2 and "manifest.json is missing" in output_words(check)
    listing = runner.invoke(app, ["sources"])
    assert "damaged: Source 'herbs' is damaged" in output_words(listing)
    again = _index(str(tmp_path / "files"), "--source", "herbs")
    assert "0 chunks added" in output_words(again) and _check().exit_code == 0


def test_listing_shows_a_source_damaged_inside_its_generation_as_damaged(notes):
    _, folder = notes
    _cut_vectors(folder)
    listing = runner.invoke(app, ["sources"])
    assert listing.exit_code == 0
    assert "damaged: Source 'herbs' is damaged" in output_words(listing)
    assert "No local sources yet" in listing.output  # not listed as a healthy source


def test_a_read_only_home_is_not_called_damaged(notes, monkeypatch):
    import builtins
    import io

    real_open = builtins.open

    def read_only_open(file, mode="r", *args, **kwargs):
        if any(flag in mode for flag in "wax+"):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", read_only_open)
    monkeypatch.setattr(io, "open", read_only_open)
    check = _check("herbs")
    words = output_words(check)
    assert check.exit_code == 0, words
    assert "herbs: sound" in words
    assert "damaged" not in words and "remove" not in words


def test_the_api_answers_a_damaged_source_with_its_damage(notes):
    from prefrag import ask
    from prefrag.errors import DamagedStoreError, UnknownSourceError

    _, folder = notes
    _garbage_manifest(folder)
    with pytest.raises(DamagedStoreError, match="Source 'herbs' is damaged") as raised:
        ask("Which remedy eases colic?", preferred_source="herbs", fallback_sources=[])
    assert not isinstance(raised.value, UnknownSourceError)


# --- 5. a registry naming a missing or damaged store ------------------------------------


@pytest.mark.parametrize("broken", ["missing", "damaged"])
def test_a_registry_with_one_broken_store_still_serves_the_healthy_one(notes, broken):
    tmp_path, folder = notes
    if broken == "damaged":
        shutil.copytree(folder, folder.parent / "other")
        _cut_vectors(folder.parent / "other")
    args = _herbs_answer_beside(tmp_path, "{name: other, kind: text, description: Something else}")
    broken_run = runner.invoke(app, ["ask", "Anything?", "--source", "other", *args])
    assert broken_run.exit_code == 2
    no_traceback(broken_run)
    expected = "has no index yet" if broken == "missing" else "Source 'other' is damaged"
    assert expected in output_words(broken_run)


def test_a_damaged_graph_file_in_a_registry_does_not_block_text(graph, tmp_path):
    with sqlite3.connect(graph) as connection:
        connection.execute("DROP TABLE concepts")
    _herbs_answer_beside(tmp_path, "{name: herbgraph, kind: graph, description: Herb concepts}")


def _herbs_answer_beside(tmp_path, other: str) -> list[str]:
    """Ask `herbs` through a registry that also names `other`: it answers, with citations.

    Returns the registry's `ask` options, for asking the other source.
    """
    registry = tmp_path / "sources.yaml"
    registry.write_text(
        f"sources:\n  - {{name: herbs, kind: text, description: Herbal remedies}}\n  - {other}\n"
    )
    args = ["--sources", str(registry), "--no-web", "--json"]
    healthy = runner.invoke(app, ["ask", "Which remedy eases colic?", "--source", "herbs", *args])
    assert healthy.exit_code == 0, healthy.output
    assert json.loads(healthy.stdout)["citations"]
    return args
