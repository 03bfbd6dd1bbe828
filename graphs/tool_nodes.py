"""The retrieval-path tool nodes: Mix-of-Granularity selection and polyview reranking.

`mog_select` and `polyview_rerank` read this round's local documents (`pending_local`) and
the sub-query, and return a replacement `pending_local` plus trace notes. Each is off
unless the run's `Context` turns it on (`use_mog`, `use_polyview`); off, it returns `{}`
so the state passes through. `rerank_fallback` ranks a fallback source's documents by the
same views; the graph routes to it only when polyview is on.

Their resources (MoG selectors per index folder, polyview rerankers per profile and the
run's chat model) come from the graph's `ResourceProvider`, which caches them.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from prefrag.graphs.context import Context, context_of
from prefrag.graphs.resources import ResourceProvider
from prefrag.graphs.retrieval import polyview_usage
from prefrag.graphs.state import FallbackSearch, PrefRAGState, question_of


def mog_select(
    state: PrefRAGState, runtime: Runtime[Context], *, resources: ResourceProvider
) -> dict[str, Any]:
    """Replace this round's local chunks with MoG's choice across granularities.

    Needs the preferred source's granularity index (`prefrag index --mog`, with an
    optional trained `router.npz`); without one the documents pass through with a note.
    """
    context = context_of(runtime, state)
    if not context.use_mog:
        return {}
    query = state.get("query") or question_of(state)
    pending = state.get("pending_local") or []
    source = context.preferred_source or (pending[0].metadata.get("source") if pending else None)
    if not source:
        return {"notes": ["MoG: no preferred local source known; chunks passed through."]}
    selector = resources.mog_selector(source)
    if selector is None:
        return {
            "notes": [
                f"MoG: source '{source}' has no granularity index; chunks passed through "
                "(build one with `prefrag index --mog`)."
            ]
        }
    result = selector.select(query, context.candidates())
    if not result.documents:
        return {"notes": [f"MoG: nothing selected from '{source}'; chunks passed through."]}
    weights = ", ".join(f"{w:.2f}" for w in result.weights)
    router = "trained router" if _has_router(selector) else "no router (uniform weights)"
    note = (
        f"MoG on '{source}': level {result.level} chosen ({router}; weights {weights}); "
        f"{len(result.documents)} chunks."
    )
    return {"pending_local": result.documents, "notes": [note]}


def polyview_rerank(
    state: PrefRAGState, runtime: Runtime[Context], *, resources: ResourceProvider
) -> dict[str, Any]:
    """Rerank this round's local documents with the polyview score and topic coverage.

    Conflicts between an authoritative older document and a newer, less authoritative
    one are added to the notes and to the documents' `metadata["polyview"]["conflict"]`.
    The LLM views (utility, supplement, LLM relevance) run when the run has a chat model.
    """
    context = context_of(runtime, state)
    if not context.use_polyview:
        return {}
    pending = state.get("pending_local") or []
    if not pending:
        return {}
    query = state.get("query") or question_of(state)
    result = resources.rerank(query, pending, context)
    return {"pending_local": result.documents, "notes": result.notes} | polyview_usage(result)


def rerank_fallback(
    state: PrefRAGState, runtime: Runtime[Context], *, resources: ResourceProvider
) -> dict[str, Any]:
    """Rerank the documents the latest fallback search returned, as the local ones are."""
    context = context_of(runtime, state)
    waiting = state.get("fallback")
    if waiting is None:
        return {}
    result = resources.rerank(state["query"], waiting["documents"], context)
    reranked: FallbackSearch = {
        "source": waiting["source"],
        "documents": result.documents,
        "notes": [*waiting["notes"], *result.notes],
    }
    return {"fallback": reranked} | polyview_usage(result)


def _has_router(selector: Any) -> bool:
    from prefrag.tools.mog import Router

    return isinstance(selector.router, Router)
