"""Process settings, read once from the environment and `.env`.

This is the only module that reads the environment. Per-run settings (models per role,
top-k, iteration caps, preferred source, tool nodes) live in the graph's `Context`.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from prefrag.reasoners.roles import MODEL_HELP, declare_endpoint_fields, require_model_fields

Backend = Literal["extractive", "openai", "hf", "vllm"]


class Settings(BaseSettings):
    """Every process-wide setting of PrefRAG, with its default.

    Environment variables use the `PREFRAG_` prefix (e.g. `PREFRAG_HOME`), except the
    Qdrant and OpenAI-compatible connection settings, which keep their usual names.
    """

    model_config = SettingsConfigDict(
        env_prefix="PREFRAG_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    home: Path = Field(
        default=Path("~/.prefrag"), description="Data directory holding every index and cache."
    )
    qdrant_url: str | None = Field(
        default=None,
        validation_alias="QDRANT_URL",
        description="Qdrant server or cluster URL; unset means embedded on-disk mode.",
    )
    qdrant_api_key: str | None = Field(default=None, validation_alias="QDRANT_API_KEY")
    embedding_model: str = Field(
        default="bundled:all-MiniLM-L6-v2",
        description="'bundled:all-MiniLM-L6-v2' or a local sentence-transformers folder.",
    )
    embedding_batch_size: int = Field(
        default=4,
        gt=0,
        description="Texts per embedding batch; small batches keep numpy's attention in cache "
        "(measured: 4 is ~25% faster than 16 and 30% faster than 32).",
    )
    max_question_chars: int = Field(
        default=2000,
        gt=0,
        description="Longest question accepted, in characters (CLI, API and Studio); a longer "
        "one is refused in one sentence instead of holding a worker.",
    )
    embedding_runtime: Literal["auto", "onnxruntime", "numpy"] = Field(
        default="auto",
        description="What computes the MiniLM vectors: 'onnxruntime' (the faster, chosen by "
        "'auto' when installed) or the numpy forward pass; both give the same vectors.",
    )
    embedding_precision: Literal["fp32", "int8"] = Field(
        default="fp32",
        description="Arithmetic of the ONNX Runtime embedder for new sources: 'fp32', or 'int8' "
        "(weight products in 8-bit integers: 1.5x less CPU, same MedQuAD retrieval; "
        "docs/scale.md). A source keeps the precision it was built with for its adds and "
        "queries.",
    )
    chunk_size: int = Field(
        default=254,
        description="Chunk size for new sources in word pieces of the embedder's tokenizer "
        "(at most its 256-piece window less [CLS] and [SEP]).",
    )
    chunk_overlap: int = Field(
        default=32, description="Word pieces shared by consecutive chunks of a document."
    )
    hnsw_min_chunks: int = Field(
        default=100_000,
        ge=0,
        description="A local source of at least this many chunks is searched through an HNSW "
        "index (Qdrant Edge, in process) instead of exactly; see docs/scale.md.",
    )
    hnsw_ef: int = Field(
        default=128,
        gt=0,
        description="Candidates an HNSW search keeps (higher: better recall, slower).",
    )

    backend: Backend = Field(
        default="extractive", description="Reasoner backend when no per-role model is set."
    )
    openai_base_url: str | None = Field(default=None, validation_alias="OPENAI_BASE_URL")
    openai_api_key: str | None = Field(default=None, validation_alias="OPENAI_API_KEY")
    model: str | None = Field(default=None, description="Default chat model name for every role.")
    # `PREFRAG_<ROLE>_MODEL`: one chat model per reasoner role (prefrag.reasoners.roles).
    think_model: str | None = Field(default=None, description=MODEL_HELP["think"])
    compare_model: str | None = Field(default=None, description=MODEL_HELP["compare"])
    answer_model: str | None = Field(default=None, description=MODEL_HELP["answer"])
    reflect_model: str | None = Field(default=None, description=MODEL_HELP["reflect"])
    plan_model: str | None = Field(default=None, description=MODEL_HELP["plan"])
    condense_model: str | None = Field(default=None, description=MODEL_HELP["condense"])
    # `PREFRAG_<ROLE>_BASE_URL` / `PREFRAG_<ROLE>_API_KEY` (and `PREFRAG_TEACHER_...`): an
    # OpenAI-compatible server per role, e.g. the switcher on its own `vllm serve`.
    declare_endpoint_fields(
        locals(),
        lambda name, part: Field(
            default=None,
            description=f"OpenAI-compatible {part.replace('_', ' ')} for the '{name}' role; "
            f"unset uses {'OPENAI_BASE_URL' if part == 'base_url' else 'OPENAI_API_KEY'}"
            + (" (the teacher: the compare role's first)." if name == "teacher" else "."),
        ),
    )
    hf_compare_checkpoint: Path | None = Field(
        default=None, description="Local transformers checkpoint for the switcher (`hf`)."
    )
    hf_device: str = Field(
        default="cpu",
        description="Device of local transformers checkpoints (`hf` backend): 'cpu', 'cuda', "
        "'cuda:1', 'mps', or 'auto' (the GPU when there is one).",
    )
    hf_dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        default="auto",
        description="Weights' dtype of local checkpoints: 'auto' is bfloat16 on a GPU that "
        "supports it, else float32.",
    )
    switcher: str | None = Field(
        default=None,
        description="A trained switcher that replaces the extractive reasoner's heuristic "
        "`compare`: a small switcher's folder (`prefrag train switcher-small`) or a model "
        "with a backend prefix (`hf:PATH`, `openai:NAME`); unset keeps the heuristic.",
    )
    evidence_filter: Path | None = Field(
        default=None,
        description="Folder of a trained snippet filter for the filter_evidence node "
        "(`prefrag train filter`); unset uses the embedding-relevance filter.",
    )
    temperature: float = 0.1
    top_p: float = 0.9
    max_tokens: int | None = Field(
        default=None,
        gt=0,
        description="Most tokens a model may write per reply; unset: the server's default "
        "(512 for `hf` checkpoints). A reply cut here is read if it can be, else repaired.",
    )
    request_timeout: float = Field(
        default=30.0, description="Seconds one request to a model endpoint may take."
    )
    max_retries: int = Field(default=1, description="Client retries of a failed request.")
    prompt_doc_chars: int = Field(
        default=2000,
        gt=0,
        description="Characters of each retrieved document shown to a model (longer text is "
        "cut): bounds prompt size and what a hostile document can inject.",
    )
    role_deadline: float = Field(
        default=60.0,
        gt=0,
        description="Seconds one role call (think, compare, ...) may take in all: requests, "
        "client retries and the repair retry. A hanging endpoint fails after this.",
    )

    web_enabled: bool = Field(default=True, description="Allow the DuckDuckGo web source.")
    web_backend: str = Field(default="auto", description="ddgs backend(s), e.g. 'duckduckgo'.")
    web_region: str = "wt-wt"
    web_timeout: float = 10.0
    web_proxy: str | None = Field(
        default=None,
        description="HTTP(S) or SOCKS proxy for web search, e.g. 'socks5://127.0.0.1:9050'.",
    )
    web_retries: int = 2
    web_cache_ttl_hours: float = 24.0 * 7
    authority_table: Path | None = Field(
        default=None, description="YAML domain-authority table; unset uses the bundled one."
    )
    include_demo: bool = Field(
        default=False,
        description="Keep the bundled demo corpus in the default sources (and the combined "
        "`local`) after you have indexed a source of your own; off, it is searched only when "
        "a run names it (`--source demo`).",
    )
    calibrated_confidence: bool = Field(
        default=True,
        description="Offline reasoner: decide answer or abstain by the confidence fitted on the "
        "tuning questions (prefrag/data/confidence_model.json); off, by the hand-weighted one: "
        "more answers, more of them confidently wrong (docs/answers.md).",
    )
    sources_file: Path | None = Field(
        default=None,
        description="YAML source registry (names, descriptions, query formats, kinds, "
        "authority, stores); unset uses every indexed source.",
    )
    shared_data: Path = Field(
        default=Path("../shared/data"), description="Benchmark data folder for eval and tests."
    )

    @property
    def home_dir(self) -> Path:
        """The data directory, expanded."""
        return self.home.expanduser()

    @property
    def sources_dir(self) -> Path:
        """Where local source indexes live."""
        return self.home_dir / "sources"

    @property
    def cache_dir(self) -> Path:
        """Where caches (web results) live."""
        return self.home_dir / "cache"

    @property
    def checkpoint_db(self) -> Path:
        """SQLite database of CLI run checkpoints."""
        return self.home_dir / "checkpoints.sqlite"


require_model_fields(Settings.model_fields, "Settings")


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process settings, read once.

    Raises:
        ConfigurationError: A setting in the environment or `.env` is invalid; the message
            names the variable, the bad value and what it accepts.
    """
    from pydantic import ValidationError

    from prefrag.errors import ConfigurationError

    try:
        return Settings()
    except ValidationError as error:
        raise ConfigurationError(_describe_invalid(error)) from None


def _describe_invalid(error: Any) -> str:
    """One sentence per invalid setting: `PREFRAG_BACKEND='bogus'`: what it should be."""
    problems = []
    for issue in error.errors():
        name = str(issue["loc"][0]) if issue.get("loc") else "?"
        field = Settings.model_fields.get(name)
        alias = field.validation_alias if field is not None else None
        variable = alias if isinstance(alias, str) else f"PREFRAG_{name.upper()}"
        problems.append(f"{variable}={issue.get('input')!r}: {issue['msg']}")
    return "Invalid setting " + "; ".join(problems) + "."
