"""`LLMReasoner`: any LangChain chat model behind each PrefRAG role.

Per role the reasoner asks for structured output (pydantic wire schemas, JSON-schema mode)
when the model supports it, else plain text read by the tolerant parsers of
`prefrag.reasoners.parsing`. A reply that cannot be read gets one repair retry showing the
bad output and the expected format; after that a documented safe fallback is returned with
`fallback=True`, so malformed output never stops a run. An unreachable or refusing endpoint
is not malformed output: it raises `ModelEndpointError`.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
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
                return ThinkDecision(
                    thought="",
                    action="answer",
                    answer=_fallback_answer(raw),
                    cited_ids=extract_citations(raw),
                    fallback=True,
                    usage=usage,
                )
            return ThinkDecision(
                thought=draft.rationale,
                action="answer",
                answer=draft.answer,
                cited_ids=draft.cited_ids,
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
        return decision.model_copy(update={"usage": usage})

    def compare(
        self, question: str, held: Sequence[Document], new: Sequence[Document]
    ) -> CompareVerdict:
        """The switcher (paper Table 20): True keeps the new local documents, False switches."""
        prompt = compare_prompt(question, held, new, max_doc_chars=self.max_doc_chars)
        verdict, usage, _ = self._run(
            "compare",
            prompt,
            parser=parse_compare,
            schema=CompareWire,
            convert=lambda wire: CompareVerdict(analysis=wire.analysis, status=wire.status),
            expected=render_prompt("format_compare"),
        )
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
    ) -> AnswerDraft:
        """The final answer from the evidence, citing ids of documents in `evidence`."""
        prompt = render_prompt(
            "answer",
            question=question,
            scratchpad=self._scratchpad(scratchpad, multi=False) or "(none)",
            evidence=format_documents(evidence, max_chars=self.max_doc_chars),
            feedback=_feedback_block(feedback),
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
            return AnswerDraft(
                answer=_fallback_answer(raw),
                cited_ids=_known_ids(extract_citations(raw), known),
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

    # --- one role call: structured or text, one repair retry ---------------------------------

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
        """Ask the role's model, parse, repair once; return (result or None, usage, raw)."""
        # The forced answer comes from the agent itself, as in the paper.
        model_role = "think" if role == "forced" else role
        model = self.models[model_role]
        usage = Usage()
        messages: list[BaseMessage] = [HumanMessage(prompt)]
        raw = ""
        due = None if self.deadline is None else time.monotonic() + self.deadline
        for attempt in range(2):
            if attempt == 1:
                messages = [
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
            runnable = self._structured_runnables.get(role) if schema is not None else None
            if runnable is not None:
                outcome = self._call_structured(model_role, model, runnable, messages, usage, due)
                if outcome is not _UNSUPPORTED:
                    parsed_wire, raw = outcome
                    result = _convert(convert, parsed_wire) if parsed_wire is not None else None
                    if result is None:
                        result = parser(raw)
                    if result is not None:
                        return result, usage, raw
                    logger.info("%s: unreadable structured reply (attempt %d)", role, attempt + 1)
                    continue
            raw = self._call_text(model_role, model, messages, usage, stop, due)
            result = parser(raw)
            if result is not None:
                return result, usage, raw
            logger.info("%s: unreadable reply (attempt %d): %.200r", role, attempt + 1, raw)
        return None, usage, raw

    def _call_text(
        self,
        role: str,
        model: BaseChatModel,
        messages: list[BaseMessage],
        usage: Usage,
        stop: list[str] | None,
        due: float | None = None,
    ) -> str:
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
        """`call()`, or `ModelEndpointError` once the role call's overall deadline passes.

        The request runs on a daemon thread so a hanging endpoint cannot hold the run past
        the deadline; the abandoned request ends at the client's own timeout.
        """
        if due is None:
            return call()
        remaining = due - time.monotonic()
        outcome: dict[str, Any] = {}

        def run() -> None:
            try:
                outcome["value"] = call()
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
        runnable: Any,
        messages: list[BaseMessage],
        usage: Usage,
        due: float | None = None,
    ) -> Any:
        """(parsed wire object or None, raw text), or `_UNSUPPORTED` to use text instead."""
        try:
            output = self._before_deadline(role, model, lambda: runnable.invoke(messages), due)
        except ModelEndpointError:
            raise
        except Exception as exc:
            if _is_request_refused(exc) and self.structured == "auto":
                return self._downgrade(role, exc)
            error = _endpoint_error(exc, role, model)
            if error is not None:
                raise error from exc
            if isinstance(exc, ValidationError | _MALFORMED_REPLY):
                # A reply the structured parser rejected: malformed output, not a failure.
                usage.calls += 1
                return None, ""
            raise
        raw_message: Any = None
        parsed: Any = output
        if isinstance(output, dict) and "parsed" in output:
            raw_message, parsed = output.get("raw"), output.get("parsed")
        if isinstance(raw_message, BaseMessage):
            usage.record(raw_message)
        else:
            usage.calls += 1
        raw = _content_text(raw_message) if isinstance(raw_message, BaseMessage) else ""
        if isinstance(parsed, dict):
            parsed = _validate_dict(parsed, role)
        if parsed is not None and not isinstance(parsed, BaseModel):
            parsed = None
        if not raw and isinstance(parsed, BaseModel):
            raw = parsed.model_dump_json()
        return parsed, raw

    def _downgrade(self, role: str, exc: BaseException) -> Any:
        logger.warning(
            "%s: the model refused structured output (%s); using text from now on", role, exc
        )
        self._structured_runnables.pop(role, None)
        return _UNSUPPORTED

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


def _feedback_block(feedback: Feedback | None) -> str:
    """The prompt block of a negative self-reflection, or "" when there is none."""
    return render_prompt("feedback", feedback=feedback.render()) if feedback is not None else ""


def _fallback_answer(raw: str) -> str:
    text = strip_citations(raw or "").strip()
    return _trim(text, _MAX_FALLBACK_ANSWER_CHARS) if text else NO_ANSWER


def _trim(text: str, limit: int) -> str:
    text = (text or "").strip()
    return text if len(text) <= limit else text[:limit].rstrip() + " ..."


def _content_text(message: Any) -> str:
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "".join(parts)
    return "" if content is None else str(content)


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
    """A 400/422 from an OpenAI-compatible server: typically 'response_format unsupported'."""
    openai = sys.modules.get("openai")
    if openai is None:
        return False
    return isinstance(exc, openai.BadRequestError | openai.UnprocessableEntityError)


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
