"""Fit the extractive reasoner's answer confidence on our tuning splits, one left out at a time.

Each corpus of `bench/tuning/` is indexed as `bench/tuning_set.py` does, and every question
of the tuning splits (`FOLDS`: `tune`, `fresh`...`fresh9`) and of `heldout` is asked through
the API with the answer policy's best answer kept whatever its confidence
(`answer_question(..., calibrated=False)`); the features of that answer
(`prefrag.reasoners._confidence.answer_features`) are recorded with whether the answer is
right by the tuning set's rule (`tuning_set.is_right`; any answer to an unanswerable
question is wrong). Questions the policy declines outright (no document about the named
subject, no sentence of the asked type...) have no features and stay abstentions. Any
other split (`fresh10`, the reported-only split; `sealed`) is never collected; `fresh9` is
tuning data, and a fold, from stop 35.

`--hotpot 1-200` adds rows from HotpotQA's tuning half, run through the loop of
`bench/dev_extractive_hotpot.py --embeddings`; they are labelled by exact match of what is
scored (`--hotpot-label em`), as HotpotQA's EM counts them, not by the containment rule.

A scikit-learn `LogisticRegression` on standardised features is evaluated leaving one
split out: fitted on the other tuning splits (and the other parts of the HotpotQA rows), it
predicts the one left out. Two answer thresholds are chosen together on these pooled out-of-fold
predictions, one for sentence answers and one for answers holding a short answer (a span,
a yes/no, an option): of the pairs scoring within `--score-tolerance` (0.01) of the best
as right answers minus `--wrong-cost` (2) times confidently wrong ones over all tuning
questions, the one answering most, among the pairs keeping HotpotQA EM at least at the
hand-weighted default's EM on the same rows less `--hotpot-em-drop` (or
`--hotpot-em-floor`). The span threshold is the lowest at or above the short one at
which bare-span answers are right at least `--span-precision` of the time (below it a span
is shown with its sentence); the CORRECT threshold likewise for all answers and
`--correct-precision` (below it the self-reflection does not say CORRECT). The shipped
model is then fitted on all tuning splits and HotpotQA rows; its coefficients, the
thresholds and how they were fitted go to `app/data/confidence_model.json`. `heldout` is
only scored with it and printed; the honest numbers come from `bench/tuning_set.py` with
the model in place. `--honest` also scores each split with a model and thresholds chosen
without it (`left_out_honestly`) beside the hand-weighted gate: does a gate chosen on the
other splits help the one left out as much as the hand weights would?

    make confidence-model   # about 10 minutes on one core; the shipped model's command:
    .venv/bin/python bench/fit_confidence.py --rows bench/results/confidence-rows.json \
        --hotpot 1-200 --hotpot-rows bench/results/confidence-hotpot.json \
        --hotpot-em-drop 0.01 --hotpot-weight 0 --c 0.1 --honest
    # again on the saved rows (no questions asked): add --refit
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
FOLDS = tuple(s for s in tuning_set.SPLITS if s not in ("heldout", tuning_set.UNSEEN))


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

    Each question runs the loop of `bench/dev_extractive_hotpot.py --embeddings` over a BM25
    index of its
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
    # With MiniLM, as the app answers and as `dev_extractive_hotpot.py --embeddings` scores.
    reasoner = extractive.ExtractiveReasoner(use_embeddings=True)
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
        "right_minus_2_wrong": round((right - 2 * wrong) / max(len(rows), 1), 3),
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


GRID = tuple(round(0.01 * step, 2) for step in range(81))


def choose_thresholds(
    tune: list[dict[str, Any]], hotpot: list[dict[str, Any]], args: argparse.Namespace
) -> tuple[float, float]:
    """The answer thresholds for sentence answers and for answers holding a short answer.

    Each pair (from `GRID`) is scored on `tune` (the pooled out-of-fold rows of every
    tuning split): right answers minus `--wrong-cost` times confidently wrong ones (shares
    of all those questions), among the pairs keeping at least `--hotpot-em-floor` EM on the
    HotpotQA rows when given. Of the pairs within `--score-tolerance` of the best score,
    the one answering the most questions is chosen (ties: the stricter pair): the score is
    flat near its top, and an abstention on a right answer is a loss too. A HotpotQA answer
    scores EM only through a short answer, so the floor bounds the short threshold; the
    tuning questions set both.
    """
    scored: list[tuple[float, int, float, float]] = []
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
            scored.append((score, right + wrong, cut, short_cut))
    if not scored:
        return 0.0, 0.0
    top = max(score for score, *_ in scored)
    near = [row for row in scored if row[0] >= top - args.score_tolerance]
    _, _, cut, short_cut = max(near, key=lambda row: (row[1], -row[2] - row[3]))
    return cut, short_cut


def fold_of(row: dict[str, Any], index: int, total: int) -> str:
    """The fold a row is left out in: its split, or for HotpotQA rows a part of the items.

    HotpotQA rows are cut into contiguous parts, one per tuning split, so every row of the
    fit has an out-of-fold prediction.
    """
    if row["split"] != "hotpot":
        return str(row["split"])
    return FOLDS[min(index * len(FOLDS) // max(total, 1), len(FOLDS) - 1)]


def label(row: dict[str, Any], args: argparse.Namespace) -> int:
    """What the fit learns for a row: right by the tuning rule; HotpotQA rows by `--hotpot-label`.

    With `em`, a HotpotQA answer counts as right only when what is scored (its short answer,
    else the answer) matches a gold exactly: the containment rule rewards whole sentences
    holding the gold, which HotpotQA's EM never credits.
    """
    if row["split"] == "hotpot" and args.hotpot_label == "em":
        return int(row["em"] > 0)
    return int(row["right"])


def matrix(rows: list[dict[str, Any]], names: tuple[str, ...]) -> Any:
    """The rows' features as an array, in the order of `names` (products for "a*b")."""
    import numpy as np

    from prefrag.reasoners._confidence import feature_value

    return np.array([[feature_value(r["features"], f) for f in names] for r in rows])


