"""Switcher preference data from real graph runs (PrefRAG §3.4, appendix C).

`prefrag train switcher-data --dataset PATH --policy MODEL --teacher MODEL|gold --out FILE`
runs every question through the real PrefRAG graph with the policy as reasoner (no
self-reflection; a top-k drawn per question from `--top-k-range` with a seeded RNG; the
policy's chat model at temperature 0.9 while collecting). At every judged `compare` step:

- the policy's candidate verdicts: `--samples` samples over temperature x top-p in
  {0.1, 0.5, 0.9}^2 (an extractive policy is deterministic: one candidate);
- the teacher's verdict on the same prompt: a stronger model, or `gold`, which keeps the
  new local documents exactly when they add a supporting paragraph not yet held (datasets
  with supporting paragraphs, e.g. the two-source HotpotQA split);
- candidates agreeing with the teacher are chosen-candidates (the one whose analysis is
  closest to the teacher's, by word overlap, is chosen) and a random disagreeing one is
  rejected; with a deterministic policy the teacher's verdict is chosen and the rejected one
  is the policy's disagreeing verdict, or else the opposite claim about the same new
  documents (`switcher_teachers.contradiction`: no fixed template sentence);
- the trajectory continues with the chosen verdict.

Per question one pair is kept after de-duplication (`--per-question`); `--keep-switch 3:1`
subsamples the majority label to that ratio. Each finished question is appended to
`<out>.collect.jsonl`, so a killed run continues where it stopped; `<out>` is rewritten
from it at the end. The pair's prompt is `prefrag.reasoners.llm.compare_prompt`, the very
text the `compare` role sends at run time.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document

from prefrag.concurrency import run_jobs
from prefrag.errors import ConfigurationError, IngestError, PrefRAGError
from prefrag.jsonl import JsonlAppender, readable_rows, write_jsonl
from prefrag.reasoners.base import (
    AnswerDraft,
    CompareVerdict,
    Feedback,
    PriorTurn,
    Reflection,
    ScratchpadStep,
    ThinkDecision,
    Usage,
)
from prefrag.reasoners.llm import compare_prompt
from prefrag.training.pairs import make_pair
from prefrag.training.switcher_teachers import GoldTeacher, ModelTeacher, Teacher

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from prefrag.config import Settings
    from prefrag.datasets import EvalItem
    from prefrag.reasoners.base import Reasoner
    from prefrag.sources.base import SourceRegistry

SAMPLING_GRID: tuple[tuple[float, float], ...] = tuple(
    (t, p) for t in (0.1, 0.5, 0.9) for p in (0.1, 0.5, 0.9)
)
COLLECT_TEMPERATURE = 0.9
_RESUME_KEYS = (
    "dataset",
    "policy",
    "teacher",
    "samples",
    "two_source",
    "items",
    "limit",
    "seed",
    "top_k_range",
    "max_iterations",
)


@dataclass
class SwitcherDataConfig:
    """Settings of one preference-data run (`prefrag train switcher-data --help`)."""

    dataset: str = field(metadata={"help": "Dataset file (HotpotQA-style JSONL with paragraphs)."})
    out: str = field(metadata={"help": "Pairs JSONL to write (resumable: <out>.collect.jsonl)."})
    policy: str = field(
        default="extractive",
        metadata={
            "help": "'extractive' (no model, one deterministic candidate) or a chat model name "
            "(backend prefix allowed: openai:NAME, hf:PATH, vllm:NAME) behind every role."
        },
    )
    teacher: str = field(
        default="gold",
        metadata={
            "help": "'gold' (keep exactly when a supporting paragraph is new), 'gold-needed' "
            "(also keep when every supporting paragraph is held) or a chat model name."
        },
    )
    policy_base_url: str | None = field(
        default=None,
        metadata={
            "help": "OpenAI-compatible endpoint of a chat-model policy (e.g. "
            "http://localhost:8000/v1); wins over PREFRAG_COMPARE_BASE_URL; default: that, "
            "else OPENAI_BASE_URL."
        },
    )
    policy_api_key: str | None = field(
        default=None,
        metadata={
            "help": "API key of the policy's server; default: PREFRAG_COMPARE_API_KEY, else "
            "none when the policy has its own URL, else OPENAI_API_KEY."
        },
    )
    teacher_base_url: str | None = field(
        default=None,
        metadata={
            "help": "OpenAI-compatible endpoint of a chat-model teacher, e.g. a second server "
            "(http://localhost:8001/v1): one vLLM server serves one base model; wins over "
            "PREFRAG_TEACHER_BASE_URL; default: that, else the policy's server."
        },
    )
    teacher_api_key: str | None = field(
        default=None,
        metadata={
            "help": "API key of the teacher's server; default: PREFRAG_TEACHER_API_KEY, else "
            "none when the teacher has its own URL, else the policy's server's key."
        },
    )
    samples: int = field(
        default=9, metadata={"help": "Policy samples per judged step (temperature x top-p grid)."}
    )
    keep_switch: str | None = field(
        default=None, metadata={"help": "Keep-local : switch ratio of the output, e.g. 3:1."}
    )
    per_question: int = field(default=1, metadata={"help": "Pairs kept per question (paper: 1)."})
    concurrency: int = field(default=4, metadata={"help": "Questions collected at once."})
    limit: int | None = field(default=None, metadata={"help": "Use the first N items."})
    items: str | None = field(
        default=None, metadata={"help": "A 1-based inclusive item range, e.g. 1-200."}
    )
    two_source: float | None = field(
        default=0.5,
        metadata={
            "help": "Two-source split (share of questions whose second gold paragraph stays "
            "local). null (YAML): one local index of the dataset's paragraphs plus the real "
            "web source, as `prefrag eval` without --two-source."
        },
    )
    top_k_range: str = field(
        default="2-5", metadata={"help": "Per-question top-k is drawn from this range."}
    )
    max_iterations: int = field(default=3, metadata={"help": "Retrieval steps per question."})
    seed: int = field(default=0, metadata={"help": "Seed of the split, top-k and choices."})
    progress: bool = field(default=True, metadata={"help": "Show a progress bar."})

    def __post_init__(self) -> None:
        """Refuse settings no run can use, in one sentence."""
        problems = []
        if self.samples < 1:
            problems.append("--samples must be at least 1")
        if self.per_question < 1:
            problems.append("--per-question must be at least 1")
        if self.concurrency < 1:
            problems.append("--concurrency must be at least 1")
        if self.two_source is not None and not 0.0 <= self.two_source <= 1.0:
            problems.append("--two-source must lie in [0, 1]")
        if problems:
            raise ConfigurationError("Bad switcher-data setting: " + "; ".join(problems) + ".")
        self.ratio()
        self.top_k_bounds()

    def ratio(self) -> tuple[int, int] | None:
        """`--keep-switch` as (keep, switch), or None."""
        if self.keep_switch is None:
            return None
        match = re.fullmatch(r"\s*(\d+)\s*:\s*(\d+)\s*", str(self.keep_switch))
        if not match or int(match[1]) + int(match[2]) == 0:
            raise ConfigurationError(
                f"--keep-switch takes KEEP:SWITCH such as 3:1, not {self.keep_switch!r}."
            )
        return int(match[1]), int(match[2])

    def top_k_bounds(self) -> tuple[int, int]:
        """`--top-k-range` as (low, high)."""
        match = re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", self.top_k_range)
        if not match or not 1 <= int(match[1]) <= int(match[2]):
            raise ConfigurationError(
                f"--top-k-range takes LOW-HIGH such as 2-5, not {self.top_k_range!r}."
            )
        return int(match[1]), int(match[2])


# --- the policy -----------------------------------------------------------------------------


@dataclass
class Policy:
    """The model whose behaviour the pairs correct.

    `reasoner` runs every role of the graph; `samplers` are (sampling settings, reasoner)
    pairs whose `compare` gives one candidate each. No samplers: the policy is
    deterministic and `reasoner.compare` is its single candidate.
    """

    name: str
    reasoner: Reasoner
    samplers: list[tuple[dict[str, float], Reasoner]] = field(default_factory=list)


def model_policy(
    name: str,
    chat_model: Callable[[float, float], BaseChatModel],
    *,
    samples: int,
    max_doc_chars: int | None,
) -> Policy:
    """A chat-model policy: `chat_model(temperature, top_p)` builds the model per setting.

    The graph's roles run at temperature 0.9 (collection); the compare candidates come from
    the first `samples` settings of the temperature x top-p grid (cycled when more).
    """
    from prefrag.reasoners.llm import LLMReasoner

    runner = LLMReasoner(
        {"default": chat_model(COLLECT_TEMPERATURE, 0.9)}, max_doc_chars=max_doc_chars
    )
    samplers: list[tuple[dict[str, float], Reasoner]] = []
    for index in range(samples):
        temperature, top_p = SAMPLING_GRID[index % len(SAMPLING_GRID)]
        reasoner = LLMReasoner(
            {"default": chat_model(temperature, top_p)}, max_doc_chars=max_doc_chars
        )
        samplers.append(({"temperature": temperature, "top_p": top_p}, reasoner))
    return Policy(name, runner, samplers)


# --- collecting one question ------------------------------------------------------------------


@dataclass
class Collected:
    """What one question produced: candidate pairs and why other steps made none."""

    question_id: str
    pairs: list[dict[str, Any]] = field(default_factory=list)
    drops: Counter[str] = field(default_factory=Counter)
    judged: int = 0


class CollectingReasoner:
    """The policy as the graph's reasoner, with `compare` turned into a data-making step."""

    def __init__(
        self,
        policy: Policy,
        teacher: Teacher,
        item: EvalItem,
        *,
        max_doc_chars: int | None,
        top_k: int,
        seed: int,
    ) -> None:
        self.policy = policy
        self.teacher = teacher
        self.item = item
        self.max_doc_chars = max_doc_chars
        self.top_k = top_k
        self.rng = random.Random(f"{seed}:{item.id}:choices")
        self.collected = Collected(item.id)

    def think(
        self,
        question: str,
        scratchpad: Sequence[ScratchpadStep],
        *,
        sources: Sequence[str],
        force_answer: bool = False,
        feedback: Feedback | None = None,
        rationale: bool = False,
    ) -> ThinkDecision:
        """The policy's own step."""
        return self.policy.reasoner.think(
            question,
            scratchpad,
            sources=sources,
            force_answer=force_answer,
            feedback=feedback,
            rationale=rationale,
        )

    def answer(
        self,
        question: str,
        scratchpad: Sequence[ScratchpadStep],
        evidence: Sequence[Document],
        *,
        feedback: Feedback | None = None,
        earlier: PriorTurn | None = None,
    ) -> AnswerDraft:
        """The policy's own answer."""
        return self.policy.reasoner.answer(
            question, scratchpad, evidence, feedback=feedback, earlier=earlier
        )

    def reflect(self, question: str, answer: str, evidence: Sequence[Document]) -> Reflection:
        """The policy's own reflection (unused: collection runs without reflection)."""
        return self.policy.reasoner.reflect(question, answer, evidence)

    def compare(
        self, question: str, held: Sequence[Document], new: Sequence[Document]
    ) -> CompareVerdict:
        """Candidates and the teacher's verdict make a pair; the chosen verdict is returned."""
        collected = self.collected
        collected.judged += 1
        prompt = compare_prompt(question, held, new, max_doc_chars=self.max_doc_chars)
        usage = Usage()
        teacher = self.teacher.verdict(self.item, question, held, new)
        usage = _add(usage, teacher.usage)
        if teacher.fallback:
            collected.drops["teacher reply unreadable"] += 1
            policy_verdict = self.policy.reasoner.compare(question, held, new)
            return policy_verdict.model_copy(update={"usage": _add(usage, policy_verdict.usage)})
        deterministic = not self.policy.samplers
        if deterministic:
            samplers: list[tuple[dict[str, Any], Reasoner]] = [
                ({"deterministic": True}, self.policy.reasoner)
            ]
        else:
            samplers = list(self.policy.samplers)
        candidates: list[tuple[dict[str, Any], CompareVerdict]] = []
        for sampling, reasoner in samplers:
            candidate = reasoner.compare(question, held, new)
            usage = _add(usage, candidate.usage)
            if candidate.fallback:
                collected.drops["policy reply unreadable"] += 1
            else:
                candidates.append((sampling, candidate))
        agree = [c for c in candidates if c[1].status == teacher.status]
        disagree = [c for c in candidates if c[1].status != teacher.status]
        chosen: tuple[dict[str, Any], CompareVerdict] | None
        rejected: tuple[dict[str, Any], CompareVerdict] | None
        if deterministic:
            chosen = ({"teacher": self.teacher.name}, _plain(teacher))
            flipped_sampling: dict[str, Any] = {"teacher": self.teacher.name, "flipped": True}
            opposite = (flipped_sampling, self.teacher.opposite(teacher, held, new))
            rejected = disagree[0] if disagree else opposite
        else:
            chosen = max(agree, key=lambda c: _closeness(c[1], teacher)) if agree else None
            rejected = self.rng.choice(disagree) if disagree else None
        if chosen is None:
            collected.drops["no candidate agrees with the teacher"] += 1
        elif rejected is None:
            collected.drops["every candidate agrees with the teacher"] += 1
        else:
            meta = {
                "question_id": self.item.id,
                "step": collected.judged,
                "teacher": self.teacher.name,
                "policy": self.policy.name,
                "sampling": {
                    "chosen": chosen[0],
                    "rejected": rejected[0],
                    "top_k": self.top_k,
                    "policy_temperature": None if deterministic else COLLECT_TEMPERATURE,
                },
            }
            collected.pairs.append(make_pair(prompt, _plain(chosen[1]), _plain(rejected[1]), meta))
        final = _plain(chosen[1]) if chosen is not None else _plain(teacher)
        return final.model_copy(update={"usage": usage})


