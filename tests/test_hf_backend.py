"""The `hf` backend on a tiny randomly initialised causal LM built in the test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefrag.config import Settings
from prefrag.documents import make_document
from prefrag.errors import ConfigurationError
from prefrag.models import build_chat_model
from prefrag.reasoners.base import CompareVerdict
from prefrag.reasoners.factory import build_reasoner

CHAT_TEMPLATE = (
    "{% for m in messages %}<s>{{ m['role'] }}\n{{ m['content'] }}</s>\n{% endfor %}"
    "{% if add_generation_prompt %}<s>assistant\n{% endif %}"
)


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory) -> Path:
    torch = pytest.importorskip("torch")
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-switcher")
    # A word-level vocabulary keeps the Table 20 prompt short (unknown words -> <unk>).
    words = 'analysis status True False the new information adds a name { } : , " \n'.split(" ")
    vocab = {w: i for i, w in enumerate(["<unk>", "<pad>", "<s>", "</s>", *dict.fromkeys(words)])}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token="<unk>",
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(folder)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
    )
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder


def test_hf_checkpoint_behind_compare_returns_a_verdict(tiny_checkpoint):
    settings = Settings(
        _env_file=None,
        openai_base_url="http://127.0.0.1:9/v1",
        model="unused-for-compare",
        hf_compare_checkpoint=tiny_checkpoint,
    )
    reasoner = build_reasoner(settings, reasoner="llm")
    switcher = reasoner.models["compare"]
    assert type(switcher).__name__ == "HFChatModel"
    assert type(reasoner.models["think"]).__name__ == "ChatOpenAI"
    switcher.max_new_tokens = 8  # random weights: keep generation short
    held = [make_document("Sorensen introduced pH.", id="a", source="demo", title="pH")]
    new = [make_document("Olsen assisted Sorensen.", id="b", source="demo", title="Olsen")]
    verdict = reasoner.compare("Who assisted Sorensen?", held, new)
    assert isinstance(verdict, CompareVerdict)
    # Random weights rarely write a verdict: then the documented fallback keeps local.
    assert verdict.status is True or not verdict.fallback
    assert 1 <= verdict.usage.calls <= 2
    assert verdict.usage.input_tokens > 100  # the Table 20 prompt went through the template


def test_hf_model_stops_at_stop_sequences_and_counts_tokens(tiny_checkpoint):
    settings = Settings(_env_file=None, temperature=0.0)
    model = build_chat_model("compare", settings, model_name=f"hf:{tiny_checkpoint}")
    model.max_new_tokens = 8
    reply = model.invoke("status?", stop=["\n"])
    assert "\n" not in reply.content
    assert reply.usage_metadata["output_tokens"] <= 8
    assert reply.usage_metadata["input_tokens"] > 0


def test_missing_checkpoint_is_a_configuration_error(tmp_path):
    settings = Settings(_env_file=None, hf_compare_checkpoint=tmp_path / "nowhere")
    with pytest.raises(ConfigurationError, match="nowhere"):
        build_chat_model("compare", settings)


def test_vllm_backend_without_vllm_says_how_to_install():
    pytest.importorskip("transformers")
    import importlib.util

    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed")
    with pytest.raises(ConfigurationError, match="prefrag\\[vllm\\]"):
        build_chat_model("think", Settings(_env_file=None), model_name="vllm:some/model")


def test_eval_puts_the_hf_compare_checkpoint_behind_the_extractive_compare(
    tiny_checkpoint, tmp_path
):
    from switcher_fakes import two_hop_sources, write_dataset

    from prefrag.eval.runner import EvalConfig, run_eval
    from prefrag.reasoners.llm import LLMReasoner

    settings = Settings(
        _env_file=None, home=tmp_path / "home", hf_compare_checkpoint=tiny_checkpoint
    )
    reasoner = build_reasoner(settings, reasoner="extractive")
    assert isinstance(reasoner.switcher, LLMReasoner)
    reasoner.switcher.models["compare"].max_new_tokens = 8
    config = EvalConfig(
        dataset=str(write_dataset(tmp_path / "d.jsonl", 2)),
        methods=["prefrag"],
        out=str(tmp_path / "run"),
        concurrency=1,
        context={"judge_first_retrieval": True, "max_reflections": 0},
    )
    summary = run_eval(
        config, settings=settings, reasoner=reasoner, sources=two_hop_sources(2), progress=False
    )
    entry = summary["prefrag"]
    assert entry["errors"] == 0
    assert entry["model_calls_mean"]["compare"] >= 1  # the checkpoint judged every step
    assert "think" not in entry["model_calls_mean"] or entry["model_calls_mean"]["think"] == 0
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["settings"]["hf_compare_checkpoint"] == str(tiny_checkpoint)
