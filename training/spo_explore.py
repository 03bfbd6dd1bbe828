"""SPO planning exploration (Omni-RAG §4.2.1): many diverse queries per source, retrieved.

For every training question an expert writes `n_queries` (the paper: 6) queries for every
source with the exploration prompt (E.3); each query retrieves its top `top_k` documents
from its source. The output JSONL holds, per question, the sources as the planner sees
them and, per source, every query with the ids and texts of what it retrieved, for
`spo-judge` to label.

Experts: `llm` (the `plan` role's chat model from settings, or any LangChain chat model
given to `explore`), or `extractive`, a model-free stand-in that derives diverse queries
from the question and the source's description, so the pipeline runs offline.

Input JSONL: `question`, a gold `answer` (or `content`), optional `id` and `gold_ids`
(ids of the documents that hold the answer; MedQuAD rows use their own `id`).

Run: `prefrag train spo-explore --data train.jsonl --output explored.jsonl [--sources a,b]`
(or `python -m prefrag.training.spo_explore ...`, or `--config explore.yaml`).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage

from prefrag.errors import ConfigurationError
from prefrag.jsonl import read_jsonl, write_jsonl
from prefrag.reasoners.plans import (
    PlannedQuery,
    SourceBrief,
    SourcePlan,
    brief_of,
    explore_prompt,
    parse_plan,
)
from prefrag.reasoners.source_planner import question_terms
from prefrag.sources.base import Source

__all__ = [
    "ExploreConfig",
    "Explorer",
    "ExtractiveExplorer",
    "LLMExplorer",
    "explore",
    "main",
    "query_diversity",
]

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")
_STOP = frozenset(
    """a an the of and or in on at to for from by with about is are was were be been do does
    did what which who whom whose when where why how that this these those it its as can
    could should would may might will i my me you your there their they them he she his her
    if any some all more most other such only not no""".split()
)


@dataclass
class ExploreConfig:
    """Settings of one exploration run."""

    data: str = field(default="", metadata={"help": "Training questions (JSONL)."})
    output: str = field(default="", metadata={"help": "Where to write the explored JSONL."})
    sources: str = field(
        default="",
        metadata={"help": "Comma-separated local sources to explore (default: every one)."},
    )
    expert: str = field(
        default="extractive",
        metadata={"help": "'extractive' (no model) or 'llm' (the plan role's chat model)."},
    )
    n_queries: int = field(default=6, metadata={"help": "Queries per source (the paper: 6)."})
    top_k: int = field(default=10, metadata={"help": "Documents each query retrieves."})
    limit: int = field(default=0, metadata={"help": "Explore the first N questions (0: all)."})
    diversity: bool = field(
        default=False,
        metadata={"help": "Report the mean pairwise cosine distance of each source's queries."},
    )


class Explorer(Protocol):
    """Writes up to `n` queries for every source for one question."""

    def explore(self, question: str, sources: Sequence[SourceBrief], n: int) -> SourcePlan:
        """The explored plan (up to `n` queries per source)."""
        ...


class LLMExplorer:
    """An expert chat model behind the exploration prompt (E.3), read by `parse_plan`."""

    def __init__(self, model: BaseChatModel) -> None:
        self.model = model

    def explore(self, question: str, sources: Sequence[SourceBrief], n: int) -> SourcePlan:
        """Ask the model once; an unreadable reply gives an empty plan that says so."""
        reply = self.model.invoke([HumanMessage(explore_prompt(question, sources, n))])
        text = reply.content if isinstance(reply.content, str) else str(reply.content)
        plan = parse_plan(text, sources, max_queries=n)
        if plan is None:
            return SourcePlan(strict=False, notes=["the expert's reply held no source tags"])
        return plan


class ExtractiveExplorer:
    """Model-free diverse queries: the question, its key terms, and term windows.

    Per source: the question itself, its key terms, its content words, the key terms with
    the words of the source's description that the question does not use (aligning the
    query with the source), windows over the content words, then the key terms with one
    more word and single content words, until `n` distinct queries exist. Graph sources
    get the key terms as the looked-up term.
    """

    def explore(self, question: str, sources: Sequence[SourceBrief], n: int) -> SourcePlan:
        """Up to `n` distinct queries per source."""
        terms = question_terms(question)
        words = [w for w in _WORD.findall(question) if w.lower() not in _STOP]
        queries: dict[str, list[PlannedQuery]] = {}
        for source in sources:
            described = [
                w
                for w in _WORD.findall(source.description)
                if w.lower() not in _STOP and w.lower() not in question.lower()
            ][:3]
            candidates = [
                question.strip(),
                terms,
                " ".join(words),
                " ".join([terms, *described]),
                *(" ".join(words[i : i + 3]) for i in range(0, max(len(words) - 2, 1))),
                *(" ".join([terms, w]) for w in words if w not in terms),
                *(" ".join([terms, w]) for w in described),
                *words,
            ]
            distinct = list(dict.fromkeys(c for c in candidates if c.strip()))[:n]
            queries[source.name] = [
                PlannedQuery(text=c, term=terms if source.is_graph else "") for c in distinct
            ]
        return SourcePlan(queries=queries, strict=True)


def explore(
    rows: Iterable[dict[str, Any]],
    sources: Sequence[Source],
    explorer: Explorer,
    *,
    n_queries: int = 6,
    top_k: int = 10,
) -> list[dict[str, Any]]:
    """Explore every training row: queries per source and what each retrieved."""
    briefs = [brief_of(source) for source in sources]
    explored: list[dict[str, Any]] = []
    for row in rows:
        question = str(row.get("question") or "").strip()
        if not question:
            continue
        plan = explorer.explore(question, briefs, n_queries)
        by_source: dict[str, list[dict[str, Any]]] = {}
        for source in sources:
            by_source[source.name] = [
                _retrieve(source, query, top_k) for query in plan.queries.get(source.name, [])
            ]
        explored.append(
            {
                "id": str(row.get("id", len(explored))),
                "question": question,
                "answer": str(row.get("answer") or row.get("content") or ""),
                "gold_ids": list(row.get("gold_ids") or ([row["id"]] if "id" in row else [])),
                "sources": [brief.model_dump() for brief in briefs],
                "queries": by_source,
                "notes": plan.notes,
            }
        )
    return explored


def query_diversity(queries: Sequence[str], embedder: Any) -> float | None:
    """Mean pairwise cosine distance of `queries` (Omni-RAG eq. 5); None for fewer than 2."""
    if len(queries) < 2:
        return None
    vectors = np.asarray(embedder.encode(list(queries)))
    pairs = list(itertools.combinations(range(len(queries)), 2))
    return float(np.mean([1.0 - float(vectors[i] @ vectors[j]) for i, j in pairs]))


def diversity_by_source(explored: Sequence[dict[str, Any]], embedder: Any) -> dict[str, float]:
    """Mean query diversity per source over the explored questions."""
    values: dict[str, list[float]] = {}
    for row in explored:
        for name, queries in row["queries"].items():
            value = query_diversity([q["query"] for q in queries], embedder)
            if value is not None:
                values.setdefault(name, []).append(value)
    return {name: float(np.mean(v)) for name, v in values.items()}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """`prefrag train spo-explore`: explore the training questions, write the JSONL."""
    from prefrag.training.config import parse_config

    (config,) = parse_config([ExploreConfig], argv, prog="prefrag train spo-explore")
    if not config.data or not config.output:
        raise ConfigurationError("spo-explore needs --data (questions) and --output (JSONL).")
    rows = read_jsonl(
        Path(config.data),
        file_kind="training questions",
        row_kind="a question row",
        rows_kind="questions",
        problem=_question_problem,
        limit=config.limit or None,
    )
    sources = _sources(config.sources)
    explored = explore(
        rows, sources, _explorer(config.expert), n_queries=config.n_queries, top_k=config.top_k
    )
    out = write_jsonl(explored, Path(config.output))
    summary: dict[str, Any] = {
        "questions": len(explored),
        "sources": [s.name for s in sources],
        "queries": sum(len(q) for row in explored for q in row["queries"].values()),
        "output": str(out),
    }
    if config.diversity:
        from prefrag.index.embeddings import get_embedder

        summary["diversity"] = diversity_by_source(explored, get_embedder())
    print(json.dumps(summary, indent=2))
    return summary


def _retrieve(source: Source, query: PlannedQuery, k: int) -> dict[str, Any]:
    from prefrag.graphs.planning import PlannedRetrieval, run_plan

    plan = SourcePlan(queries={source.name: [query]})
    found: PlannedRetrieval = run_plan(plan, [source], search_k=k, keep=k)
    return {
        "query": query.render(),
        "term": query.term,
        "doc_ids": [str(d.metadata.get("id")) for d in found.documents],
        "documents": [
            {
                "id": str(d.metadata.get("id")),
                "parent_id": str(d.metadata.get("parent_id") or d.metadata.get("id")),
                "title": str(d.metadata.get("title", "")),
                "text": d.page_content,
            }
            for d in found.documents
        ],
    }


def _question_problem(row: Any) -> str | None:
    return None if isinstance(row, dict) else "the line is not an object"


def _sources(names: str) -> list[Source]:
    from prefrag.graphs.planning import plannable_sources
    from prefrag.sources.defaults import default_sources

    registry = default_sources(web=False)
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    if wanted:
        return [registry.get(name) for name in wanted]
    return plannable_sources(registry)


def _explorer(name: str) -> Explorer:
    if name == "extractive":
        return ExtractiveExplorer()
    if name == "llm":
        from prefrag.config import get_settings
        from prefrag.models import build_chat_model

        return LLMExplorer(build_chat_model("plan", get_settings()))
    raise ConfigurationError(f"Unknown expert '{name}'; choose 'extractive' or 'llm'.")


if __name__ == "__main__":
    main()
