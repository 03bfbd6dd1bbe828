"""SPO planner trainers on the tiny local model: `spo-sft` (TRL SFT) and `spo-dpo` (TRL DPO)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from switcher_pairs import demo_questions

from prefrag.errors import IngestError

pytest.importorskip("trl")
pytest.importorskip("peft")

SOURCES = "guidelines: drug interaction guidance; web: the open web"


def planning_prompt(question: str) -> str:
    return f"Sources: {SOURCES}\nQuestion: {question}\nPlan the queries per source."


def plan(question: str, *, local: bool) -> str:
    terms = " ".join(w.strip("?,.") for w in question.split()[-4:])
    return (
        f"<guidelines>{terms}</guidelines><web></web>"
        if local
        else f"<guidelines></guidelines><web>{terms}</web>"
    )


def sft_rows() -> list[dict]:
    return [
        {
            "messages": [
                {"role": "user", "content": planning_prompt(q["question"])},
                {"role": "assistant", "content": plan(q["question"], local=True)},
            ]
        }
        for q in demo_questions()
    ]


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_sft_rows_must_end_with_the_plan(tmp_path: Path) -> None:
    from prefrag.training.spo_sft import load_messages

    rows = sft_rows()[:2]
    rows[1]["messages"] = rows[1]["messages"][:1]
    with pytest.raises(IngestError, match=r"plans\.jsonl:2"):
        load_messages(write(tmp_path / "plans.jsonl", rows))
    converted = load_messages(write(tmp_path / "ok.jsonl", sft_rows()[:1]))
    assert converted[0]["completion"][0]["role"] == "assistant"
    assert [m["role"] for m in converted[0]["prompt"]] == ["user"]


def test_spo_defaults_follow_the_paper() -> None:
    from prefrag.training.dpo import parse_dpo_args
    from prefrag.training.spo_dpo import SPO_DPO_DEFAULTS

    _, training, model = parse_dpo_args([], defaults=SPO_DPO_DEFAULTS)
    assert (training.learning_rate, training.num_train_epochs) == (5e-6, 3)
    assert model.use_peft is True


@pytest.mark.slow
def test_spo_sft_makes_the_plans_more_likely(tiny_causal_lm: Path, tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prefrag.training.filter_labels import rationale_perplexity
    from prefrag.training.spo_sft import main

    rows = sft_rows()
    result = main(
        [
            *("--data", str(write(tmp_path / "plans.jsonl", rows))),
            *("--model_name_or_path", str(tiny_causal_lm)),
            *("--output_dir", str(tmp_path / "planner")),
            *(
                "--learning_rate",
                "2e-2",
                "--num_train_epochs",
                "8",
                "--lora_target_modules",
                "all-linear",
            ),
            *("--per_device_train_batch_size", "5", "--save_strategy", "no"),
            *("--gradient_checkpointing", "false", "--disable_tqdm", "true"),
        ]
    )
    assert (result.output_dir / "adapter_config.json").is_file()  # LoRA by default
    assert "SPO, SFT" in (result.output_dir / "README.md").read_text()
    tokenizer = AutoTokenizer.from_pretrained(tiny_causal_lm)
    question = rows[0]["messages"][0]["content"]
    target = rows[0]["messages"][1]["content"]
    before = rationale_perplexity(
        AutoModelForCausalLM.from_pretrained(tiny_causal_lm), tokenizer, question, target
    )
    after = rationale_perplexity(
        AutoModelForCausalLM.from_pretrained(result.output_dir), tokenizer, question, target
    )
    assert after < 0.5 * before


@pytest.mark.slow
def test_spo_dpo_prefers_local_plans_on_held_out_questions(
    tiny_causal_lm: Path, tmp_path: Path
) -> None:
    from prefrag.training.spo_dpo import main

    pairs = [
        {
            "prompt": [{"role": "user", "content": planning_prompt(q["question"])}],
            "chosen": [{"role": "assistant", "content": plan(q["question"], local=True)}],
            "rejected": [{"role": "assistant", "content": plan(q["question"], local=False)}],
        }
        for q in demo_questions()
    ]
    result = main(
        [
            *("--data", str(write(tmp_path / "train.jsonl", pairs[:18]))),
            *("--eval_data", str(write(tmp_path / "held_out.jsonl", pairs[18:]))),
            *("--model_name_or_path", str(tiny_causal_lm)),
            *("--output_dir", str(tmp_path / "planner-dpo")),
            *("--learning_rate", "5e-3", "--num_train_epochs", "3"),
            *("--per_device_train_batch_size", "6", "--gradient_accumulation_steps", "1"),
            *("--save_strategy", "no", "--gradient_checkpointing", "false"),
            *("--max_length", "512", "--disable_tqdm", "true"),
        ]
    )
    assert result.metrics["eval_after/rewards/accuracies"] > 0.5
    assert result.metrics["eval_after/rewards/margins"] > 0.0
    card = (result.output_dir / "README.md").read_text()
    assert card.startswith("# PrefRAG source planner (SPO, DPO)")
