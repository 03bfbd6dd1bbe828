"""The PrefRAG process as graph nodes (paper §3; node names as in DESIGN.md).

Every node is a module-level function `(state, runtime, *, resources)`: `runtime.context`
is the run's `Context`, `resources` the graph's `ResourceProvider` (bound once by
`build_graph`). Nodes return state updates only; where the graph goes next is decided by
the routing functions in `graphs/graph.py`, from what a node wrote (`action`, `plan`,
the step's `verdict`, `fallbacks_left`, `fallback`, `supplement_requested`) and the run's
`Context`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from langchain_core.documents import Document
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from prefrag.documents import doc_id
from prefrag.graphs.condense import prior_turn
from prefrag.graphs.context import Context, context_of
from prefrag.graphs.planning import planned_step, planned_uses
from prefrag.graphs.rationale import rationale_note, search_query, think_options
from prefrag.graphs.resources import ResourceProvider
from prefrag.graphs.retrieval import (
    Search,
    add_search,
    answer_update,
    every_role_fell_back,
    joined,
    new_step,
    search,
    usage_update,
    use_documents,
)
from prefrag.graphs.state import (
    FallbackSearch,
    PrefRAGState,
    Step,
    Turn,
    add_counts,
    episode_start,
    question_of,
)
from prefrag.questions import checked_question
from prefrag.reasoners.base import AnswerDraft, Feedback, PriorTurn, ScratchpadStep
from prefrag.sources.base import Source

UNREAD_LABEL = "UNREADABLE"
UNREADABLE_ANSWER = (
    "No answer: the model's replies could not be read (every role fell back to its safe default)."
)
UNREADABLE_NOTE = (
    "Every role's reply was unreadable and fell back; the run abstains rather than show a "
    "fallback as the answer. Check the model and its server (see docs/models.md)."
)
NO_SUPPLEMENT_NOTE = (
    "Self-reflection was negative, but the evidence held names everything the question "
    "does: the answer misreads it, and more retrieval cannot mend that (no supplement)."
)


def scratchpad(state: PrefRAGState) -> list[ScratchpadStep]:
    """Earlier rounds of a graph state as the reasoner sees them."""
    return scratchpad_of(state.get("route", []))


def scratchpad_of(route: Sequence[Step]) -> list[ScratchpadStep]:
    """Recorded steps as the reasoner sees them: thought, query, source, observation."""
    return [
        ScratchpadStep(
            thought=step.get("thought", ""),
            query=step.get("query", ""),
            source=step.get("source", ""),
            observation=list(step.get("used", [])),
            note="; ".join(step.get("notes", [])),
        )
        for step in route
    ]


def answer_scratchpad(state: PrefRAGState) -> list[ScratchpadStep]:
    """The scratchpad the answer is written from: only documents the evidence still holds.

    After `filter_evidence` dropped snippets, the earlier rounds' observations lose them
    too, so the answer is drawn from what the filter kept and can cite it.
    """
    steps = scratchpad(state)
    if not state.get("filtered"):
        return steps
    kept = {doc_id(document) for document in state.get("evidence", [])}
    return [
        step.model_copy(update={"observation": [d for d in step.observation if doc_id(d) in kept]})
        for step in steps
    ]


def feedback_of(state: PrefRAGState) -> Feedback | None:
    """The structured feedback of the latest negative self-reflection, if any."""
    stored = state.get("feedback")
    return Feedback.model_validate(stored) if stored else None


def earlier_turn(state: PrefRAGState) -> PriorTurn | None:
    """The thread's previous turn as the answer role sees it, or None for a first question."""
    history = state.get("history") or []
    return prior_turn(history[-1]) if history else None


def retrieval_steps(route: Sequence[Step]) -> int:
    """Retrieval rounds spent from the budget (supplements are granted on top)."""
    return sum(1 for step in route if step.get("kind") == "retrieve")


