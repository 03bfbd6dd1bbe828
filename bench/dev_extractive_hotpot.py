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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rank_bm25 import BM25Okapi

from prefrag.documents import doc_id, make_document, unique_documents
from prefrag.eval.metrics import acc, exact_match, f1
from prefrag.jsonl import jsonl_line, read_rows
from prefrag.reasoners._text import analyze_question, content_terms
from prefrag.reasoners.base import AnswerDraft, ScratchpadStep
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


def hotpot_documents(row: dict[str, Any]) -> list[Any]:
    """One HotpotQA item's context paragraphs as documents (`gold` marks the supporting ones)."""
    return [
        make_document(
            c["paragraph_text"],
            id=f"{row['question_id']}:{c['id']}",
            source="hotpotqa",
            title=c["title"],
            gold=c["is_supporting"],
        )
        for c in row["contexts"]
    ]


@dataclass
class LoopRun:
    """What one question's run of the loop did: its answers, held documents and searches."""

    draft: AnswerDraft
    held: list[Any]
    scratchpad: list[ScratchpadStep]
    first_draft: AnswerDraft
    first_label: str
    first_held: list[Any]
    first_steps: int
    supplements: int = 0
    drafts: list[AnswerDraft] = field(default_factory=list)


def run_loop(
    reasoner: Any,
    question: str,
    index: Bm25,
    *,
    k: int = 3,
    max_steps: int = 3,
    reflections: int = 1,
    on_search: Callable[[list[Any], list[Any]], None] | None = None,
    on_answer: Callable[[AnswerDraft], None] | None = None,
    trace: bool = False,
) -> LoopRun:
    """The PrefRAG loop over one question's BM25 index, as the graph runs it.

    think -> search -> ... until an answer (at most `max_steps` searches), then
    self-reflection; a negative label supplements with the question and thinks again with
    its feedback, at most `reflections` times. `on_search(held, new)` sees each search's
    documents before they are held, `on_answer(draft)` each answer before it is reflected on.
    """
    scratchpad: list[ScratchpadStep] = []
    held: list[Any] = []
    feedback = None
    searches = 0
    first: tuple[AnswerDraft, str, list[Any], int] | None = None
    drafts: list[AnswerDraft] = []
    supplements = 0
    for round_ in range(reflections + 1):
        while True:
            decision = reasoner.think(
                question,
                scratchpad,
                sources=["local"],
                force_answer=searches >= max_steps,
                feedback=feedback,
            )
            if trace:
                print(f"  think: {decision.action} {decision.query!r} | {decision.thought}")
            if decision.action == "answer":
                break
            searches += 1
            new = index.search(decision.query or question, k)
            if on_search is not None:
                on_search(held, new)
            if trace:
                print("  got:", [(d.metadata["title"], d.metadata.get("gold")) for d in new])
            scratchpad.append(
                ScratchpadStep(
                    thought=decision.thought, query=decision.query, source="local", observation=new
                )
            )
            held = unique_documents([*held, *new])
        draft = reasoner.answer(question, scratchpad, held, feedback=feedback)
        drafts.append(draft)
        if on_answer is not None:
            on_answer(draft)
        reflection = reasoner.reflect(question, draft.answer, held)
        if trace:
            print(f"  answer: {draft.answer!r}")
            print(f"  reflect: {reflection.label} {reflection.explanation}")
        if first is None:
            first = (draft, reflection.label, list(held), len(scratchpad))
        if not reflection.negative or round_ >= reflections:
            break
        supplements += 1
        feedback = reflection.feedback(draft.answer)
        new = index.search(question, k)
        scratchpad.append(
            ScratchpadStep(thought="supplement", query=question, source="local", observation=new)
        )
        held = unique_documents([*held, *new])
    assert first is not None
    return LoopRun(
        draft=drafts[-1],
        held=held,
        scratchpad=scratchpad,
        first_draft=first[0],
        first_label=first[1],
        first_held=first[2],
        first_steps=first[3],
        supplements=supplements,
        drafts=drafts,
    )


class Timed:
    """A reasoner whose think/answer/compare/reflect calls are timed into `timings` (ms)."""

    def __init__(self, reasoner: Any, timings: dict[str, list[float]]) -> None:
        self._reasoner = reasoner
        self._timings = timings

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._reasoner, name)
        if name not in ("think", "answer", "compare", "reflect"):
            return method

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            out = method(*args, **kwargs)
            self._timings[name].append((time.perf_counter() - start) * 1000)
            return out

        return timed


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
    timings: dict[str, list[float]] = collections.defaultdict(list)
    reasoner = Timed(ExtractiveReasoner(use_embeddings=args.embeddings), timings)
    totals: dict[str, float] = collections.defaultdict(float)
    by_kind: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0])
    labels: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0])
    verdicts: collections.Counter[tuple[bool, bool]] = collections.Counter()
    steps_hist: collections.Counter[int] = collections.Counter()
    shown_wrong = 0
    outcomes: list[tuple[float | None, bool, float, float]] = []
    dump = Path(args.dump).open("w") if args.dump else None

    for row in rows:
        question = row["question_text"]
        golds = row["answers_objects"][0]["spans"]
        docs = hotpot_documents(row)
        gold_ids = {doc_id(d) for d in docs if d.metadata["gold"]}

        # (a) the two gold paragraphs only
        draft = reasoner.answer(question, [], [d for d in docs if doc_id(d) in gold_ids])
        em, f1 = best(shown(draft), golds)
        totals["gold_em"] += em
        totals["gold_f1"] += f1
        totals["gold_cited_recall"] += len(gold_ids & set(draft.cited_ids)) / len(gold_ids)

        # (b) the loop, as the graph runs it (`run_loop`); the switcher's verdict on each
        # search after the first is compared to the oracle.
        trace = bool(args.trace) and args.trace.lower() in question.lower()

        def compare(held: list, new: list) -> None:
            if not held:
                return
            verdict = reasoner.compare(question, held, new)  # noqa: B023 (called at once)
            held_ids = {doc_id(d) for d in held}
            useful = bool({doc_id(d) for d in new} & gold_ids - held_ids)  # noqa: B023
            verdicts[(useful, verdict.status)] += 1
            if trace:  # noqa: B023
                print(f"  compare: {verdict.status} useful={useful} {verdict.analysis}")

        run = run_loop(
            reasoner,
            question,
            Bm25(docs),
            k=args.k,
            max_steps=args.max_steps,
            reflections=args.reflections,
            on_search=compare,
            trace=trace,
        )
        draft, held, scratchpad = run.draft, run.held, run.scratchpad
        if trace:
            print(f"  gold={golds}")
        first_em, first_f1 = best(shown(run.first_draft), golds)
        for later in run.drafts[1:]:
            now_em = best(shown(later), golds)[0]
            totals["fixed"] += now_em > first_em
            totals["broken"] += now_em < first_em
            if args.show and now_em < first_em:
                print(f"BROKEN: {question} {golds} -> {later.answer!r}")
        totals["supplements"] += run.supplements
        totals["first_em"] += first_em
        totals["first_held_recall"] += len(gold_ids & {doc_id(d) for d in run.first_held}) / len(
            gold_ids
        )
        first_label, first_steps = run.first_label, run.first_steps
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
