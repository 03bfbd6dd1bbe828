"""The retrieval-path tool nodes: Mix-of-Granularity selection and polyview reranking.

Both read this round's local documents (`pending_local`) and the sub-query, and return a
replacement `pending_local` plus trace notes. Each is off unless the run's `Context` turns
it on (`use_mog`, `use_polyview`); off, it returns `{}` so the state passes through.

The MoG index of a source is looked up at `<sources_dir>/<source>/mog` of the process
settings, unless `use_mog_index` points the source name at another folder (an evaluation
searches sources under its own data directory). `register_reranker` adds named polyview
rerankers (e.g. a subset of views for an ablation) that `Context.polyview_profile` selects.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langgraph.runtime import Runtime

from prefrag.graphs.context import Context, context_of
from prefrag.graphs.state import PrefRAGState

_LOCK = threading.Lock()
_SELECTORS: dict[tuple[str, float], Any] = {}
_RERANKERS: dict[str, Any] = {}
_REGISTERED: dict[str, Any] = {}
_MOG_DIRS: dict[str, Path] = {}


@contextmanager
def use_mog_index(source: str, folder: Path) -> Iterator[None]:
    """Within the block, the MoG index of source `source` is the one in `folder`.

    The previous folder (or none) is restored on exit. The mapping is process-wide, so two
    runs searching different sources of the same name at once would see the last one set.
    """
    with _LOCK:
        previous = _MOG_DIRS.get(source)
        _MOG_DIRS[source] = Path(folder)
    try:
        yield
    finally:
        with _LOCK:
            if previous is None:
                _MOG_DIRS.pop(source, None)
            else:
                _MOG_DIRS[source] = previous


def mog_folder(source: str) -> Path:
    """The folder the `mog_select` node reads source `source`'s MoG index from."""
    from prefrag.tools.granularity_index import mog_index_dir

    with _LOCK:
        folder = _MOG_DIRS.get(source)
    return folder if folder is not None else mog_index_dir(source)


def register_reranker(name: str, reranker: Any) -> None:
    """Make `Context.polyview_profile == name` use `reranker` (a `PolyviewReranker`)."""
    with _LOCK:
        _REGISTERED[name] = reranker


def reranker_for(profile: str, *, views: Sequence[str] | None = None, coverage: bool = True) -> Any:
    """The polyview reranker a run with `polyview_profile=profile` uses (shared, cached).

    A reranker registered under `profile` is returned as it is; otherwise one is built for
    the profile with the allowed `views` and the coverage constraint on or off.

    Raises:
        ValueError: `profile` is neither a known profile nor a registered reranker.
    """
    from prefrag.tools.polyview import VIEWS, PolyviewReranker

    allowed = tuple(v for v in VIEWS if v in (views if views is not None else VIEWS))
    with _LOCK:
        if profile in _REGISTERED:
            return _REGISTERED[profile]
        key = f"{profile}|{''.join(allowed)}|{coverage}"
        if key not in _RERANKERS:
            _RERANKERS[key] = PolyviewReranker(profile=profile, views=allowed, coverage=coverage)
        return _RERANKERS[key]


def mog_select(state: PrefRAGState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Replace this round's local chunks with MoG's choice across granularities.

    Needs the preferred source's granularity index (`<sources_dir>/<source>/mog`, with an
    optional trained `router.npz`); without one the documents pass through with a note.
    """
    context = context_of(runtime)
    if not context.use_mog:
        return {}
    query = state.get("query") or state.get("question") or ""
    pending = state.get("pending_local") or []
    source = context.preferred_source or (pending[0].metadata.get("source") if pending else None)
    if not source:
        return {"notes": ["MoG: no preferred local source known; chunks passed through."]}
    selector = _selector_for(source)
    if selector is None:
        return {
            "notes": [
                f"MoG: source '{source}' has no granularity index; chunks passed through "
                "(build one with prefrag.tools.granularity_index)."
            ]
        }
    result = selector.select(query, context.candidates())
    if not result.documents:
        return {"notes": [f"MoG: nothing selected from '{source}'; chunks passed through."]}
    weights = ", ".join(f"{w:.2f}" for w in result.weights)
    router = "trained router" if _has_router(selector) else "no router (uniform weights)"
    note = (
        f"MoG on '{source}': level {result.level} chosen ({router}; weights {weights}); "
        f"{len(result.documents)} chunks."
    )
    return {"pending_local": result.documents, "notes": [note]}


def polyview_rerank(state: PrefRAGState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Rerank this round's local documents with the polyview score and topic coverage.

    Conflicts between an authoritative older document and a newer, less authoritative
    one are added to the notes and to the documents' `metadata["polyview"]["conflict"]`.
    Runs the non-LLM views (relevance, authority, timeliness, topic clusters).
    """
    context = context_of(runtime)
    if not context.use_polyview:
        return {}
    pending = state.get("pending_local") or []
    if not pending:
        return {}
    query = state.get("query") or state.get("question") or ""
    documents, notes = rerank_with_polyview(query, pending, context)
    return {"pending_local": documents, "notes": notes}


def rerank_with_polyview(
    query: str, documents: list[Document], context: Context
) -> tuple[list[Document], list[str]]:
    """Top `context.top_k` of `documents` by polyview score, with conflict notes.

    Used by the `polyview_rerank` node for local documents and by `switch_to_web` for the
    fallback's documents, so both sources are ranked by the same views.
    """
    if not documents:
        return [], []
    reranker = reranker_for(
        context.polyview_profile,
        views=context.polyview_views,
        coverage=context.polyview_coverage,
    )
    result = reranker.rerank(query, documents, context.top_k)
    return result.documents, result.notes


def _selector_for(source: str) -> Any:
    from prefrag.tools.granularity_index import GranularityIndex
    from prefrag.tools.mog import MoGSelector, load_router

    folder = mog_folder(source)
    marker = folder / "index.json"
    if not marker.exists():
        return None
    key = (str(folder), _mtime(folder))
    with _LOCK:
        if key not in _SELECTORS:
            index = GranularityIndex.load(folder)
            _SELECTORS[key] = MoGSelector(index, router=load_router(folder))
        return _SELECTORS[key]


def _has_router(selector: Any) -> bool:
    from prefrag.tools.mog import Router

    return isinstance(selector.router, Router)


def _mtime(folder: Path) -> float:
    # A rebuilt index or a newly trained router invalidates the cached selector.
    return max((p.stat().st_mtime for p in folder.iterdir()), default=0.0)
