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
    assert json.loads(pair["chosen"][0]["content"])["status"] in ("True", "False")


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
    # Before training the policy is the reference: every implicit reward is zero.
    assert metrics["eval_before/rewards/accuracies"] == 0.0
    assert metrics["eval_after/rewards/accuracies"] > 0.5  # above chance on unseen questions
    assert metrics["eval_after/rewards/margins"] > 0.0
    assert "train/rewards/accuracies" in metrics and "train/rewards/margins" in metrics
    folder = trained_switcher.output_dir
    card = (folder / "README.md").read_text()
    assert "42 keep, 14 switch" in card and "| beta | 0.1 |" in card
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
        settings = Settings(
            _env_file=None,
            openai_base_url="http://127.0.0.1:9/v1",
            model="unused-for-compare",
            hf_compare_checkpoint=folder,
        )
        switcher = build_reasoner(settings, reasoner="llm").models["compare"]
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
