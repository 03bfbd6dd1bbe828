"""RAG² evidence filter trainers: `filter-labels` (ΔPPL + correctness) and `filter`."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from filter_rows import filter_rows, write_rows
from typer.testing import CliRunner

from prefrag.cli import app
from prefrag.training.filter_labels import four_way_label

pytest.importorskip("transformers")
runner = CliRunner()


def test_four_way_rule() -> None:
    assert four_way_label(False, True, False) == ("helpful", "wrong→right")
    assert four_way_label(True, False, True) == ("not_helpful", "right→wrong")
    assert four_way_label(True, True, True) == ("helpful", "right→right")
    assert four_way_label(True, True, False) == (None, "right→right")
    assert four_way_label(False, False, True) == ("not_helpful", "wrong→wrong")
    assert four_way_label(False, False, False) == (None, "wrong→wrong")


def test_bad_rows_are_one_sentence_naming_the_line(tmp_path: Path) -> None:
    rows = filter_rows()[:2]
    del rows[1]["snippets"][0]["answer_with"]
    path = write_rows(tmp_path / "rows.jsonl", rows)
    result = runner.invoke(
        app,
        [
            *("train", "filter-labels", "--data", str(path), "--output", "x.jsonl"),
            *("--model_name_or_path", "unused"),
        ],
    )
    assert result.exit_code == 2
    assert "rows.jsonl:2" in result.output and "answer_with" in result.output


def test_rationale_perplexity_matches_the_models_own_loss(tiny_causal_lm: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prefrag.training.filter_labels import rationale_perplexity

    model = AutoModelForCausalLM.from_pretrained(tiny_causal_lm).eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_causal_lm)
    prompt, rationale = "Question: what activates clopidogrel?", "CYP2C19 activates it."
    ppl = rationale_perplexity(model, tokenizer, prompt, rationale)
    context = tokenizer.apply_chat_template(
        [{"role": "user", "content": prompt}], add_generation_prompt=True, return_dict=False
    )
    target = tokenizer(rationale, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([list(context) + target])
    labels = ids.clone()
    labels[0, : len(context)] = -100  # score only the rationale
    with torch.no_grad():
        loss = model(input_ids=ids, labels=labels).loss
    assert ppl == pytest.approx(math.exp(float(loss)), rel=1e-4)
    assert ppl > 1.0


@pytest.mark.slow
def test_labels_then_filter_end_to_end_on_the_tiny_model(
    tiny_causal_lm: Path, tmp_path: Path
) -> None:
    from langchain_core.documents import Document

    from prefrag.tools.evidence_filter import SnippetFilter, SnippetJudgement
    from prefrag.tools.trained_filter import TrainedSnippetFilter

    rows = write_rows(tmp_path / "rows.jsonl", filter_rows())
    labels = tmp_path / "labels.jsonl"
    made = runner.invoke(
        app,
        [
            *("train", "filter-labels", "--data", str(rows), "--output", str(labels)),
            *("--model_name_or_path", str(tiny_causal_lm)),
        ],
    )
    assert made.exit_code == 0, made.output
    labelled = [json.loads(line) for line in labels.read_text().splitlines()]
    summary = json.loads(labels.with_suffix(".summary.json").read_text())
    threshold = summary["delta_ppl_threshold"]
    assert summary["labelled"] + summary["discarded"] == sum(
        len(r["snippets"]) for r in filter_rows()
    )
    for row in labelled:
        assert row["delta_ppl"] == pytest.approx(row["ppl_without"] - row["ppl_with"])
        expected, _ = four_way_label(
            row["correct_without"], row["correct_with"], row["delta_ppl"] >= threshold
        )
        assert row["label"] == expected
    # A snippet that turns a wrong answer right is always helpful, whatever the perplexity.
    assert summary["rules"]["wrong→right"] == sum(r["rule"] == "wrong→right" for r in labelled)
    assert {r["label"] for r in labelled} == {"helpful", "not_helpful"}

    trained = runner.invoke(
        app,
        [
            *("train", "filter", "--data", str(labels), "--eval_fraction", "0.25"),
            *("--model_name_or_path", str(tiny_causal_lm), "--output_dir", str(tmp_path / "f")),
            *("--learning_rate", "3e-3", "--num_train_epochs", "25", "--seed", "0"),
            *("--per_device_train_batch_size", "8", "--disable_tqdm", "true"),
        ],
    )
    assert trained.exit_code == 0, trained.output
    card = json.loads((tmp_path / "f" / "training_summary.json").read_text())
    metrics = card["metrics"]
    assert metrics["train/accuracy"] >= 0.9  # the classifier fits its labels
    for key in ("eval/precision", "eval/recall", "eval/f1"):
        assert 0.0 <= metrics[key] <= 1.0
    print("held-out helpful precision/recall:", metrics["eval/precision"], metrics["eval/recall"])
    loaded = TrainedSnippetFilter.load(tmp_path / "f")
    assert isinstance(loaded, SnippetFilter)
    first = labelled[0]
    judgement = loaded.judge(first["question"], Document(page_content=first["snippet"]))
    assert isinstance(judgement, SnippetJudgement)
    assert 0.0 <= judgement.score <= 1.0
    assert judgement.helpful == (judgement.score >= 0.5)
    assert "P(helpful)" in judgement.reason


def test_a_folder_that_is_no_filter_is_a_configuration_error(tmp_path: Path) -> None:
    from prefrag.errors import ConfigurationError
    from prefrag.tools.trained_filter import TrainedSnippetFilter

    with pytest.raises(ConfigurationError, match="prefrag train filter"):
        TrainedSnippetFilter.load(tmp_path)
