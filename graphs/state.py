"""Typed state of the PrefRAG graph."""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.documents import Document

StepKind = Literal["retrieve", "supplement"]


class Step(TypedDict, total=False):
    """One retrieval round as recorded in the route.

    `searched` lists every source searched this round in order; `used` holds the documents
    that entered the observation (only the fallback's when the switcher said False).
    """

    index: int
    kind: StepKind
    thought: str
    query: str
    searched: list[str]
    results: dict[str, list[str]]  # source name -> ids it returned for this step's query
    source: str
    verdict: bool | None
    analysis: str
    retrieved: list[Document]
    used: list[Document]
    notes: list[str]
    both: bool  # internal: preference off, use preferred and fallback together


class Counters(TypedDict):
    """Retrieval counters as in the paper's efficiency tables (appendix A.6)."""

    local_total: int
    web_total: int
    local_used: int
    used: int


def empty_counters() -> Counters:
    """All retrieval counters at zero."""
    return {"local_total": 0, "web_total": 0, "local_used": 0, "used": 0}


def _merge_counts(left: dict[str, int] | None, right: dict[str, int] | None) -> dict[str, int]:
    merged = dict(left or {})
    for key, value in (right or {}).items():
        merged[key] = merged.get(key, 0) + value
    return merged


class InputState(TypedDict):
    """What a caller passes in."""

    question: str


class OutputState(TypedDict, total=False):
    """What a caller gets back."""

    question: str
    answer: str
    citations: list[dict[str, Any]]
    steps: list[Step]
    reflections: list[dict[str, Any]]
    counters: Counters
    model_calls: dict[str, int]
    tokens: dict[str, int]
    notes: list[str]


class PrefRAGState(TypedDict, total=False):
    """The full working state of one question."""

    question: str
    # Decision made by `think` and consumed by the retrieval nodes.
    thought: str
    query: str
    requested_source: str | None
    pending_local: list[Document]
    pending_step: Step | None
    # Accumulated trace.
    steps: Annotated[list[Step], operator.add]
    evidence: list[Document]
    answer: str
    cited_ids: list[str]
    citations: list[dict[str, Any]]
    reflections: Annotated[list[dict[str, Any]], operator.add]
    feedback: str
    counters: Counters
    model_calls: Annotated[dict[str, int], _merge_counts]
    tokens: Annotated[dict[str, int], _merge_counts]
    notes: Annotated[list[str], operator.add]
