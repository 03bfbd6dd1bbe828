"""SPO source planning as a tool node: plan per-source queries, run them, merge the results.

`plan_sources` sits between `think` and retrieval. With `Context.use_planning` on, the
run's `plan` role writes zero to three queries per plannable source (every non-web source;
a combined source is represented by its members) for this round's sub-query; each planned
query retrieves the top `PLANNED_SEARCH_K` documents of its source, and all rankings are
fused by reciprocal rank into the top `PLANNED_KEEP` (Omni-RAG §5.1.2: top-20 retrieved,
top-10 kept). Those documents are this round's local documents: the graph goes on to
polyview reranking (when on) and the switcher, skipping the preferred-source search and
MoG (whose granularity index belongs to one source). A plan that searches nothing leaves
the round to `retrieve_local`, and the trace says so.

`plan_queries` and `run_plan` are usable outside the graph (e.g. by an evaluation's
"planned" arm).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from langchain_core.documents import Document
from langgraph.runtime import Runtime

from prefrag.documents import doc_id
from prefrag.graphs.context import Context, context_of
from prefrag.graphs.resources import ResourceProvider, RunResources
from prefrag.graphs.retrieval import Search, add_search, usage_update
from prefrag.graphs.state import PrefRAGState, Step
from prefrag.index.fusion import reciprocal_rank_fusion
from prefrag.reasoners.base import Reasoner
from prefrag.reasoners.plans import PlannedQuery, SourcePlan, brief_of
from prefrag.sources.base import Source, SourceRegistry

__all__ = [
    "PLANNED_KEEP",
    "PLANNED_SEARCH_K",
    "PlannedRetrieval",
    "minilm_routing_planner",
    "plan_queries",
    "plan_sources",
    "plannable_sources",
    "planned_step",
    "planned_uses",
    "routing_planner",
    "run_plan",
    "settings_planner",
]

PLANNED_SEARCH_K = 20
PLANNED_KEEP = 10


@dataclass
class PlannedRetrieval:
    """What a plan's queries retrieved: the merged documents and one search per source."""

    documents: list[Document]
    searches: list[Search] = field(default_factory=list)
    queries_run: int = 0

    @property
    def counts(self) -> dict[str, int]:
        """Counter increments: one per query searched (appendix A.6)."""
        return {"local_total": self.queries_run} if self.queries_run else {}


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
    plan = plan_queries(_settings_reasoner(), question, sources)
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
    queries_run = 0
    for source in sources:
        queries = plan.queries.get(source.name, [])
        if not queries:
            continue
        documents: list[Document] = []
        notes: list[str] = []
        for query in queries:
            found, note = _search_planned(source, query, search_k)
            queries_run += 1
            if note:
                notes.append(note)
            ranking = []
            for document in found:
                key = doc_id(document)
                by_id.setdefault(key, document)
                ranking.append(key)
                documents.append(document)
            rankings.append(ranking)
        unique = list({doc_id(d): d for d in documents}.values())
        searches.append(Search(source, unique, notes))
    fused = reciprocal_rank_fusion(rankings, limit=keep)
    return PlannedRetrieval([by_id[key] for key, _ in fused], searches, queries_run)


def plan_sources(
    state: PrefRAGState, runtime: Runtime[Context], *, resources: ResourceProvider
) -> dict[str, Any]:
    """Plan this round's per-source queries and retrieve with them (`use_planning`).

    Off, it clears the round's plan and the graph searches the preferred source as usual.
    """
    context = context_of(runtime, state)
    if not context.use_planning:
        return {"planned": None}
    run = resources.resolve(context)
    sources = plannable_sources(run.sources, exclude=[s.name for s in run.fallbacks])
    if not sources:
        return {"planned": None, "notes": ["Planning: no local source to plan for."]}
    query = state.get("query") or state["question"]
    plan = plan_queries(run.reasoner, query, sources)
    update = usage_update("plan", plan.usage, fallback=plan.fallback)
    if not plan.searched():
        note = "Planning: the plan searches no source; the preferred source gets the sub-query."
        return update | {"planned": None, "notes": [*_plan_notes(plan), note]}
    retrieval = run_plan(plan, sources)
    planned = {
        "query": query,
        "plan": plan.trace(),
        "searched": [search.source.name for search in retrieval.searches],
        "results": {search.source.name: search.ids for search in retrieval.searches},
        "kept": [doc_id(d) for d in retrieval.documents],
        "notes": [*_plan_notes(plan), *(n for s in retrieval.searches for n in s.notes)],
    }
    return update | {
        "planned": planned,
        "pending_local": retrieval.documents,
        "counters": retrieval.counts,
    }


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


def _search_planned(source: Source, query: PlannedQuery, k: int) -> tuple[list[Document], str]:
    try:
        lookup = getattr(source, "search_term", None)
        if query.term and callable(lookup):
            found = list(lookup(query.term, query.text, k))
        else:
            found = list(source.search(query.render(), k))
    except Exception as error:
        return [], f"{source.name} search failed: {error}"
    return found, (source.last_note or "") if not found else ""


def _plan_notes(plan: SourcePlan) -> list[str]:
    how = "strict" if plan.strict else "tolerant"
    notes = [f"Plan read by the {how} parser" + (" (fallback plan)." if plan.fallback else ".")]
    return notes + [f"Plan: {note}" for note in plan.notes]


def _named(registry: SourceRegistry, name: str) -> Source:
    return registry.get(name)


@cache
def _settings_reasoner() -> Reasoner:
    from prefrag.reasoners.factory import build_reasoner

    return build_reasoner()
