"""SPO planning judging (Omni-RAG §4.2.2 and §4.2.3): label explored queries, build plan datasets.

Every explored query is positive when its documents support the gold answer, negative
otherwise. Judges: `gold` (offline; positive when a gold document id is among the query's
results, or, for rows without gold ids, when a result contains the gold answer text) and
`llm` (the judging prompt E.4 to the `plan` role's chat model; an unreadable verdict counts
as "no" and is counted).

From the labels (§4.2.3): the positive plan of a question takes up to three positive
queries per source (a random three when there are more; an empty tag for a source
without any); a question with no positive query at all is dropped. The negative plan is
built the same way from negative queries; a DPO pair needs both. Written files:

- `judged.jsonl`: the explored rows with a `positive` label on every query;
- `sft.jsonl`: `{"messages": [user: the planning prompt (E.7), assistant: positive plan]}`;
- `dpo.jsonl`: `{"prompt": [user], "chosen": [assistant: positive plan],
  "rejected": [assistant: negative plan]}` (TRL's conversational preference format).

The user message is exactly what the `plan` role sends (`plan_prompt`), so a planner
trained on these rows sees at inference what it saw in training.

Run: `prefrag train spo-judge --data explored.jsonl --output_dir spo-data [--judge gold]`.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage

from prefrag.documents import format_documents, make_document
from prefrag.errors import ConfigurationError
from prefrag.jsonl import read_jsonl, write_jsonl
from prefrag.prompts import render_prompt
from prefrag.reasoners.plans import (
    MAX_QUERIES,
    PlannedQuery,
    SourceBrief,
    SourcePlan,
    parse_graph_query,
    plan_prompt,
)

__all__ = ["GoldJudge", "JudgeConfig", "LLMJudge", "build_datasets", "judge_rows", "main"]

_VERDICT = re.compile(r"<answer>\s*(yes|no)\s*</answer>", re.IGNORECASE)


@dataclass
class JudgeConfig:
    """Settings of one judging run."""

    data: str = field(default="", metadata={"help": "Explored JSONL from spo-explore."})
    output_dir: str = field(default="", metadata={"help": "Folder for judged/sft/dpo JSONL."})
    judge: str = field(
        default="gold",
        metadata={"help": "'gold' (a gold document among the results) or 'llm' (prompt E.4)."},
    )
    judge_k: int = field(
        default=0,
        metadata={"help": "Judge only each query's first K documents (0: all retrieved)."},
    )
    seed: int = field(default=0, metadata={"help": "Seed of the choice of three positives."})


class Judge(Protocol):
    """Decides whether one query's documents support the gold answer."""

    def supports(
        self, question: str, gold: str, gold_ids: Sequence[str], documents: Sequence[Document]
    ) -> bool:
        """True when `documents` support `gold` as the answer to `question`."""
        ...


class GoldJudge:
    """Offline judge: a gold document is among the results (or one contains the answer).

    Gold ids match a result's `id` or its `parent_id` (indexed chunks carry content-hash
    ids and keep the id given in the indexed file as `parent_id`).
    """

    def supports(
        self, question: str, gold: str, gold_ids: Sequence[str], documents: Sequence[Document]
    ) -> bool:
        """Gold id (of a document or of the file entry a chunk came from) among the results.

        Without gold ids, the gold answer's text inside one of the documents counts.
        """
        ids = {str(d.metadata.get(key)) for d in documents for key in ("id", "parent_id")}
        if gold_ids:
            return bool(ids & set(gold_ids))
        wanted = _normal(gold)
        return bool(wanted) and any(wanted in _normal(d.page_content) for d in documents)


class LLMJudge:
    """The judging prompt (E.4) to a chat model; `<answer>yes</answer>` means supported."""

    def __init__(self, model: BaseChatModel) -> None:
        self.model = model
        self.unreadable = 0

    def supports(
        self, question: str, gold: str, gold_ids: Sequence[str], documents: Sequence[Document]
    ) -> bool:
        """Ask once; an unreadable verdict counts as "no" (and is counted)."""
        prompt = render_prompt(
            "plan_judge", question=question, gold=gold, documents=format_documents(documents)
        )
        reply = self.model.invoke([HumanMessage(prompt)])
        text = reply.content if isinstance(reply.content, str) else str(reply.content)
        found = _VERDICT.findall(text)
        if not found:
            self.unreadable += 1
            return False
        return found[-1].lower() == "yes"


