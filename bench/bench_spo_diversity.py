"""Query diversity (Omni-RAG eq. 5) of explored queries and of the plans built from them.

Reads the output of `spo-explore` (explored JSONL) and `spo-judge` (its `sft.jsonl`) and
prints, per source, the mean pairwise cosine distance (MiniLM) of each question's explored
queries and of each positive plan's queries (sources with at least two), plus how many
explored queries were judged positive.

Run: `nice -n 10 .venv/bin/python bench/bench_spo_diversity.py EXPLORED.jsonl SPO_DIR`
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from prefrag.index.embeddings import get_embedder
from prefrag.jsonl import read_rows
from prefrag.reasoners.plans import SourceBrief, parse_plan
from prefrag.training.spo_explore import diversity_by_source, query_diversity


def main(explored_path: Path, spo_dir: Path) -> None:
    """Print exploration and plan diversity per source and positive counts."""
    embedder = get_embedder()
    explored = read_rows(explored_path)
    judged = read_rows(spo_dir / "judged.jsonl")
    print("exploration diversity:", json.dumps(diversity_by_source(explored, embedder)))
    plan_values: dict[str, list[float]] = {}
    for row in read_rows(spo_dir / "sft.jsonl"):
        sources = [SourceBrief(name=name) for name in row["meta"]["sources"]]
        plan = parse_plan(row["messages"][1]["content"], sources)
        assert plan is not None
        for source in sources:
            value = query_diversity(plan.query_texts(source.name), embedder)
            if value is not None:
                plan_values.setdefault(source.name, []).append(value)
    shown = {name: round(float(np.mean(v)), 3) for name, v in plan_values.items()}
    print("positive-plan diversity (sources with >= 2 queries):", json.dumps(shown))
    for name in judged[0]["queries"]:
        labels = [q["positive"] for row in judged for q in row["queries"][name]]
        print(f"{name}: {sum(labels)}/{len(labels)} explored queries positive")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
