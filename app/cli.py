"""The `prefrag` command line: index documents, list sources, ask questions, evaluate."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from prefrag.cli_text import clear_errors, json_for_terminal, plain
from prefrag.errors import PrefRAGError
from prefrag.run_options import with_run_settings

app = typer.Typer(
    name="prefrag",
    help="Preference-driven multi-source RAG: local sources first, the web when needed.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
errors = Console(stderr=True)
T = TypeVar("T")


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        console.print(f"prefrag {version('prefrag')}")
        raise typer.Exit()


@app.callback()
def _main(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            metavar="",
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """Preference-driven multi-source RAG: local sources first, the web when needed."""
    from prefrag.config import get_settings

    with clear_errors():
        get_settings()  # an invalid setting is one sentence before any command runs


@app.command()
def index(
    paths: Annotated[list[Path], typer.Argument(help="JSONL, Markdown or text files.")],
    source: Annotated[str, typer.Option("--source", "-s", help="Source name to index into.")],
    authority: Annotated[
        float | None, typer.Option(help="Authority of this source in [0, 1].")
    ] = None,
    mog: Annotated[
        bool,
        typer.Option(
            "--mog", metavar="", help="Also build the five-level Mix-of-Granularity index."
        ),
    ] = False,
    kind: Annotated[
        str,
        typer.Option(
            "--kind",
            help="'text' (documents) or 'graph' (JSONL/CSV triples: subject, relation, object "
            "[, source, priority, url, ref]) for a knowledge-graph source.",
        ),
    ] = "text",
    rebuild: Annotated[
        bool,
        typer.Option(
            "--rebuild",
            metavar="",
            help="Replace the source with exactly these files (drops every other chunk).",
        ),
    ] = False,
) -> None:
    """Index documents into a local source (idempotent: known chunks are skipped).

    A damaged source is repaired from what it still holds; no chunk is dropped.
    """
    from prefrag.index.ingest import index_paths

    if kind not in ("text", "graph"):
        errors.print(f"[bold red]error:[/] --kind must be 'text' or 'graph', not {escape(kind)!r}.")
        raise typer.Exit(code=2)
    if kind == "graph":
        _index_graph(paths, source, mog=mog, authority=authority)
        return
    with clear_errors():
        report = index_paths(paths, source, progress=True, authority=authority, rebuild=rebuild)

    for warning in report.warnings:
        errors.print(f"[bold yellow]warning:[/] {plain(warning, limit=4000)}")
    if report.rebuilt:
        done = "; ".join(report.repairs) or "nothing else was lost"
        console.print(
            f"[yellow]{escape(source)}[/]: the index was damaged ({escape(report.rebuilt)}); "
            f"repaired: {escape(done)}."
        )
    console.print(
        f"[green]{escape(source)}[/]: {report.added} chunks added, "
        f"{report.skipped} already indexed."
    )
    if mog:
        from prefrag.tools.granularity_source import build_mog_index

        with clear_errors():
            sizes = build_mog_index(source).size_report()
        console.print(f"[green]{source}[/]: MoG index built ({_describe_sizes(sizes)}).")


def _index_graph(paths: list[Path], source: str, *, mog: bool, authority: float | None) -> None:
    from prefrag.index.graph_store import index_graph

    if mog:
        errors.print("[bold red]error:[/] --mog applies to text sources, not graphs.")
        raise typer.Exit(code=2)
    with clear_errors():
        report = index_graph(paths, source, authority=authority)
    console.print(
        f"[green]{escape(source)}[/]: {report.added} triples added, {report.skipped} already "
        f"indexed; {report.concepts} concepts, {report.definitions} definitions, "
        f"{report.relations} relations."
    )


def _describe_sizes(sizes: dict[str, float]) -> str:
    levels = sorted(key for key in sizes if key.startswith("chunks_"))
    chunks = "/".join(str(int(sizes[key])) for key in levels)
    return f"chunks per level {chunks}, {sizes['total_bytes'] / 1e6:.1f} MB"


sources_app = typer.Typer(
    help="List the sources a question can use, or remove a local one.",
    invoke_without_command=True,
)
app.add_typer(sources_app, name="sources")


_SOURCES_FILE_HELP = (
    "YAML source registry to use (names, descriptions, query formats, kinds, authority, "
    "stores) [default: PREFRAG_SOURCES_FILE, else every indexed source]."
)


DEMO_HELD_BACK = (
    "`demo` (the bundled demo corpus) is searched only when asked, now that you have indexed "
    "your own sources: `prefrag ask --source demo` asks it alone, PREFRAG_INCLUDE_DEMO=true "
    "keeps it in `local` and the default sources, and `prefrag sources remove demo` deletes it."
)


@sources_app.callback()
def sources(
    ctx: typer.Context,
    sources_file: Annotated[Path | None, typer.Option("--sources", help=_SOURCES_FILE_HELP)] = None,
) -> None:
    """List the indexed local sources, the combined `local` source and the web."""
    if ctx.invoked_subcommand is not None:
        return
    from prefrag.config import get_settings
    from prefrag.index.catalog import damaged_sources, list_sources

    registry_file = sources_file or get_settings().sources_file
    if registry_file is not None:
        _show_registry(registry_file)
        return
    with clear_errors():
        damaged = damaged_sources(deep=True)
        infos = [info for info in list_sources() if info.name not in damaged]
        graphs = [row for row in _graph_rows() if row[0] not in damaged]
    for error in damaged.values():
        errors.print(f"[bold yellow]damaged:[/] {escape(str(error))}")
    if not infos and not graphs:
        console.print("No local sources yet. `prefrag ask` indexes the demo corpus on first use.")
        return
    table = Table("source", "documents", "chunks", "updated", "path")
    for info in infos:
        table.add_row(
            escape(info.name),
            str(info.documents),
            str(info.chunks),
            info.updated,
            escape(str(info.path)),
        )
    for row in graphs:
        table.add_row(*(escape(value) for value in row))
    from prefrag.demo_corpus import DEMO_SOURCE
    from prefrag.sources.defaults import demo_on_request

    names = [*(info.name for info in infos), *(row[0] for row in graphs)]
    held_back = demo_on_request(names)
    members = [name for name in names if not (held_back and name == DEMO_SOURCE)]
    many = len(members) > 1
    if many:
        counted = [info for info in infos if info.name in members]
        table.add_row(
            "local",
            str(sum(i.documents for i in counted)),
            str(sum(i.chunks for i in counted)),
            "",
            escape(f"combined: {', '.join(members)}"),
        )
    console.print(table)
    if many:
        console.print(
            "[dim]`local` searches every local source at once (balanced: the same top-k from "
            "each, reranked by the question; `--multi-source-mode stacked` fuses their "
            "rankings by reciprocal rank); it is the preferred source unless `--source` names "
            "one. `web` is the fallback unless `--no-web`.[/]"
        )
    if held_back:
        console.print(DEMO_HELD_BACK)


def _graph_rows() -> list[tuple[str, str, str, str, str]]:
    """`prefrag sources` rows of the indexed knowledge graphs."""
    from prefrag.config import get_settings
    from prefrag.index.graph_store import graph_path, list_graphs
    from prefrag.sources.registry_file import graph_size

    settings = get_settings()
    rows = []
    for name in list_graphs(settings):
        path = graph_path(name, settings)
        rows.append((name, graph_size(path), "-", "", str(path)))
    return rows


def _show_registry(path: Path) -> None:
    """The sources of a registry file: kind, description, query format, size."""
    from prefrag.config import get_settings
    from prefrag.sources.registry_file import describe_specs, load_registry_file

    with clear_errors():
        specs = load_registry_file(path)
        rows = describe_specs(specs, get_settings(), base=path.expanduser().parent)
    table = Table("source", "kind", "description", "query format", "authority", "documents")
    for row in rows:
        table.add_row(*(escape(str(value)) for value in row))
    console.print(table)
    console.print(f"[dim]Registry: {escape(str(path))}[/]")


@sources_app.command("build-medquad-demo")
def sources_build_medquad_demo(
    data: Annotated[
        Path | None,
        typer.Option("--data", help="MedQuAD folder [default: PREFRAG_SHARED_DATA/medquad]."),
    ] = None,
    per_site: Annotated[
        int | None,
        typer.Option("--per-site", help="Index a seeded sample of this many snippets per site."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of --per-site.")] = 0,
) -> None:
    """Index MedQuAD split by NIH site and its concept graph (the demo registry's sources)."""
    from prefrag.config import get_settings
    from prefrag.sources.medquad_demo import build_medquad_demo

    with clear_errors():
        folder = data or get_settings().shared_data / "medquad"
        report = build_medquad_demo(folder, per_site=per_site, seed=seed, progress=True)
    for store, count in report.snippets.items():
        console.print(f"[green]{escape(store)}[/]: {count} snippets")
    console.print(
        f"[green]medquad-graph[/]: {report.concepts} concepts, {report.relations} relations"
    )
    console.print(f"Registry: {escape(str(report.registry))} (use it with --sources).")


@sources_app.command("check")
def sources_check(
    name: Annotated[
        str | None, typer.Argument(help="The source to check; every source if omitted.")
    ] = None,
    full: Annotated[
        bool, typer.Option("--full", help="Also parse every chunk record (slow on big sources).")
    ] = False,
) -> None:
    """Check that a source's files agree (records, vectors, lexical index; a server's points).

    Records are checked by their offsets and line ends without being parsed (`--full`
    parses each). Knowledge graphs get SQLite's own check and a count of every lookup
    table; a source folder whose manifest was deleted is reported too. Exit 2 when any
    source is damaged.
    """
    from prefrag.config import get_settings
    from prefrag.index.catalog import damaged_sources, list_sources
    from prefrag.index.graph_store import list_graphs
    from prefrag.index.integrity import check_graph, check_source

    with clear_errors():
        settings = get_settings()
        texts = {info.name for info in list_sources()} | set(damaged_sources())
        graphs = set(list_graphs()) - texts
        names = sorted(texts | graphs)
        if name is not None:
            if name not in names:
                from prefrag.errors import UnknownSourceError

                known = ", ".join(names) or "none"
                raise UnknownSourceError(f"No source '{name}' (known: {known}).")
            names = [name]
        bad = 0
        for each in names:
            if each in graphs:
                check = check_graph(each, settings)
            else:
                check = check_source(each, settings, qdrant=True, thorough=full)
            if check.sound:
                counts = ", ".join(f"{k} {v}" for k, v in check.counts.items())
                kind = "graph, " if check.kind == "graph" else ""
                console.print(f"[green]{escape(each)}[/]: sound ({kind}{counts}).")
                for note in check.unchecked:
                    errors.print(f"[bold yellow]warning:[/] {escape(each)}: {escape(note)}.")
            else:
                bad += 1
                errors.print(f"[bold red]damaged:[/] {escape(str(check.error()))}")
    if bad:
        raise typer.Exit(code=2)


@sources_app.command("remove")
def sources_remove(
    name: Annotated[str, typer.Argument(help="The source (text or graph) to delete.")],
) -> None:
    """Delete a local source or knowledge graph and everything indexed in it."""
    from prefrag.index.catalog import remove_source

    with clear_errors():
        folder = remove_source(name)
    console.print(f"Removed source [green]{escape(name)}[/] ({escape(str(folder))}).")


@app.command()
@with_run_settings()
def ask(
    question: Annotated[str | None, typer.Argument(help="The question.")] = None,
    as_json: Annotated[
        bool, typer.Option("--json", metavar="", help="Print the result as JSON.")
    ] = False,
    trace: Annotated[
        bool, typer.Option("--trace", metavar="", help="Show the route of every step.")
    ] = False,
    thread: Annotated[
        str | None,
        typer.Option(
            "--thread",
            help="Keep the run under this id (checkpointed): resume it after an interruption "
            "with its own settings, show it again, or ask a follow-up question on it. Without "
            "it nothing is stored.",
        ),
    ] = None,
    no_web: Annotated[
        bool,
        typer.Option("--no-web", metavar="", help="Never search the web (no fallback sources)."),
    ] = False,
    sources_file: Annotated[Path | None, typer.Option("--sources", help=_SOURCES_FILE_HELP)] = None,
    *,
    run_settings: dict[str, Any],
) -> None:
    """Answer a question: preferred local source first, the web only when it adds nothing."""
    if no_web:
        run_settings = {**run_settings, "fallback_sources": []}
    with clear_errors():
        result = _run_ask(question, thread, run_settings, sources_file)
    from prefrag.results import result_record

    record = result_record(result)
    if as_json:
        sys.stdout.write(json_for_terminal(json.dumps(record, ensure_ascii=False, indent=2)) + "\n")
        return
    _print_answer(record, trace=trace)


def _run_ask(
    question: str | None,
    thread: str | None,
    settings: dict[str, Any],
    sources_file: Path | None = None,
) -> dict[str, Any]:
    from prefrag.api import ask as ask_question
    from prefrag.api import make_context, resume
    from prefrag.errors import EmptyQuestionError

    if question is None and thread is None:
        raise EmptyQuestionError("Give a question (or --thread ID to show a stored run).")
    if question is not None:
        from prefrag.questions import checked_question

        question = checked_question(question)
    context = make_context(**settings)
    if thread is None:  # nothing to resume later: no checkpoint is written
        graph = _graph_for(context, sources_file=sources_file)
        return ask_question(question or "", graph=graph, **_fields(context))

    from prefrag.checkpoints import open_checkpointer, stored_run
    from prefrag.config import get_settings
    from prefrag.sources.base import SourceRegistry
    from prefrag.thread_locks import thread_lock

    def waiting() -> None:
        errors.print(f"Another run is using thread '{escape(thread)}'; waiting for it to end…")

    # The lock spans reading the thread and the run, so a run started meanwhile waits.
    database = get_settings().checkpoint_db
    with open_checkpointer() as checkpointer, thread_lock(database, thread, on_wait=waiting):
        probe = build_graph_for_state(SourceRegistry(), checkpointer)
        stored = stored_run(probe, thread)
        if stored is None and question is None:
            raise PrefRAGError(f"No stored run for thread '{thread}'.")
        if stored is not None and (question is None or question.strip() == stored.question):
            if stored.finished:
                return stored.values
            # Resume with the settings the run started with, whatever the options say now.
            graph = _graph_for(stored.context, checkpointer, sources_file=sources_file)
            return resume(thread, graph=graph)
        # A new thread, or a follow-up question: a fresh episode; earlier turns stay in
        # the thread's history.
        graph = _graph_for(context, checkpointer, sources_file=sources_file)
        return ask_question(question or "", graph=graph, thread_id=thread, **_fields(context))


def build_graph_for_state(sources: Any, checkpointer: Any) -> Any:
    """A graph that only reads stored state (no sources are opened)."""
    from prefrag.graphs.graph import build_graph

    return build_graph(sources=sources, checkpointer=checkpointer)


def _graph_for(context: Any, checkpointer: Any = None, *, sources_file: Path | None = None) -> Any:
    """The graph over the default sources a run with `context` needs (web only if used)."""
    from prefrag.config import get_settings
    from prefrag.graphs.graph import build_graph
    from prefrag.sources.defaults import default_sources

    web = "web" in context.fallback_sources
    registry_file = sources_file or get_settings().sources_file
    if context.preferred_source is not None and registry_file is None:
        _check_source_name(context.preferred_source)
    wanted = context.preferred_source
    registry = _with_status(
        "Opening sources",
        lambda: default_sources(web=web, require=wanted, sources_file=registry_file),
    )
    if context.preferred_source is not None:
        registry.get(context.preferred_source)  # an unknown name fails here, listing the known
    return build_graph(sources=registry, checkpointer=checkpointer)


def _check_source_name(name: str) -> None:
    """Reject an unknown source name before anything is opened or indexed."""
    from prefrag.demo_corpus import DEMO_SOURCE
    from prefrag.errors import UnknownSourceError
    from prefrag.index.catalog import damaged_sources, list_sources

    damaged = damaged_sources()
    if name in damaged:
        raise damaged[name]
    from prefrag.index.graph_store import list_graphs
    from prefrag.sources.defaults import demo_on_request

    indexed = [info.name for info in list_sources()]
    graphs = list_graphs()
    searched = [*indexed, *graphs]
    if demo_on_request(searched):
        searched.remove(DEMO_SOURCE)
    many = len(searched) > 1
    known = [*(indexed or [DEMO_SOURCE]), *graphs, *(["local"] if many else []), "web"]
    if name not in known:
        raise UnknownSourceError(f"Unknown source '{name}' (known: {', '.join(known)}).")


def _fields(context: Any) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(context)


def _with_status(message: str, work: Callable[[], T]) -> T:
    if not sys.stderr.isatty():
        return work()
    with errors.status(message):
        return work()


def _print_answer(record: dict[str, Any], *, trace: bool) -> None:

    console.print(f"[bold]Answer:[/] {plain(record['answer']) or '(no answer)'}")
    if isinstance(record.get("confidence"), float):
        what = "that the sources do not answer" if record.get("abstained") else "in this answer"
        console.print(f"[dim]Confidence {what}: {record['confidence']:.2f}[/]")
    for i, cite in enumerate(record["citations"], 1):
        where = plain(cite.get("url") or cite.get("source", ""), limit=200)
        date = f" ({plain(cite['date'], limit=40)})" if cite.get("date") else ""
        title = plain(cite.get("title") or cite["id"], limit=200)
        chunk = f"#{cite['chunk']}" if cite.get("chunk") else ""
        label = plain(f"{cite.get('document') or cite['id']}{chunk}", limit=120)
        console.print(f"  \\[{i}] {title}{date} — {where} [dim]({label})[/]")
    if record["reflections"]:
        last = record["reflections"][-1]
        console.print(
            f"[dim]Self-reflection: {plain(last['label'])}. {plain(last['explanation'])}[/]"
        )
    counters = record["counters"]
    console.print(
        f"[dim]Retrievals: local {counters.get('local_total', 0)} "
        f"(used {counters.get('local_used', 0)}), web {counters.get('web_total', 0)}, "
        f"used {counters.get('used', 0)}[/]"
    )
    for note in record["notes"]:
        console.print(f"[yellow]note:[/] {plain(note)}")
    if trace:
        table = Table("step", "kind", "query", "searched", "verdict", "used", "notes")
        for step in record["route"]:
            table.add_row(
                str(step["step"]),
                step["kind"],
                plain(step["query"], limit=300),
                plain(" → ".join(step["searched"])),
                "" if step["verdict"] is None else str(step["verdict"]),
                plain(f"{step['source']}: {len(step['used'])} docs"),
                plain("; ".join(step["notes"])),
            )
        console.print(table)


def _register_optional_commands() -> None:
    from prefrag.cli_train import register as register_train

    register_train(app)
    try:
        from prefrag.eval.cli import register
    except ImportError:  # pragma: no cover - eval ships with the package
        return
    register(app)


_register_optional_commands()


def main() -> None:  # pragma: no cover - console entry point
    """Run the CLI."""
    app()
