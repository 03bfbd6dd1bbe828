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

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefrag.errors import ConfigurationError
from prefrag.jsonl import read_jsonl
from prefrag.training.config import parse_config
from prefrag.training.hf_jobs import (
    bf16_supported,
    load_tokenizer,
    merge_adapter,
    require_base_model,
    resume_point,
    run_settings,
    split_held_out,
    train_and_save,
    write_summary,
)
from prefrag.training.pairs import preference_pair_problem

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

# What the model card and `training_summary.json` record of the run.
SETTING_KEYS = (
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

SWITCHER_CARD = (
    "PrefRAG switcher (DPO)",
    """The model behind PrefRAG's `compare` role: given the question, the evidence already held
and newly retrieved local documents, it answers `{"analysis": ..., "status": "True"|"False"}`
(True keeps the local documents, False switches to the web).

Use it behind the extractive reasoner's `compare` (no other model needed):
`PREFRAG_SWITCHER=hf:<this folder> prefrag ask "..."`; or with chat models for the other
roles: `OPENAI_BASE_URL=<url> PREFRAG_MODEL=<model> prefrag ask "..." --reasoner llm
--compare-model hf:<this folder>`; or serve the base model with vLLM and this adapter
(`--enable-lora --lora-modules switcher=...`) and pass `--compare-model switcher`.
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
    from datasets import Dataset
    from trl import DPOTrainer

    if not script.data:
        raise ConfigurationError("Preference pairs are required: pass --data pairs.jsonl.")
    require_base_model(model_args)
    resume = resume_point(training)
    pairs, labels = load_pairs(Path(script.data), limit=script.max_pairs)
    eval_pairs = load_pairs(Path(script.eval_data))[0] if script.eval_data else None
    train_set, eval_set = split_held_out(
        Dataset.from_list(pairs),
        Dataset.from_list(eval_pairs) if eval_pairs is not None else None,
        script.eval_fraction,
        training.seed,
        noun="pairs",
    )
    tokenizer = load_tokenizer(model_args, training)
    run = train_and_save(
        DPOTrainer,
        training,
        model_args,
        tokenizer,
        (train_set, eval_set),
        resume=resume,
        merge=script.merge_adapter,
    )
    if run.is_main_process:
        summary = {
            "base_model": model_args.model_name_or_path,
            "data": str(script.data),
            "eval_data": script.eval_data,
            "pairs": len(train_set),
            "eval_pairs": len(eval_set) if eval_set is not None else 0,
            "labels": dict(labels),
            "settings": run_settings(training, model_args, SETTING_KEYS),
            "metrics": run.metrics,
        }
        write_summary(
            run.output_dir, summary, _model_card(summary, run.merged_dir, card or SWITCHER_CARD)
        )
    return DPOResult(output_dir=run.output_dir, merged_dir=run.merged_dir, metrics=run.metrics)


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
    rows = read_jsonl(
        path,
        file_kind="preference pairs",
        row_kind="a preference pair",
        rows_kind="preference pairs",
        problem=preference_pair_problem,
        limit=limit,
    )
    pairs = [{key: row[key] for key in ("prompt", "chosen", "rejected")} for row in rows]
    labels = Counter(str((row.get("meta") or {}).get("label", "unlabelled")) for row in rows)
    return pairs, labels


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

    values = {**(PAPER_DEFAULTS if defaults is None else defaults), "bf16": bf16_supported()}
    script, training, model = parse_config(
        [DPOScriptArguments, DPOConfig, ModelConfig], argv, prog=prog, defaults=values
    )
    return script, training, model


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

- Pairs: {summary["pairs"]} for training from `{summary["data"]}` (the file holds {labels}).
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
