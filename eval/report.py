"""Summaries, markdown tables like the paper's, and plots of an evaluation run."""

from __future__ import annotations

import importlib.util
import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prefrag.eval import metrics

COUNTER_KEYS = ("local_total", "web_total", "local_used", "used")


def summarize(
    records: Sequence[dict[str, Any]], methods: Sequence[str], *, task: str = "qa"
) -> dict[str, Any]:
    """Per method: item count, errors, mean of every score, counters, model use, latency.

    Scores are percentages (0-100) like the paper's tables; counters are given both as a
    mean per question and as a total over the run (the paper's tables 7-14 report totals).
    """
    by_method: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_method[record["method"]].append(record)
    summary: dict[str, Any] = {}
    for method in methods:
        rows = by_method.get(method, [])
        entry: dict[str, Any] = {"n": len(rows), "errors": sum(1 for r in rows if r.get("error"))}
        score_keys = sorted({k for r in rows for k, v in r.get("scores", {}).items() if _num(v)})
        for key in score_keys:
            # Over the items the score applies to (e.g. abstention only on withheld ones).
            values = [float(r["scores"][key] or 0.0) for r in rows if key in r.get("scores", {})]
            entry[key] = 100.0 * metrics.mean(values)
        if any("withheld" in r for r in rows):
            entry["withheld"] = sum(1 for r in rows if r.get("withheld"))
            answered = [r for r in rows if not r.get("withheld") and not r.get("abstained")]
            entry["answer_words"] = metrics.mean([r.get("answer_words", 0) for r in answered])
        if task != "retrieval":
            counters = {k: [r.get("counters", {}).get(k, 0) for r in rows] for k in COUNTER_KEYS}
            entry["counters_mean"] = {k: metrics.mean(v) for k, v in counters.items()}
            entry["counters_total"] = {k: int(sum(v)) for k, v in counters.items()}
            entry["counters_mean"]["total"] = (
                entry["counters_mean"]["local_total"] + entry["counters_mean"]["web_total"]
            )
            entry["counters_total"]["total"] = (
                entry["counters_total"]["local_total"] + entry["counters_total"]["web_total"]
            )
            entry["model_calls_mean"] = _role_means(rows, "model_calls")
            entry["tokens_mean"] = _role_means(rows, "tokens")
        latencies = [float(r.get("latency_s", 0.0)) for r in rows]
        entry["latency_s"] = {
            "p50": metrics.percentile(latencies, 50),
            "p95": metrics.percentile(latencies, 95),
        }
        nodes: dict[str, list[float]] = defaultdict(list)
        for r in rows:
            for node, seconds in r.get("node_latency", []):
                nodes[node].append(float(seconds))
        entry["node_latency_s"] = {
            node: {
                "p50": metrics.percentile(values, 50),
                "p95": metrics.percentile(values, 95),
                "n": len(values),
            }
            for node, values in sorted(nodes.items())
        }
        summary[method] = entry
    return summary


def _num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _role_means(rows: Sequence[dict[str, Any]], key: str) -> dict[str, float]:
    roles = sorted({role for r in rows for role in r.get(key, {})})
    return {
        role: metrics.mean([float(r.get(key, {}).get(role, 0)) for r in rows]) for role in roles
    }