def new_question(
    state: PrefRAGState, runtime: Runtime[Context], *, resources: ResourceProvider
) -> dict[str, Any]:
    """Start a fresh retrieval episode for the question just received.

    On a thread that already answered a question, that turn moves to `history` (question,
    answer, citations) and everything the episode accumulates starts empty, so a second
    question never inherits the first one's route, evidence, reflections or counters.
    """
    question = checked_question(state.get("question"))
    context = context_of(runtime, state)
    run = resources.resolve(context)
    update = episode_start() | {
        "question": question,
        "run_context": asdict(context),
        "notes": Overwrite(list(run.notes)),
    }
    if state.get("route") or state.get("answer"):
        earlier: Turn = {
            "question": state.get("episode_question", "") or "",
            "answer": state.get("answer", "") or "",
            "citations": list(state.get("citations", []) or []),
            "abstained": bool(state.get("abstained", False)),
        }
        if state.get("short_answer"):
            earlier["short_answer"] = str(state.get("short_answer"))
        standalone = state.get("standalone_question")
        if standalone and standalone != earlier["question"]:
            earlier["standalone_question"] = standalone
        update["history"] = [earlier]
    update["episode_question"] = question
    return update


def think(
    state: PrefRAGState, runtime: Runtime[Context], *, resources: ResourceProvider
) -> dict[str, Any]:
    """Reasoning thought, then search with a sub-query or go to the answer.

    When the retrieval budget (`max_iterations`) is spent, the reasoner is asked for a
    forced answer from its scratchpad (paper appendix B.3), which `answer` then keeps.
    """
    context = context_of(runtime, state)
    run = resources.resolve(context)
    question = question_of(state)
    names = [run.preferred.name, *(s.name for s in run.fallbacks)]
    forced = retrieval_steps(state.get("route", [])) >= context.max_iterations
    decision = run.reasoner.think(
        question,
        scratchpad(state),
        sources=names,
        force_answer=forced,
        feedback=feedback_of(state),
        **think_options(context),
    )
    update: dict[str, Any] = usage_update("think", decision.usage, fallback=decision.fallback) | {
        "thought": decision.thought,
        "requested_source": decision.source,
        "forced_answer": None,
    }
    if forced or decision.action == "answer":
        update["action"] = "answer"
        if forced and decision.action == "answer" and decision.answer.strip():
            update["forced_answer"] = AnswerDraft(
                answer=decision.answer,
                cited_ids=decision.cited_ids,
                rationale=decision.thought,
                abstained=decision.abstained,
                confidence=decision.confidence,
                short_answer=decision.short_answer,
                fallback=decision.fallback,
            ).model_dump(exclude={"usage"})
        return update
    return update | {
        "action": "search",
        **search_query(decision, question, context),
    }


def retrieve_local(
    state: PrefRAGState, runtime: Runtime[Context], *, resources: ResourceProvider
) -> dict[str, Any]:
    """Search the preferred source with the sub-query (top-k; several sources balanced)."""
    context = context_of(runtime, state)
    preferred = resources.resolve(context).preferred
    source = resources.multi_source(preferred, context, question_of(state) or state["query"])
    found = search(source, state["query"], context.candidates())
    return {"pending_local": found.documents, "counters": found.counts, "notes": found.notes}


def open_step(
    state: PrefRAGState, runtime: Runtime[Context], *, resources: ResourceProvider
) -> dict[str, Any]:
    """Record this round's local retrieval as a new step, and line up its fallback sources.

    The step holds the thought, query and this round's local documents (the preferred
    source's, or every planned source's). `fallbacks_left` lists the fallback sources in
    the order they will be tried, a source the model asked for (appendix E) first.
    """
    context = context_of(runtime, state)
    run = resources.resolve(context)
    pending = list(state.get("pending_local") or [])
    step = new_step(
        index=len(state.get("route", [])),
        thought=state.get("thought", ""),
        query=state.get("query", ""),
    )
    step["notes"] = rationale_note(state)
    basis = state.get("query_basis")
    if basis:
        step["query_basis"] = basis
    planned = state.get("planned")
    if planned:
        step = planned_step(step, planned, run.sources, pending)
    else:
        step = add_search(step, Search(run.preferred, pending))
    fallbacks = _requested_first(run.fallbacks, state.get("requested_source"))
    if not context.preference_driven and fallbacks:
        step |= {"verdict": None, "analysis": "Preference off: every source is used."}
    return {"step": step, "fallbacks_left": [source.name for source in fallbacks]}


