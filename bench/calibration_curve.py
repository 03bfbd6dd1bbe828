"""Coverage vs accuracy of the extractive reasoner's answers, by their confidence.

Indexes each corpus of a question set (folders of invented notes, one source per folder) into
a fresh data directory, asks every question through the API (`prefrag.ask`, web off, the
default extractive reasoner), judges each answer and prints:

- per corpus and question kind: answerable questions answered right, unanswerable questions
  abstained on, and confidently wrong answers (answered, not right) over all questions;
- the coverage-accuracy curve: for each confidence threshold, the share of answerable
  questions answered at or above it and the share of those answers that are right, plus the
  share of unanswerable questions answered above it (what a threshold lets through).

An answer is right when it holds every content word of one expected answer and cites one
of the expected documents (for two-document questions: cites all of them).

Question sets are JSONL files with `corpus`, `kind` (`unanswerable` for questions the notes
do not answer), `question`, `answer` (alternatives) and `documents` (file stems), next to
one folder per corpus. Only declared tuning sets belong here (our own invented notes);
report splits are scored by their own commands.

    .venv/bin/python bench/calibration_curve.py [QUESTIONS.jsonl ...] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from prefrag.jsonl import read_rows

DEFAULT_SETS = [Path(__file__).parent.parent / "tests/fixtures/policy_notes/questions.jsonl"]


def _content_words(text: str) -> set[str]:
    from prefrag.reasoners._text import term_set

    return set(term_set(text))


def _file_stem(citation: dict[str, Any]) -> str:
    """The file name (without suffix) a citation's document was indexed from."""
    url = str(citation.get("url") or "")
    if url.startswith("file://"):
        return Path(url.removeprefix("file://")).stem
    return str(citation.get("document", ""))


def judge(item: dict[str, Any], result: dict[str, Any]) -> str:
    """'abstained', 'right' or 'wrong' for one answer."""
    if result.get("abstained"):
        return "abstained"
    if item["kind"] == "unanswerable":
        return "wrong"
    answer = _content_words(str(result.get("answer", "")))
    has_answer = any(_content_words(alt) <= answer for alt in item["answer"])
    cited = {_file_stem(c) for c in result.get("citations", [])}
    wanted = item.get("documents") or []

    def is_cited(stem: str) -> bool:
        return stem in cited

    need_all = item["kind"] == "bridge"
    has_citation = (
        all(is_cited(d) for d in wanted) if need_all else any(is_cited(d) for d in wanted)
    )
    return "right" if has_answer and has_citation else "wrong"


def demo_items() -> list[dict[str, Any]]:
    """The demo questions in this script's form (web questions are unanswerable, web off)."""
    from prefrag.demo_corpus import demo_corpus_path, demo_questions

    corpus = read_rows(demo_corpus_path())
    dates = {doc["id"]: doc["date"] for doc in corpus}
    items = []
    for item in demo_questions():
        supporting = list(item["supporting_ids"])
        if item["kind"] == "conflict":
            supporting = [max(supporting, key=lambda i: dates.get(i, ""))]
        web = item["kind"] == "web"
        items.append(
            {
                "corpus": "demo",
                "kind": "unanswerable" if web else item["kind"],
                "question": item["question"],
                "answer": [] if web else [item["answer"]],
                "documents": [] if web else supporting,
            }
        )
    return items


def ask_all(
    items: list[dict[str, Any]], folder: Path | None, set_name: str
) -> list[dict[str, Any]]:
    """Ask every item (indexing each corpus folder once); one judged row per question."""
    from prefrag import ask
    from prefrag.index.ingest import index_paths

    indexed: set[str] = set()
    rows = []
    for item in items:
        corpus = item["corpus"]
        source = "demo" if folder is None else f"tune-{corpus}"
        if folder is not None and corpus not in indexed:
            index_paths([folder / corpus], source)
            indexed.add(corpus)
        result = ask(item["question"], preferred_source=source)
        rows.append(
            {
                "set": set_name,
                "corpus": corpus,
                "kind": item["kind"],
                "question": item["question"],
                "answer": result.get("answer", ""),
                "confidence": result.get("confidence"),
                "cited": [_file_stem(c) for c in result.get("citations", [])],
                "verdict": judge(item, result),
            }
        )
    return rows


def run_set(path: Path) -> list[dict[str, Any]]:
    """Ask every question of one set over its corpora; one row per question."""
    items = read_rows(path)
    return ask_all(items, path.parent, path.stem)


def summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per group: answerable right, unanswerable abstained, confidently wrong (over all)."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row["corpus"]].append(row)
        groups[f"kind:{row['kind']}"].append(row)
        groups["all"].append(row)
    out = {}
    for name, members in groups.items():
        answerable = [r for r in members if r["kind"] != "unanswerable"]
        unanswerable = [r for r in members if r["kind"] == "unanswerable"]
        out[name] = {
            "n": len(members),
            "answerable_right": _share(answerable, "right"),
            "unanswerable_abstained": _share(unanswerable, "abstained"),
            "confidently_wrong": _share(members, "wrong"),
        }
    return out


def _share(rows: list[dict[str, Any]], verdict: str) -> float:
    return sum(r["verdict"] == verdict for r in rows) / len(rows) if rows else float("nan")


def curve(rows: list[dict[str, Any]], steps: int = 10) -> list[dict[str, float]]:
    """Coverage and accuracy of the answers whose confidence reaches each threshold."""
    answered = [r for r in rows if r["verdict"] != "abstained" and r["confidence"] is not None]
    answerable = [r for r in rows if r["kind"] != "unanswerable"]
    unanswerable = [r for r in rows if r["kind"] == "unanswerable"]
    points = []
    for step in range(steps + 1):
        threshold = step / steps
        kept = [r for r in answered if float(r["confidence"]) >= threshold]
        kept_answerable = [r for r in kept if r["kind"] != "unanswerable"]
        points.append(
            {
                "threshold": threshold,
                "coverage": len(kept_answerable) / len(answerable) if answerable else 0.0,
                "accuracy": _share(kept, "right") if kept else float("nan"),
                "unanswerable_answered": (
                    sum(r["kind"] == "unanswerable" for r in kept) / len(unanswerable)
                    if unanswerable
                    else 0.0
                ),
            }
        )
    return points


def main() -> None:
    """Run the question sets and print the summary and the curve."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="*", type=Path, default=DEFAULT_SETS)
    parser.add_argument("--json", type=Path, help="also write the rows, summary and curve here")
    parser.add_argument("--verbose", action="store_true", help="print every answer")
    parser.add_argument("--demo", action="store_true", help="also ask the 25 demo questions")
    parser.add_argument(
        "--answer-threshold",
        type=float,
        help="answer down to this confidence instead of the fitted model's answer threshold"
        " (PARAMS.answer_confidence without the model), to draw the curve below it",
    )
    args = parser.parse_args()
    os.environ.setdefault("PREFRAG_HOME", tempfile.mkdtemp(prefix="prefrag-calibration-"))
    os.environ["PREFRAG_WEB_ENABLED"] = "false"
    if args.answer_threshold is not None:
        import dataclasses

        import prefrag.reasoners._answering as answering
        from prefrag.reasoners._confidence import active_model
        from prefrag.reasoners._params import PARAMS

        model = active_model()
        if model is None:
            object.__setattr__(PARAMS, "answer_confidence", args.answer_threshold)
        else:
            # The fitted model decides (PREFRAG_CALIBRATED_CONFIDENCE): lower its threshold.
            lowered = dataclasses.replace(
                model,
                answer_threshold=args.answer_threshold,
                short_threshold=args.answer_threshold,
            )
            answering.active_model = lambda: lowered  # type: ignore[assignment]
    # The demo source is there only until a source of one's own is indexed: demo first.
    rows = ask_all(demo_items(), None, "demo") if args.demo else []
    rows += [row for path in args.sets for row in run_set(path)]
    if args.verbose:
        for row in rows:
            conf = row["confidence"]
            shown = f"{conf:.2f}" if isinstance(conf, float) else "-"
            print(f"[{row['verdict']:9s} {shown}] ({row['kind']}) {row['question']}")
            print(f"      -> {str(row['answer'])[:200]!r} cites {row['cited']}")
    table = summary(rows)
    print(f"{'group':22s} {'n':>3s} {'right':>6s} {'abstain':>8s} {'wrong':>6s}")
    for name, values in sorted(table.items()):
        print(
            f"{name:22s} {values['n']:3.0f} {values['answerable_right']:6.2f} "
            f"{values['unanswerable_abstained']:8.2f} {values['confidently_wrong']:6.2f}"
        )
    points = curve(rows)
    print("\nthreshold coverage accuracy unanswerable_answered")
    for p in points:
        print(
            f"{p['threshold']:9.2f} {p['coverage']:8.2f} {p['accuracy']:8.2f}"
            f" {p['unanswerable_answered']:8.2f}"
        )
    if args.json:
        args.json.write_text(
            json.dumps({"rows": rows, "summary": table, "curve": points}, indent=2)
        )


if __name__ == "__main__":
    main()