def _plain(verdict: CompareVerdict) -> CompareVerdict:
    return CompareVerdict(analysis=verdict.analysis, status=verdict.status)


def _add(total: Usage, more: Usage) -> Usage:
    return Usage(
        calls=total.calls + more.calls,
        input_tokens=total.input_tokens + more.input_tokens,
        output_tokens=total.output_tokens + more.output_tokens,
    )


def _closeness(candidate: CompareVerdict, teacher: CompareVerdict) -> float:
    """Word-set Jaccard of two analyses (a cheap stand-in for the paper's teacher pick)."""
    a = set(re.findall(r"\w+", candidate.analysis.lower()))
    b = set(re.findall(r"\w+", teacher.analysis.lower()))
    return len(a & b) / len(a | b) if a | b else 0.0


def collect_question(
    item: EvalItem,
    *,
    policy: Policy,
    teacher: Teacher,
    sources: SourceRegistry,
    config: SwitcherDataConfig,
    max_doc_chars: int | None,
    preferred: str | None,
) -> Collected:
    """Run one question through the graph, collecting its candidate pairs."""
    from prefrag.graphs.context import Context
    from prefrag.graphs.graph import build_graph

    low, high = config.top_k_bounds()
    top_k = random.Random(f"{config.seed}:{item.id}:top_k").randint(low, high)
    collector = CollectingReasoner(
        policy, teacher, item, max_doc_chars=max_doc_chars, top_k=top_k, seed=config.seed
    )
    context = Context(
        top_k=top_k,
        max_iterations=config.max_iterations,
        max_reflections=0,
        preferred_source=preferred,
    )
    graph = build_graph(reasoner=collector, sources=sources)  # type: ignore[arg-type]
    graph.invoke({"question": item.question}, context=context)
    return collector.collected


