"""Fault injection, inputs: questions and run settings a user gets wrong, in one sentence.

The same checks hold on the command line, in the API and in the graph Studio runs
(`langgraph dev` itself is exercised in tests/test_studio.py).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from repo_files import studio_factory
from typer.testing import CliRunner

import prefrag
from prefrag.api import make_context
from prefrag.cli import app
from prefrag.errors import ConfigurationError, EmptyQuestionError, InvalidQuestionError
from prefrag.graphs.graph import build_graph
from prefrag.sources.base import SourceRegistry

runner = CliRunner()


def _studio_module():
    return studio_factory()


# --- question length ------------------------------------------------------------------------


def test_an_overlong_question_is_refused_on_the_command_line(monkeypatch):
    monkeypatch.setenv("PREFRAG_MAX_QUESTION_CHARS", "50")
    from prefrag.config import get_settings

    get_settings.cache_clear()
    result = runner.invoke(app, ["ask", "why " * 40, "--no-web"])
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert "over the limit of 50" in text and "PREFRAG_MAX_QUESTION_CHARS" in text
    assert "Traceback" not in result.output


def test_the_default_cap_refuses_a_megabyte_question_before_any_work():
    graph = build_graph(sources=SourceRegistry())
    with pytest.raises(InvalidQuestionError, match="over the limit of 2,000"):
        prefrag.ask("a" * 1_000_000, graph=graph)


def test_the_graph_itself_refuses_an_overlong_or_non_text_question():
    # What Studio sends goes straight into the graph, not through `prefrag.ask`.
    graph = build_graph(sources=SourceRegistry())
    with pytest.raises(InvalidQuestionError, match="over the limit"):
        graph.invoke({"question": "b" * 5000})
    for bad in (42, ["what?"], {"q": "x"}, None):
        with pytest.raises(InvalidQuestionError, match=r"must be text|empty"):
            graph.invoke({"question": bad})


def test_a_non_text_question_in_the_api_is_a_typed_error():
    with pytest.raises(InvalidQuestionError, match="must be text, not int"):
        prefrag.ask(7, graph=build_graph(sources=SourceRegistry()))  # type: ignore[arg-type]
    with pytest.raises(EmptyQuestionError):
        prefrag.ask("   ", graph=build_graph(sources=SourceRegistry()))


# --- run settings -----------------------------------------------------------------------------


@pytest.mark.parametrize("views", [["RU"], ["SAT"], [""], "RUSAT", ["r"], []])
def test_polyview_views_takes_single_known_letters(views):
    with pytest.raises(ConfigurationError, match="polyview_views takes one or more"):
        make_context(polyview_views=views)


def test_polyview_views_on_the_command_line(tmp_path):
    result = runner.invoke(app, ["ask", "What is gout?", "--no-web", "--polyview-views", "SAT"])
    assert result.exit_code == 2
    assert "polyview_views takes one or more" in " ".join(result.output.split())
    assert make_context(polyview_views=["R", "T"]).polyview_views == ["R", "T"]


def test_studios_entry_refuses_unknown_context_keys_like_the_api():
    make_graph = _studio_module()
    with pytest.raises(ConfigurationError, match="Unknown run setting"):
        make_context(top_kk=3)
    with pytest.raises(ConfigurationError, match=r"Unknown run setting\(s\) \['top_kk'\]"):
        make_graph(SimpleNamespace(context={"top_k": 3, "top_kk": 3}))
    with pytest.raises(ConfigurationError, match="polyview_views"):
        make_graph(SimpleNamespace(context={"polyview_views": ["SAT"]}))
    assert make_graph(SimpleNamespace(context={"top_k": 3})) is make_graph(
        SimpleNamespace(context=None)
    )
