"""The lexical side in Qdrant's model: BM25 sparse vectors, Qdrant's IDF, adds that append.

Scores are checked against a Qdrant Edge shard that applies `Modifier.Idf` itself; the
user path is `prefrag index` (twice: the second run appends to the delta part),
`prefrag ask` finding the added note by a word only it has, and a source written with
the bm25s index (lexical format 2) moving to sparse vectors at its next `prefrag index`.
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
from prefrag.index import docstore, ingest
from prefrag.index.lexical import FORMAT, LexicalIndex, record_texts
from prefrag.index.sparse_lexical import (
    DELTA_SPARSE,
    VECTOR,
    SparseDelta,
    SparseLexicalIndex,
    delta_lines,
    document_vectors,
    is_sparse_index,
)
from prefrag.sources.local import LocalSource

runner = CliRunner(env={"COLUMNS": "1000"})

NOTES = [
    "Tide tables of Harrow Bay: the spring tide floods the causeway twice a month.",
    "The causeway keeper rings a bell before the flood tide reaches the road.",
    "Harrow Bay oysters are gathered on the ebb, never on a spring tide.",
    "A lighthouse on Gull Point guides boats past the Harrow sandbar.",
    "The sandbar shifts after winter storms; pilots chart it every March.",
    "Bell ringers of Harrow church practise on Thursday evenings.",
    "Oyster beds need clean water; the bay's mills were closed to protect them.",
    "Gull Point's keeper logs storms, tides and passing boats in one ledger.",
]
QUERIES = ["spring tide causeway", "keeper bell", "oysters storms sandbar", "Harrow"]


def _ranked(hits: list[tuple[int, float]]) -> list[tuple[int, float]]:
    return sorted(hits, key=lambda hit: (-round(hit[1], 4), hit[0]))


def test_scores_are_those_of_a_qdrant_shard_applying_its_own_idf_modifier(tmp_path: Path):
    from qdrant_edge import (
        EdgeConfig,
        EdgeShard,
        EdgeSparseVectorParams,
        Modifier,
        Point,
        Query,
        QueryRequest,
        SparseVector,
        UpdateOperation,
    )

    ours = SparseLexicalIndex.build(NOTES)
    ours.save(tmp_path / "ours")
    ours = SparseLexicalIndex.load(tmp_path / "ours")
    config = EdgeConfig(
        vectors={}, sparse_vectors={VECTOR: EdgeSparseVectorParams(modifier=Modifier.Idf)}
    )
    qdrant = EdgeShard.create(str(tmp_path / "qdrant"), config)
    vectors = document_vectors(NOTES, ours.average_length)
    points = [Point(id=row, vector={VECTOR: v}, payload=None) for row, v in enumerate(vectors)]
    qdrant.update(UpdateOperation.upsert_points(points))
    for query in QUERIES:
        terms, _ = ours.weighted_query(query)
        request = QueryRequest(
            limit=len(NOTES),
            query=Query.Nearest(SparseVector(terms, [1.0] * len(terms)), using=VECTOR),
            with_payload=False,
            with_vector=False,
        )
        theirs = [(int(p.id), float(p.score)) for p in qdrant.query(request)]
        found = ours.search(query, len(NOTES))
        assert found, query
        assert [row for row, _ in found] == [row for row, _ in _ranked(theirs)], query
        assert [s for _, s in found] == pytest.approx([s for _, s in _ranked(theirs)], rel=1e-5)
    qdrant.close()
    ours.close()
    assert SparseLexicalIndex.build(NOTES).search("", 3) == []


def test_a_base_and_its_delta_score_as_one_index_over_every_row(tmp_path: Path):
    whole = SparseLexicalIndex.build(NOTES)
    base = SparseLexicalIndex.build(NOTES[:5], average_length=whole.average_length)
    base.save(tmp_path / "base")
    whole.save(tmp_path / "whole")
    (tmp_path / DELTA_SPARSE).write_bytes(b"".join(delta_lines(NOTES[5:], whole.average_length)))
    appended = SparseLexicalIndex.load(tmp_path / "base", tmp_path / DELTA_SPARSE)
    whole = SparseLexicalIndex.load(tmp_path / "whole")
    assert appended.documents == whole.documents == len(NOTES)
    for query in QUERIES:
        ours, theirs = appended.search(query, 5), whole.search(query, 5)
        assert [row for row, _ in ours] == [row for row, _ in theirs], query
        assert [s for _, s in ours] == pytest.approx([s for _, s in theirs], rel=1e-5)
    # A row of the delta is found by a word only it has.
    assert appended.search("thursday ringers", 1)[0][0] == 5
    with pytest.raises(ValueError, match="not a sparse vector"):
        (tmp_path / "bad.jsonl").write_text("[[1, 2], [0.5]]\n")
        SparseDelta.load(tmp_path / "bad.jsonl")


def _notes_file(path: Path, start: int, count: int) -> Path:
    rows = [
        {
            "id": f"harbour-{i}",
            "title": f"Harbour ledger {i}",
            "text": f"Entry {i}: the pilots of Harrow Bay charted the sandbar and the tide "
            f"tables{' after a storm' * (i % 3)}; the keeper signed the page.",
        }
        for i in range(start, start + count)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _ask(question: str) -> dict:
    result = runner.invoke(app, ["ask", question, "--no-web", "--json", "--source", "harbour"])
    no_traceback(result)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_index_twice_appends_sparse_vectors_and_ask_finds_the_added_note(
    monkeypatch, tmp_path, _isolated_home
):
    monkeypatch.setattr(ingest, "DELTA_MIN_ROWS", 20)
    first = runner.invoke(app, ["index", str(_notes_file(tmp_path / "a.jsonl", 0, 30)),
                                "--source", "harbour"])  # fmt: skip
    assert first.exit_code == 0, first.output
    base = current_generation("harbour")
    assert is_sparse_index(base / docstore.LEXICAL)
    added = tmp_path / "b.jsonl"
    added.write_text(
        json.dumps(
            {
                "id": "eel-weir",
                "title": "The eel weir",
                "text": "Wickerwork eel traps stand in the weir below the harbour mill.",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    second = runner.invoke(app, ["index", str(added), "--source", "harbour"])
    assert second.exit_code == 0 and "1 chunks added" in output_words(second), second.output
    after = current_generation("harbour")
    # Appended: the base shard's files are the previous generation's, the note is a line.
    shard_files = [p.relative_to(base) for p in (base / docstore.LEXICAL).rglob("*") if p.is_file()]
    for name in shard_files:
        assert (after / name).stat().st_ino == (base / name).stat().st_ino, name
    assert len((after / "delta" / DELTA_SPARSE).read_text().splitlines()) == 1
    lexical = LocalSource("harbour", mode="lexical")
    assert lexical.search("wickerwork", 3)[0].metadata["parent_id"] == "eel-weir"
    answer = _ask("What stands in the weir below the harbour mill, made of wickerwork?")
    assert "eel-weir" in {c["document"] for c in answer["citations"]}, answer
    assert runner.invoke(app, ["sources", "check", "harbour"]).exit_code == 0


def test_a_bm25s_source_still_answers_and_moves_to_sparse_vectors_at_its_next_index(
    tmp_path, _isolated_home
):
    notes = _notes_file(tmp_path / "a.jsonl", 0, 6)
    assert runner.invoke(app, ["index", str(notes), "--source", "harbour"]).exit_code == 0
    generation = current_generation("harbour")
    folder = generation.parent
    # The source as the previous version wrote it: a bm25s index, lexical format 2.
    records = docstore.load_records(generation)
    shutil.rmtree(generation / docstore.LEXICAL)
    LexicalIndex.build(record_texts(records)).save(generation / docstore.LEXICAL)
    data = json.loads((folder / docstore.MANIFEST).read_text())
    data["lexical_format"] = 2
    (folder / docstore.MANIFEST).write_text(json.dumps(data))
    old = LocalSource("harbour", mode="lexical")
    stormy = {f"harbour-{i}" for i in range(6) if i % 3}
    assert {d.metadata["parent_id"] for d in old.search("storm", 6)} == stormy
    assert not is_sparse_index(generation / docstore.LEXICAL)

    moved = runner.invoke(app, ["index", str(notes), "--source", "harbour"])
    no_traceback(moved)
    assert moved.exit_code == 0 and "0 chunks added" in output_words(moved)
    assert "Qdrant BM25 sparse vectors" in output_words(moved)
    generation = current_generation("harbour")
    assert is_sparse_index(generation / docstore.LEXICAL)
    manifest = docstore.read_manifest(folder)
    assert manifest is not None and manifest.lexical_format == FORMAT == 3
    moved_source = LocalSource("harbour", mode="lexical")
    assert {d.metadata["parent_id"] for d in moved_source.search("storm", 6)} == stormy
    again = runner.invoke(app, ["index", str(notes), "--source", "harbour"])
    assert again.exit_code == 0 and "Qdrant BM25" not in output_words(again)
