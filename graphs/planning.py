"""SPO source planning as two tool nodes: plan per-source queries, then run and fuse them.

With `Context.use_planning` on, the graph goes from `think` to `plan_sources`: the run's
`plan` role writes zero to three queries per plannable source (every non-web source; a
combined source is represented by its members) for this round's sub-query. A plan that
searches something goes to `retrieve_planned`: each planned query retrieves the top
`PLANNED_SEARCH_K` documents of its source (through the kernel's `search`), and all
rankings are fused by reciprocal rank into the top `PLANNED_KEEP` (Omni-RAG §5.1.2:
top-20 retrieved, top-10 kept). Those are this round's local documents; the graph goes on
to polyview reranking and the switcher, not through the preferred-source search and MoG
(whose granularity index belongs to one source). A plan that searches nothing leaves the
round to `retrieve_local`, and the trace says so.

`plan_queries` and `run_plan` are usable outside the graph (e.g. by an evaluation's
"planned" arm).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.documents import Document
from langgraph.runtime import Runtime

from prefrag.documents import doc_id
from prefrag.graphs.context import Context, context_of
from prefrag.graphs.resources import ResourceProvider, RunResources
from prefrag.graphs.retrieval import Search, add_search, search, usage_update
from prefrag.graphs.state import PrefRAGState, Step, add_counts, question_of
from prefrag.index.fusion import reciprocal_rank_fusion
from prefrag.reasoners.base import Reasoner
from prefrag.reasoners.plans import PlannedQuery, SourcePlan, brief_of
from prefrag.shared import shared
from prefrag.sources.base import Source, SourceRegistry

__all__ = [
    "PLANNED_KEEP",
    "PLANNED_SEARCH_K",
    "PlannedRetrieval",
    "minilm_routing_planner",
    "plan_queries",
    "plan_sources",
    "plannable_sources",
    "planned_search",
    "planned_step",
    "planned_uses",
    "retrieve_planned",
    "routing_planner",
    "run_plan",
    "settings_planner",
]

PLANNED_SEARCH_K = 20
PLANNED_KEEP = 10


@dataclass
class PlannedRetrieval:
    """What a plan's queries retrieved: the fused documents and every query's search."""

    documents: list[Document]
    queries: list[Search] = field(default_factory=list)

    @property
    def searches(self) -> list[Search]:
        """One search per planned source: its queries' documents (first seen kept) and notes."""
        merged: dict[str, Search] = {}
        for found in self.queries:
            held = merged.setdefault(found.source.name, Search(found.source, []))
            held.documents.extend(found.documents)
            held.notes.extend(found.notes)
        for held in merged.values():
            held.documents = list({doc_id(d): d for d in held.documents}.values())
        return list(merged.values())

    @property
    def counts(self) -> dict[str, int]:
        """Counter increments: every query's search counted as `Search.counts` counts it."""
        total: dict[str, int] = {}
        for found in self.queries:
            total = add_counts(total, found.counts)
        return total


def plannable_sources(registry: SourceRegistry, *, exclude: Iterable[str] = ()) -> list[Source]:
    """The sources a plan covers: non-web sources, members rather than their combination."""
    skipped = set(exclude)
    names = set(registry.names())
    chosen = []
    for source in registry:
        if source.kind == "web" or source.name in skipped:
            continue
        members = getattr(source, "member_names", None)
        if members and set(members) <= names:
            continue  # its members are planned one by one
        chosen.append(source)
    return chosen


def plan_queries(reasoner: Reasoner, question: str, sources: Sequence[Source]) -> SourcePlan:
    """The reasoner's plan for `question` over `sources` (each described by its attributes)."""
    return reasoner.plan(question, [brief_of(source) for source in sources])


def routing_planner(question: str, sources: Sequence[Source]) -> dict[str, list[str]]:
    """Extractive routing by description word overlap, as `{source: [queries]}`.

    The shape an evaluation's planned arm takes (`--planner
    prefrag.graphs.planning:routing_planner`); graph queries are `term , query`.
    """
    from prefrag.reasoners.source_planner import route_question

    plan = route_question(question, [brief_of(source) for source in sources])
    return {name: plan.query_texts(name) for name in plan.queries}


def minilm_routing_planner(question: str, sources: Sequence[Source]) -> dict[str, list[str]]:
    """Extractive routing by MiniLM similarity of question and descriptions."""
    from prefrag.index.embeddings import get_embedder
    from prefrag.reasoners.source_planner import route_question

    briefs = [brief_of(source) for source in sources]
    plan = route_question(question, briefs, embedder=get_embedder())
    return {name: plan.query_texts(name) for name in plan.queries}


def settings_planner(question: str, sources: Sequence[Source]) -> dict[str, list[str]]:
    """The `plan` role of the reasoner the settings configure (LLM with an endpoint)."""
    from prefrag.reasoners.factory import build_reasoner

    reasoner = shared().once("settings reasoner", build_reasoner)
    plan = plan_queries(reasoner, question, sources)
    return {name: plan.query_texts(name) for name in plan.queries}


