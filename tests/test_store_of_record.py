"""A local source keeps one copy of its chunks: the generation's files, no store of record.

Through the user's path: `prefrag index` twice adds, `prefrag ask` finds the added chunk by
a word only it has, and a source an earlier version wrote (with its store of record in
`qdrant/`) loses that second copy at its next `prefrag index`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from cli_checks import words
from typer.testing import CliRunner

from prefrag.cli import app
from prefrag.config import get_settings
from prefrag.index import docstore
from prefrag.index.integrity import check_source

runner = CliRunner(env={"COLUMNS": "1000"})

NOTES = [
    {"id": "kiln", "title": "The kiln", "text": "The kiln at Marrow Lane fires pots on Fridays."},
    {"id": "ferry", "title": "The ferry", "text": "The Oskeby ferry stops running in January."},
    {"id": "choir", "title": "The choir", "text": "The choir rehearses in the old grain store."},
]
ADDED = {
    "id": "quoits",
    "title": "The quoits club",
    "text": "The Brindlecombe quoits club meets behind the cooperage on Tuesdays.",
}


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _index(*args: str):
    result = runner.invoke(app, ["index", *args])
    assert result.exit_code == 0, result.output
    return result


def _source_files(folder: Path) -> set[str]:
    """The files of a source below its folder (the lock file aside)."""
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()} - {".lock"}


def test_index_twice_adds_and_keeps_one_copy_of_every_chunk(tmp_path, _isolated_home):
    folder = _isolated_home / "sources" / "town"
    _index(str(_write(tmp_path / "a.jsonl", NOTES)), "--source", "town")
    added = _index(str(_write(tmp_path / "b.jsonl", [ADDED])), "--source", "town")
    assert "1 chunks added" in words(added) and "damaged" not in words(added)
    # Nothing beside the manifest and the generations: no store of record, no second copy.
    assert not (folder / "qdrant").exists()
    assert {name.split("/")[0] for name in _source_files(folder)} <= {
        "manifest.json",
        *(p.name for p in folder.glob("gen-*")),
    }
    generation = folder / docstore.read_manifest(folder).generation  # type: ignore[union-attr]
    texts = (generation / "chunks.jsonl").read_text(encoding="utf-8")
    assert texts.count("cooperage") == 1  # the added chunk's record, once
    asked = runner.invoke(
        app, ["ask", "Where does the quoits club meet?", "--source", "town", "--no-web", "--json"]
    )
    assert asked.exit_code == 0, asked.output
    cited = {c["title"] for c in json.loads(asked.stdout)["citations"]}
    assert "The quoits club" in cited
    check = check_source("town", get_settings())
    assert check.sound and check.counts["records"] == 4 and "qdrant" not in check.counts


def test_a_store_of_an_earlier_version_is_removed_on_the_next_index(tmp_path, _isolated_home):
    from qdrant_client import QdrantClient, models

    corpus = _write(tmp_path / "a.jsonl", NOTES)
    _index(str(corpus), "--source", "town")
    folder = _isolated_home / "sources" / "town"
    generation = folder / docstore.read_manifest(folder).generation  # type: ignore[union-attr]
    records = docstore.load_records(generation)
    vectors = docstore.load_vectors(generation)
    kept = {name: (folder / name).read_bytes() for name in _source_files(folder)}
    # What versions before Qdrant Edge wrote: an embedded qdrant-client store, same points.
    client = QdrantClient(path=str(folder / "qdrant"))
    client.create_collection(
        "prefrag-town",
        vectors_config=models.VectorParams(size=vectors.shape[1], distance=models.Distance.COSINE),
    )
    client.upsert(
        "prefrag-town",
        points=[
            models.PointStruct(id=r["id"], vector=np.asarray(v).tolist(), payload=r)
            for r, v in zip(records, vectors, strict=True)
        ],
    )
    client.close()
    before = check_source("town", get_settings(), qdrant=True)
    assert before.sound and "second copy earlier versions kept" in " ".join(before.unchecked)

    again = _index(str(corpus), "--source", "town")
    assert "0 chunks added" in words(again) and "damaged" not in words(again)
    assert "no longer keeps a second copy of its chunks" in words(again)
    assert not (folder / "qdrant").exists()
    # The generation was not rewritten: only the second copy went.
    assert {name: (folder / name).read_bytes() for name in _source_files(folder)} == kept
    after = check_source("town", get_settings(), qdrant=True)
    assert after.sound and not after.unchecked
    quiet = _index(str(corpus), "--source", "town")
    assert "second copy" not in words(quiet)
    asked = runner.invoke(
        app, ["ask", "When does the ferry stop?", "--source", "town", "--no-web", "--json"]
    )
    assert asked.exit_code == 0 and "January" in asked.stdout
