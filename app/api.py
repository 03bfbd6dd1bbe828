"""The embedding API: build the graph, or ask one question."""

from __future__ import annotations

import uuid
from dataclasses import fields
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

from prefrag.errors import ConfigurationError
from prefrag.graphs.context import Context, context_from
from prefrag.graphs.graph import PrefRAGGraph, build_graph
from prefrag.questions import checked_question
from prefrag.reasoners.base import Reasoner
from prefrag.sources.base import SourceRegistry
from prefrag.thread_locks import checkpoint_file, thread_lock

__all__ = ["ask", "build_graph", "make_context", "resume"]

_CONTEXT_FIELDS = {f.name for f in fields(Context)}
ReasonerName = Literal["auto", "extractive", "llm"]


def make_context(**overrides: Any) -> Context:
    """A `Context` with `overrides`; unknown names raise `ConfigurationError`."""
    unknown = sorted(set(overrides) - _CONTEXT_FIELDS)
    if unknown:
        known = ", ".join(sorted(_CONTEXT_FIELDS))
        raise ConfigurationError(f"Unknown run setting(s) {unknown}; known: {known}.")
    return Context(**overrides)


def ask(
    question: str,
    *,
    reasoner: Reasoner | ReasonerName | None = None,
    sources: SourceRegistry | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    thread_id: str | None = None,
    graph: PrefRAGGraph | None = None,
    **context: Any,
) -> dict[str, Any]:
    """Answer `question` with the PrefRAG process and return the output state.

    Keyword arguments other than the named ones are run settings (`Context` fields), e.g.
    `ask("...", top_k=3, preferred_source="demo")`. The result holds `answer`,
    `citations`, `route` (one record per retrieval step), `reflections`, `counters`,
    `model_calls`, `tokens`, `notes` and `history` (earlier questions on the same thread).
    With a checkpointer it also holds `thread_id`: the one given, or a new one to resume or
    continue the run with. Runs on one thread take turns (`prefrag.thread_locks`): a second
    one waits for the first, then builds on its turn, so no turn is lost from `history`.

    `reasoner` is who reasons: a name ("auto", "extractive" or "llm", the run setting
    `Context.reasoner`, as `prefrag ask --reasoner` gives it) or a ready `Reasoner` object.
    """
    question = checked_question(question)
    if isinstance(reasoner, str):
        context = {**context, "reasoner": reasoner}
        reasoner = None
    elif reasoner is not None and not isinstance(reasoner, Reasoner):
        raise ConfigurationError(
            f"reasoner must be 'auto', 'extractive', 'llm' or a Reasoner (got {reasoner!r})."
        )
    run_context = make_context(**context)
    check_run_files(run_context)
    graph = graph or build_graph(reasoner=reasoner, sources=sources, checkpointer=checkpointer)
    config: RunnableConfig = {"recursion_limit": recursion_limit(run_context)}
    if checkpointer is None and graph.checkpointer is None:
        return graph.invoke({"question": question}, config=config, context=run_context)
    thread = thread_id or str(uuid.uuid4())
    config["configurable"] = {"thread_id": thread}
    with thread_lock(checkpoint_file(checkpointer or graph.checkpointer), thread):
        result = graph.invoke({"question": question}, config=config, context=run_context)
    return {**result, "thread_id": thread}


def check_run_files(context: Context) -> None:
    """Check the model folders a run will read before it starts (not after retrieval).

    Raises:
        ConfigurationError: The evidence filter folder a run would use is unusable.
    """
    if not context.use_evidence_filter:
        return
    from prefrag.config import get_settings

    folder = get_settings().evidence_filter
    if folder is not None:
        from prefrag.tools.trained_filter import load_snippet_filter

        load_snippet_filter(folder)  # file checks only; the model loads on first use


def resume(thread_id: str, *, graph: PrefRAGGraph) -> dict[str, Any]:
    """Continue the interrupted run on `thread_id` with the settings it started with.

    The run's `Context` is stored in its state (`run_context`) with every checkpoint, so
    the resumed run keeps its sources, tool nodes and caps. A finished run's output is
    returned as it is.

    Raises:
        ConfigurationError: The graph has no checkpointer, or nothing is stored under
            `thread_id`.
    """
    if graph.checkpointer is None:
        raise ConfigurationError("Resuming needs a graph compiled with a checkpointer.")
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    with thread_lock(checkpoint_file(graph.checkpointer), thread_id):
        snapshot = graph.get_state(config)
        if not snapshot.values:
            raise ConfigurationError(f"No stored run for thread '{thread_id}'.")
        if not snapshot.next:
            return dict(snapshot.values)
        context = context_from(snapshot.values.get("run_context") or {})
        config["recursion_limit"] = recursion_limit(context)
        return graph.invoke(None, config=config, context=context)


def recursion_limit(context: Context) -> int:
    """A super-step bound that the iteration caps can never reach, as a backstop."""
    # think, plan_sources, retrieve_local, mog_select, polyview_rerank, open_step, compare,
    # rerank_fallback, use_*, and one search_fallback per fallback source.
    per_round = 9 + len(context.fallback_sources)
    rounds = (context.max_iterations + 1) * (context.max_reflections + 1) + 2
    return per_round * rounds + 10
