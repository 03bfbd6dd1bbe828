"""Fit the extractive reasoner's answer confidence on the `tune` half of our tuning set.

Each corpus of `bench/tuning/` is indexed as `bench/tuning_set.py` does, and every question
is asked through the API with the answer policy's best answer kept whatever its confidence
(`answer_question(..., calibrated=False)`); the features of that answer
(`prefrag.reasoners._confidence.answer_features`) are recorded with whether the answer is
right by the tuning set's rule (`tuning_set.is_right`; any answer to an unanswerable
question is wrong). Questions the policy declines outright (no document about the named
subject, no sentence of the asked type...) have no features and stay abstentions.

A scikit-learn `LogisticRegression` on standardised features is fitted on the `tune` rows
(and the HotpotQA tuning rows with `--hotpot`). Two answer thresholds are chosen together
on `tune`, one for sentence answers and one for answers holding a short answer (a span, a
yes/no, an option): the pair scoring best as right answers minus `--wrong-cost` (2) times
confidently wrong ones, among the pairs keeping at least `--hotpot-em-floor` EM on the
HotpotQA rows; the span threshold is the lowest at or above the short one at which
bare-span answers on `tune` are right at least `--span-precision` of the time (below it a
span is shown with its sentence); the CORRECT threshold likewise for all answers and
`--correct-precision` (below it the self-reflection does not say CORRECT). The
coefficients, the thresholds and how they were fitted go to
`app/data/confidence_model.json`, which the reasoner reads; the `heldout` rows are only
scored with the fitted model and printed (the honest numbers come from re-running
`bench/tuning_set.py` with the model in place).

    .venv/bin/python bench/fit_confidence.py [--rows runs/confidence-rows.json] [--refit]
        [--hotpot 1-200 --hotpot-rows runs/confidence-hotpot.json --hotpot-em-floor 0.115]

`--hotpot 1-200` adds rows from HotpotQA's tuning half, run through the loop of
`bench/dev_extractive_hotpot.py` (its contexts, BM25, no graph): the fit then sees
encyclopedia paragraphs joined through a bridge as well as our invented notes. The answer
thresholds are chosen on the `tune` half under the EM floor; the EM kept is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tuning_set

MODEL = Path(__file__).resolve().parent.parent / "app" / "data" / "confidence_model.json"


def capture_drafts() -> list[tuple[Any, dict[str, float] | None]]:
    """Make the reasoner answer unjudged (no confidence floor); return where drafts go.

    Each draft the reasoner makes is appended, with its features, to the returned list.
    """
    import prefrag.reasoners._planning as planning
    import prefrag.reasoners.extractive as extractive
    from prefrag.reasoners._answering import draft_with_features
    from prefrag.reasoners._params import PARAMS

    records: list[tuple[Any, dict[str, float] | None]] = []

    def unjudged(question, scratchpad, evidence, *, feedback=None, embed=None, **_):  # type: ignore[no-untyped-def]
        draft, features = draft_with_features(
            question,
            scratchpad,
            evidence,
            feedback=feedback,
            embed=embed,
            floor=PARAMS.candidate_floor,
        )
        records.append((draft, features))
        return draft

    extractive.answer_question = unjudged  # type: ignore[assignment]
    planning.answer_question = unjudged  # type: ignore[assignment]
    return records


def _span_sentence(draft: Any) -> str:
    """The sentence a bare-span draft was read from ("" for any other answer form)."""
    from prefrag.reasoners._policy import FROM, plain

    if draft is None or not draft.short_answer or not draft.rationale.startswith(FROM):
        return ""
    return str(plain(draft.rationale.removeprefix(FROM)))


def collect(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Ask every item with the unjudged policy; one row of features and outcome per item."""
    from langgraph.checkpoint.memory import InMemorySaver

    from prefrag import ask, build_graph, get_settings
    from prefrag.sources.defaults import default_sources

    records = capture_drafts()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="prefrag-fit-") as tmp:
        for corpus in sorted({item["corpus"] for item in items}):
            home = Path(tmp) / corpus
            tuning_set.index_corpus(corpus, home)
            os.environ["PREFRAG_HOME"] = str(home)
            get_settings.cache_clear()
            graph = build_graph(sources=default_sources(web=False), checkpointer=InMemorySaver())
            for item in (i for i in items if i["corpus"] == corpus):
                thread = f"{item['id']}-{uuid.uuid4().hex[:8]}"
                for turn in item.get("context", []):
                    ask(turn, graph=graph, thread_id=thread, fallback_sources=[])
                records.clear()
                result = ask(item["question"], graph=graph, thread_id=thread, fallback_sources=[])
                answer = str(result.get("answer", ""))
                abstained = bool(result.get("abstained"))
                features = records[-1][1] if records and not abstained else None
                right = (
                    not abstained
                    and item["docs"] != tuning_set.UNANSWERABLE
                    and tuning_set.is_right(item, answer)
                )
                short = str(result.get("short_answer") or "")
                draft = records[-1][0] if records and not abstained else None
                sentence = _span_sentence(draft)
                rows.append(
                    {
                        "id": item["id"],
                        "split": item["split"],
                        "kind": item["kind"],
                        "corpus": corpus,
                        "answerable": item["docs"] != tuning_set.UNANSWERABLE,
                        "answer": answer,
                        "abstained": abstained,
                        "right": right,
                        "bare_span": bool(short) and short == answer,
                        "short_answer": short,
                        "sentence_right": bool(sentence)
                        and item["docs"] != tuning_set.UNANSWERABLE
                        and tuning_set.is_right(item, sentence),
                        "features": features,
                    }
                )
                print(
                    f"{'OK' if right else ('AB' if abstained else '--')} {item['id']}"
                    f" {answer[:90]!r}",
                    flush=True,
                )
    return rows


