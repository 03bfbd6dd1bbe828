"""Source plans (SPO): per-source queries, their tag format and a parser that never raises.

A plan names, for each source, zero to three queries in Omni-RAG's tag format
(`<name>q0 ; q1</name>`; an empty tag skips the source). Graph sources take
`term , query` pairs. `parse_plan` first tries the strict format and, when the text strays
from it, reads what it can: tags in any case or spacing, unclosed tags, self-closing tags,
code fences, numbered lines, more than three queries, unknown sources. Every deviation is
recorded in `SourcePlan.notes` so the trace says what was repaired; a source whose tag is
missing is recorded too (the authors' parser silently dropped it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from prefrag.prompts import render_prompt
from prefrag.reasoners.base import Usage

__all__ = [
    "MAX_QUERIES",
    "PlannedQuery",
    "SourceBrief",
    "SourcePlan",
    "brief_of",
    "describe_sources",
    "explore_prompt",
    "original_question_plan",
    "parse_graph_query",
    "parse_plan",
    "plan_prompt",
]

MAX_QUERIES = 3  # per source (Omni-RAG §4.1: fewer than four)
DEFAULT_QUERY_FORMAT = "a natural-language question"
_FENCE = re.compile(r"```[a-zA-Z]*")
# `<name>`, `< name >`, `<Name/>`, `</name>`: the tag name is word characters and - or .
_TAG = re.compile(r"<\s*(/?)\s*([A-Za-z0-9_.\-]+)\s*(/?)\s*>")
_STRICT = re.compile(r"\s*(?:<([A-Za-z0-9_.\-]+)>([^<>]*)</\1>\s*)+")
_UNUSUAL = re.compile(
    r"[\n`]|^[\"'\u201c\u201d\u2018\u2019]|[\"'\u201c\u201d\u2018\u2019]$|^(?:[-*\u2022]|\d+[.)])\s"
)
_NUMBERING = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")


class SourceBrief(BaseModel):
    """What a planner is told about one source: name, description, query format, kind."""

    name: str
    description: str = ""
    query_format: str = DEFAULT_QUERY_FORMAT
    kind: str = "local"

    @property
    def is_graph(self) -> bool:
        """Graph sources take `term , query` pairs."""
        return self.kind == "graph"


class PlannedQuery(BaseModel):
    """One planned query; for a graph source, `term` is the concept it looks up."""

    text: str
    term: str = ""

    def render(self) -> str:
        """The query as written in a plan (`term , query` for graph sources)."""
        return f"{self.term} , {self.text}" if self.term else self.text


class SourcePlan(BaseModel):
    """Queries per source for one question, and how the plan was read.

    `queries` holds one entry per source the plan mentions (an empty list means the plan
    skipped it); sources it does not mention are listed in `missing`. `strict` says the
    text followed the format exactly; `notes` says what the tolerant pass repaired;
    `fallback` marks a plan that could not be read at all and was replaced by the
    original-question baseline.
    """

    queries: dict[str, list[PlannedQuery]] = Field(default_factory=dict)
    missing: list[str] = Field(default_factory=list)
    strict: bool = True
    notes: list[str] = Field(default_factory=list)
    fallback: bool = False
    usage: Usage = Field(default_factory=Usage)

    def searched(self) -> list[str]:
        """Sources with at least one query, in plan order."""
        return [name for name, queries in self.queries.items() if queries]

    def query_texts(self, source: str) -> list[str]:
        """The planned queries of `source` as written in the plan."""
        return [query.render() for query in self.queries.get(source, [])]

    def render(self, sources: Sequence[SourceBrief]) -> str:
        """The plan in the tag format, one tag per source in `sources` order."""
        return " ".join(
            f"<{s.name}>{' ; '.join(self.query_texts(s.name))}</{s.name}>" for s in sources
        )

    def trace(self) -> dict[str, Any]:
        """A JSON-friendly record of the plan for the run's trace."""
        return {
            "queries": {name: self.query_texts(name) for name in self.queries},
            "missing": list(self.missing),
            "strict": self.strict,
            "fallback": self.fallback,
            "notes": list(self.notes),
        }


