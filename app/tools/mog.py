"""Mix-of-Granularity selection (MoG, Zhong et al., §3.2 and appendix A).

Per level, the top-`k_r` chunks are retrieved. Every finest chunk gets a relevance vector
with one entry per level: the level's score if the finest chunk lies inside a chunk
retrieved at that level, else 0. The router's weights turn that matrix into one score per
finest chunk; the top finest chunks are chosen, and for each the chunk containing it at
the router's best level is returned. Scores are never compared across levels directly:
coarser chunks score systematically higher, and separate per-level stores make their
scores incomparable anyway (appendix A).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.documents import Document

from prefrag.tools.granularity_index import MultiGranularIndex

ROUTER_FILE = "router.npz"


class Router:
    """The trained MoG router: an MLP from a query embedding to one weight per level.

    Weights are sigmoid outputs in (0, 1), as trained with BCE against soft labels.
    Inference is plain numpy, so the query path never imports torch for it.
    """

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]]) -> None:
        self.layers = layers
        self.n_levels = int(layers[-1][1].shape[0])

    def weights(self, query_vector: np.ndarray) -> np.ndarray:
        """Per-level weights for one query vector."""
        hidden = np.asarray(query_vector, dtype=np.float32)
        for i, (weight, bias) in enumerate(self.layers):
            hidden = hidden @ weight.T + bias
            if i < len(self.layers) - 1:
                hidden = np.maximum(hidden, 0.0)
        return 1.0 / (1.0 + np.exp(-hidden))

    def save(self, path: Path) -> None:
        """Write the router as an `.npz` of its layer weights."""
        arrays: dict[str, Any] = {}
        for i, (weight, bias) in enumerate(self.layers):
            arrays[f"w{i}"], arrays[f"b{i}"] = weight, bias
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, **arrays)

    @classmethod
    def load(cls, path: Path) -> Router:
        """Open a router written by `save` (or by `prefrag.training.mog_router`)."""
        with np.load(path) as data:
            count = len([k for k in data.files if k.startswith("w")])
            layers = [
                (data[f"w{i}"].astype(np.float32), data[f"b{i}"].astype(np.float32))
                for i in range(count)
            ]
        return cls(layers)


class UniformRouter:
    """Equal weights for every level: MoG without a trained router.

    With equal weights the argmax is a tie, so the returned level is `default_level`
    (1 = the base chunk size, the size a single-granularity index would use).
    """

    def __init__(self, n_levels: int, default_level: int = 1) -> None:
        self.n_levels = n_levels
        self.default_level = min(default_level, n_levels - 1)

    def weights(self, query_vector: np.ndarray) -> np.ndarray:
        """Equal weights."""
        return np.full(self.n_levels, 1.0 / self.n_levels, dtype=np.float32)


@dataclass
class MoGResult:
    """Selected chunks plus what the router decided."""

    documents: list[Document]
    weights: list[float]
    level: int
    notes: list[str] = field(default_factory=list)


class MoGSelector:
    """Chooses chunks across granularities with the MoG rule.

    Args:
        index: A `GranularityIndex` (chunks) or `GraphGranularityIndex` (MoGG).
        router: A `Router`; without one, uniform weights and the base level.
        k_r: Candidates retrieved per level (paper: 3).
    """

    def __init__(
        self,
        index: MultiGranularIndex,
        router: Router | UniformRouter | None = None,
        k_r: int = 3,
    ) -> None:
        self.index = index
        self.router = router or UniformRouter(index.n_levels)
        if self.router.n_levels != index.n_levels:
            raise ValueError(
                f"Router has {self.router.n_levels} levels but the index has {index.n_levels}."
            )
        self.k_r = k_r

    def select(self, query: str, k: int) -> MoGResult:
        """The top-`k` chunks for `query`."""
        return self.select_vector(self.index.encode_query(query), k)

    def select_vector(self, query_vector: np.ndarray, k: int) -> MoGResult:
        """The top-`k` chunks for an already encoded query."""
        hits = self.search_levels(query_vector)
        return self.combine(query_vector, hits, k)

    def search_levels(self, query_vector: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """The per-level top-`k_r` searches (indices, scores) the rule starts from."""
        return [
            self.index.search(level, query_vector, self.k_r) for level in range(self.index.n_levels)
        ]

    def combine(
        self,
        query_vector: np.ndarray,
        hits: list[tuple[np.ndarray, np.ndarray]],
        k: int,
    ) -> MoGResult:
        """Apply the selection rule to per-level search results (everything after search)."""
        weights = np.asarray(self.router.weights(query_vector), dtype=np.float32)
        level = best_level(self.router, weights)
        finest, scores = finest_relevance(self.index, hits)
        weighted = scores @ weights if len(finest) else np.zeros(0, np.float32)
        order = np.argsort(-weighted, kind="stable")
        documents: list[Document] = []
        seen: set[int] = set()
        for position in order:
            if len(documents) >= k or weighted[position] <= 0:
                break
            chunk = self.index.container(level, int(finest[position]))
            if chunk in seen:
                continue
            seen.add(chunk)
            document = self.index.chunk_document(level, chunk, score=float(weighted[position]))
            document.metadata["mog"] = {
                "level": level,
                "weights": [round(float(w), 4) for w in weights],
                "finest": int(finest[position]),
                "relevance": [round(float(s), 4) for s in scores[position]],
            }
            documents.append(document)
        return MoGResult(documents, [float(w) for w in weights], level)


def best_level(router: Router | UniformRouter, weights: np.ndarray) -> int:
    """The router's best level: argmax of its weights (the default level when uniform)."""
    if isinstance(router, UniformRouter):
        return router.default_level
    return int(np.argmax(weights))


def finest_relevance(
    index: MultiGranularIndex, hits: list[tuple[np.ndarray, np.ndarray]]
) -> tuple[np.ndarray, np.ndarray]:
    """The finest-chunk relevance matrix of the paper (eq. 1's t_rs).

    Returns the finest chunk ids that appear in any retrieved chunk and a matrix with one
    row per such finest chunk and one column per level: that level's score if the finest
    chunk lies inside a chunk retrieved there (the best one if several), else 0.
    """
    rows: dict[int, np.ndarray] = {}
    n_levels = len(hits)
    for level, (chunks, scores) in enumerate(hits):
        for chunk, score in zip(chunks, scores, strict=True):
            # A negative cosine means "unrelated": it must not beat an unretrieved 0.
            value = max(float(score), 0.0)
            for finest in index.members(level, int(chunk)):
                row = rows.setdefault(int(finest), np.zeros(n_levels, dtype=np.float32))
                row[level] = max(row[level], value)
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros((0, n_levels), dtype=np.float32)
    finest_ids = np.fromiter(rows, dtype=np.int64, count=len(rows))
    return finest_ids, np.stack([rows[int(f)] for f in finest_ids])


def load_router(path: Path) -> Router | None:
    """The router saved at `path`, or None when there is none."""
    path = Path(path)
    if path.is_dir():
        path = path / ROUTER_FILE
    return Router.load(path) if path.exists() else None


def router_info(path: Path) -> dict[str, Any]:
    """The training summary saved next to a router, if any."""
    info = Path(path).with_suffix(".json")
    return json.loads(info.read_text()) if info.exists() else {}
