"""Development check of `ExtractiveReasoner` on HotpotQA dev (IRCoT format), no graph needed.

Simulates the PrefRAG loop per question over a BM25 index of that question's own contexts
(think -> search -> compare -> ... -> answer, at most 3 retrieval steps, then self-reflection;
a negative label supplements with the question and thinks again with the feedback, as the
graph does; `--reflections 0` stops at the first answer), and reports answer
EM/F1 and evidence recall (share of the 2 gold paragraphs in the cited and in the held
evidence) for (a) answering from the two gold paragraphs only and (b) the iterative loop.
The switcher's verdicts are compared to an oracle ("the new documents bring a gold
paragraph not held yet"); with one source the observation is always the local result.

Tune on the default `--items 1-200` only; items 201-350 are the report half.

    .venv/bin/python bench/dev_extractive_hotpot.py --k 3
    .venv/bin/python bench/dev_extractive_hotpot.py --k 5 --embeddings
"""

from __future__ import annotations

import argparse
import collections
import time
from pathlib import Path

from rank_bm25 import BM25Okapi

from prefrag.documents import doc_id, make_document, unique_documents
from prefrag.eval.metrics import acc, exact_match, f1
from prefrag.jsonl import jsonl_line, read_rows
from prefrag.reasoners._text import analyze_question, content_terms
from prefrag.reasoners.base import ScratchpadStep
from prefrag.reasoners.extractive import ExtractiveReasoner

DATA = Path("/work/shared/data/hotpotqa/hotpotqa_dev_350.jsonl")


def best(prediction: str, golds: list[str]) -> tuple[float, float]:
    return exact_match(prediction, golds), f1(prediction, golds)


def shown(draft) -> str:
    """What is scored: the short answer when the answer holds one, as `prefrag eval` does."""
    return draft.short_answer or draft.answer


