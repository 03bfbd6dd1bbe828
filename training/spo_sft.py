"""SPO planner supervised fine-tuning (Omni-RAG §4) with TRL's `SFTTrainer`.

`prefrag train spo-sft --data plans.jsonl --model_name_or_path BASE [overrides]` trains the
model behind the `plan` role on chat rows `{"messages": [{"role": "user", "content":
<planning prompt>}, {"role": "assistant", "content": <plan>}]}` (a system message may come
first), where each plan holds up to three positive queries per source (from `spo-explore`
and `spo-judge`). The last assistant message is the completion: the loss covers the plan
only, not the prompt. Defaults are the paper's: learning rate 2.5e-4, five epochs, a LoRA
adapter (`--use_peft false` for a full fine-tune); the model (or adapter), tokenizer,
`training_summary.json` and a model card are saved under `checkpoints/spo-planner`.
Fields: `prefrag train spo-sft --help` (script arguments, TRL's `SFTConfig`, `ModelConfig`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefrag.errors import ConfigurationError, IngestError
from prefrag.training.config import parse_config

__all__ = ["SFTResult", "SFTScriptArguments", "load_messages", "main"]

PROG = "prefrag train spo-sft"
DEFAULTS: dict[str, Any] = {
    "learning_rate": 2.5e-4,
    "num_train_epochs": 5.0,
    "use_peft": True,
    "max_length": 4096,
    "output_dir": "checkpoints/spo-planner",
    "report_to": "none",
    "save_strategy": "epoch",
}


@dataclass
class SFTScriptArguments:
    """Data settings of `prefrag train spo-sft`."""

    data: str | None = field(
        default=None, metadata={"help": 'Chat rows {"messages": [...]} ending with the plan.'}
    )
    eval_data: str | None = field(
        default=None, metadata={"help": "Held-out rows (same format): loss after training."}
    )
    merge_adapter: bool = field(
        default=False,
        metadata={"help": "With LoRA, also save base + adapter merged in OUTPUT/merged."},
    )


@dataclass
class SFTResult:
    """Where the planner was saved and its training metrics."""

    output_dir: Path
    metrics: dict[str, float]


def main(argv: Sequence[str] | None = None) -> SFTResult:
    """`prefrag train spo-sft`: supervised fine-tuning of the source planner."""
    import torch
    from trl import ModelConfig, SFTConfig, SFTTrainer, get_peft_config

    defaults = {**DEFAULTS, "bf16": bool(torch.cuda.is_available())}
    script, training, model_args = parse_config(
        [SFTScriptArguments, SFTConfig, ModelConfig], argv, prog=PROG, defaults=defaults
    )
    if not script.data or not model_args.model_name_or_path:
        raise ConfigurationError(
            "spo-sft needs --data plans.jsonl and --model_name_or_path (the planner's base)."
        )
    from datasets import Dataset
    from transformers import AutoTokenizer

    base = model_args.model_name_or_path
    if Path(base).expanduser().is_dir():
        base = model_args.model_name_or_path = str(Path(base).expanduser().resolve())
    rows = load_messages(Path(script.data))
    eval_rows = load_messages(Path(script.eval_data)) if script.eval_data else None
    tokenizer = AutoTokenizer.from_pretrained(base, revision=model_args.model_revision)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    training.model_init_kwargs = {
        "revision": model_args.model_revision,
        "dtype": model_args.dtype,
        "attn_implementation": model_args.attn_implementation,
        **(training.model_init_kwargs or {}),
    }
    trainer = SFTTrainer(
        model=base,
        args=training,
        train_dataset=Dataset.from_list(rows),
        eval_dataset=Dataset.from_list(eval_rows) if eval_rows else None,
        processing_class=tokenizer,
        peft_config=get_peft_config(model_args),
    )
    outcome = trainer.train(resume_from_checkpoint=training.resume_from_checkpoint)
    metrics = {"train/loss": float(outcome.training_loss)}
    if eval_rows:
        metrics.update(
            {
                f"eval/{k.removeprefix('eval_')}": float(v)
                for k, v in trainer.evaluate().items()
                if isinstance(v, int | float)
            }
        )
    output = Path(training.output_dir)
    trainer.save_model(str(output))
    tokenizer.save_pretrained(output)
    if script.merge_adapter and model_args.use_peft:
        from prefrag.training.dpo import merge_adapter

        merge_adapter(output, tokenizer)
    summary = {
        "base_model": base,
        "data": script.data,
        "rows": len(rows),
        "settings": {
            "learning_rate": training.learning_rate,
            "num_train_epochs": training.num_train_epochs,
            "max_length": training.max_length,
            "use_peft": model_args.use_peft,
            "lora_r": model_args.lora_r if model_args.use_peft else None,
        },
        "metrics": metrics,
    }
    (output / "training_summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (output / "README.md").write_text(_model_card(summary))
    print(json.dumps({"output_dir": str(output), **metrics}, indent=2))
    return SFTResult(output_dir=output, metrics=metrics)


def load_messages(path: Path) -> list[dict[str, Any]]:
    """Chat rows as TRL prompt-completion rows: everything before the last message, and it.

    Raises:
        ConfigurationError: The file does not exist.
        IngestError: A row is not a chat ending with an assistant message, or none is given.
    """
    if not path.is_file():
        raise ConfigurationError(f"The SFT data file {path} does not exist.")
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                raise IngestError(f"{path}:{number} is not a JSON object.") from None
            messages = row.get("messages") if isinstance(row, dict) else None
            if not (
                isinstance(messages, list)
                and len(messages) >= 2
                and all(
                    isinstance(m, dict)
                    and isinstance(m.get("role"), str)
                    and isinstance(m.get("content"), str)
                    for m in messages
                )
                and messages[-1]["role"] == "assistant"
                and messages[-2]["role"] == "user"
            ):
                raise IngestError(
                    f"{path}:{number} needs 'messages': a chat whose last two messages are the "
                    "user's prompt and the assistant's plan."
                )
            rows.append({"prompt": messages[:-1], "completion": messages[-1:]})
    if not rows:
        raise IngestError(f"{path} holds no chat rows.")
    return rows


def _model_card(summary: dict[str, Any]) -> str:
    settings = "\n".join(f"| {k} | {v} |" for k, v in summary["settings"].items())
    metrics = "\n".join(f"| {k} | {v:.4g} |" for k, v in sorted(summary["metrics"].items()))
    return f"""# PrefRAG source planner (SPO, SFT)

The model behind PrefRAG's `plan` role: given the question and the sources with their
descriptions and query formats, it writes one `<name>q0 ; q1</name>` tag per source.
Supervised fine-tuning (TRL `SFTTrainer`, loss on the plan only) from
`{summary["base_model"]}` on {summary["rows"]} plans from `{summary["data"]}`.

## Settings

| setting | value |
|---|---|
{settings}

## Metrics

| metric | value |
|---|---|
{metrics}
"""


if __name__ == "__main__":
    main()
