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

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prefrag.errors import ConfigurationError
from prefrag.training.dpo import PAPER_DEFAULTS, DPOResult, parse_dpo_args, train_dpo

__all__ = ["SPO_DPO_DEFAULTS", "main"]

PROG = "prefrag train spo-dpo"

# Omni-RAG §4.2.3 / issue 11: lr 5e-6, 3 epochs, LoRA; the rest as the switcher's DPO.
SPO_DPO_DEFAULTS: dict[str, Any] = {
    **PAPER_DEFAULTS,
    "learning_rate": 5e-6,
    "num_train_epochs": 3.0,
    "max_length": 4096,
    "use_peft": True,
    "output_dir": "checkpoints/spo-planner-dpo",
}
# The model card's title and opening paragraph (the rest is the DPO job's: data, settings,
# metrics).
CARD = (
    "PrefRAG SPO planner (DPO)",
    """The model behind PrefRAG's `plan` role (the `plan_sources` node): given the question and
the sources' descriptions and query formats, it writes `<source>query0 ; query1</source>` per
source (an empty tag skips a source). Preference-trained (Omni-RAG SPO §4.2.3) on plans whose
queries retrieved supporting documents (chosen) against plans whose queries did not
(rejected), starting from the SFT planner, which is also the reference model.

Use it: `OPENAI_BASE_URL=<url> PREFRAG_MODEL=<model> prefrag ask "..." --use-planning
--reasoner llm --plan-model hf:<this folder>` (the LLM reasoner needs a chat model for the
other roles; the extractive reasoner plans without a model and ignores `--plan-model`).
""",
)


def main(argv: Sequence[str] | None = None) -> DPOResult:
    """`prefrag train spo-dpo`: DPO the SFT planner on positive vs. negative plans.

    Raises:
        ConfigurationError: The base model is a LoRA adapter without a merged model
            beside it (DPO needs the SFT planner as a whole model), or see `train_dpo`.
        IngestError: A pair is malformed (the message names the file and line).
    """
    script, training, model = parse_dpo_args(argv, prog=PROG, defaults=SPO_DPO_DEFAULTS)
    if model.model_name_or_path:
        model.model_name_or_path = _whole_model(model.model_name_or_path)
    return train_dpo(script, training, model, card=CARD)


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


if __name__ == "__main__":
    main()
