"""Tolerant parsers for the paper's text formats, one per role.

Models write the ReAct format (Thought / Action / Action Input / Final Answer), the
switcher's JSON `{analysis, status}` and the Self-Evaluation block with more or less
discipline: inside code fences, with single quotes, Python booleans, trailing chatter or
cut off mid-way. Each parser recovers what it can and returns `None` when nothing usable
is there; none of them raises, whatever the string.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from typing import Any

from prefrag.reasoners.base import (
    AnswerDraft,
    CompareVerdict,
    CondensedQuestion,
    Reflection,
    ReflectionLabel,
    ThinkDecision,
)

__all__ = [
    "extract_citations",
    "is_placeholder",
    "is_unreadable_reply",
    "match_source",
    "parse_answer",
    "parse_compare",
    "parse_condensed",
    "parse_reflection",
    "parse_think",
    "strip_citations",
]

# Document ids as `format_documents` renders them: `[id]`, no spaces inside.
_CITATION = re.compile(r"\[([A-Za-z0-9][\w.:/#@+-]{0,127})\]")
_FENCE = re.compile(r"```[a-zA-Z]*")
_QUOTES = "\"'\u201c\u201d\u2018\u2019"  # straight and typographic quotes
_PLACEHOLDER = re.compile(r"<[^<>\n]{1,80}>")
# Turn markers of common chat templates (Llama/Mistral, Gemma, ChatML, Llama 3, Phi, Zephyr):
# text the model should never produce; a reply holding one ran past its turn or echoed
# the template, and nothing in it is the model's answer to read.
_CHAT_TEMPLATE_TOKEN = re.compile(
    r"\[/?INST\]|<</?SYS>>|</?start_of_turn>|<end_of_turn>|<\|im_(?:start|end|sep)\|>"
    r"|<\|(?:start_header_id|end_header_id|eot_id|begin_of_text|end_of_text|endoftext"
    r"|user|assistant|system|end)\|>"
)
_ECHO_LINE_CHARS = 25  # prompt lines at least this long count when copied into a reply
_ECHO_LINES = 2  # a reply copying this many of them echoes the prompt
_TRUE = {"true", "yes", "1", "y", "t"}
_FALSE = {"false", "no", "0", "n", "f"}

# Section markers of the ReAct / Self-Evaluation formats. Matched case-insensitively at the
# start of a line or after whitespace, optionally wrapped in markdown emphasis.
_MARK = r"(?:^|(?<=[\s*_#]))[*_#]{0,6}[ \t]{0,3}"
_THOUGHT = re.compile(_MARK + r"thought\s*\d*\s*[*_]*:", re.IGNORECASE)
_ACTION = re.compile(_MARK + r"action\s*\d*\s*[*_]*:(?!\s*input)", re.IGNORECASE)
_ACTION_INPUT = re.compile(_MARK + r"action\s*input\s*\d*\s*[*_]*:", re.IGNORECASE)
_OBSERVATION = re.compile(_MARK + r"observation\s*\d*\s*[*_]*:", re.IGNORECASE)
_FINAL = re.compile(_MARK + r"final\s*answer\s*[*_]*:", re.IGNORECASE)
_SELF_EVAL = re.compile(_MARK + r"self[-\s]*evaluation\s*[*_]*:", re.IGNORECASE)
_EXPLANATION = re.compile(_MARK + r"explanation\s*[*_]*:", re.IGNORECASE)
_SUGGESTION = re.compile(
    _MARK + r"(?:improvement\s*suggestions?|suggestions?(?:\s*for\s*improvement)?)\s*[*_]*:",
    re.IGNORECASE,
)
_CITATIONS_LINE = re.compile(_MARK + r"(?:citations?|sources?|references?)\s*[*_]*:", re.I)
_ALL_MARKERS = (
    _THOUGHT,
    _ACTION,
    _ACTION_INPUT,
    _OBSERVATION,
    _FINAL,
    _SELF_EVAL,
    _EXPLANATION,
    _SUGGESTION,
)

_SEARCH_ACTION = re.compile(r"search[\s_-]*([\w.\- ]*)", re.IGNORECASE)
_FINISH_ACTION = re.compile(r"^(?:finish|final[\s_]*answer|answer)\b", re.IGNORECASE)
_LABEL_ANYWHERE = re.compile(r"\b(PARTIALLY\s+CORRECT|INCORRECT|NOT\s+CORRECT|CORRECT)\b")
_STATUS_LINE = re.compile(
    r"[\"']?\bstatus[\"']?\s*[:=]\s*[\"']?\s*(true|false|yes|no)\b", re.IGNORECASE
)
_ANALYSIS_QUOTED = re.compile(
    r"[\"']?\banalysis[\"']?\s*[:=]\s*([\"'])((?:\\.|(?!\1).)*)\1?", re.IGNORECASE | re.DOTALL
)
_ANALYSIS_BARE = re.compile(r"[\"']?\banalysis[\"']?\s*[:=]\s*(.*)", re.IGNORECASE)


def parse_think(text: str, sources: Sequence[str] = ()) -> ThinkDecision | None:
    """Read a ReAct step: `Thought: ... Action: Search_<x> Action Input: ...` or `Final Answer:`.

    The first of an Action or a Final Answer wins (models sometimes run on and invent
    observations). `Search_<name>` is matched to `sources` (case and separators ignored);
    `Search_Engine` and unknown names leave `source` empty. A JSON object with
    `thought`/`action`/`query`/`answer` keys is accepted too.

    Args:
        text: The model's output.
        sources: Source names offered as `Search_<name>` actions.

    Returns:
        The decision, or None when neither a usable search nor an answer is present.
    """
    try:
        return _parse_think(_as_text(text), sources)
    except Exception:  # a parser must never take a run down
        return None


def parse_compare(text: str, *, quoted: Sequence[str] = ()) -> CompareVerdict | None:
    """Read the switcher's verdict: JSON `{"analysis": ..., "status": ...}` (Table 20).

    Accepts code fences, single quotes, Python or JSON booleans, "true"/"yes" strings,
    trailing text, truncated JSON with a readable status, bare `status: False` lines, and a
    reply that is only a boolean word. `status` True means the new local documents add
    something (keep local); False means switch.

    The model's own verdict is the first it states, wherever quoted objects sit: an object
    that appears in `quoted` (the documents the model was shown) is a quotation, not a
    verdict; a full `{analysis, status}` object wins over a bare `{status}`; a status line
    of its own wins over one inside a sentence (a restated instruction).

    Args:
        text: The model's reply.
        quoted: Texts the model was shown (the documents), whose objects are not verdicts.

    Returns:
        The verdict, or None when no status can be read.
    """
    try:
        return _parse_compare(_as_text(text), quoted)
    except Exception:
        return None


def is_unreadable_reply(text: str, prompt: str = "") -> bool:
    """Whether a reply is the chat template or the prompt coming back, not an answer.

    Two shapes a weak or misconfigured model sends: a reply holding a chat template's turn
    markers (`[/INST]`, `<start_of_turn>`, `<|im_start|>` ...), and a reply copying the
    prompt's own instruction lines (`Question: ...`, `Answer the question using ...`): at
    least two lines of `prompt` of `_ECHO_LINE_CHARS` characters or more, document lines
    (`<document>...`) not counted, since quoting a document is allowed. Either is read as
    no reply at all: its markers and copied format examples would otherwise parse as a
    verdict, a label or an answer citing every document shown.
    """
    if _CHAT_TEMPLATE_TOKEN.search(text):
        return True
    if not prompt:
        return False
    copied = {
        line
        for line in (raw.strip() for raw in prompt.splitlines())
        if len(line) >= _ECHO_LINE_CHARS and "<document>" not in line and line in text
    }
    return len(copied) >= _ECHO_LINES


def is_placeholder(text: str) -> bool:
    """Whether `text` is only a template placeholder such as `<your analysis here>`.

    A weak model asked for JSON often copies the format example; its `analysis` is then the
    prompt's placeholder and its `status` the example's, not a judgement of the documents.
    """
    return bool(_PLACEHOLDER.fullmatch(text.strip()))


def parse_answer(text: str) -> AnswerDraft | None:
    """Read `Final Answer: ... [id] [id]`; cited ids are collected and removed from the answer.

    A JSON object with an `answer` key, or a short single-line reply without any ReAct
    markers, is accepted as the answer too.

    Returns:
        The draft, or None when no non-empty answer is present.
    """
    try:
        return _parse_answer(_as_text(text))
    except Exception:
        return None


def parse_reflection(text: str) -> Reflection | None:
    """Read the Self-Evaluation block: label, Explanation, Improvement Suggestions.

    The label is read after `Self-Evaluation:` (any case) or, failing that, anywhere in
    upper case (`PARTIALLY CORRECT` / `INCORRECT` / `NOT CORRECT` / `CORRECT`); JSON with a
    `label` key is accepted too.

    Returns:
        The reflection, or None when no label can be read.
    """
    try:
        return _parse_reflection(_as_text(text))
    except Exception:
        return None


def parse_condensed(text: str) -> CondensedQuestion | None:
    """Read the condense role's reply: `Standalone question: ...`, JSON, or one plain line.

    Quotes and fences around the question are dropped. A reply longer than
    `_MAX_CONDENSED_CHARS` (an answer or an essay, not a question) is not a rewrite.

    Returns:
        The rewritten question (`rewritten` is decided by the caller), or None.
    """
    try:
        return _parse_condensed(_as_text(text))
    except Exception:
        return None


def extract_citations(text: str) -> list[str]:
    """Ids cited as `[id]` in `text`, in order, without repeats."""
    seen: dict[str, None] = {}
    for match in _CITATION.finditer(text or ""):
        seen.setdefault(match.group(1), None)
    return list(seen)


def strip_citations(text: str) -> str:
    """`text` without `[id]` citation markers and the space before them."""
    cleaned = _CITATION.sub("", text or "")
    cleaned = re.sub(r"[ \t]+([.,;:!?])", r"\1", cleaned)
    return re.sub(r"[ \t]{2,}", " ", cleaned).strip()


def match_source(name: str, sources: Sequence[str]) -> str | None:
    """The source in `sources` that `name` designates (case and separators ignored)."""
    key = _norm(name)
    if not key:
        return None
    for source in sources:
        if _norm(source) == key:
            return source
    return None


# --- think --------------------------------------------------------------------------------


def _parse_think(text: str, sources: Sequence[str]) -> ThinkDecision | None:
    react = any(m.search(text) for m in (_ACTION, _ACTION_INPUT, _FINAL))
    data = None if react else _find_json_object(text)
    if data is not None and ("action" in data or "query" in data or "answer" in data):
        decision = _think_from_mapping(data, sources)
        if decision is not None:
            return decision

    action = _ACTION.search(text)
    action_input = _ACTION_INPUT.search(text)
    final = _FINAL.search(text)
    first_search = min(
        (m.start() for m in (action, action_input) if m is not None), default=len(text) + 1
    )
    thought = _thought(text, stop_at=min(first_search, final.start() if final else len(text)))

    if final is not None and final.start() < first_search:
        answer = _section(text, final)
        answer = _cut_at_markers(answer, (_SELF_EVAL, _EXPLANATION, _SUGGESTION, _OBSERVATION))
        answer = answer.strip().strip("*").strip()
        if not answer:
            return None
        return ThinkDecision(thought=thought, action="answer", answer=answer)

    if action is None and action_input is None:
        return None
    name = ""
    if action is not None:
        name = _first_line(_cut_at_markers(_section(text, action), _ALL_MARKERS)).strip()
    query = _section(text, action_input) if action_input is not None else ""
    query = _clean_query(query)
    if action is not None and not query:
        # `Action: Search_Engine["query"]` / `Action: Search[query]` in one line.
        inline = re.match(r"([\w\s.-]*?)\s*[\[(]\s*(.+?)\s*[\])]\s*$", name)
        if inline:
            name, query = inline.group(1).strip(), _clean_query(inline.group(2))
    name = name.strip("`*\"'[]() ")
    if _FINISH_ACTION.match(name):
        return ThinkDecision(thought=thought, action="answer", answer=query) if query else None
    source = None
    search = _SEARCH_ACTION.match(name)
    if search:
        source = match_source(search.group(1), sources)
    elif name:
        source = match_source(name, sources)
    if not query:
        return None
    return ThinkDecision(thought=thought, action="search", query=query, source=source)


def _think_from_mapping(data: dict[str, Any], sources: Sequence[str]) -> ThinkDecision | None:
    thought = str(data.get("thought") or "")
    action = str(data.get("action") or "").strip()
    answer = str(data.get("answer") or data.get("final_answer") or "").strip()
    query = _clean_query(str(data.get("query") or data.get("action_input") or ""))
    if action.lower() in {"answer", "finish", "final answer", "final_answer"} or (
        answer and not query
    ):
        return ThinkDecision(thought=thought, action="answer", answer=answer) if answer else None
    if not query:
        return None
    source = None
    for name in (str(data.get("source") or ""), action):
        search = _SEARCH_ACTION.match(name)
        source = source or match_source(search.group(1) if search else name, sources)
    return ThinkDecision(thought=thought, action="search", query=query, source=source)


def _thought(text: str, *, stop_at: int) -> str:
    head = text[:stop_at]
    marker = _THOUGHT.search(head)
    body = head[marker.end() :] if marker else head
    body = _cut_at_markers(body, (_THOUGHT,))
    return body.strip()


def _clean_query(query: str) -> str:
    query = _cut_at_markers(query, _ALL_MARKERS)
    query = _first_line(query.strip())
    data = _find_json_object(query)
    if data is not None:
        for key in ("query", "input", "action_input", "q"):
            if isinstance(data.get(key), str):
                query = data[key]
                break
    return query.strip().strip("`*").strip().strip(_QUOTES).strip()


# --- compare ------------------------------------------------------------------------------


def _parse_compare(text: str, quoted: Sequence[str] = ()) -> CompareVerdict | None:
    shown = _squash(" ".join(quoted))
    cleaned = _FENCE.sub("", text)
    own: list[dict[str, Any]] = []
    for block in _brace_blocks(cleaned):
        data = _load_mapping(block)
        if data is None or _as_bool(_get_ci(data, "status")) is None:
            continue
        if shown and _squash(block) in shown:
            cleaned = cleaned.replace(block, " " * len(block))  # a quotation, not a verdict
            continue
        own.append(data)
    full = [data for data in own if _get_ci(data, "analysis") is not None]
    chosen = next(iter((*full, *own)), None)
    if chosen is not None:
        return CompareVerdict(
            analysis=str(_get_ci(chosen, "analysis") or "").strip(),
            status=bool(_as_bool(_get_ci(chosen, "status"))),
        )
    readable = [m for m in _STATUS_LINE.finditer(cleaned) if _as_bool(m.group(1)) is not None]
    own_line = [
        m for m in readable if not cleaned[: m.start()].rsplit("\n", 1)[-1].strip("{ \t*_-\"'")
    ]
    status_match = next(iter((*own_line, *readable)), None)
    if status_match is not None:
        return CompareVerdict(
            analysis=_loose_analysis(text), status=bool(_as_bool(status_match.group(1)))
        )
    bare = text.strip().strip("`*\"'.").strip().lower()
    if bare in _TRUE | _FALSE and not bare.isdigit():
        return CompareVerdict(analysis="", status=bare in _TRUE)
    return None


def _squash(text: str) -> str:
    """`text` with whitespace runs made one space, for quotation matching."""
    return " ".join(text.split())


def _loose_analysis(text: str) -> str:
    quoted = _ANALYSIS_QUOTED.search(text)
    if quoted:
        return quoted.group(2).replace('\\"', '"').strip()
    bare = _ANALYSIS_BARE.search(text)
    if bare:
        return bare.group(1).strip().rstrip(",").strip()
    return ""


# --- answer -------------------------------------------------------------------------------


def _parse_answer(text: str) -> AnswerDraft | None:
    data = _find_json_object(text)
    if data is not None and isinstance(_get_ci(data, "answer"), str | int | float):
        raw = str(_get_ci(data, "answer")).strip()
        cited = _cited_from(data.get("cited_ids") or data.get("citations"))
        cited = _merge_ids(cited, extract_citations(raw))
        answer = strip_citations(raw)
        if answer:
            rationale = str(data.get("rationale") or data.get("thought") or "").strip()
            return AnswerDraft(answer=answer, cited_ids=cited, rationale=rationale)

    final = _FINAL.search(text)
    if final is not None:
        raw = _cut_at_markers(
            _section(text, final), (_SELF_EVAL, _EXPLANATION, _SUGGESTION, _OBSERVATION)
        )
        citations_line = _CITATIONS_LINE.search(raw)
        cited = extract_citations(raw)
        if citations_line:
            raw = raw[: citations_line.start()]
        answer = strip_citations(raw).strip().strip("*").strip()
        if not answer:
            return None
        rationale = _thought(text, stop_at=final.start())
        return AnswerDraft(answer=answer, cited_ids=cited, rationale=rationale)

    stripped = _FENCE.sub("", text).strip()
    plain = "\n" not in stripped and len(stripped) <= 300
    if stripped and plain and not any(m.search(stripped) for m in _ALL_MARKERS):
        if "{" in stripped or "}" in stripped:
            return None  # a JSON fragment is not an answer
        answer = strip_citations(stripped)
        if answer:
            # Usable, but the reply ignored the answer format: say so in the trace.
            return AnswerDraft(answer=answer, cited_ids=extract_citations(stripped), fallback=True)
    return None


def _cited_from(value: Any) -> list[str]:
    if isinstance(value, str):
        return extract_citations(value) or [p.strip() for p in value.split(",") if p.strip()]
    if isinstance(value, list | tuple):
        return [str(v).strip("[] ") for v in value if str(v).strip("[] ")]
    return []


def _merge_ids(first: list[str], second: list[str]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))


# --- reflection ---------------------------------------------------------------------------


def _parse_reflection(text: str) -> Reflection | None:
    data = _find_json_object(text)
    if data is not None:
        raw_label = _get_ci(data, "label") or _get_ci(data, "self_evaluation")
        label = _label(str(raw_label or ""), anywhere_case_sensitive=False)
        if label is not None:
            return Reflection(
                label=label,
                explanation=str(_get_ci(data, "explanation") or "").strip(),
                suggestion=str(
                    _get_ci(data, "suggestion") or _get_ci(data, "improvement_suggestions") or ""
                ).strip(),
            )

    label = None
    marker = _SELF_EVAL.search(text)
    if marker is not None:
        head = _cut_at_markers(_section(text, marker), (_EXPLANATION, _SUGGESTION))
        label = _label(head, anywhere_case_sensitive=False)
    if label is None:
        label = _label(text, anywhere_case_sensitive=True)
    if label is None:
        return None
    explanation = _named_section(text, _EXPLANATION, (_SUGGESTION, _SELF_EVAL, _FINAL))
    suggestion = _named_section(text, _SUGGESTION, (_EXPLANATION, _SELF_EVAL, _FINAL))
    return Reflection(label=label, explanation=explanation, suggestion=suggestion)


def _label(text: str, *, anywhere_case_sensitive: bool) -> ReflectionLabel | None:
    haystack = text if anywhere_case_sensitive else text.upper()
    # A line naming all three labels is the prompt's template echoed back, not a verdict.
    haystack = "\n".join(line for line in haystack.splitlines() if len(_labels_named(line)) < 3)
    match = _LABEL_ANYWHERE.search(haystack)
    if match is None:
        return None
    word = re.sub(r"\s+", " ", match.group(1))
    if word == "PARTIALLY CORRECT":
        return "PARTIALLY CORRECT"
    if word in {"INCORRECT", "NOT CORRECT"}:
        return "INCORRECT"
    return "CORRECT"


def _labels_named(line: str) -> set[str]:
    return {re.sub(r"\s+", " ", found) for found in _LABEL_ANYWHERE.findall(line.upper())}


def _named_section(text: str, marker: re.Pattern[str], stops: tuple[re.Pattern[str], ...]) -> str:
    match = marker.search(text)
    if match is None:
        return ""
    return _cut_at_markers(_section(text, match), stops).strip().strip("*").strip()


_STANDALONE = re.compile(r"^\s*\**\s*standalone[ _]question\s*\**\s*[:=]\s*", re.I | re.M)
_MAX_CONDENSED_CHARS = 600


def _parse_condensed(text: str) -> CondensedQuestion | None:
    cleaned = _FENCE.sub("", text).strip()
    data = _find_json_object(cleaned, required_key="standalone_question")
    if data is not None:
        found = _as_text(_get_ci(data, "standalone_question"))
    else:
        marker = _STANDALONE.search(cleaned)
        found = _first_line(cleaned[marker.end() :] if marker else cleaned)
    question = " ".join(found.split()).strip(_QUOTES + " *")
    if not question or len(question) > _MAX_CONDENSED_CHARS:
        return None
    return CondensedQuestion(question=question)


# --- shared helpers -----------------------------------------------------------------------


def _as_text(text: object) -> str:
    if isinstance(text, str):
        return text
    if isinstance(text, list):  # LangChain content blocks
        parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in text]
        return "".join(str(p) for p in parts)
    return "" if text is None else str(text)


def _section(text: str, match: re.Match[str]) -> str:
    return text[match.end() :]


def _cut_at_markers(text: str, markers: Sequence[re.Pattern[str]]) -> str:
    end = len(text)
    for marker in markers:
        found = marker.search(text)
        if found is not None:
            end = min(end, found.start())
    return text[:end]


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line
    return ""


def _norm(name: str) -> str:
    return re.sub(r"[\s_\-.]+", "", name or "").lower()


def _get_ci(data: dict[str, Any], key: str) -> Any:
    if key in data:
        return data[key]
    for name, value in data.items():
        if isinstance(name, str) and _norm(name) == _norm(key):
            return value
    return None


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return bool(value) if value in (0, 1) else None
    if isinstance(value, str):
        word = value.strip().strip("<>\"'` .").lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    return None


def _find_json_object(
    text: str, *, required_key: str | None = None, last: bool = False
) -> dict[str, Any] | None:
    """The first (or `last`) `{...}` block that loads as a mapping (JSON or a Python dict)."""
    cleaned = _FENCE.sub("", text)
    found = None
    for candidate in _brace_blocks(cleaned):
        data = _load_mapping(candidate)
        if data is None:
            continue
        if required_key is None or _get_ci(data, required_key) is not None:
            if not last:
                return data
            found = data
    return found


def _brace_blocks(text: str, limit: int = 20) -> list[str]:
    """Balanced `{...}` substrings, outermost first, string-aware; at most `limit`."""
    blocks: list[str] = []
    start = text.find("{")
    while start != -1 and len(blocks) < limit:
        depth, quote, escape = 0, "", False
        end = -1
        for index in range(start, len(text)):
            char = text[index]
            if quote:
                if escape:
                    escape = False
                elif char == "\\":
                    escape = True
                elif char == quote:
                    quote = ""
                continue
            if char in "\"'":
                quote = char
            elif char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    end = index
                    break
        if end == -1:
            # Unbalanced (an apostrophe in prose, or truncated): try the plain brace match.
            close = text.find("}", start)
            if close == -1:
                break
            end = close
        blocks.append(text[start : end + 1])
        start = text.find("{", start + 1)
    return blocks


def _load_mapping(candidate: str) -> dict[str, Any] | None:
    if len(candidate) > 50_000:
        return None
    try:
        data = json.loads(candidate)
    except ValueError:
        data = None
    if data is None:
        python_like = re.sub(r"\btrue\b", "True", candidate)
        python_like = re.sub(r"\bfalse\b", "False", python_like)
        python_like = re.sub(r"\bnull\b", "None", python_like)
        try:
            data = ast.literal_eval(python_like)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            data = None
    return data if isinstance(data, dict) else None
