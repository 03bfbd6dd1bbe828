"""DPO training of the switcher (the model behind `compare`), PrefRAG §3.5, with TRL.

`prefrag train dpo --config FILE.yaml [overrides]` follows TRL's `scripts/dpo.py`: three
dataclasses parsed by TRL's parser — `DPOScriptArguments` (the data and what to save),
TRL's `DPOConfig` (training) and `ModelConfig` (the base model and LoRA). The defaults are
the paper's: beta 0.1, sigmoid loss, learning rate 5e-7, one epoch, long sequences (8,192
tokens), a batch of 8 (1 per device x 8 accumulation steps), full fine-tuning; `--use_peft`
trains a LoRA adapter instead (and `--merge_adapter` also saves the merged model). bf16 is
on when a CUDA GPU supports it, off on CPU.

The data is the switcher preference-pairs JSONL that `prefrag train switcher-data` writes:
TRL's conversational preference format (`prompt`, `chosen`, `rejected` message lists) plus
`meta` (question id, step, teacher, policy, sampling, label "keep"/"switch"). The output
folder holds the model (or adapter) and tokenizer, a model card (`README.md`: data,
settings, metrics) and `training_summary.json`; it loads as the `compare` role with
`PREFRAG_HF_COMPARE_CHECKPOINT=FOLDER` (or `--compare-model hf:FOLDER`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefrag.errors import ConfigurationError, IngestError
from prefrag.training.config import parse_config

__all__ = [
    "PAPER_DEFAULTS",
    "DPOResult",
    "DPOScriptArguments",
    "load_pairs",
    "main",
    "merge_adapter",
    "parse_dpo_args",
    "train_dpo",
]

PROG = "prefrag train dpo"

# PrefRAG §3.5 and the authors' recipe (REFERENCE_NOTES "DPO data"); TRL's own defaults
# differ (learning rate 1e-6, 1,024 tokens, bf16 everywhere).
PAPER_DEFAULTS: dict[str, Any] = {
    "learning_rate": 5e-7,
    "num_train_epochs": 1.0,
    "beta": 0.1,
    "loss_type": ["sigmoid"],
    "max_length": 8192,
    "per_device_train_batch_size": 1,
    "gradient_accumulation_steps": 8,
    "output_dir": "checkpoints/switcher",
    "report_to": "none",
    "logging_steps": 10,
    "save_strategy": "epoch",
}


SWITCHER_CARD = (
    "PrefRAG switcher (DPO)",
    """The model behind PrefRAG's `compare` role: given the question, the evidence already held
and newly retrieved local documents, it answers `{"analysis": ..., "status": "True"|"False"}`
(True keeps the local documents, False switches to the web).

