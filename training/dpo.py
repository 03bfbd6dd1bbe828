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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefrag.errors import ConfigurationError
from prefrag.jsonl import read_jsonl
from prefrag.training.config import parse_config
from prefrag.training.hf_jobs import (
    TIE_TOLERANCE,
    bf16_supported,
    check_lengths,
    load_tokenizer,
    merge_adapter,
    quantization_config,
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
    "PairFile",
    "load_pairs",
    "main",
    "merge_adapter",
    "pair_lengths",
    "parse_dpo_args",
    "read_pair_file",
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
and newly retrieved local documents, it answers `{"analysis": ..., "status": true|false}` (the
JSON schema `compare` asks for at run time; true keeps the local documents, false switches
to the web).

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
        metadata={
            "help": "Without --eval_data, hold out this fraction of the questions instead "
            "(all pairs of a question on one side, by meta.question_id)."
        },
    )
    drop_too_long: bool = field(
        default=False,
        metadata={
            "help": "Leave out pairs longer than --max_length tokens (counted in the model "
            "card) instead of stopping with an error naming the first."
        },
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
    quantization_config(model_args)  # an impossible QLoRA request fails before any loading
    resume = resume_point(training)
    data = read_pair_file(Path(script.data), limit=script.max_pairs)
    held = read_pair_file(Path(script.eval_data)) if script.eval_data else None
    tokenizer = load_tokenizer(model_args, training)
    read = len(data.pairs)
    data = _fitting(data, tokenizer, training.max_length, script.drop_too_long)
    held = _fitting(held, tokenizer, training.max_length, True) if held else None
    train_set, eval_set = split_held_out(
        Dataset.from_list(data.pairs),
        Dataset.from_list(held.pairs) if held is not None else None,
        script.eval_fraction,
        training.seed,
        noun="pairs",
        groups=data.questions,
    )
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
            "pairs_read": read,
            "pairs_too_long": read - len(data.pairs),
            "pairs": len(train_set),
            "eval_pairs": len(eval_set) if eval_set is not None else 0,
            "eval_pairs_too_long": held.dropped if held is not None else 0,
            "questions": len(set(data.questions)),
            "labels": dict(Counter(data.labels)),
            "settings": run_settings(training, model_args, SETTING_KEYS),
            "metrics": run.metrics,
        }
        write_summary(
            run.output_dir, summary, _model_card(summary, run.merged_dir, card or SWITCHER_CARD)
        )
    return DPOResult(output_dir=run.output_dir, merged_dir=run.merged_dir, metrics=run.metrics)


@dataclass
class PairFile:
    """The preference pairs of a file, with what each came from.

    Attributes:
        pairs: The pairs (`prompt`, `chosen`, `rejected` only: what the trainer reads).
        labels: Each pair's `meta.label` ("keep"/"switch"; "unlabelled" without one).
        questions: Each pair's `meta.question_id` (its position when there is none): the
            unit of the held-out split.
        names: Each pair's name in messages ("pair 3 of 'pairs.jsonl' (question q7)").
        dropped: Pairs left out for length.
    """

    pairs: list[dict[str, Any]]
    labels: list[str]
    questions: list[str]
    names: list[str]
    dropped: int = 0

    def keep(self, indices: Iterable[int]) -> PairFile:
        """The pairs at `indices` (the rest counted as dropped)."""
        chosen = list(indices)
        return PairFile(
            [self.pairs[i] for i in chosen],
            [self.labels[i] for i in chosen],
            [self.questions[i] for i in chosen],
            [self.names[i] for i in chosen],
            self.dropped + len(self.pairs) - len(chosen),
        )


def read_pair_file(path: Path, *, limit: int | None = None) -> PairFile:
    """Read preference pairs, checking each row's shape.

    Args:
        path: A JSONL file of `{"prompt": [...], "chosen": [...], "rejected": [...],
            "meta": {...}}` rows (TRL's conversational preference format).
        limit: Keep at most this many pairs.

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
    metas = [row.get("meta") if isinstance(row.get("meta"), dict) else {} for row in rows]
    questions = [str(meta.get("question_id", f"#{i}")) for i, meta in enumerate(metas, 1)]
    return PairFile(
        pairs=[{key: row[key] for key in ("prompt", "chosen", "rejected")} for row in rows],
        labels=[str(meta.get("label", "unlabelled")) for meta in metas],
        questions=questions,
        names=[
            f"Pair {i} of '{path}'"
            + (f" (question {meta['question_id']})" if "question_id" in meta else "")
            for i, meta in enumerate(metas, 1)
        ],
    )


def load_pairs(
    path: Path, *, limit: int | None = None
) -> tuple[list[dict[str, Any]], Counter[str]]:
    """The pairs of a file (prompt, chosen, rejected) and a count of their labels.

    Raises:
        ConfigurationError: The file does not exist.
        IngestError: A line is malformed (named), or the file holds no pair.
    """
    data = read_pair_file(path, limit=limit)
    return data.pairs, Counter(data.labels)


def pair_lengths(pairs: Sequence[dict[str, Any]], tokenizer: Any) -> list[int]:
    """Each pair's token count as the DPO trainer sees it.

    That is the longer of prompt + chosen and prompt + rejected, rendered with the
    tokenizer's chat template.
    """

    def count(messages: list[dict[str, str]]) -> int:
        text = tokenizer.apply_chat_template(messages, tokenize=False)
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    return [
        max(count(pair["prompt"] + pair["chosen"]), count(pair["prompt"] + pair["rejected"]))
        for pair in pairs
    ]


def _fitting(data: PairFile, tokenizer: Any, max_length: int | None, drop: bool) -> PairFile:
    """The pairs that fit in `max_length` (see `hf_jobs.check_lengths`)."""
    if max_length is None:
        return data
    lengths = pair_lengths(data.pairs, tokenizer)
    return data.keep(check_lengths(lengths, data.names, max_length, drop=drop, noun="pairs"))


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

- Pairs: {summary["pairs"]} for training from `{summary["data"]}` ({summary["pairs_read"]} read;
  {summary["pairs_too_long"]} longer than `max_length` left out; kept: {labels}; from
  {summary["questions"]} questions).
- Held-out pairs: {summary["eval_pairs"]}{held_out_from} (whole questions; \
{summary["eval_pairs_too_long"]} longer than `max_length` left out).

## Settings

| setting | value |
|---|---|
{settings}

## Metrics

Training metrics are the last logged values; `eval_before`/`eval_after` are measured on the
held-out pairs before and after training. `pairs/won`, `pairs/tied` and `pairs/lost` are the
shares of held-out pairs whose implicit reward margin (beta x the log-ratio of chosen minus
rejected) is above, within and below ±{TIE_TOLERANCE:g}; `pairs/margin_mean` and
`pairs/margin_median` are that margin. TRL's `rewards/accuracies` counts a tie as lost: before
training the policy is the reference and every pair ties, so read it next to `pairs/tied`.

| metric | value |
|---|---|
{rows}
"""


if __name__ == "__main__":
    main()
