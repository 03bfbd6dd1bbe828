"""Sentence embeddings with the bundled all-MiniLM-L6-v2 model, loaded offline.

The model is a plain BERT encoder with mean pooling and L2 normalisation. It runs in ONNX
Runtime over a graph built from the safetensors weights (`prefrag.index.onnx_bert`; 1.7-2x
less CPU than the numpy pass, see bench/bench_embedder.py), or, when onnxruntime is not
installed or `PREFRAG_EMBEDDING_RUNTIME=numpy`, as a small numpy forward pass. Both match
sentence-transformers to ~2e-7 without torch, `transformers` or sentence-transformers: the
main job (index and ask) installs none of them. Bulk encoding (indexing) spreads
length-sorted batches over one worker thread per core, each computing on one thread
(numpy's element-wise steps run on one core anyway, and ONNX Runtime releases the GIL). A
local sentence-transformers folder can be configured instead, as long as it is a BERT-style
encoder with GELU and mean pooling.
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from prefrag.errors import ConfigurationError
from prefrag.index.threads import single_blas_thread
from prefrag.shared import shared

if TYPE_CHECKING:
    from prefrag.config import Settings

BUNDLED_MINILM = "bundled:all-MiniLM-L6-v2"
EmbeddingRuntime = Literal["auto", "onnxruntime", "numpy"]
EmbeddingPrecision = Literal["fp32", "int8"]
# The weight products computed in int8 at precision "int8" (of onnx_bert.QUANTISABLE).
INT8_PRODUCTS = ("qkv", "attended", "up", "down")


def resolve_runtime(runtime: EmbeddingRuntime) -> Literal["onnxruntime", "numpy"]:
    """The runtime that computes vectors: `auto` takes ONNX Runtime when it is installed.

    Raises:
        ConfigurationError: `onnxruntime` was asked for and is not installed.
    """
    installed = importlib.util.find_spec("onnxruntime") is not None
    if runtime == "numpy" or (runtime == "auto" and not installed):
        return "numpy"
    if not installed:
        raise ConfigurationError(
            "PREFRAG_EMBEDDING_RUNTIME=onnxruntime needs the 'onnxruntime' package: run "
            "`pip install onnxruntime`, or set PREFRAG_EMBEDDING_RUNTIME=numpy."
        )
    return "onnxruntime"


def resolve_model_dir(name: str) -> Path:
    """The folder holding the embedding model named `name`.

    The bundled MiniLM ships inside the package (`prefrag/data/minilm`: its config,
    tokenizer and float16 weights, Apache-2.0), so `pip install prefrag` alone embeds.
    """
    if name == BUNDLED_MINILM:
        return Path(str(resources.files("prefrag.data") / "minilm"))
    path = Path(name).expanduser()
    if not (path / "config.json").exists():
        raise ConfigurationError(f"Embedding model folder '{path}' has no config.json.")
    return path


WEIGHT_FILES = ("model.safetensors", "model.fp16.safetensors")


def weights_file(model_dir: Path) -> Path:
    """The model's safetensors weights (float32, or the bundled float16)."""
    for name in WEIGHT_FILES:
        if (model_dir / name).exists():
            return model_dir / name
    raise ConfigurationError(f"Embedding model folder '{model_dir}' has no model.safetensors.")


def load_weights(model_dir: Path) -> dict[str, np.ndarray]:
    """The model's weights in float32 (float16 files are widened)."""
    from safetensors.numpy import load_file

    return {
        name: value.astype(np.float32) if value.dtype == np.float16 else value
        for name, value in load_file(str(weights_file(model_dir))).items()
    }


MAX_TOKENS = 256  # word pieces MiniLM reads per text, [CLS] and [SEP] included
_RECENT_QUERIES = 256  # query vectors kept by `encode_one`


