"""What the Hugging Face training jobs share: base model, tokenizer, run and saved output.

The TRL trainers (`dpo`, `spo-sft`, `spo-dpo`) load the base model's tokenizer the same
way, resume from the newest checkpoint on request, evaluate held-out data before and after
training, save the model (and, for a LoRA adapter, base + adapter merged) and write
`training_summary.json` plus a model card (`write_summary`, which `filter` uses too). A
job's own data format, defaults and card text stay in its module.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefrag.errors import ConfigurationError

__all__ = [
    "TrainedModel",
    "bf16_supported",
    "load_tokenizer",
    "merge_adapter",
    "require_base_model",
    "require_model_files",
    "resume_point",
    "run_settings",
    "split_held_out",
    "train_and_save",
    "training_metrics",
    "write_summary",
]


def bf16_supported() -> bool:
    """True when a CUDA GPU with bf16 is present (the default precision there)."""
    import torch

    return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())


def require_base_model(model_args: Any) -> None:
    """Refuse a run without `--model_name_or_path`; make a local folder's path absolute.

    An adapter records its base by this path, so an absolute one works from any folder.

    Raises:
        ConfigurationError: No base model is given.
    """
    if not model_args.model_name_or_path:
        raise ConfigurationError(
            "A base model is required: pass --model_name_or_path (a folder or hub name)."
        )
    if Path(model_args.model_name_or_path).expanduser().is_dir():
        model_args.model_name_or_path = str(
            Path(model_args.model_name_or_path).expanduser().resolve()
        )


def require_model_files(name: str) -> None:
    """Refuse a base model that is neither a folder nor already in the local HF cache.

    Called before the first load, so a wrong path is one sentence instead of the chained
    tracebacks of transformers trying the hub (nothing is ever downloaded).

    Raises:
        ConfigurationError: `name` names no model this machine holds.
    """
    if Path(name).expanduser().is_dir():
        return
    if not _in_local_cache(name):
        raise ConfigurationError(
            f"--model_name_or_path {name!r} is neither a model folder nor a model in the local "
            "Hugging Face cache; give the folder of a saved model (e.g. one `prefrag train` "
            "wrote)."
        )


def _in_local_cache(name: str) -> bool:
    """Whether hub model `name` is already in the local cache (its config is there)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(name, "config.json")
    except Exception:  # not a valid repo id (a path), or no hub client installed
        return False
    return isinstance(found, str)


def resume_point(training: Any) -> str | bool | None:
    """`--resume_from_checkpoint PATH`, or "last"/"true" for the newest checkpoint.

    Raises:
        ConfigurationError: "last" is asked for but the output folder holds no checkpoint.
    """
    value = training.resume_from_checkpoint
    if isinstance(value, str) and value.lower() in ("true", "last", "latest"):
        from transformers.trainer_utils import get_last_checkpoint

        folder = Path(training.output_dir)
        last = get_last_checkpoint(str(folder)) if folder.is_dir() else None
        if last is None:
            raise ConfigurationError(f"No checkpoint to resume from in {training.output_dir}.")
        return last
    return value


def load_tokenizer(model_args: Any, training: Any) -> Any:
    """The base model's tokenizer (padding with EOS when it has no pad token).

    Also sets `training.model_init_kwargs` from the model config (revision, remote code,
    attention, dtype) so that the TRL trainer loads the model the same way; values already
    in `model_init_kwargs` win.
    """
    from transformers import AutoTokenizer

    require_model_files(str(model_args.model_name_or_path))
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
    return tokenizer


def split_held_out(
    train_set: Any, eval_set: Any, eval_fraction: float, seed: int, *, noun: str
) -> tuple[Any, Any]:
    """The training and held-out datasets: `eval_set` when given, else a random fraction.

    Raises:
        ConfigurationError: The fraction is not in (0, 1) or there are fewer than two rows.
    """
    if eval_set is not None:
        return train_set, eval_set
    if eval_fraction <= 0:
        return train_set, None
    if not 0 < eval_fraction < 1 or len(train_set) < 2:
        raise ConfigurationError(f"--eval_fraction must be in (0, 1) with at least two {noun}.")
    split = train_set.train_test_split(test_size=eval_fraction, seed=seed)
    return split["train"], split["test"]


