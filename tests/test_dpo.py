"""`prefrag train dpo`: the switcher's DPO job on a tiny locally built model (no download)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cpu_training import QUICK_CPU_RUN
from switcher_pairs import split_by_question, switcher_pairs, write_pairs
from typer.testing import CliRunner

from prefrag.cli import app
from prefrag.errors import ConfigurationError, IngestError

pytest.importorskip("trl")
pytest.importorskip("peft")
runner = CliRunner()
REPO = Path(__file__).resolve().parents[1]


def test_paper_defaults_and_the_shipped_config() -> None:
    from prefrag.training.dpo import parse_dpo_args

    _, training, model = parse_dpo_args(["--data", "pairs.jsonl"])
    assert training.learning_rate == 5e-7
    assert training.beta == 0.1
    assert training.loss_type == ["sigmoid"]
    assert training.num_train_epochs == 1
    assert training.max_length == 8192
    assert training.bf16 is False  # no GPU here: full precision on CPU
    assert not model.use_peft
    script, training, model = parse_dpo_args(
        ["--config", str(REPO / "training/configs/switcher_dpo_lora.yaml"), "--beta", "0.2"]
    )
    assert script.data == "pairs.jsonl"
    assert model.use_peft and model.lora_r == 16
    assert training.beta == 0.2  # the command line overrides the file


def test_the_shipped_full_fine_tuning_recipe_runs_under_zero3() -> None:
    import yaml

    from prefrag.training.dpo import parse_dpo_args

    script, training, model = parse_dpo_args(
        ["--config", str(REPO / "training/configs/switcher_dpo_full.yaml")]
    )
    assert not model.use_peft and training.max_length == 8192 and training.learning_rate == 5e-7
    assert training.gradient_checkpointing and script.drop_too_long is False
    zero3 = yaml.safe_load((REPO / "training/configs/zero3.yaml").read_text())
    assert zero3["distributed_type"] == "DEEPSPEED"
    assert zero3["deepspeed_config"]["zero_stage"] == 3
    assert zero3["mixed_precision"] == "bf16"


def test_dpo_help_lists_trl_and_lora_settings() -> None:
    result = runner.invoke(app, ["train", "dpo", "--help"])
    assert result.exit_code == 0
    for flag in ("--data", "--eval_data", "--merge_adapter", "--beta", "--use_peft", "--lora_r"):
        assert flag in result.output


def test_malformed_pairs_are_one_sentence_naming_the_line(tmp_path: Path) -> None:
    from prefrag.training.dpo import load_pairs

    good = switcher_pairs(keep_per_question=1)[0]
    bad = {**good, "chosen": [{"role": "user", "content": "x"}]}
    path = write_pairs(tmp_path / "pairs.jsonl", [good, bad])
    with pytest.raises(IngestError, match=r"pairs\.jsonl:2 .*one assistant message"):
        load_pairs(path)
    pairs, labels = load_pairs(path, limit=1)
    assert len(pairs) == 1 and set(pairs[0]) == {"prompt", "chosen", "rejected"}
    assert labels == {"keep": 1}
    with pytest.raises(ConfigurationError, match="does not exist"):
        load_pairs(tmp_path / "missing.jsonl")
    result = runner.invoke(app, ["train", "dpo", "--model_name_or_path", "x", "--data", str(path)])
    assert result.exit_code == 2
    assert "pairs.jsonl:2" in result.output


def test_pairs_prompt_is_what_compare_sends() -> None:
    from prefrag.prompts import render_prompt

    pair = switcher_pairs(keep_per_question=1)[0]
    assert [m["role"] for m in pair["prompt"]] == ["user"]
    text = pair["prompt"][0]["content"]
    head = render_prompt("compare", question="Q", existed_info="E", observation="O")
    assert text.startswith(head.split("Original question:")[0])
    # The target is the object the runtime JSON schema asks for: a boolean status.
    assert json.loads(pair["chosen"][0]["content"])["status"] in (True, False)


def test_a_pair_longer_than_max_length_is_named_before_any_training(
    tiny_causal_lm: Path, tmp_path: Path
) -> None:
    from prefrag.training.dpo import main

    pairs = switcher_pairs(keep_per_question=1)[:4]
    long = {**pairs[2], "prompt": [{"role": "user", "content": "word " * 3000}]}
    data = write_pairs(tmp_path / "pairs.jsonl", [*pairs[:2], long, pairs[3]])
    common = ["--model_name_or_path", str(tiny_causal_lm), "--data", str(data)]
    question = long["meta"]["question_id"]
    with pytest.raises(ConfigurationError, match=rf"Pair 3 of .*\(question {question}\) has \d+"):
        main([*common, "--max_length", "2048", "--output_dir", str(tmp_path / "o")])
    # Asked to leave long pairs out, a file where every pair is too long is one sentence.
    with pytest.raises(ConfigurationError, match=r"All 4 pairs are longer than --max_length 16"):
        main([*common, "--max_length", "16", "--drop_too_long", "true"])
    result = runner.invoke(app, ["train", "dpo", *common, "--max_length", "2048"])
    assert result.exit_code == 2 and "Pair 3 of" in result.output


def test_quantized_loading_is_refused_in_one_sentence_where_it_cannot_run(
    tiny_causal_lm: Path, tmp_path: Path
) -> None:
    import torch

    from prefrag.training.dpo import main

    data = write_pairs(tmp_path / "p.jsonl", switcher_pairs(keep_per_question=1)[:2])
    common = ["--model_name_or_path", str(tiny_causal_lm), "--data", str(data)]
    with pytest.raises(ConfigurationError, match=r"QLoRA.*add --use_peft"):
        main([*common, "--load_in_4bit", "true"])
    if not torch.cuda.is_available():
        with pytest.raises(ConfigurationError, match=r"--load_in_8bit .*needs a CUDA GPU"):
            main([*common, "--load_in_8bit", "true", "--use_peft"])


def test_quantization_flags_reach_the_trainer_as_a_bitsandbytes_config(monkeypatch) -> None:
    import importlib.util

    import torch
    from trl import ModelConfig

    from prefrag.training.hf_jobs import quantization_config

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: object() if name == "bitsandbytes" else real_find_spec(name, *a),
    )
    config = quantization_config(
        ModelConfig(model_name_or_path="m", use_peft=True, load_in_4bit=True)
    )
    assert config.load_in_4bit and config.bnb_4bit_quant_type == "nf4"
    assert quantization_config(ModelConfig(model_name_or_path="m", use_peft=True)) is None


def test_held_out_share_is_of_questions_never_splitting_one() -> None:
    from datasets import Dataset

    from prefrag.training.hf_jobs import split_held_out

    groups = [f"q{i // 4}" for i in range(40)]  # ten questions, four pairs each
    rows = Dataset.from_list([{"group": g, "i": i} for i, g in enumerate(groups)])
    train, held = split_held_out(rows, None, 0.3, seed=1, noun="pairs", groups=groups)
    assert len(train) + len(held) == 40
    assert not set(train["group"]) & set(held["group"])
    assert len(set(held["group"])) == 3 and len(held) == 12


def test_ties_are_counted_apart_from_wins() -> None:
    from prefrag.training.hf_jobs import pair_outcomes

    untouched = pair_outcomes([0.0] * 5)
    assert untouched["pairs/tied"] == 1.0 and untouched["pairs/won"] == 0.0
    barely = pair_outcomes([3e-5, 2e-5, 0.5, -0.2])
    assert barely["pairs/won"] == 0.25 and barely["pairs/tied"] == 0.5
    assert barely["pairs/lost"] == 0.25
    assert barely["pairs/margin_mean"] == pytest.approx(0.0750125)


def test_a_run_is_finished_the_way_trl_scripts_finish_it(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from prefrag.training.hf_jobs import train_and_save

    calls = []

    class FakeTrainer:
        def __init__(self, **kwargs):
            assert "quantization_config" not in kwargs
            self.state = SimpleNamespace(log_history=[{"loss": 0.7}])
            self.accelerator = SimpleNamespace(is_main_process=True)
            self.model = SimpleNamespace(training=False)

        def evaluate(self):
            return {"eval_loss": 0.69}

        def train(self, resume_from_checkpoint=None):
            calls.append("train")

        def save_model(self, path):
            calls.append("save")

        def end(self):
            calls.append("end")

    training = SimpleNamespace(output_dir=str(tmp_path), per_device_eval_batch_size=8)
    model_args = SimpleNamespace(
        model_name_or_path="m", use_peft=False, load_in_4bit=False, load_in_8bit=False
    )
    tokenizer = SimpleNamespace(save_pretrained=lambda path: None)
    run = train_and_save(
        FakeTrainer, training, model_args, tokenizer, (["row"], ["held"]), resume=None, merge=False
    )
    assert calls == ["train", "save", "end"]
    assert run.metrics["eval_before/loss"] == 0.69 and run.metrics["train/loss"] == 0.7
    assert training.per_device_eval_batch_size == 1  # one held-out pair per margin


@pytest.fixture(scope="module")
def trained_switcher(tiny_causal_lm: Path, tmp_path_factory: pytest.TempPathFactory):
    """LoRA DPO on 14 questions' pairs (3 keep : 1 switch), 5 questions held out."""
    from prefrag.training.dpo import main

    folder = tmp_path_factory.mktemp("dpo")
    train, held_out = split_by_question(switcher_pairs(), held_out=5)
    result = main(
        [
            "--model_name_or_path",
            str(tiny_causal_lm),
            "--data",
            str(write_pairs(folder / "train.jsonl", train)),
            "--eval_data",
            str(write_pairs(folder / "held_out.jsonl", held_out)),
            "--output_dir",
            str(folder / "switcher"),
            "--use_peft",
            "--merge_adapter",
            # The tiny random model needs a far larger step than the paper's 5e-7.
            "--learning_rate",
            "5e-3",
            "--num_train_epochs",
            "2",
            "--per_device_train_batch_size",
            "4",
            "--max_length",
            "2048",
            "--logging_steps",
            "2",
            *QUICK_CPU_RUN,
        ]
    )
    return result


