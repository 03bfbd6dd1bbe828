"""`prefrag index` embeds at the configured precision; a source keeps the one it was built with."""

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


def test_index_uses_the_default_precision(_isolated_home, tmp_path):
    (tmp_path / "ferry.md").write_text(NOTE)
    manifest, vectors, texts = _index(_isolated_home, tmp_path, "harbour")
    default = Settings.model_fields["embedding_precision"].default
    assert manifest["embedding_precision"] == default
    assert np.abs(vectors - _embedder(default).encode(texts)).max() < 1e-5


def test_a_source_keeps_the_precision_it_was_built_with(_isolated_home, tmp_path, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (first / "ferry.md").write_text(NOTE)
    (second / "cider.md").write_text(OTHER)
    monkeypatch.setenv("PREFRAG_EMBEDDING_PRECISION", "int8")
    get_settings.cache_clear()
    manifest, vectors, texts = _index(_isolated_home, first, "quantised")
    assert manifest["embedding_precision"] == "int8"
    int8, fp32 = _embedder("int8"), _embedder("fp32")
    assert np.abs(vectors - int8.encode(texts)).max() < 1e-5
    assert np.abs(vectors - fp32.encode(texts)).max() > 1e-3  # int8 vectors, not fp32's
    # Later runs at fp32 add to the int8 source in int8: no source mixes precisions.
    monkeypatch.setenv("PREFRAG_EMBEDDING_PRECISION", "fp32")
    get_settings.cache_clear()
    manifest, vectors, texts = _index(_isolated_home, second, "quantised")
    assert manifest["embedding_precision"] == "int8" and len(texts) == 2
    assert np.abs(vectors - int8.encode(texts)).max() < 1e-5


def test_int8_needs_onnx_runtime(monkeypatch):
    from prefrag.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="PREFRAG_EMBEDDING_PRECISION=fp32"):
        Embedder(resolve_model_dir("bundled:all-MiniLM-L6-v2"), runtime="numpy", precision="int8")


def test_a_source_is_searched_with_query_vectors_of_its_precision(
    _isolated_home, tmp_path, monkeypatch
):
    from prefrag.sources.local import LocalSource

    (tmp_path / "ferry.md").write_text(NOTE)
    monkeypatch.setenv("PREFRAG_EMBEDDING_PRECISION", "int8")
    get_settings.cache_clear()
    _, vectors, _ = _index(_isolated_home, tmp_path, "quantised")
    monkeypatch.setenv("PREFRAG_EMBEDDING_PRECISION", "fp32")
    get_settings.cache_clear()
    query = "When does the ferry sail in winter?"
    (hit,) = LocalSource("quantised", mode="dense").search(query, 1)
    int8_query = _embedder("int8").encode([query])[0]
    assert hit.metadata["score"] == pytest.approx(float(vectors[0] @ int8_query), abs=1e-5)
    fp32_query = _embedder("fp32").encode([query])[0]
    assert abs(hit.metadata["score"] - float(vectors[0] @ fp32_query)) > 1e-4
