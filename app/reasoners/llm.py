"""`LLMReasoner`: any LangChain chat model behind each PrefRAG role.

Per role the reasoner asks for structured output (pydantic wire schemas, JSON-schema mode)
when the model supports it, else plain text read by the tolerant parsers of
`prefrag.reasoners.parsing`. A server that refuses OpenAI's `json_schema` response format
(llama.cpp's server accepts only `text` or `json_object`) is asked for `json_object` with the
schema instead, and text after that. A structured reply that cannot be read is asked for
again as text; a text reply that cannot be read gets one repair retry showing the bad output
and the expected format; after that a documented safe fallback is returned with
`fallback=True`, so malformed output never stops a run. An unreachable or refusing endpoint
is not malformed output: it raises `ModelEndpointError`.

Each request runs in the caller's context (`contextvars`), so LangGraph's
`stream_mode="messages"`, Studio's token stream and LangSmith traces see it even under the
role deadline.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, Literal, TypeVar

from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, Field, ValidationError

from prefrag.documents import DEFAULT_DOC_CHARS, doc_id, format_documents
from prefrag.errors import ConfigurationError, ModelEndpointError
from prefrag.prompts import render_prompt
from prefrag.reasoners.base import (
    AnswerDraft,
    CompareVerdict,
    CondensedQuestion,
    Feedback,
    PriorTurn,
    Reflection,
    ReflectionLabel,
    ScratchpadStep,
    ThinkDecision,
    Usage,
)
from prefrag.reasoners.parsing import (
    extract_citations,
    is_placeholder,
    is_unreadable_reply,
    match_source,
    parse_answer,
    parse_compare,
    parse_condensed,
    parse_reflection,
    parse_think,
    strip_citations,
)
from prefrag.reasoners.plans import (
    SourceBrief,
    SourcePlan,
    original_question_plan,
    parse_plan,
    plan_prompt,
)
from prefrag.reasoners.roles import ROLE_NAMES, complete

__all__ = ["ROLES", "LLMReasoner", "compare_prompt"]

logger = logging.getLogger(__name__)

ROLES = ROLE_NAMES  # kept importable from here
NO_ANSWER = "I could not find an answer."
_MAX_BAD_OUTPUT_CHARS = 2000
_MAX_FALLBACK_ANSWER_CHARS = 500
_THINK_STOP = ["\nObservation:", "\nObservation :"]

T = TypeVar("T", bound=BaseModel)


def compare_prompt(
    question: str,
    held: Sequence[Document],
    new: Sequence[Document],
    *,
    max_doc_chars: int | None = DEFAULT_DOC_CHARS,
) -> str:
    """The switcher prompt exactly as the `compare` role sends it (one user message).

    `prompts/compare.txt` filled with the question, the held evidence and the new local
    documents, each document cut to `max_doc_chars`. The preference-data builder uses this
    same function, so a model trained on its pairs sees at run time what it saw in training.
    """
    return render_prompt(
        "compare",
        question=question,
        existed_info=format_documents(held, max_chars=max_doc_chars),
        observation=format_documents(new, max_chars=max_doc_chars),
    )


# --- wire schemas: what a model is asked to fill in JSON-schema mode ------------------------


class ThinkWire(BaseModel):
    """One ReAct step: search with a query, or answer."""

    thought: str = Field(description="Your reasoning about what to do next.")
    action: Literal["search", "answer"] = Field(description="'search' or 'answer'.")
    query: str = Field(description="The search query when action is 'search', else empty.")
    source: str = Field(description="Source to search (multi-source actions), or empty.")
    answer: str = Field(description="The concise final answer when action is 'answer'.")


class CompareWire(BaseModel):
    """The switcher's verdict (paper Table 20)."""

    analysis: str = Field(description="Your analysis of the new information.")
    status: bool = Field(description="True if the new information is new and useful.")


class AnswerWire(BaseModel):
    """A final answer with supporting document ids."""

    rationale: str = Field(description="Short reasoning behind the answer.")
    answer: str = Field(description="The most concise answer to the question.")
    cited_ids: list[str] = Field(description="Ids of the documents supporting the answer.")


class ReflectWire(BaseModel):
    """A self-evaluation of an answer."""

    label: ReflectionLabel = Field(description="CORRECT, PARTIALLY CORRECT or INCORRECT.")
    explanation: str = Field(description="Why the label was given.")
    suggestion: str = Field(description="How to improve the answer; empty when CORRECT.")


