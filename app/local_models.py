"""In-process chat models: a transformers checkpoint (`hf`) and vLLM (`vllm`).

Both are small LangChain `BaseChatModel`s so they sit behind any `LLMReasoner` role, e.g.
a DPO-trained switcher behind `compare` alone. `langchain-huggingface` is not used: it pins
`huggingface-hub<2`, which would downgrade the hub client transformers 5 needs, and its
pipeline wrapper adds nothing we need. Heavy imports (torch, transformers, vllm) happen on
the first call, not at import, to keep start-up fast.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field, PrivateAttr

__all__ = ["HFChatModel", "VLLMChatModel"]

_ROLE_NAMES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


class HFChatModel(BaseChatModel):
    """A local transformers causal-LM checkpoint folder as a chat model.

    The prompt is built with the tokenizer's chat template (a plain `role: text` layout
    when the tokenizer has none); generation samples with `temperature`/`top_p` when the
    temperature is above zero, else decodes greedily. Nothing is downloaded. The folder may
    hold a full model or a LoRA adapter (`adapter_config.json`, as `prefrag train dpo
    --use_peft` saves it): transformers then loads the base model the adapter names and
    applies the adapter (needs `peft`).
    """

    checkpoint: str
    temperature: float = 0.1
    top_p: float = 0.9
    max_new_tokens: int = 512
    device: str = Field(
        default="cpu", description="'cpu', 'cuda', 'cuda:1', 'mps', or 'auto' (cuda if present)."
    )
    dtype: str = Field(
        default="auto",
        description="'auto' (bfloat16 on a GPU that has it, else float32), 'float32', "
        "'bfloat16' or 'float16'.",
    )

    _model: Any = PrivateAttr(default=None)
    _tokenizer: Any = PrivateAttr(default=None)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "prefrag-hf"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"checkpoint": self.checkpoint, "temperature": self.temperature}

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        import torch

        model, tokenizer = self._load()
        chat = _chat_dicts(messages)
        if getattr(tokenizer, "chat_template", None):
            encoded = tokenizer.apply_chat_template(
                chat, add_generation_prompt=True, return_dict=True, return_tensors="pt"
            )
        else:
            prompt = "\n\n".join(f"{m['role']}: {m['content']}" for m in chat) + "\n\nassistant:"
            encoded = tokenizer(prompt, return_tensors="pt")
        encoded = {k: v.to(model.device) for k, v in encoded.items()}
        input_length = int(encoded["input_ids"].shape[-1])
        sampling = self.temperature > 0
        options: dict[str, Any] = {
            "max_new_tokens": int(kwargs.get("max_new_tokens", self.max_new_tokens)),
            "do_sample": sampling,
            "pad_token_id": tokenizer.pad_token_id
            if tokenizer.pad_token_id is not None
            else tokenizer.eos_token_id,
        }
        if sampling:
            options.update(temperature=self.temperature, top_p=self.top_p)
        with torch.no_grad():
            output = model.generate(**encoded, **options)
        new_tokens = output[0, input_length:]
        text = _cut_at_stop(tokenizer.decode(new_tokens, skip_special_tokens=True), stop)
        message = AIMessage(
            content=text,
            usage_metadata={
                "input_tokens": input_length,
                "output_tokens": int(new_tokens.shape[-1]),
                "total_tokens": input_length + int(new_tokens.shape[-1]),
            },
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._model is None:
                from transformers import AutoModelForCausalLM, AutoTokenizer

                path = str(Path(self.checkpoint).expanduser())
                _check_adapter(Path(path))
                device = _device(self.device)
                self._tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
                model: Any = AutoModelForCausalLM.from_pretrained(
                    path, local_files_only=True, dtype=_dtype(self.dtype, device)
                )
                model.to(device)
                self._model = model.eval()
        return self._model, self._tokenizer


class VLLMChatModel(BaseChatModel):
    """vLLM's in-process engine (`vllm.LLM`) as a chat model; needs the `vllm` extra.

    The engine is created on the first call; `prefrag.models.build_chat_model` checks that
    vllm is installed before building one.
    """

    model: str
    temperature: float = 0.1
    top_p: float = 0.9
    max_new_tokens: int = 512
    engine_kwargs: dict[str, Any] = Field(default_factory=dict)

    _llm: Any = PrivateAttr(default=None)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "prefrag-vllm"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model": self.model, "temperature": self.temperature}

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        import vllm

        llm = self._load()
        params = vllm.SamplingParams(
            temperature=self.temperature,
            top_p=self.top_p,
            max_tokens=int(kwargs.get("max_new_tokens", self.max_new_tokens)),
            stop=list(stop) if stop else None,
        )
        result = llm.chat(_chat_dicts(messages), params, use_tqdm=False)[0]
        completion = result.outputs[0]
        input_tokens = len(result.prompt_token_ids or [])
        output_tokens = len(completion.token_ids or [])
        message = AIMessage(
            content=completion.text,
            usage_metadata={
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "total_tokens": input_tokens + output_tokens,
            },
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _load(self) -> Any:
        with self._lock:
            if self._llm is None:
                import vllm

                self._llm = vllm.LLM(model=self.model, **self.engine_kwargs)
        return self._llm


def _device(name: str) -> str:
    """The torch device of `name` ("auto": the first GPU when there is one, else CPU)."""
    import torch

    if name != "auto":
        return name
    return "cuda" if torch.cuda.is_available() else "cpu"


def _dtype(name: str, device: str) -> Any:
    """The torch dtype of `name` on `device` ("auto": bfloat16 on a GPU that has it)."""
    import torch

    if name == "auto":
        gpu = device.startswith("cuda") and torch.cuda.is_bf16_supported()
        return torch.bfloat16 if gpu else torch.float32
    return getattr(torch, name)


def _check_adapter(folder: Path) -> None:
    """A LoRA adapter folder needs peft and its base model; say so in one sentence."""
    import importlib.util
    import json

    from prefrag.errors import ConfigurationError

    config = folder / "adapter_config.json"
    if not config.is_file():
        return
    if importlib.util.find_spec("peft") is None:
        raise ConfigurationError(
            f"{folder} is a LoRA adapter; loading it needs peft: pip install 'prefrag[train]'."
        )
    base = json.loads(config.read_text(encoding="utf-8")).get("base_model_name_or_path")
    looks_local = base and (base.startswith(("/", ".", "~")) or Path(base).is_absolute())
    if looks_local and not Path(base).expanduser().is_dir():
        raise ConfigurationError(
            f"The base model of the adapter {folder} ({base}) does not exist; merge the "
            "adapter (`prefrag train dpo --merge_adapter`) or restore its base."
        )


def _chat_dicts(messages: Sequence[BaseMessage]) -> list[dict[str, str]]:
    chat = []
    for message in messages:
        content = message.content
        if not isinstance(content, str):
            content = "".join(p if isinstance(p, str) else str(p.get("text", "")) for p in content)
        chat.append({"role": _ROLE_NAMES.get(message.type, "user"), "content": content})
    return chat


def _cut_at_stop(text: str, stop: Sequence[str] | None) -> str:
    """`text` up to the first stop sequence (transformers' generate does not apply them)."""
    end = len(text)
    for marker in stop or ():
        index = text.find(marker)
        if index != -1:
            end = min(end, index)
    return text[:end]
