"""`prefrag eval`: run methods over a dataset and write items, summary, report and plots."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from prefrag.errors import PrefRAGError
from prefrag.run_options import with_run_settings

_METHODS_HELP = (
    "Comma-separated methods: prefrag, prefrag-no-pref, prefrag-no-reflection, "
    "prefrag-prompt, no-retrieval, vanilla-local, vanilla-web, vanilla-both, react-both, "
    "react-choose, or 'all'; retrieval datasets (MedQuAD) take dense, lexical, hybrid."
)


@with_run_settings(exclude=("reasoner",))
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
        bool,
        typer.Option("--sample", metavar="", help="With --limit: a seeded random sample instead."),
    ] = False,
    items: Annotated[
        str | None,
        typer.Option(
            "--items",
            help="Evaluate a 1-based inclusive range of the dataset's items, e.g. 201-350 "
            "(before --limit).",
        ),
    ] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Items run at once.")] = 4,
    seed: Annotated[int, typer.Option(help="Seed of the split and of --sample.")] = 0,
    corpus: Annotated[
        str | None,
        typer.Option(
            help="Index 'all' of the dataset's paragraphs or only the evaluated 'items' "
            "[default: items with --limit or --items, else all]."
        ),
    ] = None,
    switcher: Annotated[
        str | None,
        typer.Option(
            "--switcher",
            help="A trained switcher behind the extractive reasoner's compare: a small "
            "switcher's folder (prefrag train switcher-small) or hf:PATH / openai:NAME.",
        ),
    ] = None,
    task: Annotated[
        str | None,
        typer.Option(
            "--task",
            help="qa: answer a MedQuAD-shaped file's questions from its own snippets (web "
            "off), scored against the gold snippet [default: the file's own task].",
        ),
    ] = None,
    withhold: Annotated[
        float,
        typer.Option(
            "--withhold",
            help="With --task qa: a seeded share (e.g. 0.1) of the questions whose gold "
            "snippet is left out of the index, to score abstention.",
        ),
    ] = 0.0,
    distractors: Annotated[
        float,
        typer.Option(
            "--distractors",
            help="With --task qa and --corpus items: other snippets indexed per evaluated "
            "question (seeded).",
        ),
    ] = 1.0,
    no_progress: Annotated[
        bool, typer.Option("--no-progress", metavar="", help="No progress bar.")
    ] = False,
    *,
    run_settings: dict[str, Any],
) -> None:
    """Evaluate methods on a dataset: items.jsonl, summary.json, report.md and plots in OUT.

    Every run setting of the graph's context is an option too (`--top-k`, `--source`,
    `--polyview`, `--polyview-views`, `--mog`, ...); the tool options act on the
    graph-backed methods (prefrag*), the baselines ignore them.
    """
    from rich.console import Console
    from rich.markup import escape

    from prefrag.eval.runner import EvalConfig, run_eval

    console, errors = Console(), Console(stderr=True)
    methods = _parse_methods(method)
    if reasoner not in ("extractive", "llm", "auto"):
        errors.print("[bold red]error:[/] --reasoner must be 'extractive' or 'llm'.")
        raise typer.Exit(code=2)
    corpus = corpus or ("items" if limit is not None or items else "all")
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
        items=items,
        concurrency=concurrency,
        seed=seed,
        corpus=corpus,
        context=run_settings,
        switcher=switcher,
        task=task,
        withhold=withhold,
        distractors=distractors,
    )
    try:
        run_eval(config, progress=not no_progress)
    except PrefRAGError as error:
        errors.print(f"[bold red]error:[/] {escape(str(error))}")
        raise typer.Exit(code=2) from None
    # The report as written: rich would wrap its table rows and read `[...]` as markup.
    console.print((out / "report.md").read_text(), markup=False, highlight=False, soft_wrap=True)
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
    from prefrag.eval.multisource import eval_sources_command

    app.command("eval-sources")(eval_sources_command)
