"""The locally built tiny causal LM that the trainers' tests train."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformers")


def test_tiny_model_loads_offline_with_a_chat_template(tiny_causal_lm: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_causal_lm, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(tiny_causal_lm, local_files_only=True)
    assert model.config.num_hidden_layers == 2
    chat = [{"role": "user", "content": "Which liver enzyme activates clopidogrel?"}]
    text = tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
    assert isinstance(text, str) and text.endswith("<|im_start|>assistant\n")
    encoded = tokenizer(text)["input_ids"]
    assert tokenizer.decode(encoded) == text  # byte-level BPE: nothing is lost
    # Trained on the project's own text: its words are single tokens or close to it.
    assert len(tokenizer("clopidogrel warfarin")["input_ids"]) <= 6
    assert model.generation_config.eos_token_id == tokenizer.convert_tokens_to_ids("<|im_end|>")


def test_tiny_model_weights_follow_the_seed(tmp_path: Path, tiny_causal_lm: Path) -> None:
    from safetensors.numpy import load_file

    from prefrag.training.tiny_model import build_tiny_causal_lm

    other = build_tiny_causal_lm(tmp_path / "other", seed=1)
    first = load_file(tiny_causal_lm / "model.safetensors")
    second = load_file(other / "model.safetensors")
    name = "model.layers.0.mlp.up_proj.weight"
    assert first[name].shape == second[name].shape
    assert not (first[name] == second[name]).all()
    assert (tiny_causal_lm / "tokenizer.json").read_text() == (other / "tokenizer.json").read_text()