@pytest.mark.slow
def test_dpo_raises_held_out_reward_accuracy_and_writes_a_model_card(trained_switcher) -> None:
    metrics = trained_switcher.metrics
    print({k: round(v, 4) for k, v in metrics.items() if k.startswith("eval_")})
    # Before training the policy is the reference: every implicit reward is zero, a tie
    # (which TRL's reward accuracy counts as lost).
    assert metrics["eval_before/rewards/accuracies"] == 0.0
    assert metrics["eval_before/pairs/tied"] == 1.0
    assert metrics["eval_before/pairs"] == 20  # five held-out questions, four pairs each
    assert metrics["eval_after/pairs/won"] > 0.5  # above chance on unseen questions
    assert metrics["eval_after/pairs/margin_mean"] > 0.0
    assert "train/rewards/accuracies" in metrics and "train/rewards/margins" in metrics
    folder = trained_switcher.output_dir
    card = (folder / "README.md").read_text()
    assert "42 keep, 14 switch" in card and "| beta | 0.1 |" in card
    assert "0 longer than `max_length` left out" in card and "pairs/tied" in card
    assert "eval_after/rewards/accuracies" in card
    summary = json.loads((folder / "training_summary.json").read_text())
    assert summary["settings"]["use_peft"] is True
    assert (folder / "adapter_config.json").is_file()
    assert (trained_switcher.merged_dir / "model.safetensors").is_file()


