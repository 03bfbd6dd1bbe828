"""RAG²'s evidence filter as a tool node before `answer`.

With `Context.use_evidence_filter` on, `filter_evidence` judges every snippet of the
accumulated evidence with the run's `SnippetFilter` (a trained one from
`PREFRAG_EVIDENCE_FILTER`, else the default relevance filter) and drops those judged not
helpful. The trace says what was dropped and why (`filtered` in the output, and notes);
the evidence is never emptied: when nothing is judged helpful, the best one is kept and a
note says so. A forced answer (written by `think` at the iteration cap) is kept as it is,
so the node leaves the evidence alone then.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from prefrag.graphs.context import Context, context_of
from prefrag.graphs.resources import ResourceProvider
from prefrag.graphs.state import PrefRAGState, question_of
from prefrag.tools.evidence_filter import filter_snippets

__all__ = ["filter_evidence"]


def filter_evidence(
    state: PrefRAGState, runtime: Runtime[Context], *, resources: ResourceProvider
) -> dict[str, Any]:
    """Drop evidence snippets the filter judges not helpful (`use_evidence_filter`)."""
    context = context_of(runtime, state)
    if not context.use_evidence_filter:
        return {}
    evidence = list(state.get("evidence") or [])
    if state.get("forced_answer"):
        return {"notes": ["Evidence filter: skipped; the forced answer is kept as written."]}
    if not evidence:
        return {"filtered": [], "notes": ["Evidence filter: no evidence to judge."]}
    outcome = filter_snippets(resources.snippet_filter(), question_of(state), evidence)
    kept = len(outcome.kept)
    summary = f"Evidence filter: kept {kept} of {len(evidence)} snippets."
    return {
        "evidence": outcome.kept,
        "filtered": outcome.judged,
        "notes": [summary, *outcome.notes],
    }
