"""Per-run settings of the PrefRAG graph (its `context_schema`), editable in Studio."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from prefrag.reasoners.roles import MODEL_HELP, require_model_fields

POLYVIEW_VIEWS = ("R", "U", "S", "A", "T")


@dataclass(kw_only=True)
class Context:
    """What one run of the graph may change without touching process settings."""

    reasoner: Literal["auto", "extractive", "llm"] = field(
        default="auto",
        metadata={
            "description": "Who reasons: 'llm' (models below / settings), 'extractive' (no "
            "model), or 'auto' (llm when a model endpoint is configured)."
        },
    )
    # One `<role>_model` field per reasoner role (prefrag.reasoners.roles.ROLES).
    think_model: str | None = field(default=None, metadata={"description": MODEL_HELP["think"]})
    compare_model: str | None = field(default=None, metadata={"description": MODEL_HELP["compare"]})
    answer_model: str | None = field(default=None, metadata={"description": MODEL_HELP["answer"]})
    reflect_model: str | None = field(default=None, metadata={"description": MODEL_HELP["reflect"]})
    plan_model: str | None = field(default=None, metadata={"description": MODEL_HELP["plan"]})
    condense_model: str | None = field(
        default=None, metadata={"description": MODEL_HELP["condense"]}
    )
    top_k: int = field(default=5, metadata={"description": "Documents taken from each search."})
    max_iterations: int = field(
        default=3, metadata={"description": "Retrieval steps before a forced answer (paper: 3)."}
    )
    max_reflections: int = field(
        default=1,
        metadata={"description": "Negative reflections that trigger a supplement (paper: 1)."},
    )
    supplement_when: Literal["evidence-missing", "negative"] = field(
        default="evidence-missing",
        metadata={
            "description": "Which negative reflections buy a supplement: 'negative' every one "
            "(paper); 'evidence-missing' (default) not those whose reasoner found every name "
            "of the question in the evidence held, where more retrieval cannot mend a misread "
            "answer. LLM reflections do not check, so both behave as the paper."
        },
    )
    preferred_source: str | None = field(
        default=None,
        metadata={"description": "Preferred local source; empty means the first local source."},
    )
    fallback_sources: list[str] = field(
        default_factory=lambda: ["web"],
        metadata={"description": "Sources tried, in order, when the switcher says False."},
    )
    preference_driven: bool = field(
        default=True,
        metadata={
            "description": "Preferred source first, switching only when the switcher says "
            "False. Off (ablation 'w/o Pref-AR'): every step searches the preferred and the "
            "first fallback source and uses both."
        },
    )
    fallback_asks_question: bool = field(
        default=True,
        metadata={
            "description": "A fallback source's first search in a run also asks it the "
            "question itself, not only the sub-query drawn from the preferred source's "
            "evidence; both result lists are used (one more search)."
        },
    )
    judge_first_retrieval: bool = field(
        default=False,
        metadata={"description": "Ask the switcher on the first retrieval too (paper: no)."},
    )
    use_mog: bool = field(
        default=False,
        metadata={"description": "Mix-of-Granularity chunk selection in the retrieval path."},
    )
    use_polyview: bool = field(
        default=False,
        metadata={"description": "Polyview reranking (relevance, authority, timeliness, ...)."},
    )
    polyview_pool: int = field(
        default=3,
        metadata={"description": "With polyview on, each search fetches top_k x this candidates."},
    )
    polyview_views: list[str] = field(
        default_factory=lambda: ["R", "U", "S", "A", "T"],
        metadata={
            "description": "Polyview views allowed on: R relevance, U utility, S supplement "
            "(U and S need a chat model), A authority, T timeliness. For ablations."
        },
    )
    polyview_coverage: bool = field(
        default=True,
        metadata={"description": "Polyview top-k covers distinct topic clusters first."},
    )
    polyview_profile: str = field(
        default="inquiry",
        metadata={"description": "Polyview weight profile: 'inquiry', 'policy' or 'care'."},
    )
    multi_source_mode: Literal["balanced", "stacked"] = field(
        default="balanced",
        metadata={
            "description": "How several local sources searched as one are merged: "
            "'balanced' (RAG²: the same top-k from each, reranked once by the question) or "
            "'stacked' (one ranking fused by reciprocal rank)."
        },
    )

    use_planning: bool = field(
        default=False,
        metadata={
            "description": "SPO source planning (plan_sources node): the plan role writes "
            "0-3 queries per local source; each retrieves top-20, fused to the top 10."
        },
    )
    rationale_queries: bool = field(
        default=False,
        metadata={
            "description": "RAG² rationale queries: search with the model's step-by-step "
            "rationale (think's thought) instead of its sub-query."
        },
    )
    use_evidence_filter: bool = field(
        default=False,
        metadata={
            "description": "RAG² evidence filter (filter_evidence node) before the answer: "
            "drops snippets judged not helpful, always keeping the best one."
        },
    )

    def __post_init__(self) -> None:
        """Refuse settings no run can use, with one sentence naming the setting."""
        from prefrag.errors import ConfigurationError

        problems = []
        if self.reasoner not in ("auto", "extractive", "llm"):
            problems.append(
                f"reasoner must be 'auto', 'extractive' or 'llm' (got {self.reasoner!r})"
            )
        for name in ("top_k", "polyview_pool"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                problems.append(f"{name} must be a whole number of at least 1")
        for name in ("max_iterations", "max_reflections"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 0:
                problems.append(f"{name} must be a whole number of at least 0")
        if self.multi_source_mode not in ("balanced", "stacked"):
            problems.append(
                "multi_source_mode must be 'balanced' or 'stacked' "
                f"(got {self.multi_source_mode!r})"
            )
        views = self.polyview_views
        unknown = [v for v in views if v not in POLYVIEW_VIEWS] if isinstance(views, list) else []
        if not isinstance(views, list) or unknown or not views:
            got = unknown if isinstance(views, list) else views
            problems.append(
                "polyview_views takes one or more of the letters R, U, S, A, T, one per view "
                f"(got {got!r}; polyview itself is turned off with use_polyview)"
            )
        if problems:
            raise ConfigurationError("Bad run setting: " + "; ".join(problems) + ".")

    def candidates(self) -> int:
        """How many documents a search fetches before the tool nodes cut to `top_k`."""
        return self.top_k * max(1, self.polyview_pool) if self.use_polyview else self.top_k


require_model_fields((f.name for f in fields(Context)), "Context")


def context_of(runtime: Any, state: Mapping[str, Any] | None = None) -> Context:
    """The run's context.

    LangGraph's `runtime.context` is None unless the caller passed one; then the settings
    the thread's episode started with (`run_context` in the state, stored with every
    checkpoint) apply, so a resumed run continues as it began; else the defaults.
    """
    context = getattr(runtime, "context", None)
    if isinstance(context, Context):
        return context
    stored = (state or {}).get("run_context")
    return context_from(stored) if stored else Context()


def context_from(settings: Mapping[str, Any]) -> Context:
    """A `Context` from stored settings (e.g. a checkpoint's), ignoring unknown names."""
    known = {f.name for f in fields(Context)}
    return Context(**{name: value for name, value in settings.items() if name in known})
