"""The graph `langgraph dev` and LangGraph Studio serve (see langgraph.json).

`graph` is compiled without a checkpointer: the LangGraph server brings its own persistence.
The server builds each run's `Context` from the run's context after dropping keys the
schema does not name, so a misspelt setting would be ignored silently; `make_graph` (the
entry langgraph.json names) sees the context as sent and refuses such a run, as the API does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from prefrag.graphs.graph import PrefRAGGraph, build_graph

if TYPE_CHECKING:
    from langgraph_sdk.runtime import ServerRuntime

graph = build_graph()


def make_graph(runtime: ServerRuntime[Any]) -> PrefRAGGraph:
    """The compiled graph, once the run's settings are known ones with usable values.

    Raises:
        ConfigurationError: The run's context names a setting `Context` does not have, or
            gives one a value no run can use (one sentence, shown as the run's error).
    """
    from prefrag.api import make_context

    context = getattr(runtime, "context", None)
    if isinstance(context, Mapping):
        make_context(**context)
    return graph
