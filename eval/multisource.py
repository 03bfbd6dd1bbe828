"""Multi-source retrieval on MedQuAD split by NIH site: balanced vs stacked vs planned.

Each sampled question (`question`) has one gold snippet (`id`) in one site's source.
The corpus indexed per site is a seeded sample of that site's snippets that contains every
gold snippet plus distractors (the same share of every site, so the big sites stay big).
Arms, each returning a top-k over all selected sources:

- `stacked`: the original question to every source, rankings fused by reciprocal rank
  (`CombinedSource`, the pre-RAG² default);
- `balanced`: the same top-k from every source, pooled and reranked once by the question
  (`BalancedSource`, RAG²);
- `planned:<name>`: a planner `(question, sources) -> {source name: [queries]}` chooses the
  sources and queries; each query retrieves `plan_depth` documents, and the pool is
  reranked by the question to the top-k (SPO's procedure);
- `gold-site only`: the question to the gold's own site alone (perfect routing, a ceiling);
- `stacked by cosine`: every site's dense top-k merged by raw cosine (MedRAG's stacking,
  which RAG² compares against; sites only, graph documents have no cosine).

Each arm runs with and without the concept graph. Metrics: recall@k (= hit@k, one gold)
and NDCG@k overall and per gold site, and how the top-k splits between sources.

Run: `prefrag eval-sources --out runs/multisource` (see `--help`).
"""

from __future__ import annotations

import importlib
import json
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer
from langchain_core.documents import Document

from prefrag.config import Settings, get_settings
from prefrag.eval.metrics import ndcg_at_k, recall_at_k
from prefrag.jsonl import write_jsonl
from prefrag.sources.balanced import BalancedSource, RelevanceScorer
from prefrag.sources.base import Source
from prefrag.sources.combined import CombinedSource
from prefrag.sources.medquad_demo import (
    GRAPH_STORE,
    SITE_STORES,
    bundled_registry_path,
    by_site,
    graph_triples,
    read_medquad,
    sample_site,
    snippet_document,
)

Planner = Callable[[str, Sequence[Source]], Mapping[str, Sequence[str]]]


@dataclass
class MultiSourceConfig:
    """One multi-source retrieval evaluation.

    Attributes:
        data: The MedQuAD folder.
        work: Where the sampled indexes are built (reused when the sample is the same).
        questions: Questions sampled, the same number from each site.
        corpus_share: Share of each site's snippets indexed (gold snippets always are).
        k: Documents scored per arm (recall@k, NDCG@k).
        plan_depth: Documents each planned query retrieves before the rerank.
        seed: Seed of the question and corpus samples.
        registry: Registry file naming and describing the site sources and the graph
            (its `store`s name the MedQuAD indexes); default the bundled demo registry.
    """

    data: Path
    work: Path
    questions: int = 300
    corpus_share: float = 0.1
    k: int = 10
    plan_depth: int = 20
    seed: int = 0
    registry: Path | None = None
    graph: bool = True


@dataclass
class ArmResult:
    """Scores of one arm: per-question ranks, overall and per-site means, source shares.

    `gold_definition` is the share of questions whose top-k holds a graph definition taken
    from the gold snippet (not counted in recall: it is a shortened copy, not the snippet).
    """

    name: str
    recall: float = 0.0
    ndcg: float = 0.0
    per_site: dict[str, float] = field(default_factory=dict)
    shares: dict[str, float] = field(default_factory=dict)
    gold_definition: float = 0.0
    seconds: float = 0.0
    ranks: list[int | None] = field(default_factory=list)


@dataclass
class Question:
    """A sampled question, its gold snippet and the site (source name) holding it."""

    text: str
    gold: str
    site: str


