"""Label snippets helpful or not for the RAG² evidence filter (ΔPPL + answer correctness).

`prefrag train filter-labels --data rows.jsonl --model_name_or_path LM --output labels.jsonl`
scores, under a causal LM, the perplexity of a model's rationale for each question without
evidence and with each retrieved snippet (prompts `rationale_ppl` and
`rationale_ppl_evidence`); ΔPPL = PPL(without) - PPL(with) (RAG² eq. 3-4). The top 25% of
ΔPPL over the whole file (`--top_fraction`) counts as a confidence gain. Combined with
whether the answer was right without / with the snippet (RAG² §3.1):

- wrong → right: helpful;
- right → wrong: not helpful;
- right → right: helpful when ΔPPL is in the top share, else discarded;
- wrong → wrong: not helpful when ΔPPL is in the top share (confidently wrong), else
  discarded.

Input rows (JSONL), one per question; the answers come from the model being served
(without evidence and with each snippet alone), the rationale from the same model:

    {"question": "...", "answer": "gold" | ["gold", "alias"], "rationale": "...",
     "answer_without": "the model's answer without evidence",
     "snippets": [{"text": "...", "title": "...", "id": "...",
                   "answer_with": "the model's answer with this snippet"}]}

Instead of `answer_without` / `answer_with`, a row may give `correct_without` / a snippet
`correct_with` (booleans, e.g. for multiple choice). Correctness of a free-text answer is
normalised containment of a gold answer (`prefrag.eval.metrics.acc`). Output rows (JSONL)
carry `question`, `snippet`, `title`, `id`, `label` ("helpful" | "not_helpful"), `rule`,
`delta_ppl`, `ppl_without`, `ppl_with`, `correct_without`, `correct_with`; discarded
snippets are counted in the summary, not written.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from prefrag.errors import ConfigurationError, IngestError
from prefrag.jsonl import read_jsonl, write_jsonl
from prefrag.training.config import parse_config

__all__ = [
    "FilterLabelArguments",
    "LabelSummary",
    "four_way_label",
    "label_rows",
    "main",
    "rationale_perplexity",
]

HELPFUL, NOT_HELPFUL = "helpful", "not_helpful"


@dataclass
class FilterLabelArguments:
    """Settings of `prefrag train filter-labels` (`--help` lists them)."""

    data: str | None = field(
        default=None,
        metadata={"help": "Rows: question, answer, rationale, answer_without, snippets (JSONL)."},
    )
    output: str | None = field(
        default=None, metadata={"help": "Labelled snippets (JSONL) for `prefrag train filter`."}
    )
    model_name_or_path: str | None = field(
        default=None, metadata={"help": "Causal LM that scores the rationales (folder or name)."}
    )
    top_fraction: float = field(
        default=0.25, metadata={"help": "Share of the largest ΔPPL counted as a confidence gain."}
    )
    max_length: int = field(
        default=2048, metadata={"help": "Tokens of prompt + rationale (the prompt is cut first)."}
    )
    snippet_chars: int = field(
        default=2000, metadata={"help": "Characters of each snippet shown to the scoring model."}
    )
    device: str = field(default="cpu", metadata={"help": "Torch device of the scoring model."})
    limit: int | None = field(default=None, metadata={"help": "Label at most this many rows."})


@dataclass
class LabelSummary:
    """What `filter-labels` produced.

    Attributes:
        labels: The labelled snippets (as written to the output file).
        threshold: The ΔPPL value at or above which a snippet counts as a confidence gain.
        rules: How many snippets each rule saw (e.g. "wrong→right"), discarded included.
        discarded: Snippets no rule labels (unchanged correctness, small ΔPPL).
    """

    labels: list[dict[str, Any]]
    threshold: float
    rules: dict[str, int]
    discarded: int


def main(argv: Sequence[str] | None = None) -> LabelSummary:
    """`prefrag train filter-labels`: score rationales, label snippets, write the labels."""
    (args,) = parse_config([FilterLabelArguments], argv, prog="prefrag train filter-labels")
    if not args.data or not args.output or not args.model_name_or_path:
        raise ConfigurationError(
            "filter-labels needs --data rows.jsonl, --output labels.jsonl and "
            "--model_name_or_path (the causal LM that scores rationales)."
        )
    if not 0 < args.top_fraction <= 1:
        raise ConfigurationError("--top_fraction must be in (0, 1].")
    rows = _read_rows(Path(args.data), args.limit)
    model, tokenizer = _load(args.model_name_or_path, args.device)
    summary = label_rows(
        rows,
        lambda prompt, rationale: rationale_perplexity(
            model, tokenizer, prompt, rationale, max_length=args.max_length
        ),
        top_fraction=args.top_fraction,
        snippet_chars=args.snippet_chars,
    )
    output = Path(args.output)
    write_jsonl(summary.labels, output)
    report = {
        "rows": len(rows),
        "labelled": len(summary.labels),
        "labels": dict(Counter(row["label"] for row in summary.labels)),
        "rules": summary.rules,
        "discarded": summary.discarded,
        "delta_ppl_threshold": summary.threshold,
    }
    output.with_suffix(".summary.json").write_text(
        json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return summary


def four_way_label(
    correct_without: bool, correct_with: bool, confidence_gain: bool
) -> tuple[str | None, str]:
    """RAG²'s rule: the label of a snippet (None = discarded) and the rule's name."""
    rule = f"{'right' if correct_without else 'wrong'}→{'right' if correct_with else 'wrong'}"
    if not correct_without and correct_with:
        return HELPFUL, rule
    if correct_without and not correct_with:
        return NOT_HELPFUL, rule
    if correct_with:  # right → right
        return (HELPFUL if confidence_gain else None), rule
    return (NOT_HELPFUL if confidence_gain else None), rule  # wrong → wrong


def label_rows(
    rows: Sequence[dict[str, Any]],
    perplexity: Any,
    *,
    top_fraction: float = 0.25,
    snippet_chars: int = 2000,
) -> LabelSummary:
    """Label every snippet of `rows` with ΔPPL and the four-way rule.

    Args:
        rows: Input rows (see the module docstring), already checked.
        perplexity: `perplexity(prompt, rationale) -> float`, the rationale's perplexity
            after `prompt` under the scoring model.
        top_fraction: Share of the largest ΔPPL values that count as a confidence gain.
        snippet_chars: Characters of each snippet placed in the prompt.

    Returns:
        The labels, the ΔPPL threshold and per-rule counts.
    """
    from prefrag.prompts import render_prompt

    scored = []
    for row in rows:
        without = perplexity(
            render_prompt("rationale_ppl", question=row["question"]), row["rationale"]
        )
        correct_without = _correct(row, "without", row)
        for snippet in row["snippets"]:
            text = _snippet_text(snippet, snippet_chars)
            prompt = render_prompt("rationale_ppl_evidence", question=row["question"], snippet=text)
            with_ppl = perplexity(prompt, row["rationale"])
            scored.append(
                {
                    "question": row["question"],
                    "snippet": snippet["text"],
                    "title": snippet.get("title", ""),
                    "id": snippet.get("id", ""),
                    "delta_ppl": without - with_ppl,
                    "ppl_without": without,
                    "ppl_with": with_ppl,
                    "correct_without": correct_without,
                    "correct_with": _correct(snippet, "with", row),
                }
            )
    deltas = np.array([s["delta_ppl"] for s in scored], dtype=np.float64)
    threshold = float(np.quantile(deltas, 1 - top_fraction)) if len(deltas) else math.inf
    labels: list[dict[str, Any]] = []
    rules: Counter[str] = Counter()
    discarded = 0
    for item in scored:
        label, rule = four_way_label(
            item["correct_without"], item["correct_with"], item["delta_ppl"] >= threshold
        )
        rules[rule] += 1
        if label is None:
            discarded += 1
            continue
        labels.append({**item, "label": label, "rule": rule})
    return LabelSummary(labels=labels, threshold=threshold, rules=dict(rules), discarded=discarded)


def rationale_perplexity(
    model: Any, tokenizer: Any, prompt: str, rationale: str, *, max_length: int = 2048
) -> float:
    """Perplexity of `rationale`'s tokens after `prompt` (RAG² eq. 4) under a causal LM.

    The prompt is the user turn of the tokenizer's chat template (with the generation
    prompt) when it has one; only the rationale's tokens are scored. When prompt and
    rationale exceed `max_length` tokens, the prompt loses its start.
    """
    import torch

    if getattr(tokenizer, "chat_template", None):
        context = tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}],
            add_generation_prompt=True,
            tokenize=True,
            return_dict=False,
        )
    else:
        context = tokenizer(prompt)["input_ids"]
    target = tokenizer(rationale, add_special_tokens=False)["input_ids"]
    if not target:
        raise IngestError("A rationale is empty; every row needs the model's rationale.")
    target = target[: max_length - 1]
    context = list(context)[-(max_length - len(target)) :]
    ids = torch.tensor([context + target], device=model.device)
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0, len(context) - 1 : -1].float()
    log_probs = torch.log_softmax(logits, dim=-1)
    picked = log_probs.gather(1, torch.tensor(target, device=model.device).unsqueeze(1))
    return float(torch.exp(-picked.mean()))


def _correct(holder: dict[str, Any], when: str, row: dict[str, Any]) -> bool:
    from prefrag.eval.metrics import acc

    flag = holder.get(f"correct_{when}")
    if isinstance(flag, bool):
        return flag
    return bool(acc(str(holder.get(f"answer_{when}", "")), row["answer"]))


def _snippet_text(snippet: dict[str, Any], chars: int) -> str:
    title = snippet.get("title")
    text = snippet["text"][:chars]
    return f"{title}. {text}" if title else text


def _read_rows(path: Path, limit: int | None) -> list[dict[str, Any]]:
    return read_jsonl(
        path,
        file_kind="filter-labels input",
        row_kind="a row to label",
        rows_kind="rows to label",
        problem=_row_problem,
        limit=limit,
    )


def _row_problem(row: Any) -> str | None:
    if not isinstance(row, dict):
        return "the line is not an object"
    for key in ("question", "rationale"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            return f"'{key}' must be a non-empty string"
    if not (isinstance(row.get("answer"), str | list) and row["answer"]):
        return "'answer' must be the gold answer (a string or a list of strings)"
    if "answer_without" not in row and not isinstance(row.get("correct_without"), bool):
        return "it needs 'answer_without' (or 'correct_without')"
    snippets = row.get("snippets")
    if not isinstance(snippets, list) or not snippets:
        return "'snippets' must be a non-empty list"
    for snippet in snippets:
        if not isinstance(snippet, dict) or not isinstance(snippet.get("text"), str):
            return "every snippet needs a 'text'"
        if "answer_with" not in snippet and not isinstance(snippet.get("correct_with"), bool):
            return "every snippet needs 'answer_with' (or 'correct_with')"
    return None


def _load(name: str, device: str) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model: Any = AutoModelForCausalLM.from_pretrained(name)
    return model.to(device).eval(), AutoTokenizer.from_pretrained(name)


if __name__ == "__main__":
    main()