def collect_hotpot(items: str, *, k: int = 3, max_steps: int = 3) -> list[dict[str, Any]]:
    """Rows for HotpotQA items (`items`, "1-200": tuning data only) from the dev loop.

    Each question runs the loop of `bench/dev_extractive_hotpot.py` over a BM25 index of its
    own contexts (think -> search, at most `max_steps` searches, answer, self-reflection; a
    negative one searches with the question and answers again with its feedback), with the
    policy's best answer kept whatever its confidence. The final answer is right by the
    tuning set's rule (a gold alias contained in it, at most 100 words) and its features are
    recorded. Rows have split "hotpot" and kind "hotpot".
    """
    from dev_extractive_hotpot import DATA, Bm25, hotpot_documents, run_loop

    import prefrag.reasoners.extractive as extractive
    from prefrag.eval.metrics import exact_match
    from prefrag.jsonl import read_rows

    records = capture_drafts()
    reasoner = extractive.ExtractiveReasoner(use_embeddings=False)
    first, last = (int(part) for part in items.split("-"))
    rows: list[dict[str, Any]] = []
    for data in read_rows(DATA)[first - 1 : last]:
        question = data["question_text"]
        golds = list(data["answers_objects"][0]["spans"])
        answered: list[dict[str, float] | None] = []

        def features_of(draft: Any) -> None:
            # The features of the answer just drafted (before its reflection is asked for).
            answered.append(records[-1][1] if records and not draft.abstained else None)  # noqa: B023
            records.clear()

        records.clear()
        run = run_loop(
            reasoner,
            question,
            Bm25(hotpot_documents(data)),
            k=k,
            max_steps=max_steps,
            reflections=1,
            on_answer=features_of,
        )
        draft, features = run.draft, answered[-1]
        item = {"answers": golds, "docs": ["hotpot"]}
        answer = draft.answer
        right = not draft.abstained and tuning_set.is_right(item, answer)
        shown = draft.short_answer or answer
        sentence = _span_sentence(None if draft.abstained else draft)
        rows.append(
            {
                "id": data["question_id"],
                "split": "hotpot",
                "kind": "hotpot",
                "corpus": "hotpotqa",
                "answerable": True,
                "answer": answer,
                "short_answer": draft.short_answer,
                "abstained": draft.abstained,
                "right": right,
                "em": exact_match(shown, golds) if not draft.abstained else 0.0,
                "bare_span": bool(draft.short_answer) and draft.short_answer == answer,
                "sentence_right": bool(sentence) and tuning_set.is_right(item, sentence),
                "features": features,
            }
        )
        print(
            f"{'OK' if right else ('AB' if draft.abstained else '--')} {answer[:90]!r}", flush=True
        )
    return rows


