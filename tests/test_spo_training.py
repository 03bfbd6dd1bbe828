"""SPO planner training end to end on a tiny local model: explore → judge → SFT → DPO."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cpu_training import QUICK_CPU_RUN
from graph_helpers import ListSource, doc
from typer.testing import CliRunner

from prefrag.cli import app
from prefrag.errors import ConfigurationError, IngestError
from prefrag.training import spo_explore, spo_judge

pytest.importorskip("trl")
pytest.importorskip("peft")
runner = CliRunner()
REPO = Path(__file__).resolve().parents[1]

# (question, the word whose queries find the gold page, the gold page)
QUESTIONS = [
    ("What are the treatments for gout?", "treatments", "Gout is treated with colchicine."),
    ("Which drugs lower blood pressure?", "drugs", "ACE inhibitors lower blood pressure."),
    ("What causes iron deficiency anaemia?", "causes", "Blood loss causes iron deficiency."),
    ("How is asthma diagnosed in children?", "diagnosed", "Spirometry confirms asthma."),
    ("What are the side effects of metformin?", "effects", "Metformin upsets the stomach."),
    ("Which vaccines do adults need?", "vaccines", "Adults need tetanus boosters."),
]
# Questions no training job sees: the DPO test's held-out pairs (eight, so its accuracy
# is more than a coin's two outcomes).
UNSEEN = [
    ("How long does a sprained ankle take to heal?", "sprained", "Sprains heal in weeks."),
    ("Which vitamins help wounds close?", "vitamins", "Vitamin C supports wound healing."),
    ("What triggers migraine attacks?", "triggers", "Missed meals trigger migraines."),
    ("When should a fever be seen by a doctor?", "fever", "A fever above 39 C needs a doctor."),
    ("How is kidney stone pain relieved?", "kidney", "Kidney stone pain eases with NSAIDs."),
    ("What prevents travel sickness?", "sickness", "Antihistamines prevent travel sickness."),
    ("Who should avoid grapefruit juice?", "grapefruit", "Statin users avoid grapefruit."),
    ("What lowers the risk of stroke?", "stroke", "Lower blood pressure means fewer strokes."),
]
ALL_QUESTIONS = QUESTIONS + UNSEEN
FAST = [
    "--per_device_train_batch_size",
    "6",  # every row in one step: each logged loss is the loss over all six plans
    "--logging_steps",
    "1",
    *QUICK_CPU_RUN,
]


def _sources() -> list[ListSource]:
    answers = {
        key: [doc(f"gold-{i}", text, "book")] for i, (_, key, text) in enumerate(ALL_QUESTIONS)
    }
    book = ListSource("book", answers=answers, default=[doc("b-x", "An unrelated page.", "book")])
    book.description = "Medical textbooks on diseases and their treatment."
    news = ListSource("news", default=[doc("n-x", "Hospital opening hours.", "news")])
    news.description = "Local health news."
    return [book, news]


@pytest.fixture(scope="module")
def spo_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """spo-explore (extractive expert) and spo-judge (gold judge) over all the questions.

    `sft-train.jsonl` and `dpo-train.jsonl` hold the training questions' rows only;
    `dpo-held-out.jsonl` the unseen questions' pairs.
    """
    folder = tmp_path_factory.mktemp("spo-data")
    data = folder / "train.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "question": q, "answer": text, "gold_ids": [f"gold-{i}"]})
            + "\n"
            for i, (q, _, text) in enumerate(ALL_QUESTIONS)
        )
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(spo_explore, "_sources", lambda names: _sources())
        spo_explore.main(["--data", str(data), "--output", str(folder / "explored.jsonl")])
    summary = spo_judge.main(
        ["--data", str(folder / "explored.jsonl"), "--output_dir", str(folder)]
    )
    assert summary["sft_rows"] == summary["dpo_rows"] == len(ALL_QUESTIONS)
    for name, rows in [("sft", slice(len(QUESTIONS))), ("dpo", slice(len(QUESTIONS)))]:
        lines = (folder / f"{name}.jsonl").read_text().splitlines(keepends=True)
        (folder / f"{name}-train.jsonl").write_text("".join(lines[rows]))
    pairs = (folder / "dpo.jsonl").read_text().splitlines(keepends=True)
    (folder / "dpo-held-out.jsonl").write_text("".join(pairs[len(QUESTIONS) :]))
    return folder


@pytest.fixture(scope="module")
def sft_planner(spo_data: Path, tiny_causal_lm: Path):
    """spo-sft on the positive plans: LoRA on every linear layer, merged, twelve steps."""
    from prefrag.training.spo_sft import main

    return main(
        [
            "--model_name_or_path",
            str(tiny_causal_lm),
            "--data",
            str(spo_data / "sft-train.jsonl"),
            "--output_dir",
            str(spo_data / "planner-sft"),
            "--lora_target_modules",
            "all-linear",
            # Its random embeddings are tiny: the final norm must grow for any confidence.
            "--lora_modules_to_save",
            "norm",
            # The tiny random model needs a far larger step than the paper's 2.5e-4.
            "--learning_rate",
            "2e-2",
            "--num_train_epochs",
            "12",
            *FAST,
        ]
    )


def test_paper_defaults_and_the_shipped_configs() -> None:
    from prefrag.training import spo_sft

    _, training, model = spo_sft._parse(["--data", "sft.jsonl"])
    assert training.learning_rate == 2.5e-4 and training.num_train_epochs == 5
    assert model.use_peft and training.bf16 is False  # no GPU here
    script, training, model = spo_sft._parse(
        ["--config", str(REPO / "training/configs/spo_sft_lora.yaml"), "--num_train_epochs", "2"]
    )
    assert script.data == "spo-data/sft.jsonl" and model.use_peft and model.lora_r == 16
    assert training.learning_rate == 2.5e-4 and training.num_train_epochs == 2


def test_spo_dpo_defaults_are_the_switcher_job_with_spo_settings(monkeypatch) -> None:
    from prefrag.training import spo_dpo

    seen: dict[str, Any] = {}

    def capture(script, training, model, card=None):
        seen.update(script=script, training=training, model=model, card=card)
        raise SystemExit(0)

    monkeypatch.setattr(spo_dpo, "train_dpo", capture)
    with pytest.raises(SystemExit):
        spo_dpo.main(["--data", "dpo.jsonl", "--model_name_or_path", "base"])
    training, model = seen["training"], seen["model"]
    assert training.learning_rate == 5e-6 and training.num_train_epochs == 3
    assert training.beta == 0.1 and training.loss_type == ["sigmoid"]
    assert model.use_peft and training.output_dir == "checkpoints/spo-planner-dpo"
    assert seen["card"][0] == "PrefRAG SPO planner (DPO)"
    with pytest.raises(SystemExit):
        spo_dpo.main(
            ["--config", str(REPO / "training/configs/spo_dpo_lora.yaml"), "--beta", "0.2"]
        )
    assert seen["script"].data == "spo-data/dpo.jsonl" and seen["training"].beta == 0.2
    assert seen["model"].model_name_or_path == "checkpoints/spo-planner/merged"


def test_train_help_lists_both_planner_jobs() -> None:
    result = runner.invoke(app, ["train", "--help"])
    assert result.exit_code == 0
    assert "spo-sft" in result.output and "spo-dpo" in result.output
    result = runner.invoke(app, ["train", "spo-sft", "--help"])
    assert result.exit_code == 0
    for flag in ("--data", "--merge_adapter", "--learning_rate", "--use_peft", "--lora_r"):
        assert flag in result.output


def test_a_bad_sft_file_is_one_sentence_naming_the_line(tmp_path: Path) -> None:
    from prefrag.training.spo_sft import load_conversations

    good = {
        "messages": [
            {"role": "user", "content": "Plan for: gout?"},
            {"role": "assistant", "content": "<book>gout</book>"},
        ]
    }
    bad = {"messages": [good["messages"][0], {"role": "assistant", "content": " "}]}
    path = tmp_path / "sft.jsonl"
    path.write_text(json.dumps(good) + "\n\n" + json.dumps(bad) + "\n")
    with pytest.raises(IngestError, match=r"sft\.jsonl:3 .*non-empty plan"):
        load_conversations(path)
    (row,) = load_conversations(path, limit=1)
    assert row["prompt"] == good["messages"][:1] and row["completion"] == good["messages"][1:]
    with pytest.raises(ConfigurationError, match="does not exist"):
        load_conversations(tmp_path / "missing.jsonl")
    result = runner.invoke(
        app, ["train", "spo-sft", "--model_name_or_path", "x", "--data", str(path)]
    )
    assert result.exit_code == 2
    assert "sft.jsonl:3" in result.output and "Traceback" not in result.output
    pairs = tmp_path / "dpo.jsonl"
    pairs.write_text(json.dumps({"prompt": good["messages"][:1], "chosen": [], "rejected": []}))
    result = runner.invoke(
        app, ["train", "spo-dpo", "--model_name_or_path", "x", "--data", str(pairs)]
    )
    assert result.exit_code == 2
    assert "dpo.jsonl:1 is not a preference pair" in " ".join(result.output.split())


def test_a_plan_that_would_be_cut_off_is_refused(spo_data: Path, tiny_causal_lm: Path) -> None:
    from prefrag.training.spo_sft import main

    with pytest.raises(ConfigurationError, match=r"All 6 SFT rows are longer than --max_length 64"):
        main(
            [
                "--model_name_or_path",
                str(tiny_causal_lm),
                "--data",
                str(spo_data / "sft-train.jsonl"),
                "--max_length",
                "64",
            ]
        )


@pytest.mark.slow
def test_sft_lowers_the_plan_loss_and_writes_a_model_card(sft_planner, spo_data: Path) -> None:
    metrics = sft_planner.metrics
    assert metrics["train/loss"] < metrics["train/first_loss"] - 0.3
    folder = sft_planner.output_dir
    assert (folder / "adapter_config.json").is_file()
    assert (sft_planner.merged_dir / "model.safetensors").is_file()
    card = (folder / "README.md").read_text()
    assert "SPO planner (SFT)" in card and "Plans: 6 for training" in card
    assert "sources: book, news" in card and "| learning_rate | 0.02 |" in card
    assert "train/first_loss" in card
    summary = json.loads((folder / "training_summary.json").read_text())
    assert summary["settings"]["use_peft"] is True


def _plan_loss(planner, row: dict) -> float:
    """Mean negative log-likelihood of a row's plan given its prompt, under `planner`."""
    import torch

    model, tokenizer = planner._load()
    messages = row["messages"]
    prompt = tokenizer.apply_chat_template(messages[:1], add_generation_prompt=True, tokenize=False)
    full = tokenizer.apply_chat_template(messages, tokenize=False)
    assert full.startswith(prompt)
    prompt_length = len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
    ids = torch.tensor([tokenizer(full, add_special_tokens=False)["input_ids"]])
    labels = ids.clone()
    labels[0, :prompt_length] = -100
    with torch.no_grad():
        return float(model(input_ids=ids, labels=labels).loss)