def brief_of(source: Any) -> SourceBrief:
    """The planner's view of a `Source` (its `query_format` is optional until every has one)."""
    kind = str(getattr(source, "kind", "local"))
    return SourceBrief(
        name=str(source.name),
        description=str(getattr(source, "description", "") or source.name),
        query_format=str(getattr(source, "query_format", "") or DEFAULT_QUERY_FORMAT),
        kind=kind,
    )


def describe_sources(sources: Sequence[SourceBrief], *, counted: bool = True) -> tuple[str, str]:
    """The prompt's source descriptions and query formats (Omni-RAG prompts E.1 and E.2).

    Args:
        sources: The sources to plan over.
        counted: Say "0 to 3 queries" (planning, E.7); False for exploration (E.3).
    """
    descriptions = "\n".join(
        render_prompt("plan_source", source=s.name, description=s.description).strip()
        for s in sources
    )
    count = f", 0 to {MAX_QUERIES} queries" if counted else ""
    formats = "\n".join(
        render_prompt(
            "plan_format_graph" if s.is_graph else "plan_format_text",
            source=s.name,
            query_format=s.query_format,
            count=count,
        ).strip()
        for s in sources
    )
    return descriptions, formats


def original_question_plan(
    question: str, sources: Sequence[SourceBrief], *, notes: Iterable[str] = ()
) -> SourcePlan:
    """The paper's "original question" baseline: the question itself to every source."""
    return SourcePlan(
        queries={
            s.name: [PlannedQuery(text=question, term=question if s.is_graph else "")]
            for s in sources
        },
        strict=False,
        notes=list(notes),
        fallback=True,
    )


def parse_plan(
    text: str, sources: Sequence[SourceBrief], *, max_queries: int = MAX_QUERIES
) -> SourcePlan | None:
    """Read a plan; None when the text holds no tag of any known source.

    The strict pass accepts exactly the documented format: only `<name>...</name>` tags of
    known sources, each once, at most `max_queries` queries each (3 when planning, more
    when exploring), graph queries as `term , query`. Anything else goes through the
    tolerant pass, which keeps what it can and notes why.
    """
    text = text or ""
    strict = _parse_strict(text, sources, max_queries)
    if strict is not None:
        return strict
    return _parse_tolerant(text, sources, max_queries)


def plan_prompt(question: str, sources: Sequence[SourceBrief]) -> str:
    """The planning prompt (Omni-RAG E.7) the `plan` role sends for `question`."""
    descriptions, formats = describe_sources(sources)
    first = sources[0].name if sources else "source"
    return render_prompt(
        "plan",
        question=question,
        descriptions=descriptions,
        formats=formats,
        max_queries=MAX_QUERIES,
        empty_example=f"<{first}></{first}>",
    )


def explore_prompt(question: str, sources: Sequence[SourceBrief], n_queries: int) -> str:
    """The exploration prompt (Omni-RAG E.3): `n_queries` diverse queries for every source."""
    descriptions, formats = describe_sources(sources, counted=False)
    return render_prompt(
        "plan_explore",
        question=question,
        n_queries=n_queries,
        descriptions=descriptions,
        formats=formats,
    )


def parse_graph_query(text: str) -> tuple[PlannedQuery, str | None]:
    """Split a graph query `term , query` into its parts, with a note when it was unusual.

    The separator is a comma with white space on both sides (`term , query`, as the
    format shows), so terms that contain commas themselves ("Leukemia, Acute") survive;
    without such a separator the last comma splits, and without any comma the text is the
    term and the query alike.
    """
    text = " ".join(text.split())
    spaced = re.search(r"\s,\s", text)
    if spaced:
        term, query = text[: spaced.start()].strip(), text[spaced.end() :].strip()
        note = None
    elif "," in text:
        term, _, query = text.rpartition(",")
        term, query = term.strip(), query.strip()
        note = f"graph query '{text}' has no ' , ' separator; split at its last comma"
    else:
        term, query = text, text
        note = f"graph query '{text}' has no comma; used it as the term and the query"
    if not term:
        term, note = query, f"graph query '{text}' has no term; used its query as the term"
    if not query:
        query = term
    return PlannedQuery(text=query, term=term), note