def run_plan(
    plan: SourcePlan,
    sources: Sequence[Source],
    *,
    search_k: int = PLANNED_SEARCH_K,
    keep: int = PLANNED_KEEP,
) -> PlannedRetrieval:
    """Search every planned query (top `search_k`) and fuse all rankings into the top `keep`.

    A graph query is sent as written in the plan, `term , query` (the graph source splits
    it, keeping commas inside known terms); a source with a `search_term(term, query, k)`
    method gets the two parts separately instead. Text sources get the query text.
    """
    by_id: dict[str, Document] = {}
    rankings: list[list[str]] = []
    searches: list[Search] = []
    for source in sources:
        for query in plan.queries.get(source.name, []):
            found = planned_search(source, query, search_k)
            searches.append(found)
            for document in found.documents:
                by_id.setdefault(doc_id(document), document)
            rankings.append(found.ids)
    fused = reciprocal_rank_fusion(rankings, limit=keep)
    return PlannedRetrieval([by_id[key] for key, _ in fused], searches)


def planned_search(source: Source, query: PlannedQuery, k: int) -> Search:
    """One planned query through the kernel's `search`: a term query to `search_term`."""
    if query.term and callable(getattr(source, "search_term", None)):
        return search(source, query.text, k, term=query.term)
    return search(source, query.render(), k)


def plan_sources(
    state: PrefRAGState, runtime: Runtime[Context], *, resources: ResourceProvider
) -> dict[str, Any]:
    """Plan this round's per-source queries (`use_planning`); the graph routes on the plan.

    `plan` holds a plan that searches at least one source (then `retrieve_planned` runs
    it); otherwise it is None and the preferred source gets the sub-query, as without
    planning.
    """
    context = context_of(runtime, state)
    run = resources.resolve(context)
    sources = plannable_sources(run.sources, exclude=[s.name for s in run.fallbacks])
    if not sources:
        return {"plan": None, "notes": ["Planning: no local source to plan for."]}
    plan = plan_queries(run.reasoner, state.get("query") or question_of(state), sources)
    update = usage_update("plan", plan.usage, fallback=plan.fallback)
    if not plan.searched():
        note = "Planning: the plan searches no source; the preferred source gets the sub-query."
        return update | {"plan": None, "notes": [*_plan_notes(plan), note]}
    return update | {"plan": plan.model_dump(exclude={"usage"})}


def retrieve_planned(
    state: PrefRAGState, runtime: Runtime[Context], *, resources: ResourceProvider
) -> dict[str, Any]:
    """Run the round's plan: every planned query searched, all rankings fused (top 10).

    The fused documents are this round's local documents; `planned` records the plan,
    each source's results and what was kept, for the step.
    """
    run = resources.resolve(context_of(runtime, state))
    plan = SourcePlan.model_validate(state.get("plan") or {})
    sources = plannable_sources(run.sources, exclude=[s.name for s in run.fallbacks])
    retrieval = run_plan(plan, sources)
    searches = retrieval.searches
    planned = {
        "query": state.get("query") or question_of(state),
        "plan": plan.trace(),
        "searched": [found.source.name for found in searches],
        "results": {found.source.name: found.ids for found in searches},
        "kept": [doc_id(d) for d in retrieval.documents],
        "notes": [*_plan_notes(plan), *(n for found in searches for n in found.notes)],
    }
    return {"planned": planned, "pending_local": retrieval.documents, "counters": retrieval.counts}


def planned_step(
    step: Step, planned: dict[str, Any], registry: SourceRegistry, documents: Sequence[Document]
) -> Step:
    """`step` recording a planned round: every source searched, its ids, the plan, the kept."""
    for name in planned.get("searched", []):
        ids = planned.get("results", {}).get(name, [])
        step = add_search(step, Search(_named(registry, name), []))
        step["results"] = {**step["results"], name: list(ids)}
    queries = planned.get("plan", {}).get("queries", {})
    shown = "; ".join(f"{name}: {' | '.join(q)}" for name, q in queries.items() if q)
    return {
        **step,
        "retrieved": [*step.get("retrieved", []), *documents],
        "plan": {**planned.get("plan", {}), "kept": list(planned.get("kept", []))},
        "notes": [*step.get("notes", []), f"Planned queries — {shown}", *planned["notes"]],
    }


def planned_uses(
    run: RunResources, planned: dict[str, Any] | None, documents: Sequence[Document]
) -> list[tuple[Source, list[Document]]]:
    """This round's local documents grouped by the source that returned them."""
    if not planned or not documents:
        return [(run.preferred, list(documents))]
    owner: dict[str, str] = {}
    for name in planned.get("searched", []):
        for key in planned.get("results", {}).get(name, []):
            owner.setdefault(key, name)
    grouped: dict[str, list[Document]] = {}
    for document in documents:
        name = owner.get(doc_id(document), run.preferred.name)
        grouped.setdefault(name, []).append(document)
    return [(_named(run.sources, name), docs) for name, docs in grouped.items()]


def _plan_notes(plan: SourcePlan) -> list[str]:
    how = "strict" if plan.strict else "tolerant"
    notes = [f"Plan read by the {how} parser" + (" (fallback plan)." if plan.fallback else ".")]
    return notes + [f"Plan: {note}" for note in plan.notes]


def _named(registry: SourceRegistry, name: str) -> Source:
    return registry.get(name)