@pytest.mark.slow
def test_adapter_and_merged_checkpoints_load_as_the_compare_role(
    trained_switcher, tiny_causal_lm: Path
) -> None:
    import torch

    from prefrag.config import Settings
    from prefrag.reasoners.factory import build_reasoner

    logits = {}
    for name, folder in [
        ("adapter", trained_switcher.output_dir),
        ("merged", trained_switcher.merged_dir),
        ("base", tiny_causal_lm),
    ]:
        settings = Settings(  # type: ignore[call-arg]  # _env_file: a pydantic-settings option
            _env_file=None,
            openai_base_url="http://127.0.0.1:9/v1",
            model="unused-for-compare",
            hf_compare_checkpoint=folder,
        )
        switcher = build_reasoner(settings, reasoner="llm").models["compare"]  # type: ignore[attr-defined]
        model, tokenizer = switcher._load()
        ids = tokenizer("Does the new information help?", return_tensors="pt")
        with torch.no_grad():
            logits[name] = model(**ids).logits
    assert torch.allclose(logits["adapter"], logits["merged"], atol=1e-4)
    assert not torch.allclose(logits["adapter"], logits["base"], atol=1e-3)


@pytest.mark.slow
def test_graph_answers_with_the_trained_switcher_behind_compare(trained_switcher) -> None:
    from graph_helpers import ListSource, doc
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from prefrag import build_graph
    from prefrag.graphs.context import Context
    from prefrag.local_models import HFChatModel
    from prefrag.reasoners.llm import LLMReasoner
    from prefrag.sources.base import SourceRegistry

    switcher = HFChatModel(
        checkpoint=str(trained_switcher.output_dir), max_new_tokens=24, temperature=0.0
    )
    models = {
        "think": FakeListChatModel(
            responses=[
                "Thought: I need both founding years.\nAction: Search_Engine\n"
                "Action Input: Grouplogic establishment year",
                "Thought: Now Inbios.\nAction: Search_Engine\nAction Input: Inbios establishment",
                "Thought: I now know the final answer.\nFinal Answer: Grouplogic",
            ]
        ),
        "compare": switcher,
        "answer": FakeListChatModel(responses=["Thought: 1988 < 1996.\nFinal Answer: Grouplogic"]),
        "reflect": FakeListChatModel(
            responses=["Self-Evaluation: CORRECT\nExplanation: Supported.\nImprovement: None"]
        ),
        "plan": FakeListChatModel(responses=["<local></local>"]),  # planning is off
        # A first question on its thread is never condensed, so this model is never asked.
        "condense": FakeListChatModel(responses=["Standalone question: unused"]),
    }
    local = ListSource(
        "local",
        answers={
            "grouplogic": [doc("g", "GroupLogic, Inc., founded in 1988, is a software company.")],
            "inbios": [doc("i", "InBios International, Inc. was founded in 1996 in Seattle.")],
        },
    )
    web = ListSource("web", "web", default=[doc("w", "InBios was founded in 1996.", "web", "web")])
    graph = build_graph(
        reasoner=LLMReasoner(models, structured=False), sources=SourceRegistry([local, web])
    )
    result = graph.invoke(
        {"question": "Which one was established first, Grouplogic or Inbios?"}, context=Context()
    )
    assert result["answer"] == "Grouplogic"
    assert result["model_calls"]["compare"] >= 1
    judged = [step for step in result["route"] if step["verdict"] is not None]
    assert judged, "the second retrieval was judged by the trained switcher"
    assert switcher._model is not None and switcher._model._hf_peft_config_loaded