@pytest.mark.slow
def test_the_sft_planner_serves_the_plan_role(
    sft_planner, spo_data: Path, tiny_causal_lm: Path
) -> None:
    from prefrag.config import Settings
    from prefrag.local_models import HFChatModel
    from prefrag.reasoners.factory import build_reasoner
    from prefrag.reasoners.plans import SourceBrief

    row = json.loads((spo_data / "sft.jsonl").read_text().splitlines()[0])
    judged = json.loads((spo_data / "judged.jsonl").read_text().splitlines()[0])
    sources = [SourceBrief(**s) for s in judged["sources"]]
    losses = {}
    for name, folder in [("base", tiny_causal_lm), ("trained", sft_planner.merged_dir)]:
        settings = Settings(  # type: ignore[call-arg]  # _env_file: a pydantic-settings option
            _env_file=None,
            openai_base_url="http://127.0.0.1:9/v1",
            model="unused-for-plan",
            plan_model=f"hf:{folder}",
            temperature=0.0,
        )
        reasoner = build_reasoner(settings, reasoner="llm")
        planner = reasoner.models["plan"]  # type: ignore[attr-defined]  # an LLMReasoner
        assert isinstance(planner, HFChatModel) and planner.checkpoint == str(folder)
        losses[name] = _plan_loss(planner, row)
        if name == "trained":
            planner.max_new_tokens = 32  # a few seconds on CPU; the tiny planner knows little
            plan = reasoner.plan(judged["question"], sources)
    # The checkpoint behind the plan role is the trained one: it prefers its training plans.
    assert losses["trained"] < losses["base"] - 0.2, losses
    # Whatever the tiny planner writes, the run gets a usable plan and the trace says how.
    assert plan.usage.output_tokens > 0 and set(plan.queries) <= {"book", "news"}
    if plan.fallback:  # no tag even after the repair retry: the question goes to every source
        assert plan.notes
        assert all(plan.query_texts(s.name) == [judged["question"]] for s in sources)
    elif not plan.strict:
        assert plan.notes  # the tolerant pass says what it repaired


