"""A tiny causal language model built locally, for tests and benchmarks of the trainers.

`build_tiny_causal_lm` trains a byte-level BPE tokenizer with `tokenizers` on text shipped
with the package (the prompts, the demo corpus and its questions), adds a ChatML chat
template, and saves it beside a randomly initialised two-layer Qwen2-style model. The
folder loads with `AutoTokenizer`/`AutoModelForCausalLM` offline, so every trainer (DPO,
filter labels, SFT) and the `hf` backend can be exercised end to end without a download.
It knows nothing: it exists to show that training moves it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

__all__ = ["CHAT_TEMPLATE", "build_tiny_causal_lm", "local_text"]

# ChatML, as Qwen2 models use; the assistant turn ends with the end-of-sequence token.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
_SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
_VOCAB_SIZE = 1024


def local_text() -> Iterator[str]:
    """Text the tokenizer learns from: the packaged prompts, demo corpus and questions."""
    for entry in sorted(resources.files("prefrag.prompts").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".txt"):
            yield entry.read_text(encoding="utf-8")
    for name in ("medicines.jsonl", "questions.jsonl"):
        for line in (resources.files("prefrag.demo") / name).read_text("utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                yield " ".join(
                    str(row[k]) for k in ("title", "text", "question", "answer") if k in row
                )
    yield '{"analysis": "The new information adds the missing detail.", "status": true}'
    yield '{"analysis": "The new information repeats what is known.", "status": false}'


def build_tiny_causal_lm(folder: Path, *, seed: int = 0) -> Path:
    """Write a random two-layer Qwen2-style causal LM and a locally trained tokenizer.

    The tokenizer is a byte-level BPE (1,024 entries, so any text encodes) trained on
    `local_text()`, with `<|im_end|>` as end of sequence, `<|endoftext|>` as padding and a
    ChatML chat template. The model (hidden size 64, two layers, tied embeddings) is
    initialised from `seed`. Both are saved with `save_pretrained` into `folder`.

    Args:
        folder: Where to write the checkpoint (created if needed).
        seed: Seed of the weight initialisation (the tokenizer is deterministic).

    Returns:
        `folder`, ready for `AutoModelForCausalLM.from_pretrained(folder)`.
    """
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (
        GenerationConfig,
        PreTrainedTokenizerFast,
        Qwen2Config,
        Qwen2ForCausalLM,
    )

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=_VOCAB_SIZE,
        special_tokens=_SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(local_text(), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        bos_token=None,
        unk_token=None,
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(folder)

    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id
    )
    model.save_pretrained(folder)
    return folder