class CondenseWire(BaseModel):
    """A follow-up question rewritten to stand alone."""

    standalone_question: str = Field(
        description="The follow-up rewritten as a standalone question; the follow-up itself "
        "when it already stands alone. Never its answer."
    )


class LLMReasoner:
    """The `Reasoner` protocol over LangChain chat models, one per role.

    Safe fallbacks after a failed repair retry (each marked `fallback=True`):

    - think: search with the question itself as the query (or, when an answer is forced,
      answer with the raw reply trimmed or "I could not find an answer.");
    - compare: keep local (status True), with an analysis saying so. The authors' code
      instead switches to the web (status False) when the judge's reply cannot be parsed
      and does not contain "true"; we keep the preferred source so that a misbehaving judge
      never exposes a run to web content the user did not need;
    - answer: the raw reply trimmed, or "I could not find an answer.";
    - reflect: CORRECT, so no extra retrieval is spent on an unreadable reflection;
    - condense: the question as asked (a follow-up then searches with its own words).
    """

    def __init__(
        self,
        models: Mapping[str, BaseChatModel],
        *,
        structured: bool | Literal["auto"] = "auto",
        max_steps: int = 3,
        max_doc_chars: int | None = DEFAULT_DOC_CHARS,
        deadline: float | None = None,
    ) -> None:
        """Put one chat model behind each role.

        Args:
            models: Chat models keyed by role (think, compare, answer, reflect); a "default"
                key fills the roles not given.
            structured: True asks every role for JSON-schema structured output (a model that
                cannot do it is a configuration error); False always reads text; "auto"
                uses structured output where the model offers it and falls back to text
                when the model or its server refuses it.
            max_steps: The soft limit on search rounds stated in the think prompt.
            max_doc_chars: Trim each document to this many characters in prompts.
            deadline: Seconds one role call may take in all (every request, the client's
                retries and the repair retry); past it the call fails with
                `ModelEndpointError`. None waits as long as the client does.

        Raises:
            ConfigurationError: A role has no model, or structured output is required and
                unsupported.
        """
        self.models: dict[str, BaseChatModel] = complete(models, what="chat model")
        self.structured = structured
        self.max_steps = max_steps
        self.max_doc_chars = max_doc_chars
        self.deadline = deadline
        self._structured_runnables: dict[str, Any] = {}
        # Per role: "json_schema" (OpenAI's form) or "json_object" (with the schema, after
        # a server refused json_schema).
        self._structured_forms: dict[str, str] = {}
        if structured is not False:
            for role, schema in _WIRE.items():
                runnable = _structured_runnable(self.models[role], schema)
                if runnable is None and structured is True:
                    raise ConfigurationError(
                        f"The model for role '{role}' ({_describe(self.models[role])}) does "
                        "not support structured output; use structured='auto' or False."
                    )
                if runnable is not None:
                    self._structured_runnables[role] = runnable
                    self._structured_forms[role] = "json_schema"

    # --- the four roles ---------------------------------------------------------------------

    def think(
        self,
        question: str,
        scratchpad: Sequence[ScratchpadStep],
        *,
        sources: Sequence[str],
        force_answer: bool = False,
        feedback: Feedback | None = None,
        rationale: bool = False,
    ) -> ThinkDecision:
        """Next ReAct step: a thought and a search (sub-query, maybe a source) or an answer.

        `rationale` asks for the thought as a step-by-step rationale (RAG² rationale
        queries: the run then searches with the thought instead of the sub-query).
        """
        sources = list(sources)
        multi = len(sources) > 1
        scratch = self._scratchpad(scratchpad, multi=multi)
        feedback_block = _feedback_block(feedback)
        if rationale and not force_answer:
            feedback_block = "\n".join(
                part for part in (feedback_block, render_prompt("think_rationale")) if part
            )
        if force_answer:
            prompt = render_prompt(
                "forced_answer",
                question=question,
                scratchpad=scratch,
                feedback=feedback_block,
                answer_format=render_prompt("answer_format").strip(),
            )
            draft, usage, raw = self._run(
                "forced",
                prompt,
                parser=parse_answer,
                schema=None,
                convert=None,
                expected=render_prompt("format_answer"),
            )
            if draft is None:
                answer = _fallback_answer(raw, prompt)
                return ThinkDecision(
                    thought="",
                    action="answer",
                    answer=answer,
                    cited_ids=[] if answer == NO_ANSWER else extract_citations(raw),
                    abstained=answer == NO_ANSWER,
                    fallback=True,
                    usage=usage,
                )
            return ThinkDecision(
                thought=draft.rationale,
                action="answer",
                answer=draft.answer,
                cited_ids=draft.cited_ids,
                fallback=draft.fallback,  # a bare reply that ignored the answer format
                usage=usage,
            )

        if multi:
            names = [f"Search_{source}" for source in sources]
            scopes = [f"'{source}' source" for source in sources]
        else:
            names, scopes = ["Search_Engine"], ["knowledge base general"]
        tools = "\n".join(
            render_prompt("tool", action=name, scope=scope).strip()
            for name, scope in zip(names, scopes, strict=True)
        )
        prompt = render_prompt(
            "think",
            tools=tools.strip(),
            tool_names=", ".join(names),
            max_step=self.max_steps,
            answer_format=render_prompt("answer_format").strip(),
            feedback=feedback_block,
            question=question,
            scratchpad=scratch,
        )
        decision, usage, _ = self._run(
            "think",
            prompt,
            parser=lambda text: parse_think(text, sources),
            schema=ThinkWire,
            convert=lambda wire: _think_from_wire(wire, sources),
            expected=render_prompt("format_think", tool_names=", ".join(names)),
            stop=_THINK_STOP,
        )
        if decision is None:
            return ThinkDecision(
                thought="The reply could not be read; searching with the question itself.",
                action="search",
                query=question,
                fallback=True,
                usage=usage,
            )
        if decision.action == "answer":
            decision.answer = strip_citations(decision.answer) or decision.answer
        return decision.model_copy(update={"usage": usage, "is_rationale": rationale})

    def compare(
        self, question: str, held: Sequence[Document], new: Sequence[Document]
    ) -> CompareVerdict:
        """The switcher (paper Table 20): True keeps the new local documents, False switches."""
        prompt = compare_prompt(question, held, new, max_doc_chars=self.max_doc_chars)
        shown = [document.page_content for document in (*held, *new)]
        verdict, usage, _ = self._run(
            "compare",
            prompt,
            parser=lambda text: parse_compare(text, quoted=shown),
            schema=CompareWire,
            convert=lambda wire: CompareVerdict(analysis=wire.analysis, status=wire.status),
            expected=render_prompt("format_compare"),
        )
        if verdict is not None and is_placeholder(verdict.analysis):
            # The format example copied back: its status is the example's, not a verdict.
            logger.info("compare: the reply echoes the prompt's placeholder; no verdict")
            verdict = None
        if verdict is None:
            return CompareVerdict(
                analysis="The judge's reply could not be read; keeping the local documents "
                "(safe fallback).",
                status=True,
                fallback=True,
                usage=usage,
            )
        return verdict.model_copy(update={"usage": usage})

    def answer(
        self,
        question: str,
        scratchpad: Sequence[ScratchpadStep],
        evidence: Sequence[Document],
        *,
        feedback: Feedback | None = None,
        earlier: PriorTurn | None = None,
    ) -> AnswerDraft:
        """The final answer from the evidence, citing ids of documents in `evidence`.

        A follow-up's prompt shows the thread's previous question and answer
        (`prompts/earlier_turn.txt`), so that answer is not given again to a new question.
        """
        prompt = render_prompt(
            "answer",
            question=question,
            scratchpad=self._scratchpad(scratchpad, multi=False) or "(none)",
            evidence=format_documents(evidence, max_chars=self.max_doc_chars),
            feedback=_feedback_block(feedback),
            earlier=_earlier_block(earlier),
            answer_format=render_prompt("answer_format").strip(),
            format=render_prompt("format_answer").strip(),
        )
        draft, usage, raw = self._run(
            "answer",
            prompt,
            parser=parse_answer,
            schema=AnswerWire,
            convert=_answer_from_wire,
            expected=render_prompt("format_answer"),
        )
        known = [doc_id(d) for d in evidence]
        if draft is None:
            answer = _fallback_answer(raw, prompt)
            return AnswerDraft(
                answer=answer,
                cited_ids=[] if answer == NO_ANSWER else _known_ids(extract_citations(raw), known),
                abstained=answer == NO_ANSWER,
                fallback=True,
                usage=usage,
            )
        return draft.model_copy(
            update={"cited_ids": _known_ids(draft.cited_ids, known), "usage": usage}
        )

    def reflect(self, question: str, answer: str, evidence: Sequence[Document]) -> Reflection:
        """Self-evaluation: CORRECT / PARTIALLY CORRECT / INCORRECT, explanation, suggestion."""
        prompt = render_prompt(
            "reflect",
            question=question,
            answer=answer,
            evidence=format_documents(evidence, max_chars=self.max_doc_chars),
            format=render_prompt("format_reflect").strip(),
        )
        reflection, usage, _ = self._run(
            "reflect",
            prompt,
            parser=parse_reflection,
            schema=ReflectWire,
            convert=lambda wire: Reflection(
                label=wire.label, explanation=wire.explanation, suggestion=wire.suggestion
            ),
            expected=render_prompt("format_reflect"),
        )
        if reflection is None:
            return Reflection(
                label="CORRECT",
                explanation="The self-evaluation could not be read; accepting the answer "
                "(safe fallback, no extra retrieval).",
                fallback=True,
                usage=usage,
            )
        return reflection.model_copy(update={"usage": usage})

    def condense(self, question: str, history: Sequence[PriorTurn]) -> CondensedQuestion:
        """A follow-up rewritten to stand alone (`prompts/condense.txt`), or left as asked."""
        prompt = render_prompt(
            "condense",
            history=_history_block(history),
            question=question,
            format=render_prompt("format_condense").strip(),
        )
        condensed, usage, _ = self._run(
            "condense",
            prompt,
            parser=parse_condensed,
            schema=CondenseWire,
            convert=lambda wire: parse_condensed(
                f"Standalone question: {wire.standalone_question}"
            ),
            expected=render_prompt("format_condense"),
        )
        if condensed is None:
            return CondensedQuestion(
                question=question,
                explanation="The rewrite could not be read; the question is used as asked "
                "(fallback).",
                fallback=True,
                usage=usage,
            )
        if " ".join(condensed.question.lower().split()) == " ".join(question.lower().split()):
            return CondensedQuestion(question=question, usage=usage)
        return CondensedQuestion(
            question=condensed.question,
            rewritten=True,
            explanation="rewritten by the condense model from the thread's earlier turns",
            usage=usage,
        )

    def plan(self, question: str, sources: Sequence[SourceBrief]) -> SourcePlan:
        """Per-source queries (Omni-RAG prompt E.7), read by the strict-then-tolerant parser.

        A reply with no tag of any source gets one repair retry; after that the plan falls
        back to the original question for every source (`fallback=True`, noted).
        """
        sources = list(sources)
        if not sources:
            return SourcePlan(notes=["no sources to plan for"])
        prompt = plan_prompt(question, sources)
        example = " ".join(f"<{s.name}>query0 ; query1</{s.name}>" for s in sources)
        plan, usage, _ = self._run(
            "plan",
            prompt,
            parser=lambda text: parse_plan(text, sources),
            schema=None,
            convert=None,
            expected=render_prompt("format_plan", example=example),
        )
        if plan is None:
            plan = original_question_plan(
                question,
                sources,
                notes=[
                    "The plan could not be read (no source tags); every source gets the "
                    "question itself (fallback)."
                ],
            )
        return plan.model_copy(update={"usage": usage})

    # --- one role call: structured, then text, then one repair --------------------------------

    def _run(
        self,
        role: str,
        prompt: str,
        *,
        parser: Callable[[str], T | None],
        schema: type[BaseModel] | None,
        convert: Callable[[Any], T | None] | None,
        expected: str,
        stop: list[str] | None = None,
    ) -> tuple[T | None, Usage, str]:
        """Ask the role's model and parse; return (result or None, usage, raw reply).

        Structured output first (where the role has a schema and the model offers it); a
        structured reply that cannot be read is asked for again as text; an unreadable text
        reply gets one repair retry. None after that: the caller returns its fallback.
        """
        # The forced answer comes from the agent itself, as in the paper.
        model_role = "think" if role == "forced" else role
        model = self.models[model_role]
        usage = Usage()

        def parse(raw: str) -> T | None:
            # The template or the prompt coming back is no reply, whatever it would parse as.
            return None if is_unreadable_reply(raw, prompt) else parser(raw)

        messages: list[BaseMessage] = [HumanMessage(prompt)]
        due = None if self.deadline is None else time.monotonic() + self.deadline
        if schema is not None and role in self._structured_runnables:
            outcome = self._call_structured(role, model, messages, usage, due)
            if outcome is not _UNSUPPORTED:
                parsed_wire, raw = outcome
                result = _convert(convert, parsed_wire) if parsed_wire is not None else None
                if result is not None and is_unreadable_reply(raw, prompt):
                    result = None
                if result is None:
                    result = parse(raw)
                if result is not None:
                    return result, usage, raw
                logger.info("%s: unreadable structured reply; asking for text: %.200r", role, raw)
        raw = self._call_text(model_role, model, messages, usage, stop, due)
        result = parse(raw)
        if result is not None:
            return result, usage, raw
        logger.info("%s: unreadable reply; one repair retry: %.200r", role, raw)
        repair = [
            *messages,
            AIMessage(raw or "(empty reply)"),
            HumanMessage(
                render_prompt(
                    "repair",
                    bad_output=_trim(raw, _MAX_BAD_OUTPUT_CHARS) or "(empty reply)",
                    expected_format=expected.strip(),
                )
            ),
        ]
        raw = self._call_text(model_role, model, repair, usage, stop, due)
        result = parse(raw)
        if result is None:
            logger.info("%s: unreadable after the repair retry: %.200r", role, raw)
        return result, usage, raw

    def _call_text(
        self,
        role: str,
        model: BaseChatModel,
        messages: list[BaseMessage],
        usage: Usage,
        stop: list[str] | None,
        due: float | None = None,
    ) -> str:
        """The text of one plain reply ("" for a reply of the wrong shape, counted)."""
        try:
            message = self._before_deadline(
                role,
                model,
                lambda: model.invoke(messages, stop=stop) if stop else model.invoke(messages),
                due,
            )
        except ModelEndpointError:
            raise
        except Exception as exc:
            error = _endpoint_error(exc, role, model)
            if error is not None:
                raise error from exc
            if isinstance(exc, _MALFORMED_REPLY):
                # e.g. a 200 reply with `"choices": []`: unreadable output, not a failure.
                logger.info("%s: malformed reply (%s: %s)", role, type(exc).__name__, exc)
                usage.calls += 1
                return ""
            raise
        usage.record(message)
        return _content_text(message)

    def _before_deadline(
        self, role: str, model: BaseChatModel, call: Callable[[], Any], due: float | None
    ) -> Any:
        """`call()` in the caller's context, or `ModelEndpointError` once the deadline passes.

        The request runs on a daemon thread so a hanging endpoint cannot hold the run past
        the deadline (the abandoned request ends at the client's own timeout). The thread
        runs in a copy of the caller's `contextvars` context, which carries LangChain's
        run configuration and callbacks: streamed tokens and traces are not lost.
        """
        if due is None:
            return call()
        remaining = due - time.monotonic()
        outcome: dict[str, Any] = {}
        context = contextvars.copy_context()

        def run() -> None:
            try:
                outcome["value"] = context.run(call)
            except BaseException as exc:  # handed to the caller's thread
                outcome["error"] = exc

        worker = threading.Thread(target=run, name=f"prefrag-{role}-call", daemon=True)
        if remaining > 0:
            worker.start()
            worker.join(remaining)
        if remaining <= 0 or worker.is_alive():
            raise ModelEndpointError(
                f"The {_describe(model)} did not answer the '{role}' role within "
                f"{self.deadline:g} s (PREFRAG_ROLE_DEADLINE); check the server or raise it."
            )
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]

    def _call_structured(
        self,
        role: str,
        model: BaseChatModel,
        messages: list[BaseMessage],
        usage: Usage,
        due: float | None = None,
    ) -> Any:
        """(parsed wire object or None, raw text), or `_UNSUPPORTED` to use text instead.

        A server refusing the `json_schema` response format is asked once with
        `json_object` and the schema (llama.cpp's form); refusing that too, the role
        reads text from then on (`structured="auto"`).
        """
        while True:
            runnable = self._structured_runnables.get(role)
            if runnable is None:
                return _UNSUPPORTED
            try:
                output = self._before_deadline(role, model, partial(runnable.invoke, messages), due)
            except ModelEndpointError:
                raise
            except Exception as exc:
                if _is_request_refused(exc) and self.structured is not False:
                    if self._next_structured_form(role, model, exc):
                        continue
                    if self.structured == "auto":
                        return self._downgrade(role, exc)
                error = _endpoint_error(exc, role, model)
                if error is not None:
                    raise error from exc
                cut = _truncated_text(exc)
                if cut is not None:
                    # Cut at max_tokens: the client refuses to parse it; the text may still
                    # hold a readable verdict.
                    usage.calls += 1
                    return None, cut
                if isinstance(exc, (ValidationError, *_MALFORMED_REPLY)):
                    # A reply the structured parser rejected: malformed output, not a failure.
                    logger.info("%s: malformed structured reply (%s)", role, type(exc).__name__)
                    usage.calls += 1
                    return None, ""
                raise
            return _read_structured(output, role, usage)

    def _next_structured_form(self, role: str, model: BaseChatModel, exc: BaseException) -> bool:
        """After a refused `json_schema` request, try `json_object` with the schema once."""
        if self._structured_forms.get(role) != "json_schema":
            return False
        if _json_object_runnable(model, _WIRE[role]) is None:
            return False
        logger.info(
            "%s: the server refused response_format json_schema (%s); asking for json_object "
            "with the schema",
            role,
            _first_sentence(exc),
        )
        for each in self._roles_served_by(model):  # the same server refuses it for all
            if self._structured_forms.get(each) == "json_schema":
                self._structured_runnables[each] = _json_object_runnable(model, _WIRE[each])
                self._structured_forms[each] = "json_object"
        return True

    def _downgrade(self, role: str, exc: BaseException) -> Any:
        logger.warning(
            "%s: the model refused structured output (%s); using text from now on", role, exc
        )
        for each in self._roles_served_by(self.models[role]):
            self._structured_runnables.pop(each, None)
            self._structured_forms.pop(each, None)
        return _UNSUPPORTED

    def _roles_served_by(self, model: BaseChatModel) -> list[str]:
        """The roles with a structured form whose chat model is `model`."""
        return [r for r in _WIRE if self.models.get(r) is model]

    # --- prompt pieces -----------------------------------------------------------------------

    def _scratchpad(self, steps: Sequence[ScratchpadStep], *, multi: bool) -> str:
        rendered = []
        for step in steps:
            action = f"Search_{step.source}" if multi and step.source else "Search_Engine"
            rendered.append(
                render_prompt(
                    "step",
                    thought=step.thought,
                    action=action,
                    query=step.query,
                    observation=format_documents(step.observation, max_chars=self.max_doc_chars),
                    note=f"\nNote: {step.note}" if step.note else "",
                )
            )
        return "".join(rendered)