def compare(
    state: PrefRAGState, runtime: Runtime[Context], *, resources: ResourceProvider
) -> dict[str, Any]:
    """The switcher: judge whether this round's local documents answer the sub-query.

    Writes the verdict into the step (False: hand the step to the fallback sources).
    """
    context = context_of(runtime, state)
    run = resources.resolve(context)
    pending = list(state.get("pending_local") or [])
    step: Step = {**_open(state)}
    update: dict[str, Any] = {}
    if not pending:
        step |= {"verdict": False, "analysis": "The preferred source returned nothing."}
    elif retrieval_steps(state.get("route", [])) == 0 and not context.judge_first_retrieval:
        step |= {"verdict": None, "analysis": "First retrieval: preferred source, no judge."}
    else:
        verdict = run.reasoner.compare(question_of(state), state.get("evidence", []), pending)
        update = usage_update("compare", verdict.usage, fallback=verdict.fallback)
        step |= {"verdict": verdict.status, "analysis": verdict.analysis}
        if verdict.fallback:
            step["notes"] = [*step["notes"], "Switcher output unparseable; kept local (fallback)."]
    if step["verdict"] is False and not state.get("fallbacks_left"):
        step["notes"] = [*step["notes"], "No fallback source configured; kept local documents."]
    return update | {"step": step}


def use_local(
    state: PrefRAGState, runtime: Runtime[Context], *, resources: ResourceProvider
) -> dict[str, Any]:
    """Close the step with this round's local documents as its observation."""
    run = resources.resolve(context_of(runtime, state))
    local = list(state.get("pending_local") or [])
    uses = planned_uses(run, state.get("planned"), local)
    return _closed() | use_documents(_open(state), uses, state.get("evidence", []))


def search_fallback(
    state: PrefRAGState, runtime: Runtime[Context], *, resources: ResourceProvider
) -> dict[str, Any]:
    """Search the next fallback source with the sub-query (and, first, with the question).

    The sub-query was drawn from the preferred source's evidence, which the switcher has
    just found wanting: a fallback source searched for the first time in the episode is
    also asked the question itself (`Context.fallback_asks_question`), as the preferred
    source was, and both result lists are used. What it returns waits in `fallback` (for
    reranking and use); a search that returns nothing is recorded in the step at once, and
    when it was the last fallback source the step notes that the round goes on with the
    local documents.
    """
    context = context_of(runtime, state)
    run = resources.resolve(context)
    name, *rest = state.get("fallbacks_left") or []
    source = run.sources.get(name)
    found = search(source, state["query"], context.candidates())
    counts = found.counts
    step = _open(state)
    question = question_of(state)
    if _asks_question(context) and _first_search_of(state, name, question):
        asked = search(source, question, context.candidates())
        counts = add_counts(counts, asked.counts)
        step = {**step, "question_results": {name: asked.ids}}
        note = f"{name}: first search in this episode; also asked the question itself."
        found = joined(found, asked, note)
    update: dict[str, Any] = {"fallbacks_left": rest, "counters": counts, "step": step}
    if found.documents:
        waiting: FallbackSearch = {
            "source": name,
            "documents": found.documents,
            "notes": found.notes,
        }
        return update | {"fallback": waiting}
    step = add_search(step, found)
    if not rest:
        step["notes"] = [
            *step["notes"],
            "Fallback sources returned nothing; using local documents.",
        ]
    return update | {"fallback": None, "step": step}


