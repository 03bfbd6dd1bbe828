"""The demo corpus's 25 questions: is each answered right, citing the right document?

Runs `prefrag.ask` on every question of `app/demo/questions.jsonl` over the bundled demo
corpus (indexed into a fresh data directory), web off, with the default (extractive) reasoner,
and prints one line per question and the totals per kind. A question counts as right when:

- `local` / `multihop`: the answer holds the expected answer (every content word of it) and
  the citations include one of its supporting documents;
- `conflict`: the same, and the cited document is the newer of the two conflicting ones;
- `web`: the answer needs the web, which is off, so right means an abstention.

    PREFRAG_HOME=/tmp/demo-home .venv/bin/python bench/demo_questions.py [--json out.json]

The bar is `BAR`: per kind, how many must be right (the counts measured when it was set).
The script exits 1 below it; `tests/test_demo_questions.py` (slow) runs the same check.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from prefrag.jsonl import read_rows

# Right answers with the right citation each kind must keep (measured: 17 of 25).
BAR = {"local": 6, "web": 5, "conflict": 4, "multihop": 2}


def _content_words(text: str) -> set[str]:
    from prefrag.reasoners._text import term_set

    return set(term_set(text))


def judge(item: dict[str, Any], result: dict[str, Any], dates: dict[str, str]) -> tuple[bool, str]:
    """Whether one answer is right, and a short reason."""
    answer = str(result.get("answer", ""))
    cited = [str(c.get("document", "")) for c in result.get("citations", [])]
    if item["kind"] == "web":
        ok = bool(result.get("abstained"))
        return ok, "abstained (web off)" if ok else "answered without the web"
    expected = _content_words(item["answer"])
    has_answer = bool(expected) and expected <= _content_words(answer)
    supporting = list(item["supporting_ids"])
    if item["kind"] == "conflict":
        supporting = [max(supporting, key=lambda i: dates.get(i, ""))]
    has_citation = any(c in supporting for c in cited)
    reason = []
    if not has_answer:
        reason.append("answer lacks the expected words")
    if not has_citation:
        reason.append(f"cites {cited or 'nothing'}, wants one of {supporting}")
    return has_answer and has_citation, "; ".join(reason) or "ok"


def run() -> tuple[list[dict[str, Any]], dict[str, list[int]]]:
    """Ask every demo question; the per-question rows and per-kind [right, total] tallies.

    Reads the process settings: the caller turns the web off (`PREFRAG_WEB_ENABLED=false`).
    """
    from prefrag import ask
    from prefrag.demo_corpus import DEMO_SOURCE, demo_corpus_path, demo_questions

    corpus = read_rows(demo_corpus_path())
    dates = {doc["id"]: doc["date"] for doc in corpus}
    rows = []
    totals: dict[str, list[int]] = {}
    for number, item in enumerate(demo_questions(), start=1):
        result = ask(item["question"], preferred_source=DEMO_SOURCE)
        ok, reason = judge(item, result, dates)
        cited = [str(c.get("document", "")) for c in result.get("citations", [])]
        rows.append(
            {
                "number": number,
                "kind": item["kind"],
                "question": item["question"],
                "answer": result.get("answer", ""),
                "cited": cited,
                "right": ok,
                "reason": reason,
            }
        )
        tally = totals.setdefault(item["kind"], [0, 0])
        tally[0] += int(ok)
        tally[1] += 1
    return rows, totals


def below_bar(totals: dict[str, list[int]]) -> list[str]:
    """The kinds whose right count fell below `BAR`, as 'kind r/n (bar b)'."""
    return [
        f"{kind} {totals.get(kind, [0, 0])[0]}/{totals.get(kind, [0, 0])[1]} (bar {bar})"
        for kind, bar in BAR.items()
        if totals.get(kind, [0, 0])[0] < bar
    ]


def main() -> None:
    """Ask every demo question, print the verdicts and totals; exit 1 below the bar."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write per-question results here")
    args = parser.parse_args()
    if "PREFRAG_HOME" not in os.environ:
        os.environ["PREFRAG_HOME"] = tempfile.mkdtemp(prefix="prefrag-demo-")
    os.environ["PREFRAG_WEB_ENABLED"] = "false"

    rows, totals = run()
    for row in rows:
        mark = "OK " if row["right"] else "-- "
        print(f"{mark}{row['number']:2d} [{row['kind']}] {row['question']}")
        print(f"      -> {str(row['answer'])[:220]!r} cites {row['cited']}  ({row['reason']})")
    right = sum(t[0] for t in totals.values())
    print("\n" + ", ".join(f"{kind} {t[0]}/{t[1]}" for kind, t in totals.items()))
    print(f"right answer with the right citation: {right}/{len(rows)}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    failing = below_bar(totals)
    if failing:
        print("below the bar: " + ", ".join(failing))
        raise SystemExit(1)


if __name__ == "__main__":
    main()
