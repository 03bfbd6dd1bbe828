"""Malformed model output for every role: parsers never raise, LLMReasoner falls back safely."""

from __future__ import annotations

import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from prefrag.documents import make_document
from prefrag.reasoners.base import AnswerDraft, CompareVerdict, Reflection, ThinkDecision
from prefrag.reasoners.llm import NO_ANSWER, LLMReasoner
from prefrag.reasoners.parsing import (
    parse_answer,
    parse_compare,
    parse_reflection,
    parse_think,
    strip_citations,
)

EXAMPLES = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SOURCES = ["demo", "web"]
DOCS = [make_document("Olsen died in 1974.", id="doc-olsen", source="demo", title="Olsen")]

# Fragments of the formats the models are asked for, so random text often comes close.
FRAGMENTS = [
    "Thought:",
    "Action:",
    "Action Input:",
    "Observation:",
    "Final Answer:",
    "Self-Evaluation:",
    "Explanation:",
    "Improvement Suggestions:",
    "Search_Engine",
    "Search_web",
    "Search_",
    "Finish[",
    "CORRECT",
    "INCORRECT",
    "PARTIALLY",
    "correct",
    '"status":',
    "'status':",
    "status:",
    '"analysis":',
    "True",
    "False",
    "true",
    "yes",
    "<True or False>",
    "{",
    "}",
    "[",
    "]",
    "```json",
    "```",
    '"',
    "'",
    "\\",
    "\n",
    " ",
    "[doc-olsen]",
    "null",
    "{{",
    "}}",
]
# Garbage that cannot itself form a verdict, a label or a ReAct marker.
NOISE = st.text(alphabet="abcdeghkmopsuvwxyz .,!?\n", max_size=60)

random_text = st.text(max_size=300)
format_soup = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), max_size=30
).map("".join)
malformed = st.one_of(random_text, format_soup)


def _truncated(text: str) -> st.SearchStrategy[str]:
    return st.integers(min_value=0, max_value=len(text)).map(lambda cut: text[:cut])


VALID_COMPARE = json.dumps({"analysis": "Adds the year of death.", "status": "False"}, indent=2)
truncated_json = _truncated(VALID_COMPARE)


@EXAMPLES
@given(text=st.one_of(malformed, truncated_json))
def test_parsers_never_raise(text):
    assert parse_think(text, SOURCES) is None or isinstance(
        parse_think(text, SOURCES), ThinkDecision
    )
    assert parse_compare(text) is None or isinstance(parse_compare(text), CompareVerdict)
    assert parse_answer(text) is None or isinstance(parse_answer(text), AnswerDraft)
    assert parse_reflection(text) is None or isinstance(parse_reflection(text), Reflection)


@EXAMPLES
@given(before=NOISE, after=NOISE, status=st.booleans(), fenced=st.booleans())
def test_compare_recovers_a_valid_block_inside_garbage(before, after, status, fenced):
    block = json.dumps({"analysis": "why", "status": str(status)})
    if fenced:
        block = f"```json\n{block}\n```"
    verdict = parse_compare(f"{before}{block}{after}")
    assert verdict is not None and verdict.status is status and verdict.analysis == "why"


@EXAMPLES
@given(
    before=NOISE, after=NOISE, query=st.from_regex(r"[A-Za-z][A-Za-z0-9 ]{0,30}", fullmatch=True)
)
def test_think_recovers_a_search_inside_garbage(before, after, query):
    text = f"{before}\nThought: look it up\nAction: Search_web\nAction Input: {query}\n{after}"
    decision = parse_think(text, SOURCES)
    assert decision is not None
    assert (decision.action, decision.query, decision.source) == ("search", query.strip(), "web")


@EXAMPLES
@given(
    before=NOISE,
    after=NOISE,
    label=st.sampled_from(["CORRECT", "PARTIALLY CORRECT", "INCORRECT"]),
)
def test_reflection_recovers_a_label_inside_garbage(before, after, label):
    reflection = parse_reflection(f"{before}\nSelf-Evaluation: {label}\n{after}")
    assert reflection is not None and reflection.label == label


def _reasoner(reply: str) -> LLMReasoner:
    return LLMReasoner({"default": FakeListChatModel(responses=[reply])})


@EXAMPLES
@given(text=st.one_of(malformed, truncated_json))
def test_think_falls_back_to_searching_the_question(text):
    decision = _reasoner(text).think("Who?", [], sources=SOURCES)
    if parse_think(text, SOURCES) is None:
        assert decision.fallback and decision.action == "search" and decision.query == "Who?"
        assert decision.usage.calls == 2
    else:
        assert not decision.fallback and decision.usage.calls == 1
    forced = _reasoner(text).think("Who?", [], sources=SOURCES, force_answer=True)
    assert forced.action == "answer" and forced.answer


@EXAMPLES
@given(text=st.one_of(malformed, truncated_json))
def test_compare_falls_back_to_keeping_local(text):
    verdict = _reasoner(text).compare("Who?", DOCS, DOCS)
    if parse_compare(text) is None:
        assert verdict.fallback and verdict.status is True
    else:
        assert not verdict.fallback and verdict.status == parse_compare(text).status


@EXAMPLES
@given(text=st.one_of(malformed, truncated_json))
def test_answer_falls_back_to_the_raw_text(text):
    draft = _reasoner(text).answer("Who?", [], DOCS)
    assert draft.answer
    assert set(draft.cited_ids) <= {"doc-olsen"}
    if parse_answer(text) is None:
        assert draft.fallback
        raw = strip_citations(text)
        if not raw.strip():
            assert draft.answer == NO_ANSWER
        elif draft.answer == NO_ANSWER:  # only format labels: no answer, an abstention
            labels = r"(?i)final\s+answer|answer|thought|action(\s+input)?|observation|"
            labels += r"self[-\s]*evaluation|explanation|citations?"
            assert draft.abstained and not re.sub(labels, "", raw).strip(" \t\n*_-:.`\"'#")
        else:  # the raw reply itself, trimmed
            assert all(word in raw for word in draft.answer.split() if word != "...")


@EXAMPLES
@given(text=st.one_of(malformed, truncated_json))
def test_reflect_falls_back_to_correct(text):
    reflection = _reasoner(text).reflect("Who?", "1974", DOCS)
    if parse_reflection(text) is None:
        assert reflection.fallback and reflection.label == "CORRECT"
    else:
        assert reflection.label == parse_reflection(text).label


def test_a_reflection_echoing_the_label_template_is_unreadable_not_correct() -> None:
    # A small real model continues the prompt and repeats its placeholder line.
    echo = "Self-Evaluation: <CORRECT, PARTIALLY CORRECT or INCORRECT>\nExplanation: <why>"
    assert parse_reflection(echo) is None
    verdict = parse_reflection(echo + "\nSelf-Evaluation: INCORRECT\nExplanation: wrong dose")
    assert verdict is not None and verdict.label == "INCORRECT"