# --- the run ---------------------------------------------------------------------------------


@dataclass
class SwitcherDataResult:
    """Where the pairs went and how many of each kind were made or dropped."""

    out: Path
    questions: int
    pairs: int
    labels: dict[str, int]
    drops: dict[str, int]
    failed: int

    def summary(self) -> dict[str, Any]:
        """The result as plain data (also written to `<out>.summary.json`)."""
        return {**asdict(self), "out": str(self.out)}


def collect_path(out: Path) -> Path:
    """The resumable per-question log beside the pairs file."""
    return out.with_name(out.name + ".collect.jsonl")


def run(
    config: SwitcherDataConfig,
    *,
    settings: Settings | None = None,
    policy: Policy | None = None,
    teacher: Teacher | None = None,
    sources: SourceRegistry | None = None,
) -> SwitcherDataResult:
    """Collect pairs for every selected question, resuming `<out>.collect.jsonl`.

    `policy`, `teacher` and `sources` replace the ones the config names (tests pass fake
    chat models this way).

    Raises:
        ConfigurationError: Bad settings, or the log belongs to a run with other settings.
        IngestError: The dataset cannot be read.
    """
    from prefrag.config import get_settings
    from prefrag.dataset_sources import dataset_sources
    from prefrag.datasets import load_dataset, select_items

    settings = settings or get_settings()
    out = Path(config.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    log = collect_path(out)
    _check_resumable(config, log)
    policy = policy or build_policy(config, settings)
    teacher = teacher or build_teacher(config, settings)
    work = out.with_name(out.name + ".work")
    items = select_items(
        load_dataset(config.dataset), item_range=config.items, limit=config.limit, seed=config.seed
    )
    if sources is None:
        sources, _ = dataset_sources(
            items,
            work / "index",
            two_source=config.two_source,
            seed=config.seed,
            settings=settings,
            progress=config.progress,
        )
    if isinstance(teacher, GoldTeacher) and not any(item.paragraphs for item in items):
        raise ConfigurationError(
            f"--teacher {teacher.name} needs a dataset with supporting paragraphs (HotpotQA-style)."
        )
    preferred = "local" if "local" in sources else None
    done = {r["question_id"] for r in _read_log(log) if not r.get("error")}
    todo = [item for item in items if item.id not in done]
    if not log.exists():
        write_jsonl([{"config": _resume_view(config)}], log)

    def work_on(item: EvalItem) -> dict[str, Any]:
        try:
            collected = collect_question(
                item,
                policy=policy,
                teacher=teacher,
                sources=sources,
                config=config,
                max_doc_chars=settings.prompt_doc_chars,
                preferred=preferred,
            )
        except PrefRAGError:
            raise  # bad settings or an unreachable endpoint: stop (the log keeps what is done)
        except Exception as error:
            return {"question_id": item.id, "error": f"{type(error).__name__}: {error}"}
        return {
            "question_id": item.id,
            "pairs": collected.pairs,
            "drops": dict(collected.drops),
            "judged": collected.judged,
        }

    # A line a killed run cut short is ended first (so it stays apart and is ignored).
    with JsonlAppender(log) as finish:
        run_jobs(
            [partial(work_on, item) for item in todo],
            finish,
            label="switcher pairs",
            concurrency=config.concurrency,
            progress=config.progress,
        )
    wanted = {item.id for item in items}
    records = [r for r in _read_log(log) if r["question_id"] in wanted]
    return _write_pairs(config, out, records)


def _write_pairs(
    config: SwitcherDataConfig, out: Path, records: list[dict[str, Any]]
) -> SwitcherDataResult:
    """One pair per question after de-duplication, the keep:switch ratio, then `out`."""
    drops: Counter[str] = Counter()
    seen: set[str] = set()
    kept: list[dict[str, Any]] = []
    failed = 0
    for record in sorted(records, key=lambda r: r["question_id"]):
        if record.get("error"):
            failed += 1
            drops["question failed"] += 1
            continue
        drops.update(record.get("drops") or {})
        unique = []
        for pair in record.get("pairs") or []:
            key = _pair_key(pair)
            if key in seen:
                drops["duplicate pair"] += 1
                continue
            seen.add(key)
            unique.append(pair)
        rng = random.Random(f"{config.seed}:{record['question_id']}:keep")
        chosen = rng.sample(unique, min(config.per_question, len(unique)))
        drops["more than one pair per question"] += len(unique) - len(chosen)
        kept.extend(sorted(chosen, key=lambda p: p["meta"]["step"]))
        if not record.get("judged"):
            drops["question had no judged compare step"] += 1
    kept = _apply_ratio(kept, config, drops)
    write_jsonl(kept, out, atomic=True)
    labels = Counter(pair["meta"]["label"] for pair in kept)
    result = SwitcherDataResult(
        out=out,
        questions=len(records),
        pairs=len(kept),
        labels={"keep": labels.get("keep", 0), "switch": labels.get("switch", 0)},
        drops={reason: count for reason, count in sorted(drops.items()) if count},
        failed=failed,
    )
    out.with_name(out.name + ".summary.json").write_text(json.dumps(result.summary(), indent=2))
    return result


def _apply_ratio(
    pairs: list[dict[str, Any]], config: SwitcherDataConfig, drops: Counter[str]
) -> list[dict[str, Any]]:
    """Subsample the label that exceeds `--keep-switch` (seeded); the other stays whole."""
    ratio = config.ratio()
    if ratio is None:
        return pairs
    keep_ratio, switch_ratio = ratio
    keep = [p for p in pairs if p["meta"]["label"] == "keep"]
    switch = [p for p in pairs if p["meta"]["label"] == "switch"]
    if switch_ratio == 0:
        wanted_keep, wanted_switch = len(keep), 0
    elif keep_ratio == 0:
        wanted_keep, wanted_switch = 0, len(switch)
    else:
        units = min(len(keep) / keep_ratio, len(switch) / switch_ratio)
        wanted_keep, wanted_switch = round(units * keep_ratio), round(units * switch_ratio)
    rng = random.Random(f"{config.seed}:ratio")
    chosen_keep = rng.sample(keep, min(wanted_keep, len(keep)))
    chosen_switch = rng.sample(switch, min(wanted_switch, len(switch)))
    drops["keep:switch ratio"] += len(pairs) - len(chosen_keep) - len(chosen_switch)
    chosen = {id(p) for p in [*chosen_keep, *chosen_switch]}
    return [p for p in pairs if id(p) in chosen]


def _pair_key(pair: dict[str, Any]) -> str:
    text = json.dumps([pair["prompt"], pair["chosen"], pair["rejected"]], sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _read_log(log: Path) -> list[dict[str, Any]]:
    """Question records of the log, the last one per question winning (header skipped)."""
    latest: dict[str, dict[str, Any]] = {}
    for record in readable_rows(log):  # a line cut short by a killed run: that question is redone
        if isinstance(record, dict) and "question_id" in record:
            latest[record["question_id"]] = record
    return list(latest.values())


def _resume_view(config: SwitcherDataConfig) -> dict[str, Any]:
    values = asdict(config)
    return {key: values[key] for key in _RESUME_KEYS}


def _check_resumable(config: SwitcherDataConfig, log: Path) -> None:
    if not log.exists():
        return
    with log.open(encoding="utf-8") as handle:
        first = handle.readline()
    try:
        saved = json.loads(first).get("config", {})
    except (json.JSONDecodeError, AttributeError):
        saved = {}
    now = _resume_view(config)
    changed = [key for key in now if key in saved and saved[key] != now[key]]
    if changed:
        raise ConfigurationError(
            f"'{log}' holds a run with different {', '.join(changed)}; use another --out."
        )


# --- building policy and teacher from names ----------------------------------------------------


def build_policy(config: SwitcherDataConfig, settings: Settings) -> Policy:
    """The policy the config names: the extractive reasoner or a chat model."""
    if config.policy == "extractive":
        from prefrag.reasoners.extractive import ExtractiveReasoner

        return Policy("extractive", ExtractiveReasoner(use_embeddings=False))
    from prefrag.models import make_chat_model, resolve_model

    settings = endpoint_settings(settings, "compare", config.policy_base_url, config.policy_api_key)
    backend, name = resolve_model("compare", settings, model_name=config.policy)
    base = make_chat_model(backend, name, settings, endpoint="compare")

    def chat_model(temperature: float, top_p: float) -> BaseChatModel:
        return base.model_copy(update={"temperature": temperature, "top_p": top_p})

    return model_policy(
        config.policy,
        chat_model,
        samples=config.samples,
        max_doc_chars=settings.prompt_doc_chars,
    )


def endpoint_settings(
    settings: Settings, endpoint: str, base_url: str | None, api_key: str | None
) -> Settings:
    """`settings` with `endpoint`'s server (`prefrag.models.endpoint_of`) set from flags.

    A flag wins over the environment (`PREFRAG_<ENDPOINT>_BASE_URL` / `_API_KEY`); a URL
    given by flag without a key by flag sends the environment's key for that endpoint, else
    none ("EMPTY"), never another server's key.
    """
    update = {
        f"{endpoint}_{part}": value
        for part, value in (("base_url", base_url), ("api_key", api_key))
        if value is not None
    }
    return settings.model_copy(update=update) if update else settings


def build_teacher(config: SwitcherDataConfig, settings: Settings) -> Teacher:
    """The teacher the config names: `gold` or a chat model (settings' temperature)."""
    if config.teacher in ("gold", "gold-needed"):
        return GoldTeacher(needed_only=config.teacher == "gold-needed")
    from prefrag.models import build_chat_model
    from prefrag.reasoners.llm import LLMReasoner

    # The teacher may run on its own server (--teacher_base_url or PREFRAG_TEACHER_BASE_URL).
    settings = endpoint_settings(
        settings, "teacher", config.teacher_base_url, config.teacher_api_key
    )
    model = build_chat_model("compare", settings, model_name=config.teacher, endpoint="teacher")
    reasoner = LLMReasoner({"default": model}, max_doc_chars=settings.prompt_doc_chars)
    return ModelTeacher(reasoner, config.teacher)


def main(argv: Sequence[str] | None = None) -> SwitcherDataResult:
    """`prefrag train switcher-data`: parse the config, collect, print the summary."""
    from rich.console import Console
    from rich.table import Table

    from prefrag.training.config import parse_config

    (config,) = parse_config([SwitcherDataConfig], argv)
    if not Path(config.dataset).exists():
        raise IngestError(f"The dataset '{config.dataset}' does not exist.")
    result = run(config)
    table = Table(title=f"Switcher pairs: {result.out}")
    table.add_column("kind")
    table.add_column("count", justify="right")
    table.add_row("questions", str(result.questions))
    table.add_row("pairs", str(result.pairs))
    for label, count in result.labels.items():
        table.add_row(f"  {label}", str(count))
    for reason, count in result.drops.items():
        table.add_row(f"dropped: {reason}", str(count))
    if result.failed:
        table.add_row("questions failed (rerun to retry)", str(result.failed))
    Console().print(table)
    return result


__all__ = [
    "SAMPLING_GRID",
    "CollectingReasoner",
    "GoldTeacher",
    "ModelTeacher",
    "Policy",
    "SwitcherDataConfig",
    "SwitcherDataResult",
    "main",
    "model_policy",
    "run",
]
