"""Helpers for graph tests: in-memory sources and single-node invocation."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.documents import Document
from langgraph._internal._constants import CONFIG_KEY_RUNTIME
from langgraph.runtime import Runtime

from prefrag.documents import make_document
from prefrag.graphs.context import Context


class ListSource:
    """A source that answers from a script: query substring -> documents, else a default."""

    def __init__(
        self,
        name: str,
        kind: Literal["local", "web", "graph"] = "local",
        *,
        answers: dict[str, list[Document]] | None = None,
        default: list[Document] | None = None,
        fail: bool = False,
    ) -> None:
        self.name, self.kind, self.description, self.authority = name, kind, name, 0.5
        self.query_format = "a natural-language question"
        self.answers = answers or {}
        self.default = default or []
        self.fail = fail
        self.queries: list[str] = []
        self.last_note: str | None = None

    def search(self, query: str, k: int) -> list[Document]:
        self.queries.append(query)
        if self.fail:
            self.last_note = f"{self.name} unavailable: offline"
            return []
        self.last_note = None
        for key, documents in self.answers.items():
            if key.lower() in query.lower():
                return documents[:k]
        return self.default[:k]


def doc(id: str, text: str, source: str = "local", kind: str = "local", **meta: Any) -> Document:
    return make_document(text, id=id, source=source, kind=kind, title=meta.pop("title", id), **meta)


def run_node(graph: Any, name: str, state: dict[str, Any], context: Context | None = None) -> Any:
    """Invoke one compiled node directly, with a run context (as LangGraph passes it)."""
    runtime = Runtime(context=context or Context())
    return graph.nodes[name].invoke(state, config={"configurable": {CONFIG_KEY_RUNTIME: runtime}})