def rates(rows: list[dict[str, Any]], answered: list[bool]) -> dict[str, float]:
    """Answerable right, unanswerable abstained and confidently wrong, when `answered`."""
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    right = sum(a and r["right"] for r, a in zip(rows, answered, strict=True))
    wrong = sum(a and not r["right"] for r, a in zip(rows, answered, strict=True))
    abstained_u = sum(not a for r, a in zip(rows, answered, strict=True) if not r["answerable"])
    return {
        "answerable_right": round(right / max(len(answerable), 1), 3),
        "unanswerable_abstained": round(abstained_u / max(len(unanswerable), 1), 3),
        "confidently_wrong": round(wrong / max(len(rows), 1), 3),
    }


C_GRID = (0.03, 0.1, 0.3, 1.0, 3.0)


def choose_c(x: Any, y: Any) -> float:
    """The regularisation with the best 5-fold cross-validated log-loss on the tune rows."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    scores = {}
    for c in C_GRID:
        losses = [
            cross_val_score(
                make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=1000)),
                x,
                y,
                cv=StratifiedKFold(5, shuffle=True, random_state=seed),
                scoring="neg_log_loss",
            ).mean()
            for seed in range(3)
        ]
        scores[c] = sum(losses) / len(losses)
        print(f"C={c}: cross-validated log-loss {-scores[c]:.3f}")
    return max(scores, key=lambda c: scores[c])


def has_short(row: dict[str, Any]) -> bool:
    """Whether the row's answer holds a short answer (a span, a yes/no, an option).

    Rows collected before `short_answer` was recorded tell it from their features.
    """
    if row["features"] is None:
        return False
    if "short_answer" in row:
        return bool(row["short_answer"])
    features = row["features"]
    return bool(features["span"] or features["choice"] or features.get("yesno", 0.0))


def answered_by(row: dict[str, Any], cut: float, short_cut: float) -> bool:
    """Whether the row's answer clears the threshold of its form."""
    return row["probability"] >= (short_cut if has_short(row) else cut)


GRID = tuple(round(0.2 + 0.01 * step, 2) for step in range(61))


def choose_thresholds(
    tune: list[dict[str, Any]], hotpot: list[dict[str, Any]], args: argparse.Namespace
) -> tuple[float, float]:
    """The answer thresholds for sentence answers and for answers holding a short answer.

    The pair (from `GRID`) with the best score on `tune`: right answers minus `--wrong-cost`
    times confidently wrong ones (shares of all tune questions), among the pairs keeping at
    least `--hotpot-em-floor` EM on the HotpotQA rows when given. A HotpotQA answer scores
    EM only through a short answer, so the floor bounds the short threshold; the tuning
    questions set both.
    """
    best: tuple[float, float, float] | None = None
    for cut in GRID:
        for short_cut in GRID:
            if hotpot and args.hotpot_em_floor is not None:
                em = sum(r["em"] for r in hotpot if answered_by(r, cut, short_cut))
                if em / len(hotpot) < args.hotpot_em_floor:
                    continue
            answered = [answered_by(r, cut, short_cut) for r in tune]
            right = sum(a and r["right"] for r, a in zip(tune, answered, strict=True))
            wrong = sum(a and not r["right"] for r, a in zip(tune, answered, strict=True))
            score = (right - args.wrong_cost * wrong) / len(tune)
            if best is None or score >= best[0]:  # ties: the stricter pair
                best = (score, cut, short_cut)
    if best is None:
        return 0.0, 0.0
    return best[1], best[2]


