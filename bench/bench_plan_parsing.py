"""Planner parse success on the malformed-plan fixture: this parser vs. a naive one.

Each fixture plan (tests/fixtures/malformed_plans.json) states the queries a reader should
recover, or that nothing is readable (then the planner must say so, to repair or fall
back). A plan counts as parsed when the recovered queries per source equal the expected
ones (and an unreadable plan is reported as unreadable). The naive parser does what the
Omni-RAG reference code does: an exact-case `<name>...</name>` regex per source, `;`
splits, graph pairs split at the first comma, a missing tag silently means no queries.

Run: `.venv/bin/python bench/bench_plan_parsing.py`
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from prefrag.reasoners.plans import SourceBrief, parse_plan

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "malformed_plans.json"


def naive(text: str, sources: list[SourceBrief]) -> dict[str, list[str]]:
    """The reference code's reading: exact tags, `;` splits, first-comma graph pairs."""
    plan: dict[str, list[str]] = {}
    for source in sources:
        found = re.search(rf"<{source.name}>(.*?)</{source.name}>", text, re.DOTALL)
        parts = [p.strip() for p in found.group(1).split(";") if p.strip()] if found else []
        if source.is_graph:
            parts = [" , ".join(s.strip() for s in p.split(",", 1)) for p in parts]
        if found:
            plan[source.name] = parts
    return plan


def main() -> None:
    """Print parse success of both parsers and list the cases each gets wrong."""
    data = json.loads(FIXTURE.read_text())
    sources = [SourceBrief(**s) for s in data["sources"]]
    ours = theirs = 0
    for case in data["plans"]:
        plan = parse_plan(case["text"], sources)
        expected = case["expected"]
        got = None if plan is None else {n: plan.query_texts(n) for n in plan.queries}
        ours += got == expected
        naive_plan = naive(case["text"], sources)
        naive_ok = expected is not None and naive_plan == expected
        theirs += naive_ok
        if got != expected or not naive_ok:
            print(
                f"  {case['case']}: ours {'ok' if got == expected else 'WRONG'}, "
                f"naive {'ok' if naive_ok else 'wrong'}"
            )
    total = len(data["plans"])
    print(
        f"parse success: ours {ours}/{total} = {ours / total:.2f}; "
        f"naive {theirs}/{total} = {theirs / total:.2f}"
    )


if __name__ == "__main__":
    main()