_UNSUPPORTED = object()
_WIRE: dict[str, type[BaseModel]] = {
    "think": ThinkWire,
    "compare": CompareWire,
    "answer": AnswerWire,
    "reflect": ReflectWire,
    "condense": CondenseWire,
}


def _structured_runnable(model: BaseChatModel, schema: type[BaseModel]) -> Any:
    """The model's JSON-schema structured-output runnable, or None when it has none."""
    try:
        return model.with_structured_output(schema, method="json_schema", include_raw=True)
    except (NotImplementedError, ValueError, TypeError, AttributeError, ImportError):
        return None


def _json_object_runnable(model: BaseChatModel, schema: type[BaseModel]) -> Any:
    """`model` asking for `{"type": "json_object", "schema": ...}`, or None when not OpenAI.

    llama.cpp's server (and llama-cpp-python's) refuses OpenAI's `json_schema` response
    format but constrains output to a schema given this way. The body is sent through
    `extra_body`, so the OpenAI client passes it as it is.
    """
    module = sys.modules.get("langchain_openai")
    if module is None or not isinstance(model, module.ChatOpenAI):
        return None
    response_format = {"type": "json_object", "schema": schema.model_json_schema()}
    # A bound `extra_body` replaces the model's own (its `max_tokens` for self-hosted servers).
    extra_body = {**(model.extra_body or {}), "response_format": response_format}
    return model.bind(extra_body=extra_body)


