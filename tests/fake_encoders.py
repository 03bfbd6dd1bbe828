"""A deterministic stand-in for the embedder, for tests that need vectors but not MiniLM."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np


class BagOfWords:
    """Hashed bag of words (64 buckets), unit length: texts sharing words are close."""

    dimension = 64

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text (all zeros for a text without words)."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().replace(".", " ").split():
                out[i, zlib.crc32(word.encode()) % self.dimension] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        result: np.ndarray = out / np.where(norms == 0, 1, norms)
        return result

    def encode_one(self, text: str) -> np.ndarray:
        """The vector of one text."""
        vector: np.ndarray = self.encode([text])[0]
        return vector
