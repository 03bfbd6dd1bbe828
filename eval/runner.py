"""Run methods over a dataset: concurrent, resumable, cached, with the configuration saved.

Output folder layout:

- `config.json`: the run configuration, the relevant settings and the two-source split;
- `items.jsonl`: one record per (method, item), appended as items finish; a rerun skips
  finished pairs and retries failed ones;
- `retrieval_cache.jsonl`: every search's documents, so a resumed run sees the same ones;
- `summary.json`, `report.md` and the plots (written by `prefrag.eval.report`).
"""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prefrag.concurrency import run_jobs
from prefrag.dataset_sources import dataset_sources
from prefrag.datasets import Dataset, EvalItem, load_dataset, select_items
from prefrag.documents import doc_id, unique_documents
from prefrag.errors import ConfigurationError
from prefrag.eval import metrics
from prefrag.eval.cache import CachedSource, RetrievalCache
from prefrag.jsonl import JsonlAppender, readable_rows
from prefrag.reasoners.roles import ROLES

if TYPE_CHECKING:
    from prefrag.config import Settings
    from prefrag.graphs.context import Context
    from prefrag.reasoners.base import Reasoner
    from prefrag.sources.base import SourceRegistry
    from prefrag.sources.local import SearchMode

RETRIEVAL_METHODS: tuple[SearchMode, ...] = ("dense", "lexical", "hybrid")
RETRIEVAL_KS = (1, 5, 10)
# Keys that must match for a rerun into the same folder to resume instead of mixing runs
# (besides every run setting of the context, compared by its effective value).
_RESUME_KEYS = (
    "dataset",
    "reasoner",
    "two_source",
    "seed",
    "corpus",
    "sample",
    "items",
    "switcher",
    "task",
    "withhold",
    "distractors",
)
TASKS = ("qa", "mc", "retrieval")
REASONERS = ("extractive", "llm", "auto")
CORPORA = ("all", "items")
METHODS_HELP = (
    "Comma-separated methods: prefrag, prefrag-no-pref, prefrag-no-reflection, "
    "prefrag-prompt, no-retrieval, vanilla-local, vanilla-web, vanilla-both, react-both, "
    "react-choose, or 'all'; retrieval datasets (MedQuAD) take dense, lexical, hybrid."
)


def _option(
    help_text: str,
    *,
    choices: tuple[str, ...] = (),
    cli: str | None = None,
    cli_default: Any = MISSING,
    **field_args: Any,
) -> Any:
    """A field that `prefrag eval` offers as an option (`prefrag.eval.cli` builds them).

    `choices` are checked by `EvalConfig.check`; `cli` renames the option (default: the
    field's name with dashes); `cli_default` is the command line's default when it differs.
    """
    metadata = {"help": help_text, "choices": choices, "cli": cli, "cli_default": cli_default}
    return field(metadata=metadata, **field_args)


def option_of(name: str) -> str:
    """The `prefrag eval` option of `EvalConfig` field `name` (`two_source` -> `--two-source`)."""
    meta = next(f.metadata for f in fields(EvalConfig) if f.name == name)
    return str(meta.get("cli") or "--" + name.replace("_", "-"))


