"""RAG² rationale queries: search with the model's step-by-step rationale, not its sub-query.

With `Context.rationale_queries` on, `think` asks a reasoner that supports it for a
rationale-style thought (`think(..., rationale=True)`; `LLMReasoner` adds the rationale
instruction to its prompt) and retrieval uses that thought alone as the query, as RAG²
does. A reasoner without the option (the extractive one) writes thoughts about its
procedure ("searching with the question"), not about the content, so its thought is
searched together with its sub-query. An empty thought keeps the sub-query. The state
records which one was searched (`query_basis`) and the sub-query itself (`sub_query`), and
the step's notes say so.
"""

from __future__ import annotations

import inspect
from functools import cache
from typing import Any

from prefrag.graphs.context import Context
from prefrag.reasoners.base import Reasoner, ThinkDecision

__all__ = ["rationale_note", "search_query", "think_options"]

# A rationale longer than this is cut (retrievers truncate long queries anyway).
MAX_RATIONALE_WORDS = 120


def think_options(reasoner: Reasoner, context: Context) -> dict[str, Any]:
    """Extra keyword arguments for `reasoner.think` under this run's settings."""
    if context.rationale_queries and _accepts_rationale(type(reasoner)):
        return {"rationale": True}
    return {}


def search_query(
    decision: ThinkDecision, question: str, context: Context, *, reasoner: Reasoner | None = None
) -> dict[str, Any]:
    """The state update naming what this round searches with, and why."""
    sub_query = decision.query.strip() or question
    rationale = " ".join(decision.thought.split()[:MAX_RATIONALE_WORDS])
    if context.rationale_queries and rationale:
        if reasoner is not None and not _accepts_rationale(type(reasoner)):
            rationale = f"{rationale} {sub_query}"
        return {"query": rationale, "sub_query": sub_query, "query_basis": "rationale"}
    return {"query": sub_query, "sub_query": sub_query, "query_basis": "sub-query"}


def rationale_note(state: Any) -> list[str]:
    """The step note of a round that searched with the rationale, else nothing."""
    if state.get("query_basis") != "rationale":
        return []
    return [
        "Rationale query (RAG²): searched with the model's rationale instead of the "
        f"sub-query '{state.get('sub_query', '')}'."
    ]


@cache
def _accepts_rationale(kind: type) -> bool:
    think = getattr(kind, "think", None)
    if think is None:
        return False
    try:
        return "rationale" in inspect.signature(think).parameters
    except (TypeError, ValueError):
        return False
