"""Typed state of the PrefRAG graph.

The TypedDicts come from `typing_extensions`: on Python 3.11 (the version `langgraph.json`
pins) the LangGraph server can only build Studio's input and output forms from those.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal

from langchain_core.documents import Document
from typing_extensions import TypedDict

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
    query_basis: Literal["sub-query", "rationale"]  # what the step searched with
    plan: dict[str, Any]  # the SPO plan of a planned round (plan_sources)
    source: str
    verdict: bool | None
    analysis: str
    retrieved: list[Document]
    used: list[Document]
    notes: list[str]


class Counters(TypedDict):
    """Retrieval counters as in the paper's efficiency tables (appendix A.6)."""

    local_total: int
    web_total: int
    local_used: int
    used: int


class Turn(TypedDict):
    """An earlier question on the same thread, kept readable after a new one starts."""

    question: str
    answer: str
    citations: list[dict[str, Any]]


def empty_counters() -> Counters:
    """All retrieval counters at zero."""
    return {"local_total": 0, "web_total": 0, "local_used": 0, "used": 0}


def add_counts(left: dict[str, int] | None, right: dict[str, int] | None) -> dict[str, int]:
    """Reducer: `right` holds increments that are added to `left` key by key."""
    merged = dict(left or {})
    for key, value in (right or {}).items():
        merged[key] = merged.get(key, 0) + value
    return merged


def add_counters(left: Counters | None, right: dict[str, int] | None) -> Counters:
    """Reducer of `counters`: increments added to the four retrieval counters."""
    held, more = left or empty_counters(), right or {}
    return {
        "local_total": held.get("local_total", 0) + more.get("local_total", 0),
        "web_total": held.get("web_total", 0) + more.get("web_total", 0),
        "local_used": held.get("local_used", 0) + more.get("local_used", 0),
        "used": held.get("used", 0) + more.get("used", 0),
    }


class InputState(TypedDict):
    """What a caller passes in: a question (a new one on a thread starts a new episode)."""

    question: str


class OutputState(TypedDict, total=False):
    """What a caller gets back."""

    question: str
    answer: str
    abstained: bool  # the sources did not answer the question; `answer` says so and why
    citations: list[dict[str, Any]]
    route: list[Step]
    reflections: list[dict[str, Any]]
    counters: Counters
    model_calls: dict[str, int]
    tokens: dict[str, int]
    decisions: dict[str, int]  # role decisions made (think, compare, answer, reflect, plan)
    fallbacks: dict[str, int]  # of those, safe fallbacks: the model's reply was unreadable
    notes: list[str]
    history: list[Turn]
    filtered: list[dict[str, Any]]  # snippets filter_evidence judged (dropped ones say why)


class PrefRAGState(TypedDict, total=False):
    """The full working state of one question (one retrieval episode) on a thread."""

    question: str
    episode_question: str  # the question the current episode answers
    run_context: dict[str, Any]  # the episode's run settings (`Context`), for resuming
    # Earlier turns of the thread, oldest first.
    history: Annotated[list[Turn], operator.add]
    # Decision made by `think` and consumed by the routing and retrieval nodes.
    thought: str
    action: Literal["search", "answer"]
    query: str
    query_basis: Literal["sub-query", "rationale"]  # rationale_queries: think's thought
    sub_query: str  # the sub-query think wrote (kept when the rationale is searched)
    planned: dict[str, Any] | None  # this round's SPO plan and what it retrieved
    requested_source: str | None
    forced_answer: dict[str, Any] | None  # think's answer when the budget was spent
    pending_local: list[Document]
    pending_step: Step | None  # a step the switcher sent to the fallback sources
    use_both: bool  # preference off: the pending step uses local and fallback documents
    # Accumulated trace.
    route: Annotated[list[Step], operator.add]
    evidence: list[Document]
    answer: str
    abstained: bool
    cited_ids: list[str]
    citations: list[dict[str, Any]]
    reflections: Annotated[list[dict[str, Any]], operator.add]
    feedback: dict[str, Any] | None
    filtered: list[dict[str, Any]]
    supplement_requested: bool
    counters: Annotated[Counters, add_counters]
    model_calls: Annotated[dict[str, int], add_counts]
    tokens: Annotated[dict[str, int], add_counts]
    decisions: Annotated[dict[str, int], add_counts]
    fallbacks: Annotated[dict[str, int], add_counts]
    notes: Annotated[list[str], operator.add]
