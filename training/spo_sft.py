"""SFT of the SPO planner (Omni-RAG §4.2.3, eq. 2) with TRL's `SFTTrainer`.

`prefrag train spo-sft --config FILE.yaml [overrides]` follows TRL's `scripts/sft.py`: three
dataclasses parsed by TRL's parser — `SFTScriptArguments` (the data and what to save),
TRL's `SFTConfig` (training) and `ModelConfig` (the base model and LoRA). The defaults are
the paper's: learning rate 2.5e-4, five epochs, a LoRA adapter (`--use_peft false` for a
full fine-tune), a batch of 8 (1 per device x 8 accumulation steps). bf16 is on when a CUDA
GPU supports it, off on CPU.

The data is the `sft.jsonl` that `prefrag train spo-judge` writes: `{"messages": [user: the
planning prompt, assistant: the positive plan]}`. Each row is trained as a conversational
prompt-completion pair, so the loss covers only the assistant's plan, never the prompt.
A row longer than `--max_length` tokens is an error naming it rather than a silently cut
plan (`--drop_too_long true` leaves such rows out and counts them in the card); the
held-out share is of questions, never one question's rows on both sides.

The output folder holds the adapter (or model) and tokenizer, a model card (`README.md`:
data, settings, metrics) and `training_summary.json`; with LoRA, `merged/` holds base +
adapter merged, the starting point of `prefrag train spo-dpo`. Either folder serves the
`plan` role: `PREFRAG_PLAN_MODEL=hf:FOLDER`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefrag.errors import ConfigurationError
from prefrag.jsonl import read_jsonl
from prefrag.training.config import parse_config
from prefrag.training.hf_jobs import (
    bf16_supported,
    check_lengths,
    load_tokenizer,
    quantization_config,
    require_base_model,
    resume_point,
    run_settings,
    split_held_out,
    train_and_save,
    training_metrics,
    write_summary,
)

__all__ = [
    "PAPER_DEFAULTS",
    "SFTResult",
    "SFTScriptArguments",
    "bf16_supported",
    "load_conversations",
    "main",
    "train_sft",
]

PROG = "prefrag train spo-sft"

# Omni-RAG §4.2.3 / issue 11: lr 2.5e-4, 5 epochs, LoRA. TRL's own defaults differ
# (learning rate 2e-5, 3 epochs, 1,024 tokens, full fine-tuning).
PAPER_DEFAULTS: dict[str, Any] = {
    "learning_rate": 2.5e-4,
    "num_train_epochs": 5.0,
    "use_peft": True,
    "max_length": 4096,
    "per_device_train_batch_size": 1,
    "gradient_accumulation_steps": 8,
    "output_dir": "checkpoints/spo-planner",
    "report_to": "none",
    "logging_steps": 10,
    "save_strategy": "epoch",
}

# What the model card and `training_summary.json` record of the run.
SETTING_KEYS = (
    "learning_rate",
    "num_train_epochs",
    "max_steps",
    "max_length",
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "completion_only_loss",
    "bf16",
    "seed",
)


@dataclass
class SFTScriptArguments:
    """What to train on and what to save (`prefrag train spo-sft --help` lists every field)."""

    data: str | None = field(
        default=None,
        metadata={"help": "SFT plan rows from spo-judge (JSONL: messages = user, assistant)."},
    )
    eval_data: str | None = field(
        default=None,
        metadata={
            "help": "Held-out rows (same format): loss and token accuracy are measured on "
            "them before and after training."
        },
    )
    eval_fraction: float = field(
        default=0.0,
        metadata={
            "help": "Without --eval_data, hold out this fraction of the questions instead "
            "(by meta.question_id)."
        },
    )
    drop_too_long: bool = field(
        default=False,
        metadata={
            "help": "Leave out rows longer than --max_length tokens (counted in the model "
            "card) instead of stopping with an error naming the first."
        },
    )
    max_rows: int | None = field(
        default=None, metadata={"help": "Train on at most this many rows (file order)."}
    )
    merge_adapter: bool = field(
        default=True,
        metadata={
            "help": "With LoRA, also save base + adapter merged in OUTPUT/merged (the base "
            "model of spo-dpo)."
        },
    )


@dataclass
class SFTResult:
    """Where the planner was saved and how training went.

    Attributes:
        output_dir: The saved adapter (or model) folder.
        merged_dir: The merged model folder (LoRA with `--merge_adapter`), else None.
        metrics: Training metrics (first and last loss, mean token accuracy, steps per
            second, ...) and the held-out evaluation before and after training
            (`eval_before/*`, `eval_after/*`).
    """

    output_dir: Path
    merged_dir: Path | None
    metrics: dict[str, float]

    @property
    def planner_dir(self) -> Path:
        """The folder to start spo-dpo from: the merged model when there is one."""
        return self.merged_dir or self.output_dir


def main(argv: Sequence[str] | None = None) -> SFTResult:
    """`prefrag train spo-sft`: parse a YAML config plus overrides and train the planner."""
    script, training, model = _parse(argv)
    return train_sft(script, training, model)


def train_sft(script: SFTScriptArguments, training: Any, model_args: Any) -> SFTResult:
    """Train the planner on positive plans with TRL's `SFTTrainer`; save it with its card.

    Args:
        script: Data and saving options.
        training: A `trl.SFTConfig`.
        model_args: A `trl.ModelConfig` (base model path, LoRA settings).

    Returns:
        Where the planner was saved and its metrics.

    Raises:
        ConfigurationError: No data or base model is given, the data file is missing, or
            a row does not fit in `max_length` tokens.
        IngestError: A row is malformed (the message names the file and line).
    """
    from datasets import Dataset
    from trl import SFTTrainer

    if not script.data:
        raise ConfigurationError("SFT plan rows are required: pass --data sft.jsonl.")
    require_base_model(model_args)
    quantization_config(model_args)  # an impossible QLoRA request fails before any loading
    resume = resume_point(training)  # before any loading: a wrong path fails at once
    rows = load_conversations(Path(script.data), limit=script.max_rows)
    eval_rows = load_conversations(Path(script.eval_data)) if script.eval_data else None

    tokenizer = load_tokenizer(model_args, training)
    read = len(rows)
    rows = _fitting(rows, tokenizer, training.max_length, script.drop_too_long, script.data)
    if eval_rows is not None and script.eval_data:
        eval_rows = _fitting(eval_rows, tokenizer, training.max_length, True, script.eval_data)

    def columns(items: list[dict[str, Any]]) -> Any:
        return Dataset.from_list([{k: r[k] for k in ("prompt", "completion")} for r in items])

    train_set, eval_set = split_held_out(
        columns(rows),
        columns(eval_rows) if eval_rows is not None else None,
        script.eval_fraction,
        training.seed,
        noun="rows",
        groups=[str(json.loads(r["meta"]).get("question_id", i)) for i, r in enumerate(rows)],
    )
    run = train_and_save(
        SFTTrainer,
        training,
        model_args,
        tokenizer,
        (train_set, eval_set),
        resume=resume,
        merge=script.merge_adapter,
        history_metrics=_training_metrics,
    )
    if run.is_main_process:
        summary = {
            "base_model": model_args.model_name_or_path,
            "data": str(script.data),
            "eval_data": script.eval_data,
            "rows_read": read,
            "rows_too_long": read - len(rows),
            "rows": len(train_set),
            "eval_rows": len(eval_set) if eval_set is not None else 0,
            "sources": _source_names(rows),
            "settings": run_settings(training, model_args, SETTING_KEYS),
            "metrics": run.metrics,
        }
        write_summary(run.output_dir, summary, _model_card(summary, run.merged_dir))
    return SFTResult(output_dir=run.output_dir, merged_dir=run.merged_dir, metrics=run.metrics)


def load_conversations(path: Path, *, limit: int | None = None) -> list[dict[str, Any]]:
    """Read SFT plan rows as TRL conversational prompt-completion pairs.

    Args:
        path: A JSONL file of `{"messages": [...], "meta": {...}}` rows whose last message
            is the assistant's plan (what `spo-judge` writes).
        limit: Keep at most this many rows.

    Returns:
        One `{"prompt": messages before the plan, "completion": [the plan], "meta": ...}`
        per row; the loss is computed on the completion only.

    Raises:
        ConfigurationError: The file does not exist.
        IngestError: A line is not JSON or not a conversation ending in a non-empty
            assistant message after a user message, or the file holds no row.
    """
    conversations = read_jsonl(
        path,
        file_kind="SFT data",
        row_kind="an SFT plan row",
        rows_kind="SFT plan rows",
        problem=_conversation_problem,
        limit=limit,
    )
    rows = []
    for row in conversations:
        messages = [{"role": m["role"], "content": m["content"]} for m in row["messages"]]
        rows.append(
            {
                "prompt": messages[:-1],
                "completion": messages[-1:],
                "meta": json.dumps(row.get("meta") or {}),
            }
        )
    return rows


def _conversation_problem(row: Any) -> str | None:
    if not isinstance(row, dict):
        return "the line is not an object"
    messages = row.get("messages")
    if not isinstance(messages, list) or len(messages) < 2:
        return "'messages' must list the user's prompt and the assistant's plan"
    for message in messages:
        if not (
            isinstance(message, dict)
            and isinstance(message.get("role"), str)
            and isinstance(message.get("content"), str)
        ):
            return "'messages' holds a message without a string role and content"
    if messages[-1]["role"] != "assistant" or not messages[-1]["content"].strip():
        return "the last message must be the assistant's non-empty plan"
    if messages[-2]["role"] != "user":
        return "the plan must answer a user message"
    return None


def _parse(argv: Sequence[str] | None) -> tuple[SFTScriptArguments, Any, Any]:
    from trl import ModelConfig, SFTConfig

    defaults = {**PAPER_DEFAULTS, "bf16": bf16_supported()}
    script, training, model = parse_config(
        [SFTScriptArguments, SFTConfig, ModelConfig], argv, prog=PROG, defaults=defaults
    )
    return script, training, model


def _fitting(
    rows: list[dict[str, Any]], tokenizer: Any, max_length: int | None, drop: bool, path: str
) -> list[dict[str, Any]]:
    """The rows whose whole conversation fits in `max_length` (truncation cuts the plan)."""
    if max_length is None:
        return rows
    lengths = [
        len(
            tokenizer(
                tokenizer.apply_chat_template(row["prompt"] + row["completion"], tokenize=False),
                add_special_tokens=False,
            )["input_ids"]
        )
        for row in rows
    ]
    names = [
        f"SFT row {i} of '{path}'"
        + (f" (question {q})" if (q := json.loads(row["meta"]).get("question_id")) else "")
        for i, row in enumerate(rows, 1)
    ]
    kept = check_lengths(lengths, names, max_length, drop=drop, noun="SFT rows")
    return [rows[i] for i in kept]


def _training_metrics(history: list[dict[str, Any]]) -> dict[str, float]:
    """The last logged value of each training metric, plus the first logged loss."""
    metrics = training_metrics(history)
    losses = [float(entry["loss"]) for entry in history if "loss" in entry]
    if losses:
        metrics["train/first_loss"] = losses[0]
    return metrics


def _source_names(rows: list[dict[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    for row in rows:
        for name in json.loads(row["meta"]).get("sources", []):
            names[str(name)] = None
    return list(names)


def _model_card(summary: dict[str, Any], merged: Path | None) -> str:
    metrics = summary["metrics"]
    rows = "\n".join(f"| {key} | {value:.4g} |" for key, value in sorted(metrics.items()))
    settings = "\n".join(f"| {key} | {value} |" for key, value in summary["settings"].items())
    kind = "LoRA adapter" if summary["settings"]["use_peft"] else "full fine-tune"
    sources = ", ".join(summary["sources"]) or "(not recorded)"
    held_out_from = f" from `{summary['eval_data']}`" if summary["eval_data"] else ""
    merged_line = f"\nThe merged model is in `{merged.name}/`.\n" if merged else ""
    start = f"{'<this folder>/' + merged.name if merged else '<this folder>'}"
    return f"""# PrefRAG SPO planner (SFT)