def fit(rows: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, Any]:
    """The fitted model as a JSON-ready dict (coefficients, thresholds, how fitted)."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from prefrag.reasoners._confidence import FEATURES as DEFAULT_FEATURES

    feature_names = tuple(args.features.split(",")) if args.features else DEFAULT_FEATURES
    tune = [r for r in rows if r["split"] == "tune"]
    hotpot = [r for r in rows if r["split"] == "hotpot"]
    # Fitted on the tune half and the HotpotQA tuning rows; thresholds chosen on tune.
    usable = [r for r in (*tune, *hotpot) if r["features"] is not None]
    x = np.array([[r["features"][f] for f in feature_names] for r in usable])
    y = np.array([int(r["right"]) for r in usable])
    scaler = StandardScaler().fit(x)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    if args.c is None:
        args.c = choose_c(x, y)
    model = LogisticRegression(C=args.c, max_iter=1000).fit((x - scaler.mean_) / scale, y)

    def probability(row: dict[str, Any]) -> float:
        if row["features"] is None:
            return -1.0
        z = (np.array([row["features"][f] for f in feature_names]) - scaler.mean_) / scale
        return float(model.predict_proba(z.reshape(1, -1))[0, 1])

    for row in rows:
        row["probability"] = probability(row)
    best_cut, short_cut = choose_thresholds(tune, hotpot, args)
    span_cut = short_cut
    tuned = [r for r in tune if r["features"] is not None]
    spans = sorted(
        (r for r in tuned if r["bare_span"] and r["probability"] >= short_cut),
        key=lambda r: r["probability"],
    )
    for index, row in enumerate(spans):
        above = spans[index:]
        if sum(r["right"] for r in above) / len(above) >= args.span_precision:
            span_cut = max(short_cut, row["probability"])
            break
    else:
        span_cut = 1.0 if spans else short_cut
    correct_cut = 1.0
    low = min(best_cut, short_cut)
    answered = sorted(
        (r for r in tuned if answered_by(r, best_cut, short_cut)), key=lambda r: r["probability"]
    )
    for index, row in enumerate(answered):
        above = answered[index:]
        if sum(r["right"] for r in above) / len(above) >= args.correct_precision:
            correct_cut = max(low, row["probability"])
            break
    curve = []
    for cut in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        for split in ("tune", "heldout"):
            part = [r for r in rows if r["split"] == split]
            curve.append(
                {
                    "threshold": cut,
                    "split": split,
                    **rates(part, [r["probability"] >= cut for r in part]),
                }
            )
    summary: dict[str, Any] = {
        split: rates(
            [r for r in rows if r["split"] == split],
            [answered_by(r, best_cut, short_cut) for r in rows if r["split"] == split],
        )
        for split in ("tune", "heldout")
    }
    if hotpot:
        # EM kept on the HotpotQA rows: the policy's answers whose probability passes.
        summary["hotpot"] = {
            "rows": len(hotpot),
            "em_all_answered": round(sum(r["em"] for r in hotpot) / len(hotpot), 3),
            "em_kept": round(
                sum(r["em"] for r in hotpot if answered_by(r, best_cut, short_cut)) / len(hotpot),
                3,
            ),
            "answered": sum(answered_by(r, best_cut, short_cut) for r in hotpot),
        }
    return {
        "features": list(feature_names),
        "mean": [round(float(v), 6) for v in scaler.mean_],
        "scale": [round(float(v), 6) for v in scale],
        "coef": [round(float(v), 6) for v in model.coef_[0]],
        "intercept": round(float(model.intercept_[0]), 6),
        "answer_threshold": round(best_cut, 4),
        "short_threshold": round(short_cut, 4),
        "span_threshold": round(span_cut, 4),
        "correct_threshold": round(correct_cut, 4),
        "how_fitted": {
            "command": "bench/fit_confidence.py " + " ".join(sys.argv[1:]),
            "data": "bench/tuning/questions.jsonl, split 'tune' only"
            + (f", and HotpotQA items {args.hotpot} (dev loop)" if hotpot else "")
            + ": the policy's best answer per question (calibrated=False), labelled"
            " right/wrong by tuning_set.is_right; thresholds chosen on tune",
            "estimator": f"sklearn StandardScaler + LogisticRegression(C={args.c}); C chosen"
            f" from {list(C_GRID)} by 5-fold cross-validated log-loss on tune unless given",
            "rows": len(usable),
            "hotpot_rows": sum(r["features"] is not None for r in hotpot),
            "right": int(y.sum()),
            "declined_without_features": len(tune) + len(hotpot) - len(usable),
            "answer_threshold": "sentence answers (no short answer): with short_threshold,"
            f" the pair scoring best on tune as right - {args.wrong_cost} x confidently wrong"
            + (
                f", among pairs keeping HotpotQA EM >= {args.hotpot_em_floor}"
                if hotpot and args.hotpot_em_floor is not None
                else ""
            ),
            "short_threshold": "answers holding a short answer (a span, a yes/no, an option)",
            "span_threshold": f"bare spans on tune right >= {args.span_precision} above it",
            "correct_threshold": f"answers on tune right >= {args.correct_precision} above it"
            " (below it the self-reflection does not say CORRECT)",
            "fitted_on": time.strftime("%Y-%m-%d"),
        },
        "scored_with_fitted_model": summary,
        "curve": curve,
    }


def main() -> None:
    """Collect (or reload) the rows, fit, print the tune/heldout rates, write the model."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=Path, help="save the collected rows here (or reuse)")
    parser.add_argument("--refit", action="store_true", help="reuse --rows instead of asking")
    parser.add_argument(
        "--wrong-cost",
        type=float,
        default=2.0,
        help="what a confidently wrong answer costs, in right answers (default 2)",
    )
    parser.add_argument("--span-precision", type=float, default=0.8)
    parser.add_argument("--correct-precision", type=float, default=0.8)
    parser.add_argument(
        "--c",
        type=float,
        help="inverse regularisation strength (default: the best of C_GRID by 5-fold"
        " cross-validated log-loss on tune)",
    )
    parser.add_argument("--out", type=Path, default=MODEL)
    parser.add_argument("--limit", type=int, help="at most this many questions per corpus")
    parser.add_argument(
        "--hotpot",
        help="also fit on these HotpotQA items through the dev loop (tuning data: 1-200)",
    )
    parser.add_argument("--hotpot-rows", type=Path, help="save the HotpotQA rows here (or reuse)")
    parser.add_argument(
        "--hotpot-em-floor",
        type=float,
        help="the answer threshold must keep at least this EM on the HotpotQA rows (the"
        " default policy's EM on items 1-200 minus one point: 0.105)",
    )
    parser.add_argument(
        "--features",
        help="comma-separated features to fit on (default: _confidence.FEATURES)",
    )
    args = parser.parse_args()
    os.environ["PREFRAG_WEB_ENABLED"] = "false"
    if (
        args.hotpot
        and args.hotpot.split("-")[-1].isdigit()
        and int(args.hotpot.split("-")[-1]) > 200
    ):
        parser.error("HotpotQA items past 200 are the report half: fit on 1-200 only")
    hotpot: list[dict[str, Any]] = []
    if args.hotpot and args.refit and args.hotpot_rows and args.hotpot_rows.exists():
        hotpot = json.loads(args.hotpot_rows.read_text())
    elif args.hotpot:
        hotpot = collect_hotpot(args.hotpot)
        if args.hotpot_rows:
            args.hotpot_rows.parent.mkdir(parents=True, exist_ok=True)
            args.hotpot_rows.write_text(json.dumps(hotpot, indent=1))
    if args.refit and args.rows:
        rows = json.loads(args.rows.read_text())
    else:
        # Only `tune` is fitted on (`heldout` is scored); `fresh3` and `sealed` are reported
        # only and never collected (`fresh`, `fresh2` are tuning data but not collected here).
        items = [
            item
            for item in tuning_set.load_questions("all", None)
            if item["split"] in ("tune", "heldout")
        ]
        if args.limit:
            items = [
                item
                for corpus in sorted({i["corpus"] for i in items})
                for item in [i for i in items if i["corpus"] == corpus][: args.limit]
            ]
        rows = collect(items)
        if args.rows:
            args.rows.parent.mkdir(parents=True, exist_ok=True)
            args.rows.write_text(json.dumps(rows, indent=1))
    model = fit([*rows, *hotpot], args)
    for split, numbers in model["scored_with_fitted_model"].items():
        print(split, numbers)
    print(
        "thresholds: answer",
        model["answer_threshold"],
        "short",
        model["short_threshold"],
        "span",
        model["span_threshold"],
        "correct",
        model["correct_threshold"],
    )
    for name, coef in zip(model["features"], model["coef"], strict=True):
        print(f"  {name:<16}{coef:+.3f}")
    args.out.write_text(json.dumps(model, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