def _methods(summary: dict[str, Any]) -> list[str]:
    return [m for m in summary if not m.startswith("_")]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def render_markdown(summary: dict[str, Any], *, config: dict[str, Any] | None = None) -> str:
    """The report: answer quality, efficiency (paper tables 7-14), model use, latency."""
    methods = _methods(summary)
    run = summary.get("_run", {})
    task = run.get("task", "qa")
    parts = [f"# Evaluation: {Path(str(run.get('dataset', ''))).name}", ""]
    if config:
        parts += [
            f"Reasoner `{config.get('reasoner')}`, top-k {config.get('top_k')}, "
            f"max iterations {config.get('max_iterations')}, max reflections "
            f"{config.get('max_reflections')}, "
            + (
                f"two-source share {config['two_source']}, "
                if config.get("two_source") is not None
                else ""
            )
            + f"{run.get('items', '?')} items, seed {config.get('seed')}.",
            "",
        ]
    if "two_source" in run:
        split = run["two_source"]
        parts += [
            f"Two-source split: {split['local_paragraphs']} local / {split['web_paragraphs']} "
            f"web paragraphs; second gold paragraph local for {split['second_gold_local']} of "
            f"{split['questions']} questions; {split['conflicts']} conflicts.",
            "",
        ]
    if "snippet_qa" in run:
        facts = run["snippet_qa"]
        parts += [
            f"Snippet QA: {facts['indexed_snippets']} snippets indexed (the answerable "
            f"questions' gold snippets and {facts['distractors']:g} distractors per question); "
            f"{facts['withheld']} of {facts['questions']} questions withheld "
            f"(share {facts['withhold']}). The web is off.",
            "",
        ]
    if task == "retrieval":
        keys = [k for k in ("recall@1", "recall@5", "recall@10", "hit@5", "ndcg@5", "ndcg@10")]
        rows = [
            [m, *(f"{summary[m].get(k, 0.0):.1f}" for k in keys), str(summary[m]["n"])]
            for m in methods
        ]
        parts += ["## Retrieval", "", _table(["Method", *keys, "n"], rows), ""]
        return "\n".join(parts)
    if task == "mc":
        rows = [
            [
                m,
                f"{summary[m].get('choice_acc', 0.0):.1f}",
                str(summary[m]["n"]),
                str(summary[m]["errors"]),
            ]
            for m in methods
        ]
        parts += [
            "## Accuracy (unparseable answers count as wrong)",
            "",
            _table(["Method", "Acc", "n", "errors"], rows),
            "",
        ]
    elif any("rouge_l" in summary[m] or "withheld" in summary[m] for m in methods):
        parts += _snippet_table(summary, methods)
    else:
        header = [
            "Method",
            "Acc",
            "F1",
            "EM",
            "Avg",
            "Acc (PrefRAG)",
            "Evidence recall",
            "Web exposure",
            "n",
            "errors",
        ]
        rows = []
        for m in methods:
            e = summary[m]
            avg = (e.get("acc", 0.0) + e.get("f1", 0.0) + e.get("em", 0.0)) / 3
            rows.append(
                [
                    m,
                    *(f"{e.get(k, 0.0):.1f}" for k in ("acc", "f1", "em")),
                    f"{avg:.1f}",
                    f"{e.get('acc_prefrag', 0.0):.1f}",
                    f"{e.get('evidence_recall', 0.0):.1f}",
                    f"{e.get('web_exposure', 0.0):.1f}",
                    str(e["n"]),
                    str(e["errors"]),
                ]
            )
        parts += [
            "## Answer quality",
            "",
            "Acc = normalised containment; Acc (PrefRAG) = raw lower-case containment as in "
            "the PrefRAG code; F1/EM with SQuAD normalisation and HotpotQA's yes/no rule. "
            "Evidence recall = share of gold paragraphs among the documents used; web "
            "exposure = share of used documents from the web. All in %.",
            "",
            _table(header, rows),
            "",
        ]
    header = [
        "Method",
        "Total Local",
        "Total Web",
        "Total",
        "Used Local",
        "Used",
        "per question (total / used)",
    ]
    rows = []
    for m in methods:
        t, mean = summary[m].get("counters_total", {}), summary[m].get("counters_mean", {})
        rows.append(
            [
                m,
                *(
                    str(t.get(k, 0))
                    for k in ("local_total", "web_total", "total", "local_used", "used")
                ),
                f"{mean.get('total', 0.0):.2f} / {mean.get('used', 0.0):.2f}",
            ]
        )
    parts += ["## Retrieval counts (paper appendix A.6)", "", _table(header, rows), ""]
    roles = sorted({r for m in methods for r in summary[m].get("model_calls_mean", {})})
    if roles and any(v for m in methods for v in summary[m].get("model_calls_mean", {}).values()):
        rows = [
            [
                m,
                *(
                    f"{summary[m]['model_calls_mean'].get(r, 0.0):.2f} / "
                    f"{summary[m].get('tokens_mean', {}).get(r, 0.0):.0f}"
                    for r in roles
                ),
            ]
            for m in methods
        ]
        parts += [
            "## Model calls / tokens per question, by role",
            "",
            _table(["Method", *roles], rows),
            "",
        ]
    rows = [
        [
            m,
            f"{summary[m]['latency_s']['p50'] * 1000:.0f}",
            f"{summary[m]['latency_s']['p95'] * 1000:.0f}",
            ", ".join(
                f"{n} {v['p50'] * 1000:.0f}/{v['p95'] * 1000:.0f}"
                for n, v in summary[m].get("node_latency_s", {}).items()
            ),
        ]
        for m in methods
    ]
    parts += [
        "## Latency (ms, p50 / p95)",
        "",
        _table(["Method", "p50", "p95", "per node p50/p95"], rows),
        "",
    ]
    if _plotted(summary):
        parts += ["Plots: `accuracy_vs_retrievals.png`, `web_exposure.png`.", ""]
    return "\n".join(parts)


def _plotted(summary: dict[str, Any]) -> bool:
    """Runs with answer accuracy and web use to plot (not retrieval, not snippet QA)."""
    run = summary.get("_run", {})
    return run.get("task") != "retrieval" and "snippet_qa" not in run and bool(_methods(summary))


