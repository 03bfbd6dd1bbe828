"""Which trained switcher the extractive reasoner's `compare` delegates to.

`PREFRAG_SWITCHER` (or `prefrag eval --switcher`) names it: a small switcher's folder or
`.npz` file (`prefrag train switcher-small`), or a chat model with a backend prefix, e.g.
`hf:./checkpoints/switcher` (a DPO-trained checkpoint) or `openai:NAME` (a model served by
`vllm serve` at `OPENAI_BASE_URL`), asked with the paper's compare prompt. The other roles
stay extractive, so a switcher is evaluated without any other model.
"""

from __future__ import annotations

from pathlib import Path

from prefrag.config import Settings
from prefrag.reasoners.small_switcher import Switcher, load_switcher

_MODEL_PREFIXES = ("hf:", "openai:", "vllm:")


def build_switcher(spec: str, settings: Settings) -> Switcher:
    """The switcher `spec` names (see the module docstring).

    Raises:
        ConfigurationError: No small switcher at the path, or the model cannot be built.
    """
    spec = spec.strip()
    if spec.startswith(_MODEL_PREFIXES):
        from prefrag.models import build_chat_model
        from prefrag.reasoners.llm import LLMReasoner

        model = build_chat_model("compare", settings, model_name=spec)
        return LLMReasoner(
            {"default": model},
            deadline=settings.role_deadline,
            max_doc_chars=settings.prompt_doc_chars,
        )
    return load_switcher(Path(spec))
