"""The demo corpus is for the demo: a user's own sources are not mixed with it unless asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prefrag.cli import app
from prefrag.config import get_settings

runner = CliRunner()
# The demo corpus has a note on exactly this; the user's notes below are about gout.
QUESTION = "Can I take ibuprofen while I am on warfarin?"


@pytest.fixture
def own_notes(tmp_path: Path) -> Path:
    """A user's own Markdown notes, indexed after the demo corpus was set up by a first ask."""
    folder = tmp_path / "my-notes"
    folder.mkdir()
    (folder / "gout.md").write_text(
        "# Gout\n\nFor a gout flare in someone taking an anticoagulant, colchicine is used "
        "instead of an anti-inflammatory painkiller. Allopurinol starts once the flare has "
        "settled.\n"
    )
    first = runner.invoke(app, ["ask", QUESTION, "--no-web", "--json"])
    assert first.exit_code == 0, first.output
    assert {c["source"] for c in json.loads(first.stdout)["citations"]} == {"demo"}
    indexed = runner.invoke(app, ["index", str(folder), "--source", "mine"])
    assert indexed.exit_code == 0, indexed.output
    return folder


def _cited_sources(*args: str) -> set[str]:
    result = runner.invoke(app, ["ask", QUESTION, "--no-web", "--json", *args])
    assert result.exit_code == 0, result.output
    return {c["source"] for c in json.loads(result.stdout)["citations"]}


def test_own_sources_are_answered_without_the_demo(own_notes: Path) -> None:
    """After `prefrag index`, a plain ask never cites the demo; `--source demo` still can."""
    assert "demo" not in _cited_sources()
    assert _cited_sources("--source", "demo") == {"demo"}


def test_sources_says_the_demo_is_held_back_and_how_to_use_it(own_notes: Path) -> None:
    """`prefrag sources` lists no combined `local` with the demo, and says how to ask it."""
    listing = runner.invoke(app, ["sources"], terminal_width=250).output
    assert "combined" not in listing
    assert "--source demo" in listing and "PREFRAG_INCLUDE_DEMO=true" in listing
    known = runner.invoke(app, ["ask", QUESTION, "--source", "local", "--no-web"])
    assert known.exit_code == 2 and "Unknown source 'local'" in known.output


def test_the_setting_keeps_the_demo_in_local(
    own_notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PREFRAG_INCLUDE_DEMO=true: `local` combines both again, and the demo answers."""
    monkeypatch.setenv("PREFRAG_INCLUDE_DEMO", "true")
    get_settings.cache_clear()
    listing = runner.invoke(app, ["sources"], terminal_width=250).output
    assert "combined: demo, mine" in listing and "PREFRAG_INCLUDE_DEMO" not in listing
    assert "demo" in _cited_sources()


def test_the_api_reaches_the_demo_only_by_name(own_notes: Path) -> None:
    """`ask` over the default sources: the user's notes first, the demo when named."""
    from prefrag import ask
    from prefrag.sources.defaults import default_sources

    registry = default_sources(web=False)
    assert registry.names() == ["mine"] and "demo" in registry
    answered = ask(QUESTION, fallback_sources=[])
    assert {c["source"] for c in answered["citations"]} <= {"mine"}
    named = ask(QUESTION, fallback_sources=[], preferred_source="demo")
    assert {c["source"] for c in named["citations"]} == {"demo"}