def sample_questions(
    rows: Sequence[dict[str, Any]], count: int, seed: int
) -> dict[str, list[dict[str, Any]]]:
    """`count` questions spread evenly over the seven sites (seeded), grouped by site."""
    groups = by_site(rows)
    per_site = max(1, count // len(groups))
    rng = random.Random(seed)
    return {site: rng.sample(items, min(per_site, len(items))) for site, items in groups.items()}


def build_sources(
    config: MultiSourceConfig, settings: Settings | None = None, *, progress: bool = False
) -> tuple[list[Source], Source | None, list[Question]]:
    """Index the sample (once) and open the site sources, the graph and the questions.

    Source names, descriptions and query formats come from the registry file; a registry
    source whose `store` is not a MedQuAD index is left out.
    """
    from prefrag.index.graph_store import index_graph
    from prefrag.index.ingest import index_paths
    from prefrag.sources.registry_file import load_registry_file, open_spec

    base = settings or get_settings()
    home = Path(config.work) / "home"
    settings = base.model_copy(update={"home": home, "web_enabled": False})
    rows = read_medquad(config.data)
    asked = sample_questions(rows, config.questions, config.seed)
    site_of_store = {store: site for site, store in SITE_STORES.items()}
    questions: list[Question] = []
    for site, site_rows in by_site(rows).items():
        golds = [row["id"] for row in asked[site]]
        size = max(len(golds), round(config.corpus_share * len(site_rows)))
        chosen = sample_site(site_rows, size, config.seed, keep=golds)
        store = SITE_STORES[site]
        marker = Path(config.work) / f"{store}.ids.json"
        ids = [row["id"] for row in chosen]
        if not marker.exists() or json.loads(marker.read_text()) != ids:
            path = write_jsonl(
                (snippet_document(r) for r in chosen), Path(config.work) / f"{store}.jsonl"
            )
            index_paths([path], store, settings=settings, progress=progress)
            marker.write_text(json.dumps(ids))
    specs = load_registry_file(config.registry or bundled_registry_path())
    sites: list[Source] = []
    graph: Source | None = None
    for spec in specs:
        if spec.kind == "local" and spec.store_name in site_of_store:
            source = open_spec(spec, settings)
            sites.append(source)
            for row in asked[site_of_store[spec.store_name]]:
                questions.append(Question(row["question"], row["id"], source.name))
        elif spec.kind == "graph" and spec.store_name == GRAPH_STORE and config.graph:
            graph_file = Path(config.work) / f"{GRAPH_STORE}.jsonl"
            if not graph_file.exists():
                write_jsonl(graph_triples(rows), graph_file)
            index_graph([graph_file], GRAPH_STORE, settings=settings)
            graph = open_spec(spec, settings)
    missing = sorted(set(SITE_STORES.values()) - {getattr(s, "store", "") for s in sites})
    if missing:
        from prefrag.errors import ConfigurationError

        raise ConfigurationError(
            f"Registry {config.registry or bundled_registry_path()} has no text source for "
            f"{', '.join(missing)}."
        )
    return sites, graph, questions


def planned_search(
    plan: Mapping[str, Sequence[str]],
    sources: Sequence[Source],
    question: str,
    k: int,
    scorer: RelevanceScorer,
    *,
    depth: int = 20,
) -> list[Document]:
    """Run a source plan: each query's top-`depth`, pooled, reranked by `question` to `k`.

    Sources the plan names but that do not exist, and empty queries, are skipped.
    """
    by_name = {source.name: source for source in sources}
    pool: list[Source] = []
    for name, queries in plan.items():
        source = by_name.get(name)
        if source is None:
            continue
        pool += [_Fixed(source, query) for query in queries if query.strip()]
    if not pool:
        return []
    return BalancedSource(pool, scorer, question=question, per_source=depth).search(question, k)


class _Fixed:
    """A source that always searches its planned query (so balancing runs the plan)."""

    def __init__(self, source: Source, query: str) -> None:
        self.source, self.query = source, query
        self.name, self.kind, self.authority = source.name, source.kind, source.authority
        self.description = source.description
        self.query_format = getattr(source, "query_format", "")
        self.vectors_of = getattr(source, "vectors_of", None)

    @property
    def last_note(self) -> str | None:
        return self.source.last_note

    def search(self, query: str, k: int) -> list[Document]:
        return self.source.search(self.query, k)


def run_multisource(
    config: MultiSourceConfig,
    *,
    planners: Mapping[str, Planner] | None = None,
    settings: Settings | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Evaluate every arm with and without the graph; returns the summary (also written).

    Writes `summary.json` and `report.md` under `config.work`.
    """
    sites, graph, questions = build_sources(config, settings, progress=progress)
    scorer = RelevanceScorer()
    layouts: list[tuple[str, list[Source]]] = [("sites", sites)]
    if graph is not None:
        layouts.append(("sites+graph", [*sites, graph]))
    results: list[ArmResult] = []
    results.append(_score("gold-site only", questions, _gold_site(sites, config.k), config.k))
    results.append(
        _score("stacked by cosine [sites]", questions, _by_cosine(sites, config.k), config.k)
    )
    for label, members in layouts:
        stacked = CombinedSource(members)
        balanced = BalancedSource(members, scorer, per_source=config.k)
        arms: list[tuple[str, Callable[[Question], list[Document]]]] = [
            (f"stacked [{label}]", _searching(stacked, config.k)),
            (f"balanced [{label}]", _searching(balanced, config.k)),
        ]
        for name, planner in (planners or {}).items():
            arms.append(
                (f"planned: {name} [{label}]", _planned_arm(planner, members, config, scorer))
            )
        results += [_score(name, questions, run, config.k) for name, run in arms]
    summary = {
        "config": {**asdict(config), "data": str(config.data), "work": str(config.work)},
        "questions": len(questions),
        "corpus": {getattr(s, "store", s.name): _snippets(s) for s in sites},
        "arms": [{k: v for k, v in asdict(r).items() if k != "ranks"} for r in results],
    }
    out = Path(config.work)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (out / "report.md").write_text(report(summary, [s.name for s in sites]))
    return summary


def _snippets(source: Source) -> int:
    """Documents (snippets, not chunks) a site source holds."""
    manifest = getattr(source, "manifest", None)
    return int(manifest.documents) if manifest is not None else 0


def _by_cosine(sites: Sequence[Source], k: int) -> Callable[[Question], list[Document]]:
    """MedRAG-style stacking: every site's dense top-k merged by raw cosine."""
    from prefrag.sources.local import LocalSource

    dense = [
        LocalSource(s.store, settings=s.settings, mode="dense", label=s.name)  # type: ignore[attr-defined]
        for s in sites
    ]

    def run(question: Question) -> list[Document]:
        pool = [d for source in dense for d in source.search(question.text, k)]
        return sorted(pool, key=lambda d: -float(d.metadata["score"]))[:k]

    return run


def _searching(source: Source, k: int) -> Callable[[Question], list[Document]]:
    def run(question: Question) -> list[Document]:
        return source.search(question.text, k)

    return run


def _gold_site(sites: Sequence[Source], k: int) -> Callable[[Question], list[Document]]:
    by_name = {source.name: source for source in sites}

    def run(question: Question) -> list[Document]:
        return by_name[question.site].search(question.text, k)

    return run


def _planned_arm(
    planner: Planner, members: list[Source], config: MultiSourceConfig, scorer: RelevanceScorer
) -> Callable[[Question], list[Document]]:
    def run(question: Question) -> list[Document]:
        plan = planner(question.text, members)
        return planned_search(
            plan, members, question.text, config.k, scorer, depth=config.plan_depth
        )

    return run


def _score(
    name: str, questions: Sequence[Question], run: Callable[[Question], list[Document]], k: int
) -> ArmResult:
    started = time.perf_counter()
    result = ArmResult(name)
    hits: dict[str, list[float]] = defaultdict(list)
    shares: Counter[str] = Counter()
    ndcgs = []
    definitions = 0
    for question in questions:
        documents = run(question)[:k]
        ranked = [str(d.metadata.get("parent_id") or d.metadata.get("id")) for d in documents]
        ranked = list(dict.fromkeys(ranked))
        hit = recall_at_k(ranked, [question.gold], k)
        hits[question.site].append(hit)
        ndcgs.append(ndcg_at_k(ranked, [question.gold], k))
        result.ranks.append(ranked.index(question.gold) + 1 if question.gold in ranked else None)
        shares.update(str(d.metadata.get("source")) for d in documents)
        definitions += any(d.metadata.get("ref") == question.gold for d in documents)
    every = [h for values in hits.values() for h in values]
    result.recall = sum(every) / max(1, len(every))
    result.ndcg = sum(ndcgs) / max(1, len(ndcgs))
    result.per_site = {site: sum(v) / len(v) for site, v in hits.items()}
    total = sum(shares.values()) or 1
    result.shares = {name: count / total for name, count in shares.most_common()}
    result.gold_definition = definitions / max(1, len(questions))
    result.seconds = time.perf_counter() - started
    return result


def report(summary: Mapping[str, Any], sites: Sequence[str]) -> str:
    """The summary as Markdown: overall and per-site recall, and top-k source shares."""
    k = summary["config"]["k"]
    lines = [
        f"# Multi-source retrieval on MedQuAD by site ({summary['questions']} questions)",
        "",
        "Corpus per site (snippets): "
        + ", ".join(f"{name} {count}" for name, count in summary["corpus"].items()),
        "",
        f"| arm | recall@{k} | NDCG@{k} | " + " | ".join(sites) + " | gold def. | seconds |",
        "|---|---|---|" + "---|" * len(sites) + "---|---|",
    ]
    for arm in summary["arms"]:
        per_site = " | ".join(f"{arm['per_site'].get(site, 0.0):.3f}" for site in sites)
        lines.append(
            f"| {arm['name']} | {arm['recall']:.3f} | {arm['ndcg']:.3f} | {per_site} | "
            f"{arm['gold_definition']:.3f} | {arm['seconds']:.0f} |"
        )
    lines += [
        "",
        "Per-site columns: recall@k of the questions whose gold snippet is in that site. "
        f"gold def.: share of questions whose top-{k} holds the graph's definition taken "
        "from the gold snippet (not counted as a hit).",
        "",
        f"Share of the top-{k} by source:",
        "",
    ]
    for arm in summary["arms"]:
        shares = ", ".join(f"{name} {share:.0%}" for name, share in arm["shares"].items())
        lines.append(f"- {arm['name']}: {shares}")
    return "\n".join(lines) + "\n"


def load_planner(spec: str) -> Planner:
    """The planner named `module:function` (e.g. `mypkg.plans:route`).

    Raises:
        ConfigurationError: The module or function cannot be found.
    """
    from prefrag.errors import ConfigurationError

    module_name, _, attribute = spec.partition(":")
    try:
        planner = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError, ValueError) as error:
        raise ConfigurationError(f"Cannot load planner {spec!r}: {error}.") from None
    if not callable(planner):
        raise ConfigurationError(f"Planner {spec!r} is not callable.")
    return planner


def eval_sources_command(
    out: Annotated[Path, typer.Option("--out", help="Work and output folder (indexes reused).")],
    data: Annotated[
        Path | None,
        typer.Option("--data", help="MedQuAD folder [default: PREFRAG_SHARED_DATA/medquad]."),
    ] = None,
    registry: Annotated[
        Path | None,
        typer.Option("--registry", help="Registry naming the site sources [default: the demo]."),
    ] = None,
    questions: Annotated[
        int, typer.Option("--questions", help="Questions, spread evenly over the sites.")
    ] = 300,
    corpus_share: Annotated[
        float,
        typer.Option("--corpus-share", help="Share of each site's snippets indexed (+ golds)."),
    ] = 0.1,
    k: Annotated[int, typer.Option("--k", help="Documents scored per arm.")] = 10,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the samples.")] = 0,
    no_graph: Annotated[
        bool, typer.Option("--no-graph", metavar="", help="Leave the concept graph out.")
    ] = False,
    planner: Annotated[
        list[str] | None,
        typer.Option("--planner", help="A planner 'module:function' as an extra arm (repeatable)."),
    ] = None,
) -> None:
    """Multi-source retrieval on MedQuAD by site: balanced vs stacked (vs planned)."""
    from rich.console import Console
    from rich.markup import escape

    from prefrag.errors import PrefRAGError

    errors = Console(stderr=True)
    try:
        config = MultiSourceConfig(
            data=data or get_settings().shared_data / "medquad",
            work=out,
            questions=questions,
            corpus_share=corpus_share,
            k=k,
            seed=seed,
            registry=registry,
            graph=not no_graph,
        )
        planners = {spec: load_planner(spec) for spec in planner or []}
        out.mkdir(parents=True, exist_ok=True)
        run_multisource(config, planners=planners, progress=True)
    except PrefRAGError as error:
        errors.print(f"[bold red]error:[/] {escape(str(error))}")
        raise typer.Exit(code=2) from None
    sys.stdout.write((out / "report.md").read_text())


def main() -> None:  # pragma: no cover - `python -m prefrag.eval.multisource`
    """Run the evaluation as its own command."""
    typer.run(eval_sources_command)


if __name__ == "__main__":  # pragma: no cover
    main()
