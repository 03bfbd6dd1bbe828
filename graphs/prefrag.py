"""Graph factory for LangGraph Studio / `langgraph dev` (see langgraph.json).

Compiled without a checkpointer: the LangGraph server brings its own persistence.
"""

from __future__ import annotations

from prefrag.graphs.graph import build_graph

graph = build_graph()
