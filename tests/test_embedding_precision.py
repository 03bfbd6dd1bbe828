"""`prefrag index` embeds new sources at the configured precision; a source keeps the one it
was built with for its adds and for the queries of `prefrag ask`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from prefrag.cli import app
from prefrag.config import Settings, get_settings
from prefrag.index.docstore import read_manifest
from prefrag.index.embeddings import Embedder, resolve_model_dir

pytest.importorskip("onnxruntime")
runner = CliRunner()

NOTE = (
    "The Quillon ferry crosses to Brindle Cove twice a day in summer. In winter it sails only "
    "on market days, and the harbour master posts the tides on the chapel door."
)
OTHER = "Tamsworth's orchard cooperative presses cider every October and sells the vinegar."


def _index(home: Path, folder: Path, source: str) -> tuple[dict, np.ndarray, list[str]]:
    result = runner.invoke(app, ["index", str(folder), "--source", source])
    assert result.exit_code == 0, result.output
    manifest = read_manifest(home / "sources" / source)
    assert manifest is not None
    generation = home / "sources" / source / manifest.generation
    texts = [json.loads(line)["text"] for line in (generation / "chunks.jsonl").open()]
    vectors = np.load(generation / "vectors.npy")
    if (generation / "delta").is_dir():
        texts += [
            json.loads(line)["text"] for line in (generation / "delta" / "chunks.jsonl").open()
        ]
        vectors = np.vstack([vectors, np.load(generation / "delta" / "vectors.npy")])
    return manifest.__dict__, vectors, texts


def _embedder(precision: str) -> Embedder:
    model = resolve_model_dir("bundled:all-MiniLM-L6-v2")
    return Embedder(model, runtime="onnxruntime", precision=precision)  # type: ignore[arg-type]


def _use(monkeypatch, precision: str | None) -> None:
    if precision is None:
        monkeypatch.delenv("PREFRAG_EMBEDDING_PRECISION", raising=False)
    else:
        monkeypatch.setenv("PREFRAG_EMBEDDING_PRECISION", precision)
    get_settings.cache_clear()


def _query_precisions(monkeypatch, source: str, question: str) -> set[str]:
    """The precisions `prefrag ask` embedded its queries at, searching only `source`."""
    seen: list[str] = []
    encode_one = Embedder.encode_one

    def spy(self: Embedder, text: str) -> np.ndarray:
        seen.append(self.precision)
        return encode_one(self, text)

    monkeypatch.setattr(Embedder, "encode_one", spy)
    args = ["ask", question, "--source", source, "--no-web", "--reasoner", "extractive"]
    result = runner.invoke(app, [*args, "--json"])
    monkeypatch.setattr(Embedder, "encode_one", encode_one)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["citations"], result.output  # the note was found
    return set(seen)


def test_index_uses_the_default_precision(_isolated_home, tmp_path, monkeypatch):
    _use(monkeypatch, None)
    default = Settings.model_fields["embedding_precision"].default
    (tmp_path / "ferry.md").write_text(NOTE)
    manifest, vectors, texts = _index(_isolated_home, tmp_path, "harbour")
    assert manifest["embedding_precision"] == default
    assert np.abs(vectors - _embedder(default).encode(texts)).max() < 1e-5


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_index_and_ask_use_the_configured_precision(
    _isolated_home, tmp_path, monkeypatch, precision
):
    other = "fp32" if precision == "int8" else "int8"
    _use(monkeypatch, precision)
    (tmp_path / "ferry.md").write_text(NOTE)
    manifest, vectors, texts = _index(_isolated_home, tmp_path, "harbour")
    assert manifest["embedding_precision"] == precision
    assert np.abs(vectors - _embedder(precision).encode(texts)).max() < 1e-5
    assert np.abs(vectors - _embedder(other).encode(texts)).max() > 1e-3
    assert _query_precisions(monkeypatch, "harbour", "When does the ferry sail in winter?") == {
        precision
    }


def test_an_fp32_source_stays_fp32_when_int8_is_set(_isolated_home, tmp_path, monkeypatch):
    """Switching to int8 leaves sources built in fp32 in fp32: adds and queries, no mixing."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (first / "ferry.md").write_text(NOTE)
    (second / "cider.md").write_text(OTHER)
    _use(monkeypatch, "fp32")
    manifest, _, _ = _index(_isolated_home, first, "older")
    assert manifest["embedding_precision"] == "fp32"
    _use(monkeypatch, "int8")
    manifest, vectors, texts = _index(_isolated_home, second, "older")
    assert manifest["embedding_precision"] == "fp32" and len(texts) == 2
    assert np.abs(vectors - _embedder("fp32").encode(texts)).max() < 1e-5
    assert _query_precisions(monkeypatch, "older", "When does the ferry sail in winter?") == {
        "fp32"
    }


@pytest.mark.parametrize(("built", "later"), [("fp32", "int8"), ("int8", "fp32")])
def test_a_lost_manifest_is_rebuilt_with_the_precision_of_the_vectors(
    _isolated_home, tmp_path, monkeypatch, built, later
):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (first / "ferry.md").write_text(NOTE)
    (second / "cider.md").write_text(OTHER)
    _use(monkeypatch, built)
    _index(_isolated_home, first, "kept")
    (_isolated_home / "sources" / "kept" / "manifest.json").unlink()
    _use(monkeypatch, later)  # the setting differs: the source's vectors decide
    manifest, vectors, texts = _index(_isolated_home, second, "kept")
    assert manifest["embedding_precision"] == built and len(texts) == 2
    assert np.abs(vectors - _embedder(built).encode(texts)).max() < 1e-5