def _read_structured(output: Any, role: str, usage: Usage) -> tuple[BaseModel | None, str]:
    """(the wire object or None, the raw text) of a structured call's output, counted.

    The output is LangChain's `{"raw", "parsed", "parsing_error"}` (json_schema), a plain
    message (json_object: its text holds the JSON), or an already parsed object.
    """
    raw_message: Any = None
    parsed: Any = output
    if isinstance(output, dict) and "parsed" in output:
        raw_message, parsed = output.get("raw"), output.get("parsed")
    elif isinstance(output, BaseMessage):
        raw_message, parsed = output, None
    if isinstance(raw_message, BaseMessage):
        usage.record(raw_message)
    else:
        usage.calls += 1
    raw = _content_text(raw_message) if isinstance(raw_message, BaseMessage) else ""
    if parsed is None and raw:
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
    if isinstance(parsed, dict):
        parsed = _validate_dict(parsed, role)
    if parsed is not None and not isinstance(parsed, BaseModel):
        parsed = None
    if not raw and isinstance(parsed, BaseModel):
        raw = parsed.model_dump_json()
    return parsed, raw


def _validate_dict(data: dict[str, Any], role: str) -> BaseModel | None:
    try:
        return _WIRE[role].model_validate(data)
    except ValidationError:
        return None