def test_adapter_whose_base_is_gone_is_a_configuration_error(tmp_path: Path) -> None:
    from prefrag.local_models import HFChatModel

    adapter = tmp_path / "switcher"
    adapter.mkdir()
    base = tmp_path / "deleted-base"
    (adapter / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": str(base)}))
    with pytest.raises(ConfigurationError, match="deleted-base"):
        HFChatModel(checkpoint=str(adapter))._load()


@pytest.mark.slow
def test_a_stopped_run_resumes_from_its_last_checkpoint(
    tiny_causal_lm: Path, tmp_path: Path
) -> None:
    from prefrag.training.dpo import main

    data = write_pairs(tmp_path / "pairs.jsonl", switcher_pairs(keep_per_question=1)[:4])
    common = [
        *("--model_name_or_path", str(tiny_causal_lm), "--data", str(data)),
        *("--output_dir", str(tmp_path / "run"), "--per_device_train_batch_size", "1"),
        *("--gradient_accumulation_steps", "1", "--save_strategy", "steps", "--save_steps", "1"),
        *("--gradient_checkpointing", "false", "--disable_tqdm", "true"),
    ]
    main([*common, "--max_steps", "2"])
    assert (tmp_path / "run" / "checkpoint-2").is_dir()
    resumed = main([*common, "--max_steps", "3", "--resume_from_checkpoint", "last"])
    assert resumed.metrics["train/step"] == 3
    state = json.loads((tmp_path / "run" / "checkpoint-3" / "trainer_state.json").read_text())
    assert state["global_step"] == 3
    with pytest.raises(ConfigurationError, match="No checkpoint"):
        main([*common, "--output_dir", str(tmp_path / "empty"), "--resume_from_checkpoint", "last"])