@dataclass
class EvalConfig:
    """Everything that defines an evaluation run (saved as `config.json`).

    `context` holds the run settings: any `Context` field except `reasoner` (e.g.
    `{"top_k": 3, "use_polyview": True, "polyview_views": ["R", "A"]}`); the rest keep
    `Context`'s defaults, except that the preferred source defaults to the evaluation's
    local source. Every `Context` field is an option of `prefrag eval` as well.

    `task` overrides the task the file's shape implies: `"qa"` on a MedQuAD-shaped file
    answers its questions from its own snippets (see `prefrag.eval.snippet_qa`), with a
    seeded `withhold` share of gold snippets left out of the index and `distractors` times
    the evaluated questions other snippets indexed beside the gold ones.
    """

    dataset: str = _option("Dataset file or folder.")
    methods: list[str] = _option(METHODS_HELP, cli="--method", cli_default="prefrag")  # noqa: RUF009 (a field specifier)
    out: str = _option("Output folder (resumable).")
    reasoner: str = _option(
        "extractive (no model), llm (the settings' endpoint) or auto (llm when a model is set).",
        choices=REASONERS,
        default="extractive",
    )
    two_source: float | None = _option(
        "Split HotpotQA paragraphs into local + web; share of questions whose second gold "
        "paragraph stays local.",
        default=None,
    )
    limit: int | None = _option("Evaluate the first N items.", default=None)
    sample: bool = _option("With --limit: a seeded random sample instead.", default=False)
    items: str | None = _option(
        "Evaluate a 1-based inclusive range of the dataset's items, e.g. 201-350 (before --limit).",
        default=None,
    )
    concurrency: int = _option("Items run at once.", default=4)
    seed: int = _option("Seed of the split and of --sample.", default=0)
    corpus: str = _option(
        "Index 'all' of the dataset's paragraphs or only the evaluated 'items' (default: items "
        "with --limit or --items, else all).",
        choices=CORPORA,
        default="all",
        cli_default=None,
    )
    # The run settings: every `Context` field is an option of its own (`prefrag.run_options`).
    context: dict[str, Any] = field(default_factory=dict)
    switcher: str | None = _option(
        "A trained switcher behind the extractive reasoner's compare (`Settings.switcher`): a "
        "small switcher's folder (prefrag train switcher-small) or hf:PATH / openai:NAME.",
        default=None,
    )
    task: str | None = _option(
        "qa: answer a MedQuAD-shaped file's questions from its own snippets (web off), scored "
        "against the gold snippet (default: the file's own task).",
        choices=TASKS,
        default=None,
    )
    withhold: float = _option(
        "With --task qa: a seeded share (e.g. 0.1) of the questions whose gold snippet is left "
        "out of the index, to score abstention.",
        default=0.0,
    )
    distractors: float = _option(
        "With --task qa and --corpus items: other snippets indexed per evaluated question "
        "(seeded).",
        default=1.0,
    )

    def check(self) -> None:
        """Refuse a value outside its field's choices, naming the option and what it takes.

        Raises:
            ConfigurationError: e.g. "--reasoner must be one of extractive, llm, auto; got 'x'."
        """
        for spec in fields(self):
            choices = spec.metadata.get("choices")
            value = getattr(self, spec.name)
            if choices and value is not None and value not in choices:
                raise ConfigurationError(
                    f"{option_of(spec.name)} must be one of {', '.join(choices)}; got {value!r}."
                )

    def setting(self, name: str) -> Any:
        """The effective value of run setting `name` (the context's default if unset)."""
        return getattr(_base_context(self), name)


def _base_context(config: EvalConfig) -> Context:
    from prefrag.api import make_context

    if "reasoner" in config.context:
        raise ConfigurationError("Set the reasoner with EvalConfig.reasoner, not the context.")
    reasoner = "extractive" if config.reasoner == "extractive" else "llm"
    return make_context(**config.context, reasoner=reasoner)


@dataclass
class RunState:
    """What a run built before scoring: items, sources, reasoner and extra facts."""

    dataset: Dataset
    items: list[EvalItem]
    sources: SourceRegistry | None = None
    reasoner: Reasoner | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    mog_index: Path | None = None
    rerankers: dict[str, Any] = field(default_factory=dict)
    snippet_texts: dict[str, str] | None = None