def _convert(convert: Callable[[Any], T | None] | None, wire: Any) -> T | None:
    if convert is None:
        return None
    try:
        return convert(wire)
    except (ValidationError, ValueError, TypeError, AttributeError):
        return None


def _think_from_wire(wire: ThinkWire, sources: Sequence[str]) -> ThinkDecision | None:
    if wire.action == "answer":
        if not wire.answer.strip():
            return None
        return ThinkDecision(thought=wire.thought, action="answer", answer=wire.answer.strip())
    query = wire.query.strip()
    if not query:
        return None
    name = wire.source.strip()
    if name.lower().startswith("search_"):
        name = name[len("search_") :]
    return ThinkDecision(
        thought=wire.thought, action="search", query=query, source=match_source(name, sources)
    )


def _answer_from_wire(wire: AnswerWire) -> AnswerDraft | None:
    answer = strip_citations(wire.answer)
    if not answer:
        return None
    cited = list(dict.fromkeys([*wire.cited_ids, *extract_citations(wire.answer)]))
    return AnswerDraft(
        answer=answer, cited_ids=[c.strip("[] ") for c in cited], rationale=wire.rationale
    )


def _known_ids(cited: Sequence[str], known: Sequence[str]) -> list[str]:
    """Cited ids that name documents actually shown (models invent ids)."""
    allowed = set(known)
    return [c for c in dict.fromkeys(cited) if c in allowed]


