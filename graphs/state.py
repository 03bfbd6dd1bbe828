"""Typed state of the PrefRAG graph.

The TypedDicts come from `typing_extensions`: on Python 3.11 (the version `langgraph.json`
pins) the LangGraph server can only build Studio's input and output forms from those.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, NotRequired, get_args, get_origin, get_type_hints

from langchain_core.documents import Document
from langgraph.types import Overwrite
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
    question_results: dict[str, list[str]]  # source name -> ids it returned for the question
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
    """An earlier question on the same thread, kept readable after a new one starts.

    `standalone_question` is the question the turn answered when `condense_question`
    rewrote it (a follow-up); `question` is always what was asked.
    """

    question: str
    answer: str
    citations: list[dict[str, Any]]
    standalone_question: NotRequired[str]
    abstained: NotRequired[bool]
    short_answer: NotRequired[str]


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
    standalone_question: str  # the question answered: `question`, or its rewrite (follow-up)
    answer: str
    abstained: bool  # the sources did not answer the question; `answer` says so and why
    confidence: float | None  # how sure the reasoner is of `answer`, in [0, 1] (None: unknown)
    short_answer: str  # the span / yes-no / option `answer` holds with its sentences, if any
    citations: list[dict[str, Any]]
    route: list[Step]
    reflections: list[dict[str, Any]]
    counters: Counters
    model_calls: dict[str, int]
    tokens: dict[str, int]
    role_decisions: dict[str, int]  # decisions per role (think, compare, answer, reflect, plan)
    role_fallbacks: dict[str, int]  # of those, safe fallbacks: the model's reply was unreadable
    notes: list[str]
    history: list[Turn]
    filtered: list[dict[str, Any]]  # snippets filter_evidence judged (dropped ones say why)


class FallbackSearch(TypedDict):
    """What the latest fallback search of a round returned (before it enters the step)."""

    source: str
    documents: list[Document]
    notes: list[str]


class ThreadState(TypedDict, total=False):
    """What a thread keeps from one question (episode) to the next."""

    question: str
    episode_question: str  # the question the current episode was asked (for `history`)
    run_context: dict[str, Any]  # the episode's run settings (`Context`), for resuming
    # Earlier turns of the thread, oldest first.
    history: Annotated[list[Turn], operator.add]


class EpisodeState(TypedDict, total=False):
    """What one question's episode accumulates; `new_question` empties every key of it."""

    # What the episode answers: `question`, or condense_question's standalone rewrite.
    standalone_question: str
    # Decision made by `think` and consumed by the routing and retrieval nodes.
    thought: str
    action: Literal["search", "answer"] | None
    query: str
    query_basis: Literal["sub-query", "rationale"] | None  # rationale_queries: think's thought
    sub_query: str  # the sub-query think wrote (kept when the rationale is searched)
    plan: dict[str, Any] | None  # this round's SPO plan (`SourcePlan`), when it searches
    planned: dict[str, Any] | None  # this round's SPO plan and what it retrieved
    requested_source: str | None
    forced_answer: dict[str, Any] | None  # think's answer when the budget was spent
    # The round under way: its local documents, its step record, the fallback sources
    # not yet searched (in order) and what the latest fallback search returned.
    pending_local: list[Document]
    step: Step | None
    fallbacks_left: list[str]
    fallback: FallbackSearch | None
    # Accumulated trace.
    route: Annotated[list[Step], operator.add]
    evidence: list[Document]
    answer: str
    abstained: bool
    confidence: float | None
    short_answer: str
    cited_ids: list[str]
    citations: list[dict[str, Any]]
    reflections: Annotated[list[dict[str, Any]], operator.add]
    feedback: dict[str, Any] | None
    filtered: list[dict[str, Any]]
    supplement_requested: bool
    counters: Annotated[Counters, add_counters]
    model_calls: Annotated[dict[str, int], add_counts]
    tokens: Annotated[dict[str, int], add_counts]
    role_decisions: Annotated[dict[str, int], add_counts]
    role_fallbacks: Annotated[dict[str, int], add_counts]
    notes: Annotated[list[str], operator.add]


class PrefRAGState(ThreadState, EpisodeState, total=False):
    """The full working state of one question (one retrieval episode) on a thread."""


def question_of(state: PrefRAGState) -> str:
    """The question the episode answers: the standalone rewrite of a follow-up, else as asked."""
    return state.get("standalone_question") or state.get("question") or ""


def episode_start() -> dict[str, Any]:
    """The update that empties every `EpisodeState` key, derived from its annotations.

    A key with a reducer is replaced (`Overwrite`) rather than merged; the empty value
    follows the type: None for optional values, else an empty list, mapping, string, zero
    counters or False.
    """
    update: dict[str, Any] = {}
    for key, hint in get_type_hints(EpisodeState, include_extras=True).items():
        if get_origin(hint) is Annotated:
            update[key] = Overwrite(_empty(get_args(hint)[0]))
        else:
            update[key] = _empty(hint)
    return update


def merge_update(state: dict[str, Any], update: Mapping[str, Any]) -> None:
    """Apply a node's `update` to `state` in place, with the graph's reducers.

    A key annotated with a reducer in `PrefRAGState` is merged by it (an `Overwrite`
    replaces); any other key is replaced. Code that runs nodes' kernels outside the graph
    (the loop baselines) keeps its state exactly as the graph would.
    """
    for key, value in update.items():
        reducer = _REDUCERS.get(key)
        if isinstance(value, Overwrite) or reducer is None:
            state[key] = value.value if isinstance(value, Overwrite) else value
        else:
            state[key] = reducer(state[key], value) if key in state else value


def _empty(hint: Any) -> Any:
    if hint is Counters:
        return empty_counters()
    origin = get_origin(hint)
    if type(None) in get_args(hint):
        return None
    if origin is list:
        return []
    if origin is dict:
        return {}
    if hint is str:
        return ""
    if hint is bool:
        return False
    raise TypeError(f"No empty value for an episode key of type {hint!r}.")


_REDUCERS: dict[str, Callable[[Any, Any], Any]] = {
    key: get_args(hint)[1]
    for key, hint in get_type_hints(PrefRAGState, include_extras=True).items()
    if get_origin(hint) is Annotated
}