class Embedder:
    """Encodes texts into L2-normalised float32 vectors (mean pooling over tokens)."""

    def __init__(
        self,
        model_dir: Path,
        *,
        max_length: int = MAX_TOKENS,
        batch_size: int = 4,
        runtime: EmbeddingRuntime = "auto",
        precision: EmbeddingPrecision = "fp32",
        int8_products: Sequence[str] = INT8_PRODUCTS,
    ) -> None:
        self.model_dir = Path(model_dir)
        self.batch_size = batch_size
        self.runtime = resolve_runtime(runtime)
        if precision == "int8" and self.runtime != "onnxruntime":
            raise ConfigurationError(
                "int8 embedding (PREFRAG_EMBEDDING_PRECISION=int8, and sources built with it) "
                "needs ONNX Runtime: install onnxruntime and leave PREFRAG_EMBEDDING_RUNTIME "
                "unset, or set PREFRAG_EMBEDDING_PRECISION=fp32 for new sources."
            )
        self.precision = precision
        self._int8 = tuple(int8_products) if precision == "int8" else ()
        if self._int8:
            # int8 quantises each batch's activations with one scale: a text embedded in a
            # batch would depend on its neighbours. One text per call keeps its vector its own.
            self.batch_size = 1
        self._lock = threading.Lock()
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()
        self._bert: Any = None
        self._tokenizer: Any = None
        self._config = _read_config(self.model_dir)
        self.max_length = min(max_length, int(self._config["max_position_embeddings"]))
        self.dimension = int(self._config["hidden_size"])

    def _load(self) -> None:
        tokenizer = word_piece_tokenizer(self.model_dir)
        weights = load_weights(self.model_dir)
        if self.runtime == "onnxruntime":
            from prefrag.index.onnx_bert import OnnxBert

            self._bert = OnnxBert(weights, self._config, int8=self._int8)
        else:
            self._bert = _Bert(weights, self._config)
        self._tokenizer = tokenizer

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of shape (len(texts), dimension), unit length."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            if self._bert is None:
                self._load()
        # Sorting by length keeps padding small inside each batch.
        order = np.argsort([-len(t) for t in texts], kind="stable")
        batches = [order[i : i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        out = np.empty((len(texts), self.dimension), dtype=np.float32)

        def encode_batch(batch: np.ndarray) -> None:
            out[batch] = self._encode_batch([texts[i] for i in batch])

        workers = min(len(batches), os.cpu_count() or 1)
        with single_blas_thread():
            if workers <= 1:
                for batch in batches:
                    encode_batch(batch)
            else:
                with ThreadPoolExecutor(max_workers=workers) as pool:
                    list(pool.map(encode_batch, batches))
        return out

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        assert self._tokenizer is not None and self._bert is not None
        ids, mask = _padded(self._tokenizer.encode_batch(texts), self.max_length)
        hidden = self._bert(ids, mask)
        pooled = (hidden * mask[..., None]).sum(1) / np.maximum(mask.sum(1)[:, None], 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def clear_cache(self) -> None:
        """Forget cached query vectors (benchmarks compare runs from the same cold state)."""
        with self._lock:
            self._recent.clear()

    def encode_one(self, text: str) -> np.ndarray:
        """The vector of a single text; recent texts are cached.

        A sub-query often goes to several indexes in one step (the members of a combined
        source, a local and a stand-in web index), so its vector is computed once.
        """
        with self._lock:
            cached = self._recent.get(text)
            if cached is not None:
                self._recent.move_to_end(text)
                return cached
        vector = self.encode([text])[0]
        vector.setflags(write=False)  # shared between callers
        with self._lock:
            self._recent[text] = vector
            if len(self._recent) > _RECENT_QUERIES:
                self._recent.popitem(last=False)
        return vector


def word_piece_tokenizer(model_dir: Path | str) -> Any:
    """The model's tokenizer, loaded once per process, shared by chunking and embedding.

    It neither truncates nor pads (chunking counts every piece of a document); the embedder
    cuts and pads the pieces itself (`_padded`).
    """

    def load() -> Any:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
        tokenizer.no_truncation()
        tokenizer.no_padding()
        return tokenizer

    return shared().once(("tokenizer", str(model_dir)), load)


def _padded(encodings: Sequence[Any], max_length: int) -> tuple[np.ndarray, np.ndarray]:
    """(token ids, 0/1 mask) of encoded texts, each cut to `max_length` and zero-padded.

    A longer text keeps its first `max_length - 1` pieces and its closing [SEP], as the
    tokenizer's own truncation of a single text does.
    """
    kept = [
        e.ids if len(e.ids) <= max_length else [*e.ids[: max_length - 1], e.ids[-1]]
        for e in encodings
    ]
    width = max(len(pieces) for pieces in kept)
    ids = np.zeros((len(kept), width), dtype=np.int64)
    mask = np.zeros((len(kept), width), dtype=np.float32)
    for row, pieces in enumerate(kept):
        ids[row, : len(pieces)] = pieces
        mask[row, : len(pieces)] = 1.0
    return ids, mask


def _read_config(model_dir: Path) -> dict[str, Any]:
    config = json.loads((model_dir / "config.json").read_text())
    if config.get("model_type", "bert") != "bert" or config.get("hidden_act") != "gelu":
        raise ConfigurationError(
            f"Embedding model '{model_dir}' must be a BERT encoder with GELU (like MiniLM)."
        )
    weights_file(model_dir)
    return config


def _read_dimension(model_dir: Path) -> int:
    return int(_read_config(model_dir)["hidden_size"])


class _Bert:
    """BERT encoder forward pass (eval mode) in numpy over safetensors weights."""

    def __init__(self, weights: dict[str, np.ndarray], config: dict[str, Any]) -> None:
        # Some exports prefix every tensor with "bert.". Dense weights are stored transposed
        # (in, out) and contiguous, so `x @ w` goes straight to BLAS without a copy.
        self.w = {
            name.removeprefix("bert."): (
                np.ascontiguousarray(value.T) if _is_dense(name, value) else value
            )
            for name, value in weights.items()
        }
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        # Query, key and value projections fused into one matrix product per layer.
        for i in range(self.layers):
            p = f"encoder.layer.{i}.attention.self."
            self.w[f"{p}qkv.weight"] = np.ascontiguousarray(
                np.concatenate([self.w[f"{p}{n}.weight"] for n in ("query", "key", "value")], 1)
            )
            self.w[f"{p}qkv.bias"] = np.concatenate(
                [self.w[f"{p}{n}.bias"] for n in ("query", "key", "value")]
            )

    def _embed(self, ids: np.ndarray) -> np.ndarray:
        w = self.w
        return (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][: ids.shape[1]]
            + w["embeddings.token_type_embeddings.weight"][0]
        )

    def __call__(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Last hidden states (batch, tokens, hidden) computed in numpy float32."""
        w = self.w
        batch, tokens = ids.shape
        x = _layer_norm(self._embed(ids), *_pair(w, "embeddings.LayerNorm"), self.eps)
        hidden = x.shape[-1]
        size = hidden // self.heads
        bias = np.where(mask[:, None, None, :] > 0, 0.0, np.finfo(np.float32).min)
        bias = bias.astype(np.float32)
        scale = np.float32(1.0 / np.sqrt(size))
        x = x.reshape(batch * tokens, hidden)
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            qkv = _linear(x, *_pair(w, f"{p}attention.self.qkv"))
            qkv = qkv.reshape(batch, tokens, 3, self.heads, size).transpose(2, 0, 3, 1, 4)
            q, k, v = (np.ascontiguousarray(part) for part in qkv)
            scores = q @ np.ascontiguousarray(k.transpose(0, 1, 3, 2))
            scores *= scale
            scores += bias
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * tokens, hidden)
            attended = _linear(context, *_pair(w, f"{p}attention.output.dense"))
            x = _layer_norm(attended + x, *_pair(w, f"{p}attention.output.LayerNorm"), self.eps)
            inner = _gelu(_linear(x, *_pair(w, f"{p}intermediate.dense")))
            out = _linear(inner, *_pair(w, f"{p}output.dense"))
            x = _layer_norm(out + x, *_pair(w, f"{p}output.LayerNorm"), self.eps)
        return x.reshape(batch, tokens, hidden)


def _pair(weights: dict[str, Any], name: str) -> tuple[Any, Any]:
    return weights[f"{name}.weight"], weights[f"{name}.bias"]


def _is_dense(name: str, value: np.ndarray) -> bool:
    return value.ndim == 2 and name.endswith(".weight") and "embeddings." not in name


def _linear(x: np.ndarray, weight_t: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """`x W^T + b` with the weight already transposed."""
    return x @ weight_t + bias


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    centered = x - x.mean(-1, keepdims=True)
    variance = np.mean(centered * centered, -1, keepdims=True)
    return (centered / np.sqrt(variance + eps) * weight + bias).astype(np.float32, copy=False)


def _gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU, as BERT and torch's default `gelu` compute it."""
    out = _erf(x * np.float32(0.7071067811865476))
    out += 1.0
    out *= x
    out *= 0.5
    return out.astype(np.float32, copy=False)


# Abramowitz & Stegun 7.1.26: |error| <= 1.5e-7 (computed in float64, then rounded to
# float32), so the numpy forward pass needs no scipy for its one special function.
_ERF_P = 0.3275911
_ERF_A = (1.061405429, -1.453152027, 1.421413741, -0.284496736)
_ERF_A1 = 0.254829592


def _erf(x: np.ndarray) -> np.ndarray:
    """The error function of each element of `x` (float32, within 2e-7)."""
    z = np.abs(x, dtype=np.float64)
    t = 1.0 / (1.0 + _ERF_P * z)
    poly = _ERF_A[0]
    for a in _ERF_A[1:]:
        poly = poly * t + a
    poly = (poly * t + _ERF_A1) * t
    result = 1.0 - poly * np.exp(-z * z)
    return np.copysign(result, x).astype(np.float32, copy=False)


def with_precision(settings: Settings, precision: str | None) -> Settings:
    """`settings` with the embedding precision a source was built with (None: unchanged)."""
    if precision is None or precision == settings.embedding_precision:
        return settings
    return settings.model_copy(
        update={"embedding_precision": "int8" if precision == "int8" else "fp32"}
    )


def get_embedder(settings: Settings | None = None) -> Embedder:
    """The process's embedder named in settings (`prefrag.shared`; loaded on first use).

    One per model folder, batch size and runtime; a test's encoder when one was injected
    with `sharing(SharedResources(embedder=...))`.
    """
    from prefrag.config import get_settings

    settings = settings or get_settings()
    model_dir = resolve_model_dir(settings.embedding_model)
    batch_size, runtime = settings.embedding_batch_size, settings.embedding_runtime
    precision = settings.embedding_precision
    embedder: Embedder = shared().embedder(
        (str(model_dir), batch_size, runtime, precision),
        lambda: Embedder(model_dir, batch_size=batch_size, runtime=runtime, precision=precision),
    )
    return embedder