def fit_one(rows: list[dict[str, Any]], names: tuple[str, ...], args: argparse.Namespace) -> Any:
    """A scaler and logistic regression fitted on `rows` (HotpotQA rows `--hotpot-weight`)."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    x = matrix(rows, names)
    y = np.array([label(r, args) for r in rows])
    weight = np.array([args.hotpot_weight if r["split"] == "hotpot" else 1.0 for r in rows])
    scaler = StandardScaler().fit(x)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    model = LogisticRegression(C=args.c, max_iter=2000).fit(
        (x - scaler.mean_) / scale, y, sample_weight=weight
    )
    return scaler.mean_, scale, model


def predict(fitted: Any, rows: list[dict[str, Any]], names: tuple[str, ...]) -> list[float]:
    """The fitted probability of each row being right (-1 for rows without features)."""
    mean, scale, model = fitted
    usable = [r for r in rows if r["features"] is not None]
    out = iter(model.predict_proba((matrix(usable, names) - mean) / scale)[:, 1] if usable else [])
    return [float(next(out)) if r["features"] is not None else -1.0 for r in rows]


def out_of_fold(
    rows: list[dict[str, Any]],
    names: tuple[str, ...],
    args: argparse.Namespace,
    *,
    folds: tuple[str, ...] = FOLDS,
    key: str = "oof",
) -> None:
    """Set each row's `key` (`oof`): its probability from a model fitted without its fold."""
    for fold in folds:
        train = [r for r in rows if r["features"] is not None and r["fold"] != fold]
        held = [r for r in rows if r["fold"] == fold]
        for row, p in zip(held, predict(fit_one(train, names, args), held, names), strict=True):
            row[key] = p


def assign_folds(rows: list[dict[str, Any]]) -> None:
    """Set each row's `fold`: its split, HotpotQA rows by parts (`fold_of`)."""
    hotpot = [r for r in rows if r["split"] == "hotpot"]
    for index, row in enumerate(hotpot):
        row["fold"] = fold_of(row, index, len(hotpot))
    for row in rows:
        if row["split"] != "hotpot":
            row["fold"] = row["split"]