The model behind PrefRAG's `plan` role (the `plan_sources` node): given the question and the
sources' descriptions and query formats, it writes `<source>query0 ; query1</source>` per
source (an empty tag skips a source). Trained with TRL's SFT ({kind}) on positive plans
(Omni-RAG SPO §4.2.3), loss on the plan only, from `{summary["base_model"]}`.
{merged_line}
Use it: `OPENAI_BASE_URL=<url> PREFRAG_MODEL=<model> prefrag ask "..." --use-planning
--reasoner llm --plan-model hf:<this folder>` (the LLM reasoner needs a chat model for the
other roles; the extractive reasoner plans without a model and ignores `--plan-model`). Align it
further with `prefrag train spo-dpo --model_name_or_path {start} --data dpo.jsonl`.

## Data

- Plans: {summary["rows"]} for training from `{summary["data"]}` ({summary["rows_read"]} read;
  {summary["rows_too_long"]} longer than `max_length` left out); sources: {sources}.
- Held-out plans: {summary["eval_rows"]}{held_out_from}.

## Settings

| setting | value |
|---|---|
{settings}

## Metrics

Training metrics are the last logged values (`train/first_loss` is the first logged loss);
`eval_before`/`eval_after` are measured on the held-out plans before and after training.

| metric | value |
|---|---|
{rows}
"""


if __name__ == "__main__":
    main()
