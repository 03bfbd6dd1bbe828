"""The PrefRAG process as graph nodes (paper §3; node names as in DESIGN.md).

Each node is a plain function of `(state, runtime)` closed over a `ResourceProvider`.
Routing nodes return `Command[Literal[...]]` so the edges are typed and Studio draws them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from langchain_core.documents import Document
from langgraph.runtime import Runtime
from langgraph.types import Command

from prefrag.documents import citation, doc_id, unique_documents
from prefrag.errors import EmptyQuestionError
from prefrag.graphs.context import Context, context_of
from prefrag.graphs.resources import ResourceProvider
from prefrag.graphs.state import Counters, PrefRAGState, Step, empty_counters
from prefrag.graphs.tool_nodes import rerank_with_polyview
from prefrag.reasoners.base import ScratchpadStep, Usage
from prefrag.sources.base import Source

Node = Callable[..., Any]


def scratchpad(state: PrefRAGState) -> list[ScratchpadStep]:
    """Earlier rounds of a graph state as the reasoner sees them."""
    return scratchpad_of(state.get("steps", []))


def scratchpad_of(steps: Sequence[Step]) -> list[ScratchpadStep]:
    """Recorded steps as the reasoner sees them: thought, query, source, observation."""
    return [
        ScratchpadStep(
            thought=step.get("thought", ""),
            query=step.get("query", ""),
            source=step.get("source", ""),
            observation=list(step.get("used", [])),
            note="; ".join(step.get("notes", [])),
        )
        for step in steps
    ]


def retrieval_steps(state: PrefRAGState) -> int:
    """Retrieval rounds spent from the budget (supplements are granted on top)."""
    return sum(1 for step in state.get("steps", []) if step.get("kind") == "retrieve")


def _usage_update(role: str, usage: Usage) -> dict[str, Any]:
    return {
        "model_calls": {role: usage.calls},
        "tokens": {role: usage.input_tokens + usage.output_tokens},
    }


def _counted(counters: Counters | None, increments: dict[str, int]) -> Counters:
    """A copy of `counters` (zero when absent) with `increments` added."""
    added = dict(counters or empty_counters())
    for key, value in increments.items():
        added[key] = added.get(key, 0) + value
    return added  # type: ignore[return-value]


def _search(source: Source, query: str, k: int) -> tuple[list[Document], list[str]]:
    """Search one source; a failing source yields no documents and a trace note."""
    try:
        documents = source.search(query, k)
    except Exception as error:
        return [], [f"{source.name} search failed: {error}"]
    note = source.last_note if not documents else None
    return documents, [note] if note else []


def _retrieval_counts(source: Source) -> dict[str, int]:
    return {"web_total": 1} if source.kind == "web" else {"local_total": 1}


def _used_counts(source: Source) -> dict[str, int]:
    return {"used": 1} if source.kind == "web" else {"used": 1, "local_used": 1}


def make_nodes(provider: ResourceProvider) -> dict[str, Node]:
    """The PrefRAG nodes bound to `provider`, keyed by node name."""

    def think(
        state: PrefRAGState, runtime: Runtime[Context]
    ) -> Command[Literal["retrieve_local", "answer"]]:
        """Reasoning thought, then search with a sub-query or go to the answer."""
        context = context_of(runtime)
        question = (state.get("question") or "").strip()
        if not question:
            raise EmptyQuestionError("The question is empty; ask something.")
        resources = provider.resolve(context)
        first = not state.get("steps")
        update: dict[str, Any] = {"question": question}
        if first:
            update["counters"] = state.get("counters") or empty_counters()
            update["notes"] = resources.notes
        if retrieval_steps(state) >= context.max_iterations:
            return Command(goto="answer", update=update)
        names = [resources.preferred.name, *(s.name for s in resources.fallbacks)]
        decision = resources.reasoner.think(
            question, scratchpad(state), sources=names, feedback=state.get("feedback", "")
        )
        update |= _usage_update("think", decision.usage)
        update |= {"thought": decision.thought, "requested_source": decision.source}
        if decision.action == "answer":
            return Command(goto="answer", update=update)
        update["query"] = decision.query.strip() or question
        return Command(goto="retrieve_local", update=update)

    def retrieve_local(state: PrefRAGState, runtime: Runtime[Context]) -> dict[str, Any]:
        """Search the preferred source with the sub-query (top-k)."""
        context = context_of(runtime)
        preferred = provider.resolve(context).preferred
        documents, notes = _search(preferred, state["query"], context.candidates())
        return {
            "pending_local": documents,
            "counters": _counted(state.get("counters"), _retrieval_counts(preferred)),
            "notes": notes,
        }

    def compare(
        state: PrefRAGState, runtime: Runtime[Context]
    ) -> Command[Literal["think", "switch_to_web"]]:
        """The switcher: keep the new local documents, or switch to the fallback source."""
        context = context_of(runtime)
        resources = provider.resolve(context)
        pending = list(state.get("pending_local") or [])
        first = retrieval_steps(state) == 0
        step: Step = {
            "index": len(state.get("steps", [])),
            "kind": "retrieve",
            "thought": state.get("thought", ""),
            "query": state.get("query", ""),
            "searched": [resources.preferred.name],
            "results": {resources.preferred.name: [doc_id(d) for d in pending]},
            "retrieved": pending,
            "notes": [],
        }
        update: dict[str, Any] = {}
        if not context.preference_driven and resources.fallbacks:
            step |= {"verdict": None, "analysis": "Preference off: every source is used."}
            return Command(goto="switch_to_web", update={"pending_step": step | {"both": True}})
        if not pending:
            step |= {"verdict": False, "analysis": "The preferred source returned nothing."}
        elif first and not context.judge_first_retrieval:
            step |= {"verdict": None, "analysis": "First retrieval: preferred source, no judge."}
        else:
            verdict = resources.reasoner.compare(
                state["question"], state.get("evidence", []), pending
            )
            update |= _usage_update("compare", verdict.usage)
            step |= {"verdict": verdict.status, "analysis": verdict.analysis}
            if verdict.fallback:
                step["notes"].append("Switcher output unparseable; kept local (fallback).")
        if step["verdict"] is False and resources.fallbacks:
            return Command(goto="switch_to_web", update=update | {"pending_step": step})
        if step["verdict"] is False:
            step["notes"].append("No fallback source configured; kept local documents.")
        uses = [(resources.preferred, pending)]
        return Command(goto="think", update=update | _use(state, step, uses))

    def switch_to_web(state: PrefRAGState, runtime: Runtime[Context]) -> dict[str, Any]:
        """Search the fallback sources in order; only their documents enter the step."""
        context = context_of(runtime)
        resources = provider.resolve(context)
        step: Step = dict(state["pending_step"])  # type: ignore[assignment]
        step["notes"] = list(step.get("notes", []))
        counters = _counted(state.get("counters"), {})
        local = list(state.get("pending_local") or [])
        target = _requested_first(resources.fallbacks, state.get("requested_source"))
        for source in target:
            documents, notes = _search(source, state["query"], context.candidates())
            step["searched"] = [*step["searched"], source.name]
            step["results"] = {
                **step.get("results", {}),
                source.name: [doc_id(d) for d in documents],
            }
            step["notes"].extend(notes)
            counters = _counted(counters, _retrieval_counts(source))
            if documents and context.use_polyview:
                documents, polyview_notes = rerank_with_polyview(state["query"], documents, context)
                step["notes"].extend(polyview_notes)
            if documents:
                step["retrieved"] = [*step["retrieved"], *documents]
                uses = [(resources.preferred, local)] if step.pop("both", False) else []
                return {"pending_step": None} | _use(
                    {**state, "counters": counters}, step, [*uses, (source, documents)]
                )
        # Every fallback failed: degrade to local-only and say so.
        step.pop("both", None)
        step["notes"].append("Fallback sources returned nothing; using local documents.")
        return {"pending_step": None} | _use(
            {**state, "counters": counters}, step, [(resources.preferred, local)]
        )

    def answer(state: PrefRAGState, runtime: Runtime[Context]) -> dict[str, Any]:
        """The final answer from the accumulated evidence, with citations."""
        resources = provider.resolve(context_of(runtime))
        evidence = state.get("evidence", [])
        draft = resources.reasoner.answer(
            state["question"], scratchpad(state), evidence, feedback=state.get("feedback", "")
        )
        by_id = {doc_id(d): d for d in evidence}
        cited = [by_id[i] for i in dict.fromkeys(draft.cited_ids) if i in by_id]
        notes = ["Answer output unparseable; used the raw answer (fallback)."] * draft.fallback
        return {
            "answer": draft.answer,
            "cited_ids": [doc_id(d) for d in cited],
            "citations": [citation(d) for d in cited],
            "notes": notes,
        } | _usage_update("answer", draft.usage)

    def self_reflect(
        state: PrefRAGState, runtime: Runtime[Context]
    ) -> Command[Literal["supplement", "__end__"]]:
        """Label the answer; a negative label triggers one supplement (paper §3.3)."""
        context = context_of(runtime)
        if context.max_reflections <= 0:
            return Command(goto="__end__")
        resources = provider.resolve(context)
        reflection = resources.reasoner.reflect(
            state["question"], state.get("answer", ""), state.get("evidence", [])
        )
        record = {
            "answer": state.get("answer", ""),
            "label": reflection.label,
            "explanation": reflection.explanation,
            "suggestion": reflection.suggestion,
            "fallback": reflection.fallback,
        }
        update = {"reflections": [record]} | _usage_update("reflect", reflection.usage)
        done = len(state.get("reflections", []))
        if reflection.negative and done < context.max_reflections:
            feedback = (
                f"Previous answer: {record['answer']}\nSelf-reflection: {reflection.label}. "
                f"{reflection.explanation}\nSuggestion: {reflection.suggestion}"
            )
            return Command(goto="supplement", update=update | {"feedback": feedback})
        return Command(goto="__end__", update=update)

    def supplement(state: PrefRAGState, runtime: Runtime[Context]) -> dict[str, Any]:
        """Retrieve with the original question from preferred and fallback; use both.

        A source already searched with exactly this query in an earlier step is not searched
        again: its earlier results are reused (sources are deterministic for a query), so
        the retrieval counters count only real searches.
        """
        context = context_of(runtime)
        resources = provider.resolve(context)
        question = state["question"]
        counters = _counted(state.get("counters"), {})
        uses, notes, searched, results = [], [], [], {}
        for source in [resources.preferred, *resources.fallbacks[:1]]:
            earlier = _earlier_search(state.get("steps", []), source.name, question)
            if earlier is None:
                documents, source_notes = _search(source, question, context.top_k)
                notes.extend(source_notes)
                searched.append(source.name)
                counters = _counted(counters, _retrieval_counts(source))
            else:
                documents, already_used = earlier
                notes.append(f"{source.name}: reused the identical earlier search.")
                if already_used:
                    continue  # its documents are in the evidence already
            results[source.name] = [doc_id(d) for d in documents]
            uses.append((source, documents))
        step: Step = {
            "index": len(state.get("steps", [])),
            "kind": "supplement",
            "thought": "Self-reflection was negative; supplementing from every source.",
            "query": question,
            "searched": searched,
            "results": results,
            "verdict": None,
            "analysis": "",
            "retrieved": [document for _, documents in uses for document in documents],
            "notes": notes,
        }
        return _use({**state, "counters": counters}, step, uses)

    return {
        "think": think,
        "retrieve_local": retrieve_local,
        "compare": compare,
        "switch_to_web": switch_to_web,
        "answer": answer,
        "self_reflect": self_reflect,
        "supplement": supplement,
    }


def _earlier_search(
    steps: Sequence[Step], source: str, query: str
) -> tuple[list[Document], bool] | None:
    """Results of an earlier search of `source` with the same query, and whether used."""
    wanted = " ".join(query.lower().split())
    for step in steps:
        ids = step.get("results", {}).get(source)
        if ids is None or " ".join(step.get("query", "").lower().split()) != wanted:
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


def _use(state: Any, step: Step, uses: Sequence[tuple[Source, list[Document]]]) -> dict[str, Any]:
    """Record `step` with each source's documents entering the evidence, and count them."""
    used = [document for _, documents in uses for document in documents]
    step = {**step, "source": "+".join(source.name for source, _ in uses), "used": used}
    counters = _counted(state.get("counters"), {})
    for source, documents in uses:
        if documents:
            counters = _counted(counters, _used_counts(source))
    return {
        "steps": [step],
        "evidence": unique_documents([*state.get("evidence", []), *used]),
        "counters": counters,
        "pending_local": [],
    }
