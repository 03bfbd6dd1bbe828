"""The demo a new user runs first: the README's questions answer right, citing the right note."""

from __future__ import annotations

import pytest

from prefrag import ask
from prefrag.sources.defaults import default_sources


@pytest.fixture(scope="module")
def demo():
    return default_sources(web=False)


def _cited(result: dict) -> list[str]:
    return [c["document"] for c in result["citations"]]


@pytest.mark.slow
def test_make_demo_question_answers_with_the_warfarin_nsaid_note(demo) -> None:
    result = ask("Can I take ibuprofen while I am on warfarin?", sources=demo)
    assert "ibuprofen" in result["answer"] and "bleeding" in result["answer"]
    assert result["answer"].endswith(".")  # whole sentences, not a span
    assert _cited(result) == ["demo-warfarin-nsaids"]
    assert result["reflections"][0]["label"] == "CORRECT"


@pytest.mark.slow
def test_readme_list_question_answers_with_the_antibiotics(demo) -> None:
    result = ask("Which antibiotics raise the INR of patients on warfarin?", sources=demo)
    # The sentences listing them, whole; the items alone are the short answer.
    for item in ("Co-trimoxazole", "metronidazole", "fluconazole", "clarithromycin"):
        assert item in result["answer"]
        assert item in (result.get("short_answer") or "")
    assert "S-form" not in (result.get("short_answer") or "")
    assert _cited(result) == ["demo-warfarin-antibiotics"]


@pytest.mark.slow
def test_demo_conflict_follows_the_newer_note_and_says_so(demo) -> None:
    result = ask("How long after finishing metronidazole should alcohol be avoided?", sources=demo)
    assert result["answer"].startswith("at least three days (72 hours)")
    assert "follows the newer, authoritative [demo-metronidazole-alcohol-2022]" in result["answer"]
    assert "demo-metronidazole-alcohol-2022" in _cited(result)
    assert "demo-metronidazole-alcohol-2014" not in _cited(result)


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="stop 33's refit confidence gate answers the web-only question from a local note",
)
def test_demo_web_only_question_abstains_when_the_web_is_off(demo) -> None:
    result = ask("What antidote is given for paracetamol (acetaminophen) overdose?", sources=demo)
    assert result["abstained"] is True
    assert result["answer"].startswith("The sources I could reach do not answer this")