@pytest.mark.slow
def test_spo_dpo_aligns_the_sft_planner_on_plan_pairs(sft_planner, spo_data: Path) -> None:
    from prefrag.training.spo_dpo import main

    result = main(
        [
            "--model_name_or_path",
            str(sft_planner.output_dir),  # the adapter folder resolves to its merged model
            "--data",
            str(spo_data / "dpo-train.jsonl"),
            "--eval_data",
            str(spo_data / "dpo-held-out.jsonl"),
            "--output_dir",
            str(spo_data / "planner"),
            "--learning_rate",
            "5e-3",
            "--num_train_epochs",
            "2",
            "--max_length",
            "2048",
            *FAST,
        ]
    )
    metrics = result.metrics
    print({k: round(v, 4) for k, v in metrics.items() if k.startswith("eval_")})
    # Before: the policy is the reference, every pair a tie (not a loss, not a win).
    assert metrics["eval_before/pairs"] == len(UNSEEN) == 8
    assert metrics["eval_before/pairs/tied"] == 1.0
    # Six training pairs move the planner towards the chosen plans of unseen questions:
    # at least 7 of 8 won, the fewest whose 95% Wilson interval lies above a coin's 0.5
    # (7/8: 0.53-0.98). Measured: 8 of 8, median margin 0.105.
    assert round(metrics["eval_after/pairs/won"] * len(UNSEEN)) >= 7
    assert metrics["eval_after/pairs/margin_median"] > 0.0
    card = (result.output_dir / "README.md").read_text()
    assert "SPO planner (DPO)" in card and "Pairs: 6 for training" in card
    assert "switcher" not in card
    summary = json.loads((result.output_dir / "training_summary.json").read_text())
    assert summary["base_model"] == str(sft_planner.merged_dir.resolve())


def test_spo_dpo_refuses_an_adapter_without_its_merged_model(tmp_path: Path) -> None:
    from prefrag.training.spo_dpo import main

    (tmp_path / "adapter_config.json").write_text("{}")
    with pytest.raises(ConfigurationError, match="is a LoRA adapter"):
        main(["--model_name_or_path", str(tmp_path), "--data", "dpo.jsonl"])


def test_resuming_without_a_checkpoint_fails_before_any_loading(tmp_path: Path) -> None:
    from prefrag.training.spo_sft import main

    with pytest.raises(ConfigurationError, match="No checkpoint to resume from"):
        main(
            [
                *("--model_name_or_path", "not-loaded", "--data", "not-read.jsonl"),
                *("--output_dir", str(tmp_path / "planner")),
                *("--resume_from_checkpoint", "last"),
            ]
        )
