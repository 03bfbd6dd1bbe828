"""The `hf` backend on the tiny randomly initialised causal LM built locally (`tiny_causal_lm`)."""

from __future__ import annotations

import json

import pytest

from prefrag.config import Settings
from prefrag.documents import make_document
from prefrag.errors import ConfigurationError
from prefrag.models import build_chat_model
from prefrag.reasoners.base import CompareVerdict
from prefrag.reasoners.factory import build_reasoner


def test_hf_checkpoint_behind_compare_returns_a_verdict(tiny_causal_lm):
    settings = Settings(
        _env_file=None,
        openai_base_url="http://127.0.0.1:9/v1",
        model="unused-for-compare",
        hf_compare_checkpoint=tiny_causal_lm,
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


def test_hf_model_stops_at_stop_sequences_and_counts_tokens(tiny_causal_lm):
    settings = Settings(_env_file=None, temperature=0.0)
    model = build_chat_model("compare", settings, model_name=f"hf:{tiny_causal_lm}")
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
    tiny_causal_lm, tmp_path
):
    from switcher_fakes import two_hop_sources, write_dataset

    from prefrag.eval.runner import EvalConfig, run_eval
    from prefrag.reasoners.llm import LLMReasoner

    settings = Settings(
        _env_file=None, home=tmp_path / "home", hf_compare_checkpoint=tiny_causal_lm
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
    assert saved["settings"]["hf_compare_checkpoint"] == str(tiny_causal_lm)