def select_features(rows: list[dict[str, Any]], args: argparse.Namespace) -> tuple[str, ...]:
    """Forward selection: add the feature that most lowers the out-of-fold log-loss.

    The loss is the tuning rows' log-loss plus half the HotpotQA rows' (each row predicted
    by a model fitted without its split); selection stops when no feature lowers it by
    0.001. Prints each step.
    """
    from sklearn.metrics import log_loss

    assign_folds(rows)
    fitted = [r for r in rows if r["fold"] in FOLDS and r["features"] is not None]
    candidates = sorted(fitted[0]["features"])

    def loss(names: tuple[str, ...]) -> float:
        out_of_fold(fitted, names, args)
        total = 0.0
        for hotpot, share in ((False, 1.0), (True, 0.5)):
            part = [r for r in fitted if (r["split"] == "hotpot") == hotpot]
            if part:
                labels = [label(r, args) for r in part]
                total += share * log_loss(labels, [r["oof"] for r in part], labels=[0, 1])
        return total

    chosen: tuple[str, ...] = ()
    best = float("inf")
    while True:
        scored = sorted((loss((*chosen, f)), f) for f in candidates if f not in chosen)
        if not scored or scored[0][0] >= best - 0.001:
            return chosen
        best, feature = scored[0]
        chosen = (*chosen, feature)
        print(f"+ {feature:<16} out-of-fold loss {best:.4f}")


def left_out_honestly(
    rows: list[dict[str, Any]], names: tuple[str, ...], args: argparse.Namespace
) -> dict[str, Any]:
    """Each split scored by a gate chosen without it: the honest test of a gate.

    For each tuning split, the model is fitted on the other splits and its thresholds chosen
    on their own leave-one-split-out predictions (models fitted without the split either),
    then applied to the split's `oof` predictions; the hand-weighted gate at
    `answer_confidence` is scored on the same rows beside it.
    """
    out: dict[str, Any] = {}
    tuning = [r for r in rows if r["split"] in FOLDS]
    chosen: dict[int, bool] = {}
    for fold in FOLDS:
        others = [r for r in rows if r["fold"] != fold]
        out_of_fold(others, names, args, folds=tuple(f for f in FOLDS if f != fold), key="inner")
        for row in others:
            row["probability"] = row["inner"]
        cut, short_cut = choose_thresholds(
            [r for r in others if r["split"] != "hotpot"],
            [r for r in others if r["split"] == "hotpot"],
            args,
        )
        part = [r for r in tuning if r["split"] == fold]
        for row in part:
            row["probability"] = row["oof"]
        answered = [answered_by(r, cut, short_cut) for r in part]
        chosen.update((id(r), a) for r, a in zip(part, answered, strict=True))
        out[f"{fold} (left out, thresholds {cut}/{short_cut} from the others)"] = rates(
            part, answered
        )
        out[f"{fold} (hand-weighted gate)"] = rates(part, [hand_weighted(r) for r in part])
    out["all splits (each left out)"] = rates(tuning, [chosen[id(r)] for r in tuning])
    out["all splits (hand-weighted gate)"] = rates(tuning, [hand_weighted(r) for r in tuning])
    return out


def hand_weighted(row: dict[str, Any]) -> bool:
    """Whether the hand-weighted gate (confidence >= `answer_confidence`) answers the row."""
    from prefrag.reasoners._params import PARAMS

    return bool(row["features"]) and row["features"]["hand"] >= PARAMS.answer_confidence