def use_fallback(
    state: PrefRAGState, runtime: Runtime[Context], *, resources: ResourceProvider
) -> dict[str, Any]:
    """Close the step with the fallback's documents as its observation.

    With preference-driven retrieval off, this round's local documents are used too.
    """
    context = context_of(runtime, state)
    run = resources.resolve(context)
    waiting = state.get("fallback")
    if waiting is None:
        raise RuntimeError("use_fallback runs only after a fallback search returned documents.")
    source = run.sources.get(waiting["source"])
    step = add_search(_open(state), Search(source, waiting["documents"], waiting["notes"]))
    uses: list[tuple[Source, list[Document]]] = []
    if not context.preference_driven:
        uses = planned_uses(run, state.get("planned"), state.get("pending_local") or [])
    uses.append((source, waiting["documents"]))
    return _closed() | use_documents(step, uses, state.get("evidence", []))


def _asks_question(context: Context) -> bool:
    """Whether a fallback source switched to is asked the question on its first search.

    With preference off every round searches every source alike: nothing was switched.
    """
    return context.fallback_asks_question and context.preference_driven


def _first_search_of(state: PrefRAGState, source: str, question: str) -> bool:
    """Whether `source` is searched for the first time in the episode, with a sub-query.

    A round whose query is the question itself needs no second search for it.
    """
    if _same_query(state.get("query", ""), question):
        return False
    return not any(source in step.get("results", {}) for step in state.get("route", []))


def _same_query(one: str, other: str) -> bool:
    """Whether two queries are the same words (case, spacing and punctuation aside)."""
    return re.findall(r"\w+", one.lower()) == re.findall(r"\w+", other.lower())


def _open(state: PrefRAGState) -> Step:
    """The step under way (a fresh one if, out of the graph, none was opened)."""
    return state.get("step") or new_step(index=len(state.get("route", [])))


def _closed() -> dict[str, Any]:
    """The update that ends a round: nothing pending any more."""
    return {
        "step": None,
        "pending_local": [],
        "fallbacks_left": [],
        "fallback": None,
        "plan": None,
        "planned": None,
    }


def answer(
    state: PrefRAGState, runtime: Runtime[Context], *, resources: ResourceProvider
) -> dict[str, Any]:
    """The final answer from the accumulated evidence, with citations.

    A forced answer that `think` produced at the iteration cap is kept as it is.
    """
    evidence = state.get("evidence", [])
    forced = state.get("forced_answer")
    if forced:
        return answer_update(AnswerDraft.model_validate(forced), evidence)
    run = resources.resolve(context_of(runtime, state))
    draft = run.reasoner.answer(
        question_of(state),
        answer_scratchpad(state),
        evidence,
        feedback=feedback_of(state),
        earlier=earlier_turn(state),
    )
    return answer_update(draft, evidence) | usage_update(
        "answer", draft.usage, fallback=draft.fallback
    )


def self_reflect(
    state: PrefRAGState, runtime: Runtime[Context], *, resources: ResourceProvider
) -> dict[str, Any]:
    """Label the answer; a negative label requests one supplement (paper §3.3).

    Under `supplement_when="evidence-missing"` a negative label whose reasoner found the
    evidence complete (`Reflection.gaps == []`) ends the run with a trace note instead.
    """
    context = context_of(runtime, state)
    if context.max_reflections <= 0:
        return {"supplement_requested": False} | unreadable_run(state)
    run = resources.resolve(context)
    # A short answer given with its deciding sentences is judged as that short answer.
    judged = state.get("short_answer") or state.get("answer", "")
    reflection = run.reasoner.reflect(question_of(state), judged, state.get("evidence", []))
    record = {
        "answer": state.get("answer", ""),
        # A reflection that could not be read judged nothing: never recorded as CORRECT.
        "label": UNREAD_LABEL if reflection.fallback else reflection.label,
        "explanation": reflection.explanation,
        "suggestion": reflection.suggestion,
        "gaps": reflection.gaps,
        "fallback": reflection.fallback,
    }
    update = {"reflections": [record], "supplement_requested": False}
    update |= usage_update("reflect", reflection.usage, fallback=reflection.fallback)
    unreadable = unreadable_run(state, reflect_fallback=reflection.fallback)
    if unreadable:
        return update | unreadable
    if not reflection.negative or len(state.get("reflections", [])) >= context.max_reflections:
        return update
    if context.supplement_when == "evidence-missing" and not reflection.evidence_missing:
        return update | {"notes": [NO_SUPPLEMENT_NOTE]}
    feedback = reflection.feedback(judged)
    return update | {"supplement_requested": True, "feedback": feedback.model_dump()}


