"""The `condense_question` node: a follow-up on a thread rewritten to stand alone.

Every later node works on `standalone_question` (`question_of`), so retrieval, the switcher,
the answer and the self-reflection all see what the follow-up means, not its pronouns. The
rewrite is a note in the trace; `question` keeps the user's words.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from prefrag.graphs.context import Context, context_of
from prefrag.graphs.resources import ResourceProvider
from prefrag.graphs.retrieval import usage_update
from prefrag.graphs.state import PrefRAGState, Turn
from prefrag.reasoners.base import PriorTurn


def condense_question(
    state: PrefRAGState, runtime: Runtime[Context], *, resources: ResourceProvider
) -> dict[str, Any]:
    """Rewrite a follow-up into a standalone question from the thread's `history`.

    The first question of a thread has no history and passes unchanged without a reasoner
    call; a later one goes through the reasoner's `condense` role (a model's condense
    prompt, or the extractive rules), which leaves a standalone question as it is.
    """
    question = state.get("question") or ""
    history = state.get("history") or []
    if not history:
        return {"standalone_question": question}
    run = resources.resolve(context_of(runtime, state))
    condensed = run.reasoner.condense(question, [prior_turn(turn) for turn in history])
    # A rule-based rewrite costs no model call and is not counted as one.
    update: dict[str, Any] = (
        usage_update("condense", condensed.usage) if condensed.usage.calls else {}
    )
    update["standalone_question"] = condensed.question if condensed.rewritten else question
    if condensed.rewritten:
        update["notes"] = [
            f"Follow-up rewritten from the thread ({condensed.explanation}): "
            f"{question!r} -> {condensed.question!r}."
        ]
    elif condensed.fallback:
        update["notes"] = [f"condense: {condensed.explanation}"]
    return update


def prior_turn(turn: Turn) -> PriorTurn:
    """A stored turn as the condense role sees it (its standalone form when it had one)."""
    titles = [str(c.get("title") or "") for c in turn.get("citations", []) or []]
    return PriorTurn(
        question=turn.get("standalone_question") or turn.get("question", ""),
        answer=turn.get("answer", ""),
        abstained=bool(turn.get("abstained", False)),
        titles=[t for t in titles if t],
        short_answer=turn.get("short_answer", ""),
    )