_HISTORY_TURNS = 4  # the latest turns a condense prompt shows
_HISTORY_ANSWER_CHARS = 400


def _history_block(history: Sequence[PriorTurn]) -> str:
    """The thread's latest turns as `Question:` / `Answer:` lines, oldest first."""
    lines = []
    for turn in list(history)[-_HISTORY_TURNS:]:
        lines.append(f"Question: {turn.question}")
        lines.append(f"Answer: {_trim(turn.answer, _HISTORY_ANSWER_CHARS) or '(none)'}")
    return "\n".join(lines)


def _earlier_block(earlier: PriorTurn | None) -> str:
    """The prompt block of the thread's previous turn, or "" for a first question."""
    if earlier is None or earlier.abstained or not earlier.answer:
        return ""
    return render_prompt(
        "earlier_turn",
        earlier_question=earlier.question,
        earlier_answer=_trim(earlier.answer, _HISTORY_ANSWER_CHARS),
    )


def _feedback_block(feedback: Feedback | None) -> str:
    """The prompt block of a negative self-reflection, or "" when there is none."""
    return render_prompt("feedback", feedback=feedback.render()) if feedback is not None else ""


def _fallback_answer(raw: str, prompt: str) -> str:
    """The raw reply as the answer, or `NO_ANSWER` when it holds nothing but format labels.

    A weak model often echoes the format (`Answer:` lines, empty `Final Answer:`), the
    prompt or the chat template (`is_unreadable_reply`); that is no answer, and the run
    abstains rather than show it.
    """
    if is_unreadable_reply(raw or "", prompt):
        return NO_ANSWER
    text = strip_citations(raw or "").strip()
    if not _LABEL_LINE.sub("", text).strip(" \t\n*_-:.`\"'"):
        return NO_ANSWER
    return _trim(text, _MAX_FALLBACK_ANSWER_CHARS)


