"""RAG² rationale queries: search with the model's step-by-step rationale, not its sub-query.

With `Context.rationale_queries` on, `think` asks the reasoner for a rationale-style
thought (`think(..., rationale=True)`, part of the `Reasoner` protocol; `LLMReasoner` adds
the rationale instruction to its prompt). A thought the reasoner marks as a rationale
(`ThinkDecision.is_rationale`) is searched alone, as RAG² does. Other thoughts (the
extractive reasoner's, or a fallback after an unreadable reply) are about the procedure
("searching with the question"), not the content, so they are searched together with the
sub-query. An empty thought keeps the sub-query. The state
records which one was searched (`query_basis`) and the sub-query itself (`sub_query`), and
the step's notes say so.
"""

from __future__ import annotations

from typing import Any

from prefrag.graphs.context import Context
from prefrag.reasoners.base import ThinkDecision

__all__ = ["rationale_note", "search_query", "think_options"]

# A rationale longer than this is cut (retrievers truncate long queries anyway).
MAX_RATIONALE_WORDS = 120


def think_options(context: Context) -> dict[str, Any]:
    """Extra keyword arguments for `Reasoner.think` under this run's settings."""
    return {"rationale": True} if context.rationale_queries else {}


def search_query(decision: ThinkDecision, question: str, context: Context) -> dict[str, Any]:
    """The state update naming what this round searches with, and why."""
    sub_query = decision.query.strip() or question
    rationale = " ".join(decision.thought.split()[:MAX_RATIONALE_WORDS])
    if context.rationale_queries and rationale:
        if not decision.is_rationale:
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
