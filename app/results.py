"""Turn the graph's output state into plain JSON-ready records (CLI, eval, HTTP)."""

from __future__ import annotations

from typing import Any

from prefrag.documents import doc_id


def route_of(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The route: per step, what was searched, the judge's verdict and the documents used."""
    return [
        {
            "step": step.get("index", i),
            "kind": step.get("kind", "retrieve"),
            "thought": step.get("thought", ""),
            "query": step.get("query", ""),
            "searched": list(step.get("searched", [])),
            "source": step.get("source", ""),
            "verdict": step.get("verdict"),
            "analysis": step.get("analysis", ""),
            "retrieved": [doc_id(d) for d in step.get("retrieved", [])],
            "used": [doc_id(d) for d in step.get("used", [])],
            "notes": list(step.get("notes", [])),
        }
        for i, step in enumerate(result.get("route", []))
    ]


def result_record(result: dict[str, Any]) -> dict[str, Any]:
    """`{"answer", "citations", "route", "counters", ..., "history"}` as `ask --json` prints."""
    return {
        "question": result.get("question", ""),
        "standalone_question": result.get("standalone_question") or result.get("question", ""),
        "answer": result.get("answer", ""),
        "abstained": bool(result.get("abstained", False)),
        "confidence": result.get("confidence"),
        "short_answer": result.get("short_answer", "") or "",
        "citations": list(result.get("citations", [])),
        "route": route_of(result),
        "counters": dict(result.get("counters", {})),
        "reflections": list(result.get("reflections", [])),
        "model_calls": dict(result.get("model_calls", {})),
        "tokens": dict(result.get("tokens", {})),
        "role_decisions": dict(result.get("role_decisions", {})),
        "role_fallbacks": dict(result.get("role_fallbacks", {})),
        "notes": list(result.get("notes", [])),
        "history": list(result.get("history", [])),
    }