# A line holding only a format label (`Answer:`, `Final Answer:`, `Thought:` ...), or empty.
_LABEL_LINE = re.compile(
    r"(?im)^[\s*_#`]*(?:final\s+answer|answer|thought|action(?:\s+input)?|observation|"
    r"self[-\s]*evaluation|explanation|citations?)?\s*[:*_]*[ \t]*$\n?"
)


def _trim(text: str, limit: int) -> str:
    text = (text or "").strip()
    return text if len(text) <= limit else text[:limit].rstrip() + " ..."


def _content_text(message: Any) -> str:
    """The reply's text; for a reply with no text but a tool call, the call's arguments.

    Some servers return the requested object as a tool call with `content: null`; its
    arguments are the JSON the parsers read. A reasoning model's `reasoning_content` is
    never read: it is the model thinking, not its answer.
    """
    content = getattr(message, "content", message)
    text = ""
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type", "text") == "text":
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
        text = "".join(parts)
    elif content is not None:
        text = str(content)
    if not text.strip():
        for call in getattr(message, "tool_calls", None) or []:
            args = call.get("args") if isinstance(call, dict) else None
            if isinstance(args, dict) and args:
                return json.dumps(args)
    return text


# --- endpoint errors ----------------------------------------------------------------------


def _describe(model: BaseChatModel) -> str:
    name = (
        getattr(model, "model_name", None)
        or getattr(model, "model", None)
        or getattr(model, "checkpoint", None)
        or type(model).__name__
    )
    url = getattr(model, "openai_api_base", None) or getattr(model, "base_url", None)
    return f"model '{name}' at {url}" if url else f"model '{name}'"


