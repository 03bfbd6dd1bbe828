"""SPO planner preference training (Omni-RAG §4): DPO on positive vs negative source plans.

`prefrag train spo-dpo --data plan_pairs.jsonl --model_name_or_path PLANNER [overrides]`
is `prefrag train dpo` with the planner's settings: learning rate 5e-6, three epochs, and a
LoRA adapter by default (`--use_peft false` for a full fine-tune), saved under
`checkpoints/spo-planner-dpo`. The pairs are TRL's conversational preference rows: the
planning prompt as `prompt`, a plan whose queries retrieved supporting documents as
`chosen`, one whose queries did not as `rejected` (from `spo-explore` and `spo-judge`);
start from the `spo-sft` model. Every other option is the DPO job's
(`prefrag train spo-dpo --help`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prefrag.training.dpo import PAPER_DEFAULTS, DPOResult, parse_dpo_args, train_dpo

__all__ = ["SPO_DPO_DEFAULTS", "main"]

SPO_DPO_DEFAULTS: dict[str, Any] = {
    **PAPER_DEFAULTS,
    "learning_rate": 5e-6,
    "num_train_epochs": 3.0,
    "max_length": 4096,
    "use_peft": True,
    "output_dir": "checkpoints/spo-planner-dpo",
}
CARD = (
    "PrefRAG source planner (SPO, DPO)",
    """The model behind PrefRAG's `plan` role: given the question and the sources with their
descriptions and query formats, it writes one `<name>q0 ; q1</name>` tag per source (0-3
queries each). Preference-trained on plans whose queries retrieved supporting evidence
(chosen) against plans whose queries did not (rejected).
""",
)


def main(argv: Sequence[str] | None = None) -> DPOResult:
    """`prefrag train spo-dpo`: DPO of the source planner on plan pairs."""
    script, training, model = parse_dpo_args(
        argv, prog="prefrag train spo-dpo", defaults=SPO_DPO_DEFAULTS
    )
    return train_dpo(script, training, model, card=CARD)


if __name__ == "__main__":
    main()
