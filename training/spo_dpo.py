"""DPO of the SPO planner (Omni-RAG §4.2.3, eqs. 3-4): the switcher's DPO job on plan pairs.

`prefrag train spo-dpo` is `prefrag train dpo` (`prefrag.training.dpo`: the same
dataclasses, TRL's `DPOTrainer`, pair checks, resume, metrics) with the SPO defaults:
learning rate 5e-6, three epochs and a LoRA adapter (`--use_peft false` for a full
fine-tune); beta 0.1 with the sigmoid loss (eq. 3) as the switcher. The base model is the
SFT planner (`spo-sft`'s `merged/` folder), which is also the reference model of eq. 4.

The data is the `dpo.jsonl` that `prefrag train spo-judge` writes: `{"prompt": [user: the
planning prompt], "chosen": [assistant: positive plan], "rejected": [assistant: negative
plan]}`. The output folder holds the adapter (or model), a model card for the planner
(`README.md`) and `training_summary.json`; it serves the `plan` role with
`PREFRAG_PLAN_MODEL=hf:FOLDER`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prefrag.errors import ConfigurationError
from prefrag.training.config import parse_config
from prefrag.training.dpo import PAPER_DEFAULTS, DPOResult, DPOScriptArguments, train_dpo
from prefrag.training.spo_sft import bf16_supported

__all__ = ["SPO_DPO_DEFAULTS", "main"]

PROG = "prefrag train spo-dpo"

# Omni-RAG §4.2.3 / issue 11: lr 5e-6, 3 epochs, LoRA; the rest as the switcher's DPO.
SPO_DPO_DEFAULTS: dict[str, Any] = {
    **PAPER_DEFAULTS,
    "learning_rate": 5e-6,
    "num_train_epochs": 3.0,
    "use_peft": True,
    "output_dir": "checkpoints/planner",
}


def main(argv: Sequence[str] | None = None) -> DPOResult:
    """`prefrag train spo-dpo`: DPO the SFT planner on positive vs. negative plans.

    Raises:
        ConfigurationError: The base model is a LoRA adapter without a merged model
            beside it (DPO needs the SFT planner as a whole model), or see `train_dpo`.
        IngestError: A pair is malformed (the message names the file and line).
    """
    from trl import DPOConfig, ModelConfig

    defaults = {**SPO_DPO_DEFAULTS, "bf16": bf16_supported()}
    script, training, model = parse_config(
        [DPOScriptArguments, DPOConfig, ModelConfig], argv, prog=PROG, defaults=defaults
    )
    if model.model_name_or_path:
        model.model_name_or_path = _whole_model(model.model_name_or_path)
    result = train_dpo(script, training, model)
    summary_file = result.output_dir / "training_summary.json"
    if summary_file.is_file():  # written by the main process only
        summary = json.loads(summary_file.read_text())
        (result.output_dir / "README.md").write_text(_model_card(summary, result.merged_dir))
    return result


def _whole_model(name: str) -> str:
    """The SFT planner as a whole model: an adapter folder resolves to its `merged/`."""
    folder = Path(name).expanduser()
    if not (folder / "adapter_config.json").is_file():
        return name
    merged = folder / "merged"
    if (merged / "config.json").is_file():
        return str(merged)
    raise ConfigurationError(
        f"{folder} is a LoRA adapter; pass the merged SFT planner instead "
        "(spo-sft writes it to OUTPUT/merged unless --merge_adapter false)."
    )


def _model_card(summary: dict[str, Any], merged: Path | None) -> str:
    metrics = summary["metrics"]
    rows = "\n".join(f"| {key} | {value:.4g} |" for key, value in sorted(metrics.items()))
    settings = "\n".join(f"| {key} | {value} |" for key, value in summary["settings"].items())
    kind = "LoRA adapter" if summary["settings"]["use_peft"] else "full fine-tune"
    held_out_from = f" from `{summary['eval_data']}`" if summary["eval_data"] else ""
    merged_line = f"\nThe merged model is in `{merged.name}/`.\n" if merged else ""
    return f"""# PrefRAG SPO planner (DPO)

The model behind PrefRAG's `plan` role (the `plan_sources` node): given the question and the
sources' descriptions and query formats, it writes `<source>query0 ; query1</source>` per
source (an empty tag skips a source). Trained with TRL's DPO ({kind}) on positive vs.
negative plans (Omni-RAG SPO §4.2.3) from the SFT planner `{summary["base_model"]}`, which
is also the reference model.
{merged_line}
Use it: `prefrag ask "..." --use-planning --reasoner llm --plan-model hf:<this folder>`
(the other roles keep their own models).

## Data

- Plan pairs: {summary["pairs"]} for training from `{summary["data"]}`.
- Held-out pairs: {summary["eval_pairs"]}{held_out_from}.

## Settings

| setting | value |
|---|---|
{settings}

## Metrics

Training metrics are the last logged values; `eval_before`/`eval_after` are measured on the
held-out pairs before and after training (reward accuracy: share of pairs whose implicit
reward prefers the positive plan).

| metric | value |
|---|---|
{rows}
"""


if __name__ == "__main__":
    main()
