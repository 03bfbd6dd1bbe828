"""An add to a large source appends: a delta part beside hard links, one global BM25 IDF.

"Large" is lowered to a few dozen chunks (`DELTA_MIN_ROWS`) so an invented corpus shows
it; the notes are indexed with `prefrag index` / `index_paths` and searched through
`LocalSource` as a run does.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_checks import no_traceback
from cli_checks import words as output_words
from typer.testing import CliRunner

from prefrag.cli import app
from prefrag.index import docstore, ingest, rows
from prefrag.index.ingest import index_paths
from prefrag.sources.local import LocalSource

runner = CliRunner(env={"COLUMNS": "1000"})

_CRAFTS = ["weaver", "potter", "smith", "cooper", "glazier", "tanner", "joiner", "mason"]
_GOODS = ["baskets", "jugs", "hinges", "barrels", "windows", "saddles", "chairs", "walls"]
QUERIES = [
    "Who mends barrels in Osk?",
    "the glazier and the windows of the chapel",
    "saddles from the tanner",
    "a mason repairing walls",
    "jugs fired by the potter",
    "ferns and moss by the mill race",
]


def _notes(count: int, start: int = 0) -> list[dict[str, str]]:
    notes = []
    for i in range(start, start + count):
        craft, goods = _CRAFTS[i % len(_CRAFTS)], _GOODS[(i * 3) % len(_GOODS)]
        notes.append(
            {
                "id": f"osk-{i}",
                "title": f"The {craft} of Osk, ledger {i}",
                "text": f"In the year {1400 + i} the {craft} of Osk sold {goods} at the spring "
                f"fair{' and mended the old ones' * (i % 3)}; the guild kept the receipt.",
            }
        )
    return notes


NEW = [
    {
        "id": "fern-1",
        "title": "Ferns of the mill race",
        "text": "Moss and ferns grow thick by the mill race where the miller rests.",
    },
    {
        "id": "cooper-late",
        "title": "A late cooper",
        "text": "A travelling cooper mended barrels in Osk for a single winter.",
    },
]


def _write(path: Path, rows_: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows_), encoding="utf-8")
    return path


def _generation(settings, name: str) -> Path:
    folder = settings.sources_dir / name
    manifest = docstore.read_manifest(folder)
    assert manifest is not None
    return folder / manifest.generation


@pytest.fixture
def large(monkeypatch, tmp_path, _isolated_home):
    """Sources count as large from 20 chunks; `town` holds 40 notes."""
    from prefrag.config import get_settings

    monkeypatch.setattr(ingest, "DELTA_MIN_ROWS", 20)
    settings = get_settings()
    index_paths(_write(tmp_path / "ledger.jsonl", _notes(40)), "town", settings=settings)
    return settings, tmp_path


def _top(source: LocalSource, k: int = 3) -> list[list[str]]:
    return [[d.metadata["parent_id"] for d in source.search(q, k)] for q in QUERIES]


def test_an_add_writes_only_a_delta_and_finds_what_a_rebuild_finds(large):
    settings, tmp_path = large
    before = _generation(settings, "town")
    report = index_paths(_write(tmp_path / "new.jsonl", NEW), "town", settings=settings)
    assert report.added == 2 and report.total_chunks == 42
    after = _generation(settings, "town")
    assert (after / "delta" / "chunks.jsonl").is_file()
    # The old rows were not rewritten: the base files are the previous generation's.
    for name in ("chunks.jsonl", "vectors.npy", "lexical/frequencies.npy"):
        assert (after / name).stat().st_ino == (before / name).stat().st_ino, name
    assert len(docstore.load_records(after / "delta")) == 2
    # The same notes indexed in one go (no delta) rank the same chunks first.
    index_paths([tmp_path / "ledger.jsonl", tmp_path / "new.jsonl"], "whole", settings=settings)
    assert not (_generation(settings, "whole") / "delta").exists()
    for mode in ("lexical", "dense", "hybrid"):
        appended = LocalSource("town", settings=settings, mode=mode)
        whole = LocalSource("whole", settings=settings, mode=mode)
        assert _top(appended) == _top(whole), mode
    lexical = LocalSource("town", settings=settings, mode="lexical")
    assert lexical.search("ferns mill race", 1)[0].metadata["parent_id"] == "fern-1"
    assert len(lexical) == 42
    # Lexical scores under one global IDF: those of the rebuild, but for the mean length.
    ours = {d.metadata["parent_id"]: d.metadata["score"] for d in lexical.search(QUERIES[0], 8)}
    theirs = {
        d.metadata["parent_id"]: d.metadata["score"]
        for d in LocalSource("whole", settings=settings, mode="lexical").search(QUERIES[0], 8)
    }
    assert set(ours) == set(theirs)
    for chunk_id, score in theirs.items():
        assert ours[chunk_id] == pytest.approx(score, rel=0.01), chunk_id


def test_adds_fold_the_delta_in_past_its_share_and_stay_idempotent(large):
    settings, tmp_path = large
    first = _write(tmp_path / "first.jsonl", NEW[:1])
    index_paths(first, "town", settings=settings)
    assert (_generation(settings, "town") / "delta").is_dir()
    again = index_paths(first, "town", settings=settings)
    assert again.added == 0 and again.total_chunks == 41
    # 10% of 40 base rows is 4: three more rows make 4 (a delta), the next ones fold it in.
    index_paths(_write(tmp_path / "more.jsonl", _notes(3, start=100)), "town", settings=settings)
    generation = _generation(settings, "town")
    assert len(docstore.load_records(generation / "delta")) == 4
    held = (generation / "chunks.jsonl").read_bytes()
    held += (generation / "delta" / "chunks.jsonl").read_bytes()
    written: list[str] = []
    real_line = rows.record_line

    def record_line(record):
        written.append(record["id"])
        return real_line(record)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rows, "record_line", record_line)
        last = _write(tmp_path / "last.jsonl", _notes(2, start=200))
        index_paths(last, "town", settings=settings)
    generation = _generation(settings, "town")
    assert not (generation / "delta").exists()
    # The fold copies the 44 record lines it holds and writes only the 2 new ones.
    assert len(written) == 2 and (generation / "chunks.jsonl").read_bytes().startswith(held)
    records = docstore.load_records(generation)
    assert len(records) == 46 == len({r["id"] for r in records})
    assert runner.invoke(app, ["sources", "check", "town"]).exit_code == 0
    source = LocalSource("town", settings=settings)
    assert source.search("ferns mill race", 1)[0].metadata["parent_id"] == "fern-1"
    assert source.search("ledger 201", 1)[0].metadata["parent_id"] == "osk-201"


def test_a_damaged_delta_is_reported_and_repaired_by_the_next_index(large):
    settings, tmp_path = large
    index_paths(_write(tmp_path / "new.jsonl", NEW), "town", settings=settings)
    chunks = _generation(settings, "town") / "delta" / "chunks.jsonl"
    chunks.write_bytes(chunks.read_bytes()[:-30])  # the last record cut short
    check = runner.invoke(app, ["sources", "check", "town"])
    no_traceback(check)
    assert check.exit_code == 2 and "changed or cut" in output_words(check)
    extra = _write(tmp_path / "extra.jsonl", [{"id": "x", "text": "Osk's bridge was rebuilt."}])
    # The cut record is in no file given (and no second copy is kept): nothing is written.
    refused = runner.invoke(app, ["index", str(extra), "--source", "town"])
    no_traceback(refused)
    assert refused.exit_code == 2 and "lost 1 of its 42 records" in output_words(refused)
    repaired = runner.invoke(
        app, ["index", str(extra), str(tmp_path / "new.jsonl"), "--source", "town"]
    )
    no_traceback(repaired)
    assert repaired.exit_code == 0, repaired.output
    assert "repaired" in output_words(repaired) and "1 chunks added" in output_words(repaired)
    records = docstore.load_records(_generation(settings, "town"))
    assert {"fern-1", "cooper-late"} <= {r["parent_id"] for r in records}
    assert len(records) == 43
    assert runner.invoke(app, ["sources", "check", "town"]).exit_code == 0


def test_opening_parses_no_record_and_a_search_parses_only_its_hits(large, monkeypatch):
    settings, tmp_path = large
    index_paths(_write(tmp_path / "new.jsonl", NEW), "town", settings=settings)
    parsed: list[int] = []
    original = rows.PartRecords.__getitem__

    def counting(self, row):
        parsed.append(row)
        return original(self, row)

    monkeypatch.setattr(rows.PartRecords, "__getitem__", counting)
    source = LocalSource("town", settings=settings)
    assert parsed == []
    hits = source.search("barrels", 3)
    assert len(hits) == 3 and len(parsed) == 3
    vectors = source.vectors_by_id([hits[0].metadata["id"]])
    assert vectors[0] is not None and np.isclose(np.linalg.norm(vectors[0]), 1, atol=1e-3)


def test_past_the_hnsw_size_the_shard_is_linked_and_the_delta_is_scanned_beside_it(
    large, monkeypatch
):
    from prefrag.config import get_settings

    settings, tmp_path = large
    monkeypatch.setenv("PREFRAG_HNSW_MIN_CHUNKS", "10")
    get_settings.cache_clear()
    settings = get_settings()
    index_paths(_write(tmp_path / "ledger.jsonl", _notes(40)), "big", settings=settings)
    before = _generation(settings, "big")
    index_paths(_write(tmp_path / "new.jsonl", NEW), "big", settings=settings)
    after = _generation(settings, "big")
    assert (after / "delta").is_dir()
    shard_files = [p.relative_to(before) for p in (before / "hnsw").rglob("*") if p.is_file()]
    assert shard_files
    for name in shard_files:  # nothing of the shard was copied or rewritten
        assert (after / name).stat().st_ino == (before / name).stat().st_ino, name
    approximate = LocalSource("big", settings=settings, mode="dense")
    assert approximate.dense_search == "hnsw"
    exact = LocalSource("big", settings=settings.model_copy(update={"hnsw_min_chunks": 1000}))
    exact.mode = "dense"
    assert exact.dense_search == "exact"
    assert _top(approximate, 5) == _top(exact, 5)
    assert approximate.search("ferns and moss by the mill race", 1)[0].metadata["parent_id"] == (
        "fern-1"
    )


def test_known_chunks_are_found_by_their_keys_and_ids_json_generations_still_read(
    large, monkeypatch
):
    """An add recognises stored chunks from `chunks.keys.npy` (loaded, not parsed); a
    generation written with the ids as JSON is read as before and gets keys at its next add."""
    settings, tmp_path = large
    new = _write(tmp_path / "new.jsonl", NEW)
    index_paths(new, "town", settings=settings)
    generation = _generation(settings, "town")
    assert (generation / rows.KEYS).is_file() and (generation / "delta" / rows.KEYS).is_file()
    assert not list(generation.rglob(rows.IDS))
    # The generation as an earlier version wrote it: the ids as JSON, no keys files.
    for part in (generation, generation / "delta"):
        pairs = [[r["id"], r["parent_id"]] for r in rows.PartRecords(part)]
        (part / rows.IDS).write_text(json.dumps(pairs), encoding="utf-8")
        (part / rows.KEYS).unlink()
    again = runner.invoke(app, ["index", str(new), "--source", "town"])
    no_traceback(again)
    assert again.exit_code == 0
    parsed: list[int] = []
    original = rows.PartRecords._record

    def counting(self, row):
        parsed.append(row)
        return original(self, row)

    monkeypatch.setattr(rows.PartRecords, "_record", counting)
    assert index_paths(new, "town", settings=settings).added == 0
    assert parsed == []  # known from the ids file, no record read
    monkeypatch.setattr(rows.PartRecords, "_record", original)
    source = LocalSource("town", settings=settings)
    fern = source.search("ferns mill race", 1)[0]
    assert fern.metadata["parent_id"] == "fern-1"
    found, missing = source.vectors_by_id([fern.metadata["id"], "no-such-chunk"])
    assert found is not None and missing is None
    report = index_paths(
        _write(tmp_path / "one.jsonl", _notes(1, start=300)), "town", settings=settings
    )
    assert report.added == 1 and report.total_chunks == 43 and report.total_documents == 43
    generation = _generation(settings, "town")
    assert (generation / rows.KEYS).is_file() and (generation / "delta" / rows.KEYS).is_file()
    assert index_paths(new, "town", settings=settings).added == 0


def test_key_lookup_finds_rows_when_two_ids_share_the_first_half_of_their_key(monkeypatch):
    made = {"a": (7, 1), "b": (7, 2), "c": (9, 3), "d": (7, 4)}
    monkeypatch.setattr(
        rows, "id_keys", lambda ids: np.array([made[i] for i in ids], dtype=np.uint64)
    )
    index = rows.KeyIndex(np.array([made["a"], made["c"], made["b"]], dtype=np.uint64))
    assert index.rows(["b", "a", "c", "d"]).tolist() == [2, 0, 1, -1]


def _lexical_stats(settings) -> dict:
    return json.loads(
        (_generation(settings, "town") / "lexical" / "prefrag.stats.json").read_text()
    )


def test_a_fold_extends_the_sparse_shard_instead_of_tokenising_every_row(large, monkeypatch):
    from prefrag.index.lexical import record_texts
    from prefrag.index.sparse_lexical import SparseLexicalIndex

    settings, tmp_path = large
    mean = _lexical_stats(settings)["average_length"]

    def no_build(*args, **kwargs):
        raise AssertionError("the sparse shard was built again at a fold")

    monkeypatch.setattr(SparseLexicalIndex, "build", no_build)
    # Five rows pass 10% of the 40 base rows: this add writes the generation whole.
    index_paths(_write(tmp_path / "more.jsonl", _notes(5, start=300)), "town", settings=settings)
    monkeypatch.undo()
    generation = _generation(settings, "town")
    assert not (generation / "delta").exists()
    stats = _lexical_stats(settings)
    assert stats["documents"] == 45 and stats["average_length"] == mean
    lexical = LocalSource("town", settings=settings, mode="lexical")
    assert lexical.search("ledger 303", 1)[0].metadata["parent_id"] == "osk-303"
    # It scores as one index over every row built at the base's mean length.
    whole = SparseLexicalIndex.build(
        record_texts(docstore.load_records(generation)), average_length=mean
    )
    whole.save(tmp_path / "whole")
    reference = SparseLexicalIndex.load(tmp_path / "whole")
    try:
        for query in QUERIES:
            ours = lexical._lexical.search(query, 10)  # type: ignore[union-attr]
            theirs = reference.search(query, 10)
            assert [row for row, _ in ours] == [row for row, _ in theirs], query
            assert np.allclose([s for _, s in ours], [s for _, s in theirs], rtol=1e-5)
    finally:
        reference.close()


def test_a_fold_that_moves_the_mean_length_builds_the_shard_again(large):
    settings, tmp_path = large
    mean = _lexical_stats(settings)["average_length"]
    long_notes = [
        {**note, "text": note["text"] + " The receipt lists every coin and cart." * 20}
        for note in _notes(5, start=400)
    ]
    index_paths(_write(tmp_path / "long.jsonl", long_notes), "town", settings=settings)
    stats = _lexical_stats(settings)
    assert stats["documents"] == 45 and stats["average_length"] > 1.05 * mean