class Bm25:
    """BM25 over one question's contexts (stemmed content terms)."""

    def __init__(self, docs):
        self.docs = docs
        corpus = [list(content_terms(f"{d.metadata['title']} {d.page_content}")) for d in docs]
        self.bm25 = BM25Okapi([c or ["_"] for c in corpus])

    def search(self, query: str, k: int):
        scores = self.bm25.get_scores(list(content_terms(query)) or ["_"])
        order = sorted(range(len(self.docs)), key=lambda i: (-scores[i], i))
        return [self.docs[i] for i in order[:k]]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument(
        "--items",
        default="1-200",
        help="1-based inclusive range of the file's items; tune on 1-200, report on 201-350",
    )
    parser.add_argument("--max-steps", type=int, default=3)
    parser.add_argument("--embeddings", action="store_true")
    parser.add_argument("--show", type=int, default=0, help="print N wrong loop answers")
    parser.add_argument(
        "--reflections",
        type=int,
        default=1,
        help="negative reflections that trigger a supplement, as in the graph (0: plain loop)",
    )
    parser.add_argument("--trace", default="", help="print every decision for matching questions")
    parser.add_argument("--dump", default="", help="write one JSON line per question (loop answer)")
    args = parser.parse_args()

    rows = read_rows(DATA)
    first, last = (int(part) for part in args.items.split("-"))
    rows = rows[first - 1 : last]
    if args.limit:
        rows = rows[: args.limit]
    reasoner = ExtractiveReasoner(use_embeddings=args.embeddings)
    totals = collections.defaultdict(float)
    timings = collections.defaultdict(list)
    by_kind = collections.defaultdict(lambda: [0, 0.0])
    labels = collections.defaultdict(lambda: [0, 0.0])
    verdicts = collections.Counter()
    steps_hist = collections.Counter()
    shown_wrong = 0
    outcomes: list[tuple[float | None, bool, float, float]] = []
    dump = Path(args.dump).open("w") if args.dump else None

    def timed(name, fn, *a, **kw):
        start = time.perf_counter()
        out = fn(*a, **kw)
        timings[name].append((time.perf_counter() - start) * 1000)
        return out

    for row in rows:
        question = row["question_text"]
        golds = row["answers_objects"][0]["spans"]
        docs = [
            make_document(
                c["paragraph_text"],
                id=f"{row['question_id']}:{c['id']}",
                source="hotpotqa",
                title=c["title"],
                gold=c["is_supporting"],
            )
            for c in row["contexts"]
        ]
        gold_ids = {doc_id(d) for d in docs if d.metadata["gold"]}

        # (a) the two gold paragraphs only
        draft = timed(
            "answer", reasoner.answer, question, [], [d for d in docs if doc_id(d) in gold_ids]
        )
        em, f1 = best(shown(draft), golds)
        totals["gold_em"] += em
        totals["gold_f1"] += f1
        totals["gold_cited_recall"] += len(gold_ids & set(draft.cited_ids)) / len(gold_ids)

        # (b) the loop, as the graph runs it: think -> search -> compare until an answer, then
        # self-reflection; a negative label supplements with the question and thinks again.
        index = Bm25(docs)
        scratchpad: list[ScratchpadStep] = []
        held = []
        trace = bool(args.trace) and args.trace.lower() in question.lower()
        feedback = None
        budget_used = 0
        first_label = None
        first_em = 0.0
        for round_ in range(args.reflections + 1):
            while True:
                decision = timed(
                    "think",
                    reasoner.think,
                    question,
                    scratchpad,
                    sources=["local"],
                    force_answer=budget_used >= args.max_steps,
                    feedback=feedback,
                )
                if trace:
                    print(f"  think: {decision.action} {decision.query!r} | {decision.thought}")
                if decision.action == "answer":
                    break
                budget_used += 1
                new = index.search(decision.query, args.k)
                if held:
                    verdict = timed("compare", reasoner.compare, question, held, new)
                    held_ids = {doc_id(d) for d in held}
                    useful = bool({doc_id(d) for d in new} & gold_ids - held_ids)
                    verdicts[(useful, verdict.status)] += 1
                    if trace:
                        print(f"  compare: {verdict.status} useful={useful} {verdict.analysis}")
                if trace:
                    print("  got:", [(d.metadata["title"], d.metadata["gold"]) for d in new])
                scratchpad.append(
                    ScratchpadStep(
                        thought=decision.thought,
                        query=decision.query,
                        source="local",
                        observation=new,
                    )
                )
                held = unique_documents([*held, *new])
            draft = timed("answer", reasoner.answer, question, scratchpad, held, feedback=feedback)
            reflection = timed("reflect", reasoner.reflect, question, draft.answer, held)
            if trace:
                print(f"  answer: {draft.answer!r} gold={golds}")
                print(
                    f"  reflect: {reflection.label} {reflection.explanation} | "
                    f"{reflection.suggestion}"
                )
            if first_label is not None:
                now_em = best(shown(draft), golds)[0]
                totals["fixed"] += now_em > first_em
                totals["broken"] += now_em < first_em
                if args.show and now_em < first_em:
                    print(f"BROKEN: {question} {golds} -> {draft.answer!r}")
            if first_label is None:
                first_label = reflection.label
                first_em = best(shown(draft), golds)[0]
                first_f1 = best(shown(draft), golds)[1]
                first_steps = len(scratchpad)
                totals["first_em"] += best(shown(draft), golds)[0]
                totals["first_held_recall"] += len(gold_ids & {doc_id(d) for d in held}) / len(
                    gold_ids
                )
            if not reflection.negative or round_ >= args.reflections:
                break
            totals["supplements"] += 1
            feedback = reflection.feedback(draft.answer)
            new = index.search(question, args.k)
            scratchpad.append(
                ScratchpadStep(
                    thought="supplement", query=question, source="local", observation=new
                )
            )
            held = unique_documents([*held, *new])
        steps_hist[first_steps] += 1
        em, f1 = best(shown(draft), golds)
        outcomes.append((draft.confidence, draft.abstained, em, acc(draft.answer, golds)))
        totals["loop_em"] += em
        totals["loop_f1"] += f1
        totals["loop_cited_recall"] += len(gold_ids & set(draft.cited_ids)) / len(gold_ids)
        totals["loop_held_recall"] += len(gold_ids & {doc_id(d) for d in held}) / len(gold_ids)
        totals["loop_docs"] += len(held)
        kind = analyze_question(question).kind
        if dump is not None:
            record = {
                "id": row["question_id"],
                "question": question,
                "golds": golds,
                "answer": draft.answer,
                "short_answer": draft.short_answer,
                "abstained": draft.abstained,
                "confidence": draft.confidence,
                "rationale": draft.rationale,
                "em": em,
                "f1": f1,
            }
            dump.write(jsonl_line(record))
        by_kind[kind][0] += 1
        by_kind[kind][1] += em
        labels[first_label][0] += 1
        labels[first_label][1] += first_f1
        if args.show and shown_wrong < args.show and em == 0:
            shown_wrong += 1
            print(
                f"Q: {question}\n  gold={golds} pred={draft.answer!r} [{kind}] "
                f"queries={[s.query for s in scratchpad]}\n  {draft.rationale[:200]}"
            )

    n = len(rows)
    print(f"questions={n} k={args.k} embeddings={args.embeddings}")
    print(
        f"(a) gold paragraphs: EM={totals['gold_em'] / n:.3f} F1={totals['gold_f1'] / n:.3f} "
        f"cited gold recall={totals['gold_cited_recall'] / n:.3f}"
    )
    print(
        f"(b) loop: EM={totals['loop_em'] / n:.3f} F1={totals['loop_f1'] / n:.3f} "
        f"cited gold recall={totals['loop_cited_recall'] / n:.3f} "
        f"held gold recall={totals['loop_held_recall'] / n:.3f} "
        f"docs held={totals['loop_docs'] / n:.1f}"
    )
    print(
        f"    before reflection: EM={totals['first_em'] / n:.3f} "
        f"held gold recall={totals['first_held_recall'] / n:.3f}; "
        f"supplements={int(totals['supplements'])} (answers fixed {int(totals['fixed'])}, "
        f"broken {int(totals['broken'])})"
    )
    print("retrieval steps before the first answer:", dict(sorted(steps_hist.items())))
    print("EM by question kind:", {k: f"{v[1] / v[0]:.3f} (n={v[0]})" for k, v in by_kind.items()})
    print(
        "first reflection label -> mean F1 of that answer:",
        {k: f"{v[1] / v[0]:.3f} (n={v[0]})" for k, v in sorted(labels.items())},
    )
    agree = verdicts[(True, True)] + verdicts[(False, False)]
    total_v = sum(verdicts.values()) or 1
    print(
        f"compare vs oracle: agreement={agree / total_v:.3f} "
        f"(useful&True={verdicts[(True, True)]} useful&False={verdicts[(True, False)]} "
        f"notuseful&True={verdicts[(False, True)]} notuseful&False={verdicts[(False, False)]})"
    )
    answered = [o for o in outcomes if not o[1]]
    share = max(1, len(answered))
    print(
        f"answered {len(answered)}/{n}; of answers: EM={sum(o[2] for o in answered) / share:.3f}"
        f" gold-in-answer={sum(o[3] for o in answered) / share:.3f}"
    )
    print("coverage-accuracy (answers whose confidence >= t): t coverage EM gold-in-answer")
    for step in range(0, 11):
        t = step / 10
        kept = [o for o in answered if (o[0] or 0.0) >= t]
        if kept:
            print(
                f"  {t:.1f} {len(kept) / n:.3f} {sum(o[2] for o in kept) / len(kept):.3f}"
                f" {sum(o[3] for o in kept) / len(kept):.3f}"
            )
    for name, values in sorted(timings.items()):
        values.sort()
        print(
            f"{name}: median {values[len(values) // 2]:.2f} ms, p95 "
            f"{values[int(len(values) * 0.95)]:.2f} ms, max {values[-1]:.2f} ms"
        )


if __name__ == "__main__":
    main()
