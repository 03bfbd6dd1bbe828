"""`prefrag eval`: run methods over a dataset and write items, summary, report and plots."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from prefrag.errors import PrefRAGError

_METHODS_HELP = (
    "Comma-separated methods: prefrag, prefrag-no-pref, prefrag-no-reflection, "
    "prefrag-prompt, no-retrieval, vanilla-local, vanilla-web, vanilla-both, react-both, "
    "react-choose, or 'all'; retrieval datasets (MedQuAD) take dense, lexical, hybrid."
)


def eval_command(
    dataset: Annotated[Path, typer.Option("--dataset", help="Dataset file or folder.")],
    out: Annotated[Path, typer.Option("--out", help="Output folder (resumable).")],
    method: Annotated[str, typer.Option("--method", help=_METHODS_HELP)] = "prefrag",
    reasoner: Annotated[
        str, typer.Option("--reasoner", help="extractive (no model) or llm (settings endpoint).")
    ] = "extractive",
    two_source: Annotated[
        float | None,
        typer.Option(
            "--two-source",
            help="Split HotpotQA paragraphs into local + web; share of questions whose "
            "second gold paragraph stays local.",
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", help="Evaluate the first N items.")
    ] = None,
    sample: Annotated[
        bool, typer.Option("--sample", help="With --limit: a seeded random sample instead.")
    ] = False,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Items run at once.")] = 4,
    top_k: Annotated[int, typer.Option("--top-k", help="Documents per search.")] = 5,
    max_iterations: Annotated[int, typer.Option(help="Retrieval steps before answering.")] = 3,
    max_reflections: Annotated[int, typer.Option(help="Supplements after a bad answer.")] = 1,
    seed: Annotated[int, typer.Option(help="Seed of the split and of --sample.")] = 0,
    source: Annotated[
        str | None,
        typer.Option(
            "--source", help="Preferred indexed local source (datasets without a corpus)."
        ),
    ] = None,
    corpus: Annotated[
        str,
        typer.Option(help="Index 'all' of the dataset's paragraphs or only the evaluated 'items'."),
    ] = "all",
    polyview: Annotated[
        bool,
        typer.Option(
            "--polyview",
            help="Graph methods (prefrag*) rerank each search's candidates with polyview.",
        ),
    ] = False,
    polyview_profile: Annotated[
        str,
        typer.Option("--polyview-profile", help="Polyview weights: 'inquiry', 'policy' or 'care'."),
    ] = "inquiry",
    mog: Annotated[
        bool,
        typer.Option(
            "--mog",
            help="Graph methods (prefrag*) pick local chunks with Mix-of-Granularity; the "
            "local source's MoG index is built first when absent.",
        ),
    ] = False,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="No progress bar.")] = False,
) -> None:
    """Evaluate methods on a dataset: items.jsonl, summary.json, report.md and plots in OUT."""
    from rich.console import Console

    from prefrag.eval.runner import EvalConfig, run_eval

    console, errors = Console(), Console(stderr=True)
    methods = _parse_methods(method)
    if reasoner not in ("extractive", "llm", "auto"):
        errors.print("[bold red]error:[/] --reasoner must be 'extractive' or 'llm'.")
        raise typer.Exit(code=2)
    if corpus not in ("all", "items"):
        errors.print("[bold red]error:[/] --corpus must be 'all' or 'items'.")
        raise typer.Exit(code=2)
    config = EvalConfig(
        dataset=str(dataset),
        methods=methods,
        out=str(out),
        reasoner=reasoner,
        two_source=two_source,
        limit=limit,
        sample=sample,
        concurrency=concurrency,
        top_k=top_k,
        max_iterations=max_iterations,
        max_reflections=max_reflections,
        seed=seed,
        source=source,
        corpus=corpus,
        polyview=polyview,
        polyview_profile=polyview_profile,
        mog=mog,
    )
    try:
        run_eval(config, progress=not no_progress)
    except PrefRAGError as error:
        errors.print(f"[bold red]error:[/] {error}")
        raise typer.Exit(code=2) from None
    console.print((out / "report.md").read_text())
    console.print(f"[dim]Results in {out}[/]")


def _parse_methods(value: str) -> list[str]:
    from prefrag.graphs.baselines import METHODS

    names = [m.strip() for m in value.split(",") if m.strip()]
    if names == ["all"]:
        return list(METHODS)
    return names


def register(app: typer.Typer) -> None:
    """Add `eval` to the main `prefrag` command line."""
    app.command("eval")(eval_command)