def _is_request_refused(exc: BaseException) -> bool:
    """The server refused the request's form: typically 'response_format unsupported'.

    A 400/422, or a 500 naming `response_format`: llama-cpp-python's server (0.3.x) answers
    `json_schema` with HTTP 500 and its validation error "Input should be 'text' or
    'json_object'" (loc body.response_format.type).
    """
    openai = sys.modules.get("openai")
    if openai is None:
        return False
    if isinstance(exc, openai.BadRequestError | openai.UnprocessableEntityError):
        return True
    return isinstance(exc, openai.InternalServerError) and "response_format" in str(exc)


def _truncated_text(exc: BaseException) -> str | None:
    """The text of a reply the OpenAI client refused to parse as cut short, else None.

    With a JSON-schema response format the client raises `LengthFinishReasonError` (or
    `ContentFilterFinishReasonError`) instead of returning a reply that stopped early.
    """
    openai = sys.modules.get("openai")
    kinds = tuple(
        getattr(openai, name)
        for name in ("LengthFinishReasonError", "ContentFilterFinishReasonError")
        if openai is not None and hasattr(openai, name)
    )
    if not kinds or not isinstance(exc, kinds):
        return None
    try:
        return str(exc.completion.choices[0].message.content or "")
    except (AttributeError, IndexError, TypeError):
        return ""


# What a client raises on a 200 reply of the wrong shape (no choices, no message, ...).
_MALFORMED_REPLY = (IndexError, KeyError, TypeError, ValueError, AttributeError)


def _endpoint_error(
    exc: BaseException, role: str, model: BaseChatModel
) -> ModelEndpointError | None:
    """A `ModelEndpointError` for network/server failures, None for anything else."""
    where = _describe(model)
    unreachable: tuple[type[BaseException], ...] = (ConnectionError, TimeoutError)
    httpx = sys.modules.get("httpx")
    if httpx is not None:
        unreachable = (*unreachable, httpx.TransportError)
    openai = sys.modules.get("openai")
    if openai is not None:
        unreachable = (*unreachable, openai.APIConnectionError)
        if isinstance(exc, openai.APIStatusError):
            return ModelEndpointError(
                f"The {where} refused the '{role}' request with HTTP {exc.status_code}: "
                f"{_first_sentence(exc)}"
            )
    if isinstance(exc, unreachable):
        return ModelEndpointError(
            f"Cannot reach the {where} for the '{role}' role ({type(exc).__name__}); "
            "check that the server is running and the URL is right."
        )
    return None


def _first_sentence(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return _trim(text, 200) or type(exc).__name__
