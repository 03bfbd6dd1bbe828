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
A row longer than `--max_length` tokens is an error rather than a silently cut plan.

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

from prefrag.errors import ConfigurationError, IngestError
from prefrag.training.config import parse_config
from prefrag.training.dpo import merge_adapter

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
        metadata={"help": "Without --eval_data, hold out this fraction of the rows instead."},
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
    from transformers import AutoTokenizer
    from trl import SFTTrainer, get_peft_config

    if not script.data:
        raise ConfigurationError("SFT plan rows are required: pass --data sft.jsonl.")
    if not model_args.model_name_or_path:
        raise ConfigurationError(
            "A base model is required: pass --model_name_or_path (a folder or hub name)."
        )
    if Path(model_args.model_name_or_path).expanduser().is_dir():
        # An adapter records its base by this path: make it work from any folder.
        model_args.model_name_or_path = str(
            Path(model_args.model_name_or_path).expanduser().resolve()
        )
    resume = _resume_point(training)  # before any loading: a wrong path fails at once
    rows = load_conversations(Path(script.data), limit=script.max_rows)
    eval_rows = load_conversations(Path(script.eval_data)) if script.eval_data else None

    tokenizer = AutoTokenizer.from_pretrained(
        model_args.model_name_or_path,
        revision=model_args.model_revision,
        trust_remote_code=training.trust_remote_code,
    )
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    _check_lengths(rows + (eval_rows or []), tokenizer, training.max_length)
    train_set, eval_set = _datasets(rows, eval_rows, script.eval_fraction, training.seed)
    training.model_init_kwargs = {
        "revision": model_args.model_revision,
        "trust_remote_code": training.trust_remote_code,
        "attn_implementation": model_args.attn_implementation,
        "dtype": model_args.dtype,
        **(training.model_init_kwargs or {}),
    }
    trainer = SFTTrainer(
        model=model_args.model_name_or_path,
        args=training,
        train_dataset=train_set,
        eval_dataset=eval_set,
        processing_class=tokenizer,
        peft_config=get_peft_config(model_args),
    )
    metrics: dict[str, float] = {}
    if eval_set is not None:
        metrics.update(_prefixed(trainer.evaluate(), "eval_before"))
    trainer.train(resume_from_checkpoint=resume)
    metrics.update(_training_metrics(trainer.state.log_history))
    if eval_set is not None:
        metrics.update(_prefixed(trainer.evaluate(), "eval_after"))

    output = Path(training.output_dir)
    trainer.save_model(str(output))
    tokenizer.save_pretrained(output)
    merged = None
    if script.merge_adapter and model_args.use_peft and trainer.accelerator.is_main_process:
        merged = merge_adapter(output, tokenizer)
    if trainer.accelerator.is_main_process:
        summary = {
            "base_model": model_args.model_name_or_path,
            "data": str(script.data),
            "eval_data": script.eval_data,
            "rows": len(train_set),
            "eval_rows": len(eval_set) if eval_set is not None else 0,
            "sources": _source_names(rows),
            "settings": _settings(training, model_args),
            "metrics": metrics,
        }
        (output / "training_summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        (output / "README.md").write_text(_model_card(summary, merged))
        print(json.dumps({"output_dir": str(output), **metrics}, indent=2))
    return SFTResult(output_dir=output, merged_dir=merged, metrics=metrics)


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
    if not path.is_file():
        raise ConfigurationError(f"The SFT data file {path} does not exist.")
    rows: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                raise IngestError(f"{path}:{number} is not a JSON object.") from None
            problem = _conversation_problem(row)
            if problem:
                raise IngestError(f"{path}:{number} is not an SFT plan row: {problem}.")
            messages = [{"role": m["role"], "content": m["content"]} for m in row["messages"]]
            rows.append(
                {
                    "prompt": messages[:-1],
                    "completion": messages[-1:],
                    "meta": json.dumps(row.get("meta") or {}),
                }
            )
            if limit is not None and len(rows) >= limit:
                break
    if not rows:
        raise IngestError(f"{path} holds no SFT plan rows.")
    return rows


def bf16_supported() -> bool:
    """True when a CUDA GPU with bf16 is present (the default precision there)."""
    import torch

    return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())


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