def prepare(
    config: EvalConfig,
    *,
    settings: Settings | None = None,
    reasoner: Reasoner | None = None,
    sources: SourceRegistry | None = None,
    rerankers: Mapping[str, Any] | None = None,
    progress: bool = False,
) -> RunState:
    """Load the dataset, build (or reuse) the indexes and the reasoner.

    `rerankers` are polyview rerankers by profile name, offered to the graph's provider;
    `progress` shows a progress bar while the indexes are built.
    """
    from prefrag.config import get_settings

    settings = settings or get_settings()
    dataset = _dataset_for_task(config)
    items = select_items(
        dataset, item_range=config.items, limit=config.limit, sample=config.sample, seed=config.seed
    )
    state = RunState(dataset, items, sources, reasoner, rerankers=dict(rerankers or {}))
    out = Path(config.out)
    if dataset.task == "retrieval":
        bad = [m for m in config.methods if m not in RETRIEVAL_METHODS]
        if bad:
            raise ConfigurationError(
                f"Retrieval datasets take methods {', '.join(RETRIEVAL_METHODS)}; got {bad}."
            )
        return state
    from prefrag.graphs.baselines import METHODS

    unknown = [m for m in config.methods if m not in METHODS]
    if unknown or not config.methods:
        raise ConfigurationError(
            f"Unknown method(s) {unknown or '(none)'}; known: {', '.join(METHODS)}."
        )
    corpus_items = items if config.corpus == "items" else dataset.items
    if dataset.corpus:
        _prepare_snippet_qa(config, state, out, settings, progress)
    elif state.sources is None:
        state.sources, facts = dataset_sources(
            corpus_items,
            out / "index",
            two_source=config.two_source,
            seed=config.seed,
            settings=settings,
            progress=progress,
        )
        state.facts.update(facts)
    assert state.sources is not None
    base = _base_context(config)  # refuses bad run settings before any work
    if base.use_polyview:
        _check_polyview_profile(base.polyview_profile, state.rerankers)
    if base.use_mog:
        state.mog_index, state.facts["mog"] = ensure_mog_index(
            state.sources, _preferred_name(config, state.sources), settings
        )
    if state.reasoner is None:
        from prefrag.reasoners.factory import build_reasoner
        from prefrag.reasoners.roles import models_of

        if config.switcher:
            settings = settings.model_copy(update={"switcher": config.switcher})
        state.reasoner = build_reasoner(
            settings,
            reasoner=config.reasoner,  # type: ignore[arg-type]
            models=models_of(base),  # e.g. `--compare-model`: a served switcher
        )
    return state


def _dataset_for_task(config: EvalConfig) -> Dataset:
    """The dataset in the shape of `config.task` (its file's own task when unset)."""
    from prefrag.eval.snippet_qa import as_snippet_qa, check_share

    config.check()
    check_share(config.withhold)
    if config.withhold and config.task != "qa":
        raise ConfigurationError("--withhold applies to --task qa on a MedQuAD-shaped file.")
    dataset = load_dataset(config.dataset)
    if config.task == "qa" and dataset.corpus:
        return as_snippet_qa(dataset)
    if config.withhold:
        # Only a file of snippets has gold snippets to withhold.
        return as_snippet_qa(dataset)  # raises, naming what the file is
    if config.task is None or config.task == dataset.task:
        return dataset
    raise ConfigurationError(
        f"'{config.dataset}' is a {dataset.task} dataset; it cannot be run as --task {config.task}."
    )


def _prepare_snippet_qa(
    config: EvalConfig, state: RunState, out: Path, settings: Settings, progress: bool
) -> None:
    """Mark the withheld questions and index the snippets (`prefrag.eval.snippet_qa`)."""
    import dataclasses

    from prefrag.eval.snippet_qa import (
        WITHHELD,
        build_snippet_source,
        snippet_rows,
        withheld_ids,
    )

    if config.two_source is not None:
        raise ConfigurationError("--two-source splits HotpotQA paragraphs; not --task qa.")
    withheld = withheld_ids(state.items, config.withhold, config.seed)
    state.items = [
        dataclasses.replace(item, metadata={**item.metadata, WITHHELD: item.id in withheld})
        for item in state.items
    ]
    rows = snippet_rows(
        state.dataset,
        state.items,
        withheld,
        corpus=config.corpus,
        distractors=config.distractors,
        seed=config.seed,
    )
    if state.sources is None:
        state.sources = build_snippet_source(
            rows, out / "index", settings=settings, progress=progress
        )
    state.snippet_texts = {str(row["id"]): str(row["text"]) for row in state.dataset.corpus}
    state.facts["snippet_qa"] = {
        "questions": len(state.items),
        "withheld": len(withheld),
        "indexed_snippets": len(rows),
        "withhold": config.withhold,
        "distractors": config.distractors,
    }


