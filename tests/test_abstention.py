"""When the sources do not answer a question, PrefRAG says so instead of inventing a span."""

from __future__ import annotations

import json
from pathlib import Path

from langchain_core.documents import Document
from typer.testing import CliRunner

from prefrag.cli import app
from prefrag.reasoners.base import ScratchpadStep
from prefrag.reasoners.extractive import ABSTENTION, ExtractiveReasoner

runner = CliRunner()


def test_no_evidence_is_an_abstention_that_says_why():
    web_down = ScratchpadStep(query="q", source="web", note="web search unavailable: offline")
    draft = ExtractiveReasoner().answer("Who discovered penicillin?", [web_down], [])
    assert draft.abstained and draft.answer.startswith(ABSTENTION)
    assert "web search was unavailable" in draft.answer
    assert not draft.fallback and not draft.cited_ids


def test_supported_answer_is_not_an_abstention():
    evidence = [
        Document(
            "Alexander Fleming discovered penicillin in 1928.",
            metadata={"id": "d1", "title": "Penicillin", "source": "s"},
        )
    ]
    draft = ExtractiveReasoner().answer("Who discovered penicillin?", [], evidence)
    assert not draft.abstained
    assert "Fleming" in draft.answer and draft.cited_ids == ["d1"]


def test_cli_marks_an_unanswerable_question_as_abstained(tmp_path: Path) -> None:
    corpus = tmp_path / "notes.jsonl"
    corpus.write_text(
        json.dumps({"id": "n1", "title": "Warfarin", "text": "Ibuprofen raises bleeding risk."})
        + "\n"
    )
    assert runner.invoke(app, ["index", str(corpus), "--source", "notes"]).exit_code == 0
    args = ["ask", "--source", "notes", "--no-web", "--json"]
    unanswerable = json.loads(
        runner.invoke(app, [*args, "Which river flows through Ulaanbaatar?"]).stdout
    )
    assert unanswerable["abstained"] is True
    assert unanswerable["answer"].startswith(ABSTENTION)
    assert not any("fallback" in note for note in unanswerable["notes"])
    answered = json.loads(runner.invoke(app, [*args, "What raises bleeding risk?"]).stdout)
    assert answered["abstained"] is False
    # --no-web asks for no fallback: nothing to warn about
    assert not any("not configured" in note for note in answered["notes"])


def test_a_question_asking_for_a_figure_is_not_answered_with_a_sentence_lacking_one():
    evidence = [
        Document(
            "Aspirin and ibuprofen both increase the risk of bleeding in people taking warfarin, "
            "even when the INR stays within its usual range.",
            metadata={"id": "nsaids", "title": "Warfarin and painkillers", "source": "s"},
        )
    ]
    reasoner = ExtractiveReasoner(use_embeddings=False)
    asked = "What is the usual target INR range for warfarin after a heart valve replacement?"
    draft = reasoner.answer(asked, [], evidence)
    assert draft.abstained and "gives the number it asks for" in draft.answer
    # With the figure held, the same question is answered with it.
    evidence.append(
        Document(
            "For a mechanical heart valve the usual target INR range is 2.5 to 3.5.",
            metadata={"id": "valves", "title": "Warfarin targets", "source": "s"},
        )
    )
    answered = reasoner.answer(asked, [], evidence)
    assert not answered.abstained and "2.5" in answered.answer
