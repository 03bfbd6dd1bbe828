"""A module's own notes, indexed through `prefrag index` into a fresh home, then asked
through `prefrag ask --json`: the path a user takes with their own files."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from typer.testing import CliRunner

from prefrag.cli import app
from prefrag.config import get_settings
from prefrag.graphs.graph import PrefRAGGraph, build_graph
from prefrag.sources.defaults import default_sources

runner = CliRunner()


@contextmanager
def indexed_home(
    tmp_path_factory: pytest.TempPathFactory, notes: Mapping[str, str], folders: Iterable[str]
) -> Iterator[Path]:
    """A data directory holding `notes` (relative path -> text), each folder its own source."""
    home = tmp_path_factory.mktemp("prefrag-home")
    written = tmp_path_factory.mktemp("notes")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PREFRAG_HOME", str(home))
        get_settings.cache_clear()
        for name, text in notes.items():
            path = written / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        for folder in folders:
            result = runner.invoke(app, ["index", str(written / folder), "--source", folder])
            assert result.exit_code == 0, result.output
        yield home
    get_settings.cache_clear()


def index_notes(
    folder: Path, notes: Mapping[str, str] | Iterable[Mapping[str, str]], source: str
) -> None:
    """Write `notes` into `folder` and `prefrag index` it as `source` (in the current home).

    A mapping is file name -> text (a name without a suffix becomes `.md` when its text
    opens with a heading, else `.txt`); a sequence of records becomes one JSONL file.
    """
    folder.mkdir(parents=True, exist_ok=True)
    if isinstance(notes, Mapping):
        for name, text in notes.items():
            suffix = "" if "." in name else (".md" if text.startswith("#") else ".txt")
            (folder / f"{name}{suffix}").write_text(text if text.endswith("\n") else text + "\n")
    else:
        rows = "\n".join(json.dumps(dict(note)) for note in notes)
        (folder / f"{source}.jsonl").write_text(rows + "\n")
    result = runner.invoke(app, ["index", str(folder), "--source", source])
    assert result.exit_code == 0, result.output


def thread_graph() -> PrefRAGGraph:
    """The graph over the current home's indexed sources, web off, keeping threads in memory.

    What a follow-up is asked through (`prefrag.ask(..., graph=graph, thread_id=...)`); build
    it after indexing, so its sources are the home's.
    """
    return build_graph(sources=default_sources(web=False), checkpointer=InMemorySaver())


def ask_json(question: str, source: str) -> dict:
    """`prefrag ask QUESTION --source SOURCE --json --no-web`, parsed."""
    result = runner.invoke(app, ["ask", question, "--source", source, "--json", "--no-web"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)