def unreadable_run(state: PrefRAGState, *, reflect_fallback: bool | None = None) -> dict[str, Any]:
    """The abstention of a run in which every role fell back, else {}.

    When not one reply of the model could be read (every think, compare, answer and
    reflect decision was a safe fallback), the answer is not the model's: the run says so
    and abstains instead of showing a fallback's text as an answer.
    """
    decisions = dict(state.get("role_decisions") or {})
    fallbacks = dict(state.get("role_fallbacks") or {})
    if reflect_fallback is not None:
        decisions = add_counts(decisions, {"reflect": 1})
        fallbacks = add_counts(fallbacks, {"reflect": int(reflect_fallback)})
    if not every_role_fell_back(decisions, fallbacks):
        return {}
    return {
        "answer": UNREADABLE_ANSWER,
        "abstained": True,
        "cited_ids": [],
        "citations": [],
        "notes": [UNREADABLE_NOTE],
    }


def supplement(
    state: PrefRAGState, runtime: Runtime[Context], *, resources: ResourceProvider
) -> dict[str, Any]:
    """Retrieve with the original question from preferred and fallback; use both.

    A source already searched with exactly this query in an earlier step is not searched
    again: its earlier results are reused (sources are deterministic for a query), so
    the retrieval counters count only real searches.
    """
    context = context_of(runtime, state)
    run = resources.resolve(context)
    question = question_of(state)
    route = state.get("route", [])
    step = new_step(
        index=len(route),
        kind="supplement",
        thought="Self-reflection was negative; supplementing from every source.",
        query=question,
    )
    counts: dict[str, int] = {}
    uses: list[tuple[Source, list[Document]]] = []
    for source in [run.preferred, *run.fallbacks[:1]]:
        earlier = _earlier_search(route, source.name, question)
        if earlier is None:
            found = search(source, question, context.top_k)
            counts = add_counts(counts, found.counts)
            step = add_search(step, found)
        else:
            documents, already_used = earlier
            step["notes"] = [*step["notes"], f"{source.name}: reused the identical earlier search."]
            if already_used:
                continue  # its documents are in the evidence already
            found = Search(source, documents)
            step["results"] = {**step["results"], source.name: found.ids}
            step["retrieved"] = [*step["retrieved"], *documents]
        uses.append((source, found.documents))
    update = use_documents(step, uses, state.get("evidence", []), counts=counts)
    return update | {"supplement_requested": False}


def _earlier_search(
    route: Sequence[Step], source: str, question: str
) -> tuple[list[Document], bool] | None:
    """Results of an earlier search of `source` with the question, and whether used.

    That search is a step's own (its query was the question) or the one a fallback's
    first search added (`question_results`).
    """
    for step in route:
        ids = step.get("question_results", {}).get(source)
        if ids is None:
            ids = step.get("results", {}).get(source)
            if ids is None or not _same_query(step.get("query", ""), question):
                continue
        by_id = {doc_id(d): d for d in step.get("retrieved", [])}
        used = {doc_id(d) for d in step.get("used", [])}
        return [by_id[i] for i in ids if i in by_id], bool(ids) and set(ids) <= used
    return None


def _requested_first(fallbacks: Sequence[Source], requested: str | None) -> list[Source]:
    """Fallback order, with a source the model asked for (appendix E) moved to the front."""
    ordered = list(fallbacks)
    for i, source in enumerate(ordered):
        if source.name == requested:
            ordered.insert(0, ordered.pop(i))
            break
    return ordered
