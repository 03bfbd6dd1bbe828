"""The retrieval-step kernel shared by the graph's nodes and the baselines.

A retrieval step is: search sources (`search`), count each search, record the step and
let documents enter the evidence, counting the sources whose documents were used
(`use_documents`). Both return state updates in the graph's shape (counters as increments
for the `counters` reducer), so the graph and the loop baselines differ only in their
decisions, never in how a search is counted or a step recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document

from prefrag.documents import citation, doc_id, unique_documents
from prefrag.graphs.state import Step, StepKind
from prefrag.reasoners.base import AnswerDraft, Usage
from prefrag.sources.base import Source

if TYPE_CHECKING:
    from prefrag.tools.polyview import PolyviewResult

UNPARSEABLE_ANSWER_NOTE = (
    "Answer output did not follow the answer format; used the raw reply (fallback)."
)


@dataclass
class Search:
    """What one source returned for one query, with trace notes and counter increments."""

    source: Source
    documents: list[Document]
    notes: list[str] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        """Counter increments of this search (appendix A.6: one per search)."""
        return {"web_total": 1} if self.source.kind == "web" else {"local_total": 1}

    @property
    def ids(self) -> list[str]:
        """Ids of the returned documents, in rank order."""
        return [doc_id(d) for d in self.documents]


def search(source: Source, query: str, k: int, *, term: str | None = None) -> Search:
    """Search one source; a failing source yields no documents and a trace note.

    With `term`, the source's `search_term(term, query, k)` is asked instead (a graph
    source looks the term up and searches around it with `query`).
    """
    try:
        if term is not None:
            documents = source.search_term(term, query, k)  # type: ignore[attr-defined]
        else:
            documents = source.search(query, k)
    except Exception as error:
        return Search(source, [], [f"{source.name} search failed: {error}"])
    note = source.last_note if not documents else None
    return Search(source, list(documents), [note] if note else [])


def joined(first: Search, second: Search, note: str) -> Search:
    """One source's two searches as one result: `first`'s documents, then `second`'s new ones."""
    if first.source is not second.source:
        raise ValueError("Only searches of the same source are joined.")
    documents = unique_documents([*first.documents, *second.documents])
    return Search(first.source, documents, [*first.notes, *second.notes, note])


def new_step(
    *, index: int, kind: StepKind = "retrieve", thought: str = "", query: str = ""
) -> Step:
    """An empty step record, to be filled by `add_search` and closed by `use_documents`."""
    return {
        "index": index,
        "kind": kind,
        "thought": thought,
        "query": query,
        "searched": [],
        "results": {},
        "verdict": None,
        "analysis": "",
        "retrieved": [],
        "notes": [],
    }


def add_search(step: Step, found: Search) -> Step:
    """`step` with `found`'s source, result ids, documents and notes added."""
    return {
        **step,
        "searched": [*step.get("searched", []), found.source.name],
        "results": {**step.get("results", {}), found.source.name: found.ids},
        "retrieved": [*step.get("retrieved", []), *found.documents],
        "notes": [*step.get("notes", []), *found.notes],
    }


def use_documents(
    step: Step,
    uses: Sequence[tuple[Source, Sequence[Document]]],
    evidence: Sequence[Document],
    *,
    counts: dict[str, int] | None = None,
) -> dict[str, Any]:
    """Close `step`: each source's documents enter the observation and the evidence.

    Returns the state update: the step appended to the route, the new evidence, and the
    counter increments (`counts`, e.g. of this step's searches, plus one "used" per source
    whose documents entered, and one "local_used" when that source is not the web).
    """
    used = [document for _, documents in uses for document in documents]
    increments = dict(counts or {})
    for source, documents in uses:
        if documents:
            increments["used"] = increments.get("used", 0) + 1
            if source.kind != "web":
                increments["local_used"] = increments.get("local_used", 0) + 1
    closed: Step = {**step, "source": "+".join(s.name for s, _ in uses), "used": used}
    return {
        "route": [closed],
        "evidence": unique_documents([*evidence, *used]),
        "counters": increments,
    }


def usage_update(role: str, usage: Usage, *, fallback: bool | None = None) -> dict[str, Any]:
    """The `model_calls` and `tokens` increments of one reasoner call.

    With `fallback` given (a role decision), also one `role_decisions` and, when the
    decision is a safe fallback (its reply could not be read), one `role_fallbacks`.
    """
    update: dict[str, Any] = {
        "model_calls": {role: usage.calls},
        "tokens": {role: usage.input_tokens + usage.output_tokens},
    }
    if fallback is not None:
        update["role_decisions"] = {role: 1}
        update["role_fallbacks"] = {role: int(fallback)}
    return update


def every_role_fell_back(decisions: dict[str, int], fallbacks: dict[str, int]) -> bool:
    """Whether every role decision of a run was a safe fallback (no reply could be read)."""
    made = {role: count for role, count in decisions.items() if count > 0}
    return bool(made) and all(fallbacks.get(role, 0) >= count for role, count in made.items())


def polyview_usage(result: PolyviewResult) -> dict[str, Any]:
    """The `model_calls` and `tokens` increments of polyview's LLM views ({} when none ran)."""
    return usage_update("polyview", result.usage) if result.usage.calls else {}


def answer_update(draft: AnswerDraft, evidence: Sequence[Document]) -> dict[str, Any]:
    """The state update of a final answer: its text and citations of held documents only."""
    by_id = {doc_id(d): d for d in evidence}
    cited = [by_id[i] for i in dict.fromkeys(draft.cited_ids) if i in by_id]
    return {
        "answer": draft.answer,
        "cited_ids": [doc_id(d) for d in cited],
        "citations": [citation(d) for d in cited],
        "abstained": draft.abstained,
        "confidence": draft.confidence,
        "short_answer": draft.short_answer,
        "notes": [UNPARSEABLE_ANSWER_NOTE] if draft.fallback and not draft.abstained else [],
    }