def _check_lengths(rows: list[dict[str, Any]], tokenizer: Any, max_length: int | None) -> None:
    """Refuse rows whose plan would be cut off by `max_length` (truncation keeps the start)."""
    if max_length is None:
        return
    lengths = [
        len(
            tokenizer(
                tokenizer.apply_chat_template(row["prompt"] + row["completion"], tokenize=False),
                add_special_tokens=False,
            )["input_ids"]
        )
        for row in rows
    ]
    too_long = [n for n in lengths if n > max_length]
    if too_long:
        raise ConfigurationError(
            f"{len(too_long)} of {len(rows)} SFT rows are longer than --max_length "
            f"{max_length} tokens (the longest has {max(too_long)}); raise --max_length so "
            "no plan is cut off."
        )


def _datasets(
    rows: list[dict[str, Any]],
    eval_rows: list[dict[str, Any]] | None,
    eval_fraction: float,
    seed: int,
) -> tuple[Any, Any]:
    from datasets import Dataset

    def columns(items: list[dict[str, Any]]) -> Any:
        return Dataset.from_list([{k: r[k] for k in ("prompt", "completion")} for r in items])

    train_set = columns(rows)
    if eval_rows is not None:
        return train_set, columns(eval_rows)
    if eval_fraction <= 0:
        return train_set, None
    if not 0 < eval_fraction < 1 or len(rows) < 2:
        raise ConfigurationError("--eval_fraction must be in (0, 1) with at least two rows.")
    split = train_set.train_test_split(test_size=eval_fraction, seed=seed)
    return split["train"], split["test"]


def _resume_point(training: Any) -> str | bool | None:
    """`--resume_from_checkpoint PATH`, or "last"/"true" for the newest checkpoint."""
    value = training.resume_from_checkpoint
    if isinstance(value, str) and value.lower() in ("true", "last", "latest"):
        from transformers.trainer_utils import get_last_checkpoint

        folder = Path(training.output_dir)
        last = get_last_checkpoint(str(folder)) if folder.is_dir() else None
        if last is None:
            raise ConfigurationError(f"No checkpoint to resume from in {training.output_dir}.")
        return last
    return value


def _training_metrics(history: list[dict[str, Any]]) -> dict[str, float]:
    """The last logged value of each training metric, plus the first logged loss."""
    metrics: dict[str, float] = {}
    for entry in history:
        for key, value in entry.items():
            if isinstance(value, int | float) and not key.startswith("eval_"):
                metrics[f"train/{key}"] = float(value)
    losses = [float(entry["loss"]) for entry in history if "loss" in entry]
    if losses:
        metrics["train/first_loss"] = losses[0]
    return metrics


def _prefixed(metrics: dict[str, Any], prefix: str) -> dict[str, float]:
    return {
        f"{prefix}/{key.removeprefix('eval_')}": float(value)
        for key, value in metrics.items()
        if isinstance(value, int | float)
    }


def _source_names(rows: list[dict[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    for row in rows:
        for name in json.loads(row["meta"]).get("sources", []):
            names[str(name)] = None
    return list(names)


def _settings(training: Any, model_args: Any) -> dict[str, Any]:
    keys = (
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
    settings = {key: getattr(training, key) for key in keys}
    settings["use_peft"] = model_args.use_peft
    if model_args.use_peft:
        settings.update(lora_r=model_args.lora_r, lora_alpha=model_args.lora_alpha)
    return json.loads(json.dumps(settings, default=str))


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
Use it: `prefrag ask "..." --use-planning --reasoner llm --plan-model hf:<this folder>`
(the other roles keep their own models). Align it
further with `prefrag train spo-dpo --model_name_or_path {start} --data dpo.jsonl`.

## Data

- Plans: {summary["rows"]} for training from `{summary["data"]}`; sources: {sources}.
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