def training_metrics(history: list[dict[str, Any]]) -> dict[str, float]:
    """The last logged value of each training metric (loss, rewards/*, logps/*, ...)."""
    metrics: dict[str, float] = {}
    for entry in history:
        for key, value in entry.items():
            if isinstance(value, int | float) and not key.startswith("eval_"):
                metrics[f"train/{key}"] = float(value)
    return metrics


@dataclass
class TrainedModel:
    """What a TRL training run saved, and where.

    Attributes:
        output_dir: The saved model (or adapter) folder, with its tokenizer.
        merged_dir: Base + LoRA adapter merged (`OUTPUT/merged`), else None.
        metrics: `train/*` metrics and, with held-out data, `eval_before/*` and
            `eval_after/*`.
        is_main_process: This process is the one that writes the summary and card.
    """

    output_dir: Path
    merged_dir: Path | None
    metrics: dict[str, float]
    is_main_process: bool


def train_and_save(
    trainer_class: Any,
    training: Any,
    model_args: Any,
    tokenizer: Any,
    datasets: tuple[Any, Any],
    *,
    resume: str | bool | None,
    merge: bool,
    history_metrics: Callable[[list[dict[str, Any]]], dict[str, float]] = training_metrics,
) -> TrainedModel:
    """Train a TRL trainer, evaluating before and after when there is held-out data; save it.

    Args:
        trainer_class: The TRL trainer (`DPOTrainer`, `SFTTrainer`); it loads the base
            model from `model_args` (LoRA with `--use_peft`).
        training: The trainer's config (`DPOConfig`, `SFTConfig`).
        model_args: A `trl.ModelConfig`.
        tokenizer: What `load_tokenizer` returned; saved next to the model.
        datasets: The training and held-out datasets (None: no evaluation).
        resume: What `resume_point` returned.
        merge: With LoRA, also save base + adapter merged in `OUTPUT/merged`.
        history_metrics: Turns the trainer's log history into `train/*` metrics.

    Returns:
        The saved folders, the metrics and whether this is the main process.
    """
    from trl import get_peft_config

    train_set, eval_set = datasets
    trainer = trainer_class(
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
    metrics.update(history_metrics(trainer.state.log_history))
    if eval_set is not None:
        metrics.update(_prefixed(trainer.evaluate(), "eval_after"))
    output = Path(training.output_dir)
    trainer.save_model(str(output))
    tokenizer.save_pretrained(output)
    main_process = bool(trainer.accelerator.is_main_process)
    merged = None
    if merge and model_args.use_peft and main_process:
        merged = merge_adapter(output, tokenizer)
    return TrainedModel(output, merged, metrics, main_process)


def merge_adapter(adapter: Path, tokenizer: Any) -> Path:
    """Save the base model with the LoRA adapter in `adapter` merged, in `adapter/merged`."""
    from peft import AutoPeftModelForCausalLM

    merged_dir = adapter / "merged"
    model = AutoPeftModelForCausalLM.from_pretrained(str(adapter))
    model.merge_and_unload().save_pretrained(merged_dir)
    tokenizer.save_pretrained(merged_dir)
    return merged_dir


def run_settings(training: Any, model_args: Any, keys: Iterable[str]) -> dict[str, Any]:
    """The named training settings plus LoRA's, as JSON-safe values for the summary."""
    settings = {key: getattr(training, key) for key in keys}
    settings["use_peft"] = model_args.use_peft
    if model_args.use_peft:
        settings.update(lora_r=model_args.lora_r, lora_alpha=model_args.lora_alpha)
    return json.loads(json.dumps(settings, default=str))


def write_summary(output: Path, summary: dict[str, Any], card: str) -> None:
    """Write `training_summary.json` and the model card, and print the metrics."""
    (output / "training_summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (output / "README.md").write_text(card)
    print(json.dumps({"output_dir": str(output), **summary["metrics"]}, indent=2))


def _prefixed(metrics: dict[str, Any], prefix: str) -> dict[str, float]:
    return {
        f"{prefix}/{key.removeprefix('eval_')}": float(value)
        for key, value in metrics.items()
        if isinstance(value, int | float)
    }
