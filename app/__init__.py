"""PrefRAG: preference-driven multi-source retrieval-augmented generation on LangGraph.

from prefrag import ask, build_graph
result = ask("Can warfarin be taken with ibuprofen?")
print(result["answer"], result["citations"])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = [
    "Context",
    "PrefRAGError",
    "Settings",
    "SourceRegistry",
    "ask",
    "build_graph",
    "get_settings",
]

_EXPORTS = {
    "ask": "prefrag.api",
    "build_graph": "prefrag.graphs.graph",
    "Context": "prefrag.graphs.context",
    "Settings": "prefrag.config",
    "get_settings": "prefrag.config",
    "SourceRegistry": "prefrag.sources.base",
    "PrefRAGError": "prefrag.errors",
}

if TYPE_CHECKING:
    from prefrag.api import ask
    from prefrag.config import Settings, get_settings
    from prefrag.errors import PrefRAGError
    from prefrag.graphs.context import Context
    from prefrag.graphs.graph import build_graph
    from prefrag.sources.base import SourceRegistry


def __getattr__(name: str) -> Any:
    # Lazy, so `import prefrag` (and the CLI's start-up) stays fast.
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'prefrag' has no attribute {name!r}")