def fit(rows: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, Any]:
    """The fitted model as a JSON-ready dict (coefficients, thresholds, how fitted).

    Leave one split out: for each tuning split (`FOLDS`), a model fitted on the others
    (and the other parts of the HotpotQA rows) predicts it. The thresholds are chosen on these
    pooled out-of-fold predictions, so they are set on answers the model never saw; the
    shipped model is then fitted on every fold with those thresholds, and `heldout` is
    scored with it only.
    """
    from prefrag.reasoners._confidence import FEATURES as DEFAULT_FEATURES

    names = tuple(args.features.split(",")) if args.features else DEFAULT_FEATURES
    hotpot = [r for r in rows if r["split"] == "hotpot"]
    assign_folds(rows)
    fitted_rows = [r for r in rows if r["fold"] in FOLDS]
    usable = [r for r in fitted_rows if r["features"] is not None]
    if args.c is None:
        import numpy as np

        args.c = choose_c(matrix(usable, names), np.array([label(r, args) for r in usable]))
    out_of_fold(fitted_rows, names, args)
    tuning = [r for r in fitted_rows if r["split"] != "hotpot"]
    hotpot_oof = [r for r in fitted_rows if r["split"] == "hotpot"]
    for row in fitted_rows:
        row["probability"] = row["oof"]
    if hotpot_oof and args.hotpot_em_drop is not None:
        # The floor is the hand-weighted default's EM on the same rows (its threshold on the
        # `hand` feature is what the default policy applies) less the drop allowed.
        from prefrag.reasoners._params import PARAMS

        kept = [
            r
            for r in hotpot_oof
            if r["features"] and r["features"]["hand"] >= PARAMS.answer_confidence
        ]
        default_em = sum(r["em"] for r in kept) / len(hotpot_oof)
        args.hotpot_em_floor = round(default_em - args.hotpot_em_drop, 4)
        print(
            f"HotpotQA EM of the hand-weighted default on these rows {default_em:.3f};"
            f" floor {args.hotpot_em_floor}"
        )
    best_cut, short_cut = choose_thresholds(tuning, hotpot_oof, args)
    span_cut = precision_cut(
        [r for r in tuning if r["bare_span"] and r["features"] is not None],
        args.span_precision,
        short_cut,
    )
    correct_cut = precision_cut(
        [r for r in tuning if r["features"] is not None and answered_by(r, best_cut, short_cut)],
        args.correct_precision,
        min(best_cut, short_cut),
    )
    summary: dict[str, Any] = {}
    for fold in FOLDS:
        part = [r for r in tuning if r["split"] == fold]
        summary[f"{fold} (left out)"] = rates(
            part, [answered_by(r, best_cut, short_cut) for r in part]
        )
    summary["pooled out-of-fold"] = rates(
        tuning, [answered_by(r, best_cut, short_cut) for r in tuning]
    )
    if hotpot_oof:
        summary["hotpot (out-of-fold)"] = hotpot_kept(hotpot_oof, best_cut, short_cut)
    for split in (*FOLDS, "heldout"):
        part = [r for r in rows if r["split"] == split]
        if part:
            summary[f"{split} (hand-weighted default)"] = rates(
                part, [hand_weighted(r) for r in part]
            )
    if args.honest:
        summary.update(left_out_honestly(fitted_rows, names, args))
    final = fit_one(usable, names, args)
    for row, p in zip(rows, predict(final, rows, names), strict=True):
        row["probability"] = p
    for split in sorted({r["split"] for r in rows} - {*FOLDS, "hotpot"}):
        part = [r for r in rows if r["split"] == split]
        summary[f"{split} (final model)"] = rates(
            part, [answered_by(r, best_cut, short_cut) for r in part]
        )
    curve = []
    for cut in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        curve.append(
            {
                "threshold": cut,
                "split": "out-of-fold",
                **rates(tuning, [r["oof"] >= cut for r in tuning]),
            }
        )
    mean, scale, model = final
    return {
        "features": list(names),
        "mean": [round(float(v), 6) for v in mean],
        "scale": [round(float(v), 6) for v in scale],
        "coef": [round(float(v), 6) for v in model.coef_[0]],
        "intercept": round(float(model.intercept_[0]), 6),
        "answer_threshold": round(best_cut, 4),
        "short_threshold": round(short_cut, 4),
        "span_threshold": round(span_cut, 4),
        "correct_threshold": round(correct_cut, 4),
        "how_fitted": {
            "command": "bench/fit_confidence.py " + " ".join(sys.argv[1:]),
            "data": f"bench/tuning/questions.jsonl, splits {', '.join(FOLDS)}"
            + (f", and HotpotQA items {args.hotpot} (dev loop)" if hotpot else "")
            + ": the policy's best answer per question (calibrated=False), labelled"
            " right/wrong by tuning_set.is_right"
            + (" (HotpotQA rows by exact match)" if args.hotpot_label == "em" else ""),
            "estimator": f"sklearn StandardScaler + LogisticRegression(C={args.c}); C chosen"
            f" from {list(C_GRID)} by 5-fold cross-validated log-loss unless given;"
            f" HotpotQA rows weighted {args.hotpot_weight}",
            "thresholds": "chosen on the pooled leave-one-split-out predictions (a model"
            " fitted on the other tuning splits and parts of the HotpotQA rows predicts the"
            " one left out); the shipped model is fitted on all of them",
            "rows": len(usable),
            "hotpot_rows": sum(r["features"] is not None for r in hotpot),
            "right": sum(label(r, args) for r in usable),
            "declined_without_features": len(fitted_rows) - len(usable),
            "answer_threshold": "sentence answers (no short answer): with short_threshold,"
            f" of the pairs within {args.score_tolerance} of the best out-of-fold score"
            f" (right - {args.wrong_cost} x confidently wrong), the one answering most"
            + (
                f", among pairs keeping HotpotQA EM >= {args.hotpot_em_floor}"
                if hotpot and args.hotpot_em_floor is not None
                else ""
            ),
            "short_threshold": "answers holding a short answer (a span, a yes/no, an option)",
            "span_threshold": f"bare spans right >= {args.span_precision} above it (out of fold)",
            "correct_threshold": f"answers right >= {args.correct_precision} above it (out of"
            " fold; below it the self-reflection does not say CORRECT)",
            "fitted_on": time.strftime("%Y-%m-%d"),
        },
        "scored": summary,
        "curve": curve,
    }


