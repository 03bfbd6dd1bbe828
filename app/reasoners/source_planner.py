"""The model-free source planner: route the original question to the best-described sources.

Omni-RAG's "original question" baseline sends the question itself to the sources; without
a model, choosing *which* sources is the planning. `route_question` scores each source's
description against the question, by MiniLM cosine when an embedder is given, else by
word overlap weighted by how rare a word is among the descriptions, and sends the question
to the best source and to those scoring close to it. A graph source gets the question's
key terms as the looked-up term. When no description shares anything with the question,
every source gets it (the plain baseline), and the plan's notes say so.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from prefrag.reasoners.plans import PlannedQuery, SourceBrief, SourcePlan, original_question_plan

if TYPE_CHECKING:
    from prefrag.index.embeddings import Embedder

__all__ = ["question_terms", "route_question", "source_scores"]

# A source is routed to when its score reaches this share of the best score (word
# overlap) or is within this cosine of the best one (embeddings); at most MAX_ROUTED.
LEXICAL_SHARE = 0.6
COSINE_MARGIN = 0.05
MAX_ROUTED = 3
_TERM_WORDS = 4
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")
_STOPWORDS = frozenset(
    """a an the of and or in on at to for from by with about into over under is are was were
    be been being do does did what which who whom whose when where why how that this these
    those it its as than then there their they them he she his her i you your we our can
    could should would may might will shall not no yes any some all each more most other
    such only own same so too very s t just also if but because while during before after
    above below up down out off again further once here both few many much get got have has
    had having provides provide access api holds hold source sources information including
    various""".split()
)


def question_terms(question: str, limit: int = _TERM_WORDS) -> str:
    """The question's key terms: a capitalised name if it has one, else content words."""
    names = re.findall(r"(?<!^)(?<![.?!]\s)\b([A-Z][\w\-]*(?:\s+[A-Z][\w\-]*)*)", question)
    if names:
        return max(names, key=len)
    words = [w for w in _WORD.findall(question) if w.lower() not in _STOPWORDS]
    return " ".join(words[:limit]) or question.strip()


def source_scores(
    question: str, sources: Sequence[SourceBrief], *, embedder: Embedder | None = None
) -> list[float]:
    """How well each source's description (and name) matches `question`."""
    texts = [f"{s.name}: {s.description}" for s in sources]
    if embedder is not None:
        vectors = embedder.encode([question, *texts])
        return [float(vectors[0] @ v) for v in vectors[1:]]
    asked = set(_stems(question))
    described = [set(_stems(text)) for text in texts]
    count = len(described)
    scores = []
    for words in described:
        shared = asked & words
        weight = sum(math.log(1 + count / sum(w in d for d in described)) for w in shared)
        scores.append(weight / math.sqrt(max(len(words), 1)))
    return scores


def route_question(
    question: str, sources: Sequence[SourceBrief], *, embedder: Embedder | None = None
) -> SourcePlan:
    """A plan sending `question` to the sources whose descriptions match it best."""
    if not sources:
        return SourcePlan(notes=["no sources to plan for"])
    scores = source_scores(question, sources, embedder=embedder)
    best = max(scores)
    shown = ", ".join(f"{s.name} {score:.2f}" for s, score in zip(sources, scores, strict=True))
    how = "MiniLM cosine" if embedder is not None else "description word overlap"
    if best <= 0 and embedder is None:
        return original_question_plan(
            question,
            sources,
            notes=[
                f"extractive routing ({how}: {shown}): no description matches; every "
                "source gets the question"
            ],
        ).model_copy(update={"fallback": False, "strict": True})
    close = (
        [score >= best - COSINE_MARGIN for score in scores]
        if embedder is not None
        else [score > 0 and score >= LEXICAL_SHARE * best for score in scores]
    )
    ranked = sorted((i for i, ok in enumerate(close) if ok), key=lambda i: -scores[i])[:MAX_ROUTED]
    chosen = set(ranked)
    queries: dict[str, list[PlannedQuery]] = {}
    for i, source in enumerate(sources):
        if i not in chosen:
            queries[source.name] = []
        elif source.is_graph:
            queries[source.name] = [PlannedQuery(text=question, term=question_terms(question))]
        else:
            queries[source.name] = [PlannedQuery(text=question)]
    routed = ", ".join(sources[i].name for i in ranked)
    return SourcePlan(
        queries=queries,
        strict=True,
        notes=[f"extractive routing ({how}: {shown}): the question goes to {routed}"],
    )


def _stems(text: str) -> list[str]:
    words = [w.lower().strip("'-") for w in _WORD.findall(text)]
    return [_stem(w) for w in words if w and w not in _STOPWORDS and len(w) > 1]


def _stem(word: str) -> str:
    for suffix in ("ies", "s"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word