def _preferred_name(config: EvalConfig, sources: SourceRegistry) -> str | None:
    return config.setting("preferred_source") or ("local" if "local" in sources else None)


def _context(config: EvalConfig, sources: SourceRegistry) -> Context:
    """The run context of the evaluation (the tool flags act on graph-backed methods)."""
    import dataclasses

    return dataclasses.replace(
        _base_context(config), preferred_source=_preferred_name(config, sources)
    )


def _check_polyview_profile(profile: str, rerankers: Mapping[str, Any]) -> None:
    from prefrag.tools.polyview import PROFILES

    if profile not in rerankers and profile not in PROFILES:
        known = ", ".join([*PROFILES, *rerankers])
        raise ConfigurationError(f"Unknown polyview profile '{profile}' (known: {known}).")


def ensure_mog_index(
    sources: SourceRegistry | None, name: str | None, settings: Settings
) -> tuple[Path, dict[str, Any]]:
    """The MoG index folder of local source `name`, built from its chunks when absent.

    The folder lies under the data directory of the source object itself (an evaluation's
    sources live in its own isolated one), falling back to `settings`.

    Raises:
        ConfigurationError: No such source, or it has no index to build from.
    """
    from prefrag.tools.granularity_index import build_source_index, mog_index_dir

    if not name or sources is None or name not in sources:
        raise ConfigurationError("--mog needs a local source to search (none was found).")
    source_settings = getattr(sources.get(name), "settings", None) or settings
    folder = mog_index_dir(name, source_settings)
    facts: dict[str, Any] = {"source": name, "index": str(folder), "built": False}
    if (folder / "index.json").exists():
        return folder, facts
    from prefrag.errors import StoreMissingError
    from prefrag.tools.granularity_source import source_documents

    try:
        documents = source_documents(name, source_settings)
    except StoreMissingError as error:
        raise ConfigurationError(f"--mog cannot build an index for '{name}': {error}") from None
    start = time.perf_counter()
    build_source_index(name, documents, settings=source_settings, folder=folder)
    facts.update(built=True, build_s=round(time.perf_counter() - start, 2), docs=len(documents))
    return folder, facts


def read_records(path: Path) -> list[dict[str, Any]]:
    """Records of an `items.jsonl`, the last one per (method, id) winning."""
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for record in readable_rows(path):  # a line cut short by an interrupted run is redone
        latest[(record["method"], record["id"])] = record
    return list(latest.values())


def _check_resumable(config: EvalConfig, out: Path) -> None:
    saved_path = out / "config.json"
    if not saved_path.exists():
        return
    saved = json.loads(saved_path.read_text()).get("config", {})
    now = _resume_view(asdict(config))
    before = _resume_view(saved)
    changed = [k for k in now if k in before and before[k] != now[k]]
    if changed:
        raise ConfigurationError(
            f"'{out}' holds a run with different {', '.join(changed)}; use another --out."
        )


def _resume_view(config: dict[str, Any]) -> dict[str, Any]:
    """What must match to resume: the eval keys and every effective run setting."""
    from prefrag.graphs.context import context_from

    # A run saved before a key existed ran with that key's default.
    defaults = {f.name: f.default for f in fields(EvalConfig) if f.default is not MISSING}
    view = {key: config.get(key, defaults.get(key)) for key in _RESUME_KEYS}
    settings = dict(config.get("context") or {})
    settings.pop("reasoner", None)
    view.update(asdict(context_from(settings)))
    view.pop("reasoner", None)
    return view


