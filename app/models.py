"""Chat models per role, built from settings: `openai`, `hf` or `vllm`.

A model name may carry a backend prefix, so one string (e.g. a Studio context field) says
everything: `openai:gpt-4o-mini`, `hf:/path/to/switcher`, `vllm:Qwen/Qwen2.5-7B-Instruct`.
Without a prefix the backend comes from `Settings.backend`. Ollama-style names such as
`llama3:8b` are left alone (only the three backend names count as prefixes).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Literal, cast

from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr

from prefrag.config import Settings
from prefrag.errors import ConfigurationError
from prefrag.reasoners.roles import models_of

__all__ = [
    "ModelBackend",
    "build_chat_model",
    "endpoint_of",
    "make_chat_model",
    "resolve_model",
]

ModelBackend = Literal["openai", "hf", "vllm"]
_BACKENDS: tuple[str, ...] = ("openai", "hf", "vllm")


def resolve_model(
    role: str, settings: Settings, *, model_name: str | None = None
) -> tuple[ModelBackend, str]:
    """The backend and model name (or checkpoint folder) that serve `role`.

    Order: `model_name` (with an optional backend prefix); for `compare`,
    `settings.hf_compare_checkpoint`; `settings.<role>_model`; `settings.model`. Without a
    prefix the backend is `settings.backend`; when that is `extractive` (a model was asked
    for anyway) an existing folder means `hf` and anything else `openai`.

    Raises:
        ConfigurationError: No model is configured for the role.
    """
    name = model_name.strip() if model_name else None
    if not name and role == "compare" and settings.hf_compare_checkpoint is not None:
        return "hf", str(settings.hf_compare_checkpoint)
    if not name:
        name = models_of(settings).get(role) or settings.model
    if not name:
        raise ConfigurationError(
            f"No chat model is configured for the '{role}' role; set PREFRAG_MODEL "
            f"(or PREFRAG_{role.upper()}_MODEL) or pass a model name."
        )
    prefix, _, rest = name.partition(":")
    if prefix in _BACKENDS and rest:
        return cast(ModelBackend, prefix), rest
    if settings.backend in _BACKENDS:
        return cast(ModelBackend, settings.backend), name
    return ("hf" if Path(name).expanduser().is_dir() else "openai"), name


def build_chat_model(
    role: str,
    settings: Settings,
    *,
    model_name: str | None = None,
    endpoint: str | None = None,
) -> BaseChatModel:
    """A LangChain chat model for `role` (think, compare, answer, reflect), from settings.

    `openai` is any OpenAI-compatible server (`vllm serve`, llama.cpp, Ollama, OpenAI) at
    `settings.openai_base_url`, with the key "EMPTY" when none is set, as vLLM expects;
    `hf` loads a local transformers checkpoint folder; `vllm` runs vLLM in process (the
    `vllm` extra). Temperature, top-p, timeout and retries come from settings.

    Args:
        role: The reasoner role the model serves.
        settings: Process settings.
        model_name: Overrides the settings' model for this role (backend prefix allowed).
        endpoint: Whose server (`endpoint_of`) an `openai` model talks to; default `role`.

    Raises:
        ConfigurationError: No model is configured, the checkpoint folder is missing, or
            the backend's package is not installed.
    """
    backend, name = resolve_model(role, settings, model_name=model_name)
    return make_chat_model(backend, name, settings, endpoint=endpoint or role)


def endpoint_of(name: str | None, settings: Settings) -> tuple[str | None, str | None]:
    """(base URL, API key) of the OpenAI-compatible server for endpoint `name`.

    `PREFRAG_<NAME>_BASE_URL` / `_API_KEY` when set (a role, or "teacher", which falls back
    to the compare role's server), else `OPENAI_BASE_URL` / `OPENAI_API_KEY`. A role given
    its own URL but no key of its own uses no key ("EMPTY"), never another server's key; an
    endpoint sharing another's server sends its own key if it has one, else that server's.
    """
    own_key = getattr(settings, f"{name}_api_key", None) if name else None
    chain = [name, "compare"] if name == "teacher" else [name]
    for each in chain:
        url = getattr(settings, f"{each}_base_url", None) if each else None
        if url:
            shared_key = None if each == name else getattr(settings, f"{each}_api_key", None)
            return url, own_key or shared_key
    return settings.openai_base_url, own_key or settings.openai_api_key


def make_chat_model(
    backend: ModelBackend, name: str, settings: Settings, *, endpoint: str | None = None
) -> BaseChatModel:
    """A chat model of `backend` for `name` (a model name or checkpoint folder).

    `endpoint` (a role name or "teacher") picks that role's own server for `openai`
    (`endpoint_of`); None uses `OPENAI_BASE_URL`.
    """
    if backend == "openai":
        from langchain_openai import ChatOpenAI

        base_url, api_key = endpoint_of(endpoint, settings)
        # The client sends the reply limit as `max_completion_tokens`, which some servers
        # ignore (llama-cpp-python 0.3.x: an unbounded reply, till the context is full); a
        # self-hosted server also gets it as the older `max_tokens`.
        legacy_limit = (
            {"max_tokens": settings.max_tokens} if base_url and settings.max_tokens else None
        )
        return ChatOpenAI(
            model=name,
            base_url=base_url,
            # vLLM and most local servers accept any key; the client insists on one.
            api_key=SecretStr(api_key or "EMPTY"),
            temperature=settings.temperature,
            top_p=settings.top_p,
            timeout=settings.request_timeout,
            max_retries=settings.max_retries,
            max_completion_tokens=settings.max_tokens,
            extra_body=legacy_limit,
        )
    if backend == "hf":
        from prefrag.local_models import HFChatModel

        if not Path(name).expanduser().is_dir():
            raise ConfigurationError(
                f"The hf checkpoint folder {name} does not exist; point the model setting "
                "at a local transformers checkpoint folder."
            )
        return HFChatModel(
            checkpoint=str(Path(name).expanduser()),
            temperature=settings.temperature,
            top_p=settings.top_p,
            device=settings.hf_device,
            dtype=settings.hf_dtype,
            max_new_tokens=settings.max_tokens or 512,
        )
    from prefrag.local_models import VLLMChatModel

    if importlib.util.find_spec("vllm") is None:
        raise ConfigurationError(
            "The 'vllm' backend needs the vllm package; install it with "
            "pip install 'prefrag[vllm]' or use the 'openai' backend with `vllm serve`."
        )
    return VLLMChatModel(model=name, temperature=settings.temperature, top_p=settings.top_p)