# --- the two passes ---------------------------------------------------------------------


def _parse_strict(text: str, sources: Sequence[SourceBrief], max_queries: int) -> SourcePlan | None:
    if not _STRICT.fullmatch(text):
        return None
    by_name = {s.name: s for s in sources}
    found: dict[str, list[PlannedQuery]] = {}
    for match in re.finditer(r"<([A-Za-z0-9_.\-]+)>([^<>]*)</\1>", text):
        name, body = match.group(1), match.group(2)
        if name not in by_name or name in found:
            return None
        parts = [part.strip() for part in body.split(";")] if body.strip() else []
        if any(not part or _UNUSUAL.search(part) for part in parts) or len(parts) > max_queries:
            return None
        if len({part.lower() for part in parts}) < len(parts):
            return None
        queries = []
        for part in parts:
            if by_name[name].is_graph:
                query, note = parse_graph_query(part)
                if note is not None:
                    return None
            else:
                query = PlannedQuery(text=" ".join(part.split()))
            queries.append(query)
        found[name] = queries
    missing = [s.name for s in sources if s.name not in found]
    if missing:
        return None
    return SourcePlan(queries={s.name: found[s.name] for s in sources}, strict=True)


def _parse_tolerant(
    text: str, sources: Sequence[SourceBrief], max_queries: int
) -> SourcePlan | None:
    cleaned = _FENCE.sub("", text)
    known = {_key(s.name): s for s in sources}
    bodies: dict[str, list[str]] = {}
    notes: list[str] = []
    unknown: list[str] = []
    tags = list(_TAG.finditer(cleaned))
    for i, tag in enumerate(tags):
        closing, name, self_closing = tag.group(1), tag.group(2), tag.group(3)
        if closing:
            continue
        source = known.get(_key(name))
        if source is None:
            unknown.append(name)
            continue
        if self_closing:
            body = ""
        else:
            end = tags[i + 1].start() if i + 1 < len(tags) else len(cleaned)
            nxt = tags[i + 1] if i + 1 < len(tags) else None
            if nxt is None or not nxt.group(1) or _key(nxt.group(2)) != _key(name):
                notes.append(f"<{source.name}> tag not closed; read up to the next tag")
            body = cleaned[tag.end() : end]
        if name != source.name:
            notes.append(f"tag <{name}> read as <{source.name}>")
        if source.name in bodies:
            notes.append(f"<{source.name}> appears more than once; queries merged")
        bodies.setdefault(source.name, []).append(body)
    if not bodies:
        return None
    if unknown:
        notes.append("ignored tags of unknown sources: " + ", ".join(dict.fromkeys(unknown)))
    queries: dict[str, list[PlannedQuery]] = {}
    for source in sources:
        if source.name not in bodies:
            continue
        parts = [p for body in bodies[source.name] for p in _split_queries(body)]
        planned: list[PlannedQuery] = []
        for part in parts:
            if source.is_graph:
                query, note = parse_graph_query(part)
                if note:
                    notes.append(f"{source.name}: {note}")
            else:
                query = PlannedQuery(text=part)
            if query.render().lower() not in {q.render().lower() for q in planned}:
                planned.append(query)
        if len(planned) > max_queries:
            notes.append(
                f"{source.name}: {len(planned)} queries planned; kept the first {max_queries}"
            )
            planned = planned[:max_queries]
        queries[source.name] = planned
    missing = [s.name for s in sources if s.name not in queries]
    if missing:
        notes.append(
            "no tag for " + ", ".join(missing) + " in the plan; not searched (missing tag)"
        )
    return SourcePlan(queries=queries, missing=missing, strict=False, notes=notes)


def _split_queries(body: str) -> list[str]:
    """Queries of one tag body: split at ';', else at line breaks; list markers dropped."""
    body = body.strip()
    if not body:
        return []
    pieces = body.split(";") if ";" in body else body.splitlines()
    queries = []
    for piece in pieces:
        piece = _NUMBERING.sub("", piece).strip().strip("\"'").strip()
        if piece:
            queries.append(" ".join(piece.split()))
    return queries


def _key(name: str) -> str:
    return re.sub(r"[\s_\-.]", "", name).lower()
