"""Reciprocal rank fusion of several ranked lists."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

Key = TypeVar("Key", bound=Hashable)

RRF_K = 60  # Cormack et al. (2009); damps the head of each list


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[Key]], *, k: int = RRF_K, limit: int | None = None
) -> list[tuple[Key, float]]:
    """Items of all `rankings` scored by the sum of `1 / (k + rank)`, best first.

    Ties keep the order in which items were first met, so fusing is deterministic.
    """
    scores: dict[Key, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    fused = sorted(scores.items(), key=lambda pair: -pair[1])  # stable: first-met wins ties
    return fused if limit is None else fused[:limit]
