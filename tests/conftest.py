"""Test-wide setup: offline model loading and a throwaway data directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGGRAPH_CLI_NO_ANALYTICS", "1")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Every test sees its own PREFRAG_HOME, never the user's ~/.prefrag."""
    from prefrag.config import get_settings

    home = tmp_path_factory.mktemp("prefrag-home")
    monkeypatch.setenv("PREFRAG_HOME", str(home))
    get_settings.cache_clear()
    yield home
    get_settings.cache_clear()


@pytest.fixture
def hand_weighted_confidence(monkeypatch: pytest.MonkeyPatch):
    """The hand-weighted answer gate (PREFRAG_CALIBRATED_CONFIDENCE=false; the fitted one is
    the default), for a test of a mechanism of that gate or an answer the fitted gate
    withholds (docs/answers.md says which)."""
    from prefrag.config import get_settings

    monkeypatch.setenv("PREFRAG_CALIBRATED_CONFIDENCE", "false")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture
def default_confidence(monkeypatch: pytest.MonkeyPatch):
    """The user's settings: no PREFRAG_CALIBRATED_CONFIDENCE of their own (the fitted gate)."""
    from prefrag.config import get_settings

    monkeypatch.delenv("PREFRAG_CALIBRATED_CONFIDENCE", raising=False)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The benchmark data folder beside the repository; skip when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


@pytest.fixture(scope="session")
def hotpot_slice(shared_data: Path):
    """The first HotpotQA-350 items and their paragraphs written as an indexable JSONL."""
    import json

    from prefrag.dataset_sources import corpus_rows
    from prefrag.datasets import load_hotpotqa

    def make(n: int, folder: Path) -> tuple[list, Path]:
        items = load_hotpotqa(shared_data / "hotpotqa" / "hotpotqa_dev_350.jsonl").items[:n]
        corpus = folder / "hotpot.jsonl"
        corpus.write_text("\n".join(json.dumps(r) for r in corpus_rows(items)) + "\n")
        return items, corpus

    return make


@pytest.fixture(scope="session")
def tiny_causal_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random two-layer causal LM with a locally trained tokenizer, built once per session."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from prefrag.training.tiny_model import build_tiny_causal_lm

    return build_tiny_causal_lm(tmp_path_factory.mktemp("tiny-lm") / "model", seed=0)