def precision_cut(rows: list[dict[str, Any]], precision: float, low: float) -> float:
    """The lowest probability (at least `low`) above which `rows` are right >= `precision`."""
    ordered = sorted((r for r in rows if r["probability"] >= low), key=lambda r: r["probability"])
    for index, row in enumerate(ordered):
        above = ordered[index:]
        if sum(r["right"] for r in above) / len(above) >= precision:
            return max(low, row["probability"])
    return 1.0 if ordered else low


def hotpot_kept(rows: list[dict[str, Any]], cut: float, short_cut: float) -> dict[str, Any]:
    """EM the HotpotQA rows keep when only answers clearing their threshold are given."""
    return {
        "rows": len(rows),
        "em_all_answered": round(sum(r["em"] for r in rows) / len(rows), 3),
        "em_kept": round(
            sum(r["em"] for r in rows if answered_by(r, cut, short_cut)) / len(rows), 3
        ),
        "answered": sum(answered_by(r, cut, short_cut) for r in rows),
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
    parser.add_argument(
        "--score-tolerance",
        type=float,
        default=0.01,
        help="of the threshold pairs within this of the best score, the one answering most"
        " (default 0.01: one point of right - 2 x wrong per question)",
    )
    parser.add_argument(
        "--span-precision",
        type=float,
        default=0.85,
        help="bare spans must be right this often above the span threshold (default 0.85, as"
        " the hand-weighted span_confidence: a bare span shows nothing a reader could check)",
    )
    parser.add_argument("--correct-precision", type=float, default=0.8)
    parser.add_argument(
        "--c",
        type=float,
        help="inverse regularisation strength (default: the best of C_GRID by 5-fold"
        " cross-validated log-loss on tune)",
    )
    parser.add_argument("--out", type=Path, default=MODEL)
    parser.add_argument(
        "--honest",
        action="store_true",
        help="also score each split with a gate chosen without it (model and thresholds"
        " from the other splits) beside the hand-weighted gate (left_out_honestly)",
    )
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
        "--hand-floor",
        action="store_true",
        help="fit and score as if the policy drafted at the hand-weighted floor"
        " (answer_confidence): the fitted confidence would only withhold answers the"
        " default gives (the reasoner drafts at candidate_floor when it is on)",
    )
    parser.add_argument(
        "--select",
        action="store_true",
        help="choose the features by forward selection on leave-one-split-out log-loss"
        " (C 0.1 unless given) instead of _confidence.FEATURES",
    )
    parser.add_argument(
        "--hotpot-em-drop",
        type=float,
        help="set the EM floor to the hand-weighted default's EM on the HotpotQA rows minus"
        " this (0.01: one point)",
    )
    parser.add_argument(
        "--hotpot-label",
        choices=("contains", "em"),
        default="em",
        help="what makes a HotpotQA row right for the fit (default: exact match of what is scored)",
    )
    parser.add_argument(
        "--hotpot-weight", type=float, default=1.0, help="sample weight of HotpotQA rows"
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
        # The tuning splits are fitted on (one left out at a time); `heldout` is collected
        # to be scored only, and any other split (`fresh10`, `sealed`) never reaches a fit.
        items = [
            item for split in (*FOLDS, "heldout") for item in tuning_set.load_questions(split, None)
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
    from prefrag.reasoners._params import PARAMS

    for row in (*rows, *hotpot) if args.hand_floor else ():
        if row["features"] is not None and row["features"]["hand"] < PARAMS.answer_confidence:
            # The policy drafts at its floor (`answer_confidence`): below it, it declines
            # before the fitted confidence is asked, so the row is an abstention.
            row["features"] = None
    if args.select:
        if args.c is None:
            args.c = 0.1
        args.features = ",".join(select_features([*rows, *hotpot], args))
        print("selected:", args.features)
    model = fit([*rows, *hotpot], args)
    for split, numbers in model["scored"].items():
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