Use it: `PREFRAG_HF_COMPARE_CHECKPOINT=<this folder> prefrag ask "..." --reasoner llm`, or
serve the base model with vLLM and this adapter (`--enable-lora --lora-modules switcher=...`).
""",
)


@dataclass
class DPOScriptArguments:
    """What to train on and what to save (`prefrag train dpo --help` lists every field)."""

    data: str | None = field(
        default=None,
        metadata={"help": "Switcher preference pairs (JSONL: prompt, chosen, rejected, meta)."},
    )
    eval_data: str | None = field(
        default=None,
        metadata={
            "help": "Held-out pairs (same format): reward accuracy and margin are measured on "
            "them before and after training."
        },
    )
    eval_fraction: float = field(
        default=0.0,
        metadata={"help": "Without --eval_data, hold out this fraction of the pairs instead."},
    )
    max_pairs: int | None = field(
        default=None, metadata={"help": "Train on at most this many pairs (file order)."}
    )
    merge_adapter: bool = field(
        default=False,
        metadata={"help": "With --use_peft, also save base + adapter merged in OUTPUT/merged."},
    )


@dataclass
class DPOResult:
    """Where the switcher was saved and how training went.

    Attributes:
        output_dir: The saved model (or adapter) folder.
        merged_dir: The merged model folder (`--merge_adapter`), else None.
        metrics: Training metrics (loss, rewards/accuracies, rewards/margins, ...) and the
            held-out evaluation before and after training (`eval_before/*`, `eval_after/*`).
    """

    output_dir: Path
    merged_dir: Path | None
    metrics: dict[str, float]


def main(argv: Sequence[str] | None = None) -> DPOResult:
    """`prefrag train dpo`: parse a YAML config plus overrides and train the switcher."""
    script, training, model = parse_dpo_args(argv)
    return train_dpo(script, training, model)


def train_dpo(
    script: DPOScriptArguments,
    training: Any,
    model_args: Any,
    *,
    card: tuple[str, str] | None = None,
) -> DPOResult:
    """Train with TRL's `DPOTrainer` (the switcher by default) and save it with a model card.

    Args:
        script: Data and saving options.
        training: A `trl.DPOConfig`.
        model_args: A `trl.ModelConfig` (base model path, LoRA settings).
        card: The model card's title and opening paragraph; the switcher's when None
            (other DPO jobs, e.g. `spo-dpo`, pass their own).

    Returns:
        Where the model was saved and its metrics.

    Raises:
        ConfigurationError: No data or base model is given, or the data folder is missing.
        IngestError: A pair is malformed (the message names the file and line).
    """
    from transformers import AutoTokenizer
    from trl import DPOTrainer, get_peft_config

    if not script.data:
        raise ConfigurationError("Preference pairs are required: pass --data pairs.jsonl.")
    if not model_args.model_name_or_path:
        raise ConfigurationError(
            "A base model is required: pass --model_name_or_path (a folder or hub name)."
        )
    if Path(model_args.model_name_or_path).expanduser().is_dir():
        # An adapter records its base by this path: make it work from any folder.
        model_args.model_name_or_path = str(
            Path(model_args.model_name_or_path).expanduser().resolve()
        )
    pairs, labels = load_pairs(Path(script.data), limit=script.max_pairs)
    eval_pairs = load_pairs(Path(script.eval_data))[0] if script.eval_data else None
    train_set, eval_set = _datasets(pairs, eval_pairs, script.eval_fraction, training.seed)

    tokenizer = AutoTokenizer.from_pretrained(
        model_args.model_name_or_path,
        revision=model_args.model_revision,
        trust_remote_code=training.trust_remote_code,
    )
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    training.model_init_kwargs = {
        "revision": model_args.model_revision,
        "trust_remote_code": training.trust_remote_code,
        "attn_implementation": model_args.attn_implementation,
        "dtype": model_args.dtype,
        **(training.model_init_kwargs or {}),
    }
    trainer = DPOTrainer(
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
    trainer.train(resume_from_checkpoint=_resume_point(training))
    metrics.update(_last_training_metrics(trainer.state.log_history))
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
            "pairs": len(train_set),
            "eval_pairs": len(eval_set) if eval_set is not None else 0,
            "labels": dict(labels),
            "settings": _settings(training, model_args),
            "metrics": metrics,
        }
        (output / "training_summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        (output / "README.md").write_text(_model_card(summary, merged, card or SWITCHER_CARD))
        print(json.dumps({"output_dir": str(output), **metrics}, indent=2))
    return DPOResult(output_dir=output, merged_dir=merged, metrics=metrics)


def load_pairs(path: Path, *, limit: int | None = None) -> tuple[list[dict[str, Any]], Counter]:
    """Read switcher preference pairs, checking each row's shape.

    Args:
        path: A JSONL file of `{"prompt": [...], "chosen": [...], "rejected": [...],
            "meta": {...}}` rows (TRL's conversational preference format).
        limit: Keep at most this many pairs.

    Returns:
        The pairs (prompt, chosen, rejected only) and a count of their `meta.label` values.

    Raises:
        ConfigurationError: The file does not exist.
        IngestError: A line is not JSON or not a conversational preference pair, or the
            file holds no pair.
    """
    if not path.is_file():
        raise ConfigurationError(f"The preference pairs file {path} does not exist.")
    pairs: list[dict[str, Any]] = []
    labels: Counter = Counter()
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                raise IngestError(f"{path}:{number} is not a JSON object.") from None
            problem = _pair_problem(row)
            if problem:
                raise IngestError(f"{path}:{number} is not a preference pair: {problem}.")
            pairs.append({key: row[key] for key in ("prompt", "chosen", "rejected")})
            labels[str((row.get("meta") or {}).get("label", "unlabelled"))] += 1
            if limit is not None and len(pairs) >= limit:
                break
    if not pairs:
        raise IngestError(f"{path} holds no preference pairs.")
    return pairs, labels


def _pair_problem(row: Any) -> str | None:
    if not isinstance(row, dict):
        return "the line is not an object"
    for key in ("prompt", "chosen", "rejected"):
        messages = row.get(key)
        if not isinstance(messages, list) or not messages:
            return f"'{key}' must be a non-empty list of messages"
        for message in messages:
            if not (
                isinstance(message, dict)
                and isinstance(message.get("role"), str)
                and isinstance(message.get("content"), str)
            ):
                return f"'{key}' holds a message without a string role and content"
    if row["prompt"][-1]["role"] != "user":
        return "the prompt must end with the user's message"
    for key in ("chosen", "rejected"):
        if [m["role"] for m in row[key]] != ["assistant"]:
            return f"'{key}' must be one assistant message"
    if row["chosen"][0]["content"] == row["rejected"][0]["content"]:
        return "chosen and rejected are the same text"
    return None


def parse_dpo_args(
    argv: Sequence[str] | None,
    *,
    prog: str = PROG,
    defaults: dict[str, Any] | None = None,
) -> tuple[DPOScriptArguments, Any, Any]:
    """A DPO job's three configs: script arguments, TRL's `DPOConfig` and `ModelConfig`.

    `defaults` replaces the paper's switcher defaults (`PAPER_DEFAULTS`); bf16 follows the
    GPU unless the YAML file or the command line says otherwise.
    """
    from trl import DPOConfig, ModelConfig

    values = {**(PAPER_DEFAULTS if defaults is None else defaults), "bf16": _bf16_available()}
    script, training, model = parse_config(
        [DPOScriptArguments, DPOConfig, ModelConfig], argv, prog=prog, defaults=values
    )
    return script, training, model


def _bf16_available() -> bool:
    import torch

    return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())


def _datasets(
    pairs: list[dict[str, Any]],
    eval_pairs: list[dict[str, Any]] | None,
    eval_fraction: float,
    seed: int,
) -> tuple[Any, Any]:
    from datasets import Dataset

    train_set = Dataset.from_list(pairs)
    if eval_pairs is not None:
        return train_set, Dataset.from_list(eval_pairs)
    if eval_fraction <= 0:
        return train_set, None
    if not 0 < eval_fraction < 1 or len(pairs) < 2:
        raise ConfigurationError("--eval_fraction must be in (0, 1) with at least two pairs.")
    split = train_set.train_test_split(test_size=eval_fraction, seed=seed)
    return split["train"], split["test"]


def _resume_point(training: Any) -> str | bool | None:
    """`--resume_from_checkpoint PATH`, or "last"/"true" for the newest checkpoint."""
    value = training.resume_from_checkpoint
    if isinstance(value, str) and value.lower() in ("true", "last", "latest"):
        from transformers.trainer_utils import get_last_checkpoint

        last = get_last_checkpoint(training.output_dir)
        if last is None:
            raise ConfigurationError(f"No checkpoint to resume from in {training.output_dir}.")
        return last
    return value


def _last_training_metrics(history: list[dict[str, Any]]) -> dict[str, float]:
    """The last logged value of each training metric (loss, rewards/*, logps/*, ...)."""
    metrics: dict[str, float] = {}
    for entry in history:
        for key, value in entry.items():
            if isinstance(value, int | float) and not key.startswith("eval_"):
                metrics[f"train/{key}"] = float(value)
    return metrics


def _prefixed(metrics: dict[str, Any], prefix: str) -> dict[str, float]:
    return {
        f"{prefix}/{key.removeprefix('eval_')}": float(value)
        for key, value in metrics.items()
        if isinstance(value, int | float)
    }


def merge_adapter(adapter: Path, tokenizer: Any) -> Path:
    """Save the base model with the LoRA adapter in `adapter` merged, in `adapter/merged`."""
    from peft import AutoPeftModelForCausalLM

    merged_dir = adapter / "merged"
    model = AutoPeftModelForCausalLM.from_pretrained(str(adapter))
    model.merge_and_unload().save_pretrained(merged_dir)
    tokenizer.save_pretrained(merged_dir)
    return merged_dir


def _settings(training: Any, model_args: Any) -> dict[str, Any]:
    keys = (
        "beta",
        "loss_type",
        "learning_rate",
        "num_train_epochs",
        "max_steps",
        "max_length",
        "per_device_train_batch_size",
        "gradient_accumulation_steps",
        "bf16",
        "seed",
    )
    settings = {key: getattr(training, key) for key in keys}
    settings["use_peft"] = model_args.use_peft
    if model_args.use_peft:
        settings.update(lora_r=model_args.lora_r, lora_alpha=model_args.lora_alpha)
    return json.loads(json.dumps(settings, default=str))


def _model_card(summary: dict[str, Any], merged: Path | None, card: tuple[str, str]) -> str:
    metrics = summary["metrics"]
    rows = "\n".join(f"| {key} | {value:.4g} |" for key, value in sorted(metrics.items()))
    settings = "\n".join(f"| {key} | {value} |" for key, value in summary["settings"].items())
    labels = ", ".join(f"{count} {label}" for label, count in sorted(summary["labels"].items()))
    kind = "LoRA adapter" if summary["settings"]["use_peft"] else "full fine-tune"
    held_out_from = f" from `{summary['eval_data']}`" if summary["eval_data"] else ""
    merged_line = f"\nThe merged model is in `{merged.name}/`.\n" if merged else ""
    title, intro = card
    return f"""# {title}

{intro.strip()}

Trained with TRL's DPO ({kind}) from `{summary["base_model"]}`.
{merged_line}
## Data

- Pairs: {summary["pairs"]} for training from `{summary["data"]}` ({labels}).
- Held-out pairs: {summary["eval_pairs"]}{held_out_from}.

## Settings

| setting | value |
|---|---|
{settings}

## Metrics

Training metrics are the last logged values; `eval_before`/`eval_after` are measured on the
held-out pairs before and after training (reward accuracy: share of pairs whose implicit
reward prefers the chosen response).

| metric | value |
|---|---|
{rows}
"""


if __name__ == "__main__":
    main()