def _save_config(config: EvalConfig, out: Path, settings: Settings, facts: dict[str, Any]) -> None:
    import prefrag

    settings_view = {
        key: str(getattr(settings, key))
        for key in (
            "backend",
            "model",
            *(role.model_field for role in ROLES),
            "openai_base_url",
            "embedding_model",
            "chunk_size",
            "chunk_overlap",
            "temperature",
            "top_p",
            "hf_compare_checkpoint",
            "switcher",
        )
    }
    payload = {
        "config": asdict(config),
        "settings": settings_view,
        "version": getattr(prefrag, "__version__", ""),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
        **facts,
    }
    (out / "config.json").write_text(json.dumps(payload, indent=2))


def run_eval(
    config: EvalConfig,
    *,
    settings: Settings | None = None,
    reasoner: Reasoner | None = None,
    sources: SourceRegistry | None = None,
    rerankers: Mapping[str, Any] | None = None,
    progress: bool = True,
    report: bool = True,
) -> dict[str, Any]:
    """Run every method on every item, resuming what `config.out` already holds.

    `rerankers` offers polyview rerankers by profile name (e.g. an ablation's subset of
    views) to the graph-backed methods. Returns the summary (per method: every metric),
    also written to `summary.json`.
    """
    from prefrag.config import get_settings
    from prefrag.eval.report import summarize, write_report

    settings = settings or get_settings()
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    _check_resumable(config, out)
    state = prepare(
        config,
        settings=settings,
        reasoner=reasoner,
        sources=sources,
        rerankers=rerankers,
        progress=progress,
    )
    _save_config(config, out, settings, state.facts)

    items_path = out / "items.jsonl"
    done = {(r["method"], r["id"]) for r in read_records(items_path) if not r.get("error")}
    cache = RetrievalCache(out / "retrieval_cache.jsonl")
    if state.dataset.task == "retrieval":
        jobs = _retrieval_jobs(config, state, out, settings, cache, done)
    else:
        jobs = _qa_jobs(config, state, cache, done)

    with JsonlAppender(items_path, default=str) as finish:
        run_jobs(jobs, finish, label="eval", concurrency=config.concurrency, progress=progress)

    wanted_ids = {item.id for item in state.items}
    records = [
        r
        for r in read_records(items_path)
        if r["method"] in config.methods and r["id"] in wanted_ids
    ]
    summary = summarize(records, config.methods, task=state.dataset.task)
    summary["_run"] = {
        "dataset": config.dataset,
        "items": len(state.items),
        "task": state.dataset.task,
        "retrieval_cache": {"hits": cache.hits, "misses": cache.misses},
        **state.facts,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    if report:
        # The report names the effective run settings, defaults included.
        shown = {key: config.setting(key) for key in ("top_k", "max_iterations", "max_reflections")}
        write_report(summary, out, config=asdict(config) | shown)
    return summary


Job = Callable[[], dict[str, Any]]


def _qa_jobs(
    config: EvalConfig, state: RunState, cache: RetrievalCache, done: set[tuple[str, str]]
) -> list[Job]:
    from prefrag.graphs.baselines import build_method
    from prefrag.graphs.resources import ResourceProvider
    from prefrag.sources.base import SourceRegistry

    assert state.sources is not None and state.reasoner is not None
    cached = SourceRegistry(CachedSource(s, cache) for s in state.sources)
    context = _context(config, cached)
    name = _preferred_name(config, cached)
    resources = ResourceProvider(
        reasoner=state.reasoner,
        sources=cached,
        rerankers=state.rerankers,
        # The graph's MoG node reads this run's index of its source, not the user's.
        mog_indexes={name: state.mog_index} if state.mog_index and name else None,
    )
    graph = None
    jobs: list[Job] = []
    for name in config.methods:
        method = build_method(
            name,
            reasoner=state.reasoner,
            sources=cached,
            context=context,
            graph=graph,
            resources=resources,
        )
        if method.is_graph:
            graph = method.system  # one compiled graph serves every graph-backed method
        for item in state.items:
            if (name, item.id) in done:
                continue
            jobs.append(partial(score_item, method, item, state.snippet_texts))
    return jobs


def run_system(method: Any, question: str) -> tuple[dict[str, Any], list[tuple[str, float]]]:
    """Run one question through a method; returns its output and (node, seconds) timings."""
    if not method.is_graph:
        output = method.system.invoke({"question": question}, context=method.context)
        return output, list(output.pop("timings", []))
    timings: list[tuple[str, float]] = []
    final: dict[str, Any] = {}
    last = time.perf_counter()
    for mode, chunk in method.system.stream(
        {"question": question}, context=method.context, stream_mode=["updates", "values"]
    ):
        now = time.perf_counter()
        if mode == "updates":
            for node in chunk:
                timings.append((node, now - last))
            last = now
        else:
            final = chunk
    return final, timings


def score_item(
    method: Any, item: EvalItem, snippet_texts: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Run `item` through `method` and score it; a failure scores zero, with the error.

    `snippet_texts` (snippet id → text) scores the answer against its gold snippet
    (`--task qa` on MedQuAD) instead of against short gold answers.
    """
    record: dict[str, Any] = {"method": method.name, "id": item.id, "question": item.question}
    # Snippet QA's gold answer is a whole snippet: the record names it by id.
    record["golds"] = list(item.gold_doc_ids if snippet_texts is not None else item.answers)
    start = time.perf_counter()
    try:
        output, timings = run_system(method, item.question)
        error = None
    except Exception as failure:
        output, timings = {}, []
        error = f"{type(failure).__name__}: {failure}\n{traceback.format_exc(limit=3)}"
    record["latency_s"] = time.perf_counter() - start
    record["node_latency"] = timings
    record["error"] = error
    record.update(score_output(output, item, snippet_texts))
    return record


def score_output(
    output: dict[str, Any], item: EvalItem, snippet_texts: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Metrics of one method output against `item`'s gold data (see `score_item`)."""
    prediction = str(output.get("answer") or "")
    steps = list(output.get("route") or [])
    used = unique_documents(d for s in steps for d in s.get("used", []))
    used_kinds = [str(d.metadata.get("kind", "local")) for d in used]
    extra: dict[str, Any] = {}
    if snippet_texts is not None:
        from prefrag.eval import snippet_qa

        scores: dict[str, Any] = snippet_qa.snippet_scores(output, item, snippet_texts)
        extra = {
            "withheld": bool(item.metadata.get(snippet_qa.WITHHELD)),
            "answer_words": snippet_qa.answer_words(prediction),
            "cited_documents": snippet_qa.cited_documents(output),
        }
    elif item.task == "mc":
        scores = {"choice_acc": metrics.choice_accuracy(prediction, item.answers[0], item.options)}
        scores["parsed_choice"] = metrics.parse_choice(prediction, item.options)
    else:
        # A short answer given with its deciding sentences ("Yes. <sentence>") is scored as
        # the short answer; an answer made of sentences only is scored as it reads.
        short = str(output.get("short_answer") or "")
        scores = metrics.answer_scores(short or prediction, list(item.answers))
    if output.get("abstained") and snippet_texts is None:
        # An abstention answers nothing, even when it quotes the answer it would have given
        # ("... is not sure enough: 'Feldrun'"): it scores 0 on every answer metric.
        scores = {k: (0.0 if k in metrics.ANSWER_METRICS else v) for k, v in scores.items()}
    if item.paragraphs:
        titles = [str(d.metadata.get("title", "")) for d in used]
        scores["evidence_recall"] = metrics.evidence_recall(titles, item.gold_titles)
    scores["web_exposure"] = metrics.web_exposure(used_kinds)
    counters = dict(output.get("counters") or {})
    for key in ("local_total", "web_total", "local_used", "used"):
        counters.setdefault(key, 0)
    return {
        "prediction": prediction,
        "abstained": bool(output.get("abstained")),
        "confidence": output.get("confidence"),
        **extra,
        "scores": scores,
        "counters": counters,
        "model_calls": dict(output.get("model_calls") or {}),
        "tokens": dict(output.get("tokens") or {}),
        "used_docs": [
            {
                "id": doc_id(d),
                "source": d.metadata.get("source", ""),
                "kind": d.metadata.get("kind", ""),
                "title": d.metadata.get("title", ""),
            }
            for d in used
        ],
        "route": [
            {
                "kind": s.get("kind", "retrieve"),
                "thought": s.get("thought", ""),
                "query": s.get("query", ""),
                "searched": list(s.get("searched", [])),
                "source": s.get("source", ""),
                "verdict": s.get("verdict"),
                "used": len(s.get("used", [])),
            }
            for s in steps
        ],
        "reflections": [
            {
                "label": r.get("label"),
                "answer": r.get("answer", ""),
                "explanation": r.get("explanation", ""),
                "gaps": r.get("gaps"),
            }
            for r in output.get("reflections") or []
        ],
        "citations": list(output.get("citations") or []),
        "notes": [str(n) for n in output.get("notes") or []],
    }


def _retrieval_jobs(
    config: EvalConfig,
    state: RunState,
    out: Path,
    settings: Settings,
    cache: RetrievalCache,
    done: set[tuple[str, str]],
) -> list[Job]:
    from prefrag.dataset_sources import isolated_settings

    rows = state.dataset.corpus
    if config.corpus == "items":
        wanted = {gold for item in state.items for gold in item.gold_doc_ids}
        rows = [r for r in rows if r["id"] in wanted]
    index_settings = isolated_settings(settings, out / "index" / "home")
    sources = _retrieval_sources(rows, out / "index", index_settings)
    depth = max(RETRIEVAL_KS)
    jobs: list[Job] = []
    for mode in config.methods:
        # One index in three modes: each mode caches its own rankings.
        source = CachedSource(sources[mode], cache, key=f"{sources[mode].name}:{mode}")
        for item in state.items:
            if (mode, item.id) in done:
                continue
            jobs.append(partial(score_retrieval, source, mode, item, depth))
    state.facts["retrieval_corpus"] = len(rows)
    return jobs


def _retrieval_sources(
    rows: list[dict[str, Any]], work: Path, settings: Settings
) -> dict[str, Any]:
    from prefrag.dataset_sources import ensure_index
    from prefrag.sources.local import LocalSource

    ensure_index("corpus", rows, work, settings, "hybrid")
    return {mode: LocalSource("corpus", settings=settings, mode=mode) for mode in RETRIEVAL_METHODS}


def document_key(metadata: dict[str, Any]) -> str:
    """The id of the input document a retrieved chunk came from."""
    return str(metadata.get("parent_id") or metadata.get("doc_id") or metadata.get("id") or "")


def score_retrieval(source: Any, mode: str, item: EvalItem, depth: int) -> dict[str, Any]:
    """Rank documents for `item.question` and score recall/HIT/NDCG at several k."""
    start = time.perf_counter()
    error = None
    ranked: list[str] = []
    try:
        # Several chunks of one document may rank; ask deeper and count documents once.
        documents = source.search(item.question, depth * 4)
        ranked = list(dict.fromkeys(document_key(d.metadata) for d in documents))[:depth]
    except Exception as failure:
        error = f"{type(failure).__name__}: {failure}"
    gold = list(item.gold_doc_ids)
    scores: dict[str, float] = {}
    for k in RETRIEVAL_KS:
        scores[f"recall@{k}"] = metrics.recall_at_k(ranked, gold, k)
        scores[f"hit@{k}"] = metrics.hit_at_k(ranked, gold, k)
        scores[f"ndcg@{k}"] = metrics.ndcg_at_k(ranked, gold, k)
    return {
        "method": mode,
        "id": item.id,
        "question": item.question,
        "golds": gold,
        "ranked": ranked,
        "scores": scores,
        "latency_s": time.perf_counter() - start,
        "node_latency": [],
        "error": error,
    }