def _snippet_table(summary: dict[str, Any], methods: Sequence[str]) -> list[str]:
    """The answer table of `--task qa` on MedQuAD (answers against the gold snippet)."""
    keys = ("cited_gold", "full_sentence", "rouge_l", "token_precision", "wrong_abstention")
    header = [
        "Method",
        "Cites gold",
        "Whole sentences",
        "ROUGE-L",
        "Token precision",
        "Wrong abstention",
        "Abstains when withheld",
        "Words",
        "n",
        "withheld",
        "errors",
    ]
    rows = []
    for m in methods:
        e = summary[m]
        withheld = int(e.get("withheld", 0))
        rows.append(
            [
                m,
                *(f"{e.get(k, 0.0):.1f}" for k in keys),
                f"{e['abstention_withheld']:.1f}" if withheld else "-",
                f"{e.get('answer_words', 0.0):.0f}",
                str(e["n"]),
                str(withheld),
                str(e["errors"]),
            ]
        )
    return [
        "## Answers against the gold snippet",
        "",
        "On answerable questions: cites gold = the gold snippet is cited; whole sentences = "
        "the answer is made of whole sentences of a cited snippet; ROUGE-L (F1) and token "
        "precision against the gold snippet; wrong abstention = declined although the gold "
        "snippet was indexed. Abstains when withheld = declined on the questions whose gold "
        "snippet was removed. Words = mean answer length when answered. All but words in %.",
        "",
        _table(header, rows),
        "",
    ]


def plot_accuracy_vs_retrievals(summary: dict[str, Any], path: Path) -> Path:
    """Paper figure 3: retrieval counts per method as bars, accuracy as a line."""
    import matplotlib.pyplot as plt

    fig = accuracy_figure(summary)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def accuracy_figure(summary: dict[str, Any]) -> Any:
    """The figure of `plot_accuracy_vs_retrievals`: both axes from 0, the legend above them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    methods = _methods(summary)
    keys = [
        ("local_total", "Total local"),
        ("web_total", "Total web"),
        ("total", "Total"),
        ("local_used", "Used local"),
        ("used", "Used"),
    ]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(methods) + 2), 5.0), layout="constrained")
    width = 0.8 / len(keys)
    for j, (key, label) in enumerate(keys):
        xs = [i + (j - len(keys) / 2 + 0.5) * width for i in range(len(methods))]
        ax.bar(
            xs,
            [summary[m].get("counters_mean", {}).get(key, 0.0) for m in methods],
            width,
            label=label,
        )
    ax.set_ylabel("retrievals per question")
    ax.set_ylim(bottom=0)
    ax.set_xticks(range(len(methods)), methods, rotation=30, ha="right")
    twin = ax.twinx()
    twin.plot(
        range(len(methods)), [summary[m].get("acc", 0.0) for m in methods], "ko-", label="Acc"
    )
    twin.plot(
        range(len(methods)),
        [summary[m].get("f1", 0.0) for m in methods],
        "s--",
        color="gray",
        label="F1",
    )
    twin.set_ylabel("score (%)")
    twin.set_ylim(0, 100)
    handles, labels = ax.get_legend_handles_labels()
    h2, l2 = twin.get_legend_handles_labels()
    # Outside the axes, so it never covers a bar or a point.
    fig.legend(handles + h2, labels + l2, fontsize=7, loc="outside upper center", ncol=7)
    ax.set_title("Accuracy against retrieval counts")
    return fig


def plot_web_exposure(summary: dict[str, Any], path: Path) -> Path:
    """Web exposure (share of used documents from the web) per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    methods = _methods(summary)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(methods) + 2), 4.0))
    values = [summary[m].get("web_exposure", 0.0) for m in methods]
    ax.bar(range(len(methods)), values, color="tab:orange")
    for i, v in enumerate(values):
        ax.text(i, v + 1, f"{v:.0f}", ha="center", fontsize=8)
    ax.set_xticks(range(len(methods)), methods, rotation=30, ha="right")
    ax.set_ylabel("web exposure (% of used documents)")
    ax.set_ylim(0, 105)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def write_report(
    summary: dict[str, Any], out: Path, *, config: dict[str, Any] | None = None
) -> list[Path]:
    """Write `report.md` and the plots into `out`; returns the files written.

    The plots need matplotlib (`pip install 'prefrag[plots]'`); without it only the report
    is written.
    """
    out = Path(out)
    written = [out / "report.md"]
    written[0].write_text(render_markdown(summary, config=config))
    if _plotted(summary) and importlib.util.find_spec("matplotlib") is not None:
        written.append(plot_accuracy_vs_retrievals(summary, out / "accuracy_vs_retrievals.png"))
        written.append(plot_web_exposure(summary, out / "web_exposure.png"))
    return written


def load_summary(out: Path) -> dict[str, Any]:
    """The `summary.json` of a finished run."""
    return json.loads((Path(out) / "summary.json").read_text())