def judge_rows(
    rows: Sequence[dict[str, Any]], judge: Judge, *, judge_k: int = 0
) -> list[dict[str, Any]]:
    """The explored rows with `positive` set on every query."""
    judged = []
    for row in rows:
        queries = {}
        for name, entries in row["queries"].items():
            labelled = []
            for entry in entries:
                documents = [
                    make_document(
                        d["text"],
                        id=d["id"],
                        source=name,
                        title=d.get("title", ""),
                        parent_id=d.get("parent_id"),
                    )
                    for d in entry["documents"][: judge_k or None]
                ]
                positive = bool(documents) and judge.supports(
                    row["question"], row.get("answer", ""), row.get("gold_ids", []), documents
                )
                labelled.append({**entry, "positive": positive})
            queries[name] = labelled
        judged.append({**row, "queries": queries})
    return judged


def build_datasets(
    judged: Sequence[dict[str, Any]], *, seed: int = 0
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """SFT rows (positive plans) and DPO rows (positive vs. negative plans)."""
    rng = random.Random(seed)
    sft, dpo = [], []
    for row in judged:
        sources = [SourceBrief(**s) for s in row["sources"]]
        positive = _plan(row, sources, True, rng)
        if not positive.searched():
            continue  # no source can provide valuable information
        prompt = [{"role": "user", "content": plan_prompt(row["question"], sources)}]
        chosen = [{"role": "assistant", "content": positive.render(sources)}]
        meta = {"question_id": row["id"], "sources": [s.name for s in sources]}
        sft.append({"messages": [*prompt, *chosen], "meta": meta})
        negative = _plan(row, sources, False, rng)
        if negative.searched():
            rejected = [{"role": "assistant", "content": negative.render(sources)}]
            dpo.append({"prompt": prompt, "chosen": chosen, "rejected": rejected, "meta": meta})
    return sft, dpo


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """`prefrag train spo-judge`: label the explored queries, write judged/SFT/DPO JSONL."""
    from prefrag.training.config import parse_config

    (config,) = parse_config([JudgeConfig], argv, prog="prefrag train spo-judge")
    if not config.data or not config.output_dir:
        raise ConfigurationError("spo-judge needs --data (explored JSONL) and --output_dir.")
    rows = read_jsonl(
        Path(config.data),
        file_kind="explored data",
        row_kind="an explored question",
        rows_kind="explored questions",
        problem=_explored_problem,
    )
    judge = _judge(config.judge)
    judged = judge_rows(rows, judge, judge_k=config.judge_k)
    sft, dpo = build_datasets(judged, seed=config.seed)
    out = Path(config.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, records in (("judged", judged), ("sft", sft), ("dpo", dpo)):
        write_jsonl(records, out / f"{name}.jsonl")
    labels = [q["positive"] for row in judged for qs in row["queries"].values() for q in qs]
    summary = {
        "questions": len(judged),
        "queries": len(labels),
        "positive_queries": sum(labels),
        "sft_rows": len(sft),
        "dpo_rows": len(dpo),
        "unreadable_verdicts": getattr(judge, "unreadable", 0),
        "output_dir": str(out),
    }
    print(json.dumps(summary, indent=2))
    return summary


def _explored_problem(row: Any) -> str | None:
    if not isinstance(row, dict) or not isinstance(row.get("queries"), dict):
        return "it needs the 'queries' that spo-explore writes"
    return None


def _plan(
    row: dict[str, Any], sources: Sequence[SourceBrief], positive: bool, rng: random.Random
) -> SourcePlan:
    queries: dict[str, list[PlannedQuery]] = {}
    for source in sources:
        texts = [
            q["query"] for q in row["queries"].get(source.name, []) if q["positive"] is positive
        ]
        if len(texts) > MAX_QUERIES:
            texts = rng.sample(texts, MAX_QUERIES)
        queries[source.name] = [
            parse_graph_query(t)[0] if source.is_graph else PlannedQuery(text=t) for t in texts
        ]
    return SourcePlan(queries=queries)


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _judge(name: str) -> Judge:
    if name == "gold":
        return GoldJudge()
    if name == "llm":
        from prefrag.config import get_settings
        from prefrag.models import build_chat_model

        return LLMJudge(build_chat_model("plan", get_settings()))
    raise ConfigurationError(f"Unknown judge '{name}'; choose 'gold' or 'llm'.")


if __name__ == "__main__":
    main()
