"""A knowledge-graph source: concept lookup in an SQLite graph built by `index_graph`.

A query is `term , what to know about it` (Omni-RAG's graph query format). The term is
looked up by exact name (any synonym), else by SQLite FTS5 full-text match on the names;
the concept's definition and its one-hop relations that share a word with the question
are then ranked by it and the top-k returned as documents (a bare term returns every
relation). A query without a comma is both term and question, so a
plain question also finds the concept it names.
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document

from prefrag.documents import content_id, make_document
from prefrag.errors import DamagedStoreError, StoreMissingError
from prefrag.index.graph_store import graph_path, normalise_name, readable_relation
from prefrag.shared import shared
from prefrag.sources.base import SourceKind

if TYPE_CHECKING:
    from prefrag.config import Settings

GRAPH_QUERY_FORMAT = (
    "a term, a comma, then what to know about it, e.g. 'Hurler syndrome , how is it "
    "inherited' (the term alone also works)"
)
DEFAULT_GRAPH_AUTHORITY = 0.8
_WORDS = re.compile(r"(?u)\b\w\w+\b")
_MAX_TERMS = 32  # query words sent to the full-text index
_FUZZY_CANDIDATES = 20
_MAX_RELATIONS = 5000  # one-hop relations ranked per concept (hub concepts have thousands)


@dataclass(frozen=True)
class GraphQuery:
    """A graph query split into the term to look up and the question to rank by."""

    term: str
    question: str


def split_graph_query(text: str, is_known: Callable[[str], bool]) -> GraphQuery:
    """Split `term , question` at the comma that ends the longest known term.

    Terms may contain commas ("Leukemia, Hairy Cell , treatment"): each comma is tried
    and the longest prefix that names a concept wins; when none does, the first comma
    splits (the format's rule). Without a comma the whole text is both parts.
    """
    text = text.strip()
    commas = [i for i, char in enumerate(text) if char == ","]
    for position in reversed(commas):
        term = text[:position].strip()
        if term and is_known(term):
            return GraphQuery(term, text[position + 1 :].strip() or term)
    if commas:
        term, _, question = text.partition(",")
        if term.strip():
            return GraphQuery(term.strip(), question.strip() or term.strip())
        return GraphQuery(question.strip(), question.strip())
    return GraphQuery(text, text)


class GraphSource:
    """One graph source (`prefrag index --kind graph ... --source NAME`).

    Raises:
        StoreMissingError: No graph called `store` has been indexed (or `path` is missing).
        DamagedStoreError: The graph file is not a readable graph.
    """

    kind: SourceKind = "graph"

    def __init__(
        self,
        name: str,
        *,
        settings: Settings | None = None,
        store: str | None = None,
        path: Path | None = None,
        description: str | None = None,
        query_format: str = GRAPH_QUERY_FORMAT,
        authority: float | None = None,
    ) -> None:
        self.name = name
        self.path = Path(path) if path is not None else graph_path(store or name, settings)
        if not self.path.is_file():
            raise StoreMissingError(
                f"Graph source '{store or name}' is not indexed ({self.path} is missing); run "
                f"`prefrag index --kind graph FILES --source {store or name}`."
            )
        self._connection = sqlite3.connect(
            f"file:{self.path}?mode=ro", uri=True, check_same_thread=False
        )
        self._lock = threading.Lock()
        try:
            self._connection.execute("SELECT COUNT(*) FROM concepts").fetchone()
        except sqlite3.DatabaseError as error:
            problem = f"{self.path} cannot be read ({error})"
            raise DamagedStoreError(
                f"Graph source '{store or name}' is damaged: {problem}. Delete the file and "
                f"index the triples again (`prefrag index --kind graph FILES --source "
                f"{store or name}`).",
                problem,
            ) from None
        self.query_format = query_format
        stored_authority = self._one("SELECT value FROM meta WHERE key = 'authority'")
        if authority is None:
            authority = float(stored_authority) if stored_authority else DEFAULT_GRAPH_AUTHORITY
        self.authority = float(authority)
        stored = self._one("SELECT value FROM meta WHERE key = 'description'")
        self.concepts = int(self._one("SELECT COUNT(*) FROM concepts") or 0)
        self.description = (
            description
            or (str(stored) if stored else "")
            or f"Concept graph '{name}': definitions and relations of {self.concepts} concepts."
        )
        self._note: str | None = None

    @property
    def last_note(self) -> str | None:
        """Why the last search returned nothing, if it did."""
        return self._note

    def __len__(self) -> int:
        return self.concepts

    def search(self, query: str, k: int) -> list[Document]:
        """Definition and one-hop relations of the concept `query` names, best first."""
        self._note = None
        if k <= 0:
            return []
        parsed = split_graph_query(query, lambda term: bool(self._exact(term)))
        concept = self.lookup(parsed.term)
        if concept is None:
            self._note = (
                f"No concept in '{self.name}' matches {parsed.term[:80]!r}."
                if parsed.term
                else f"Empty query: nothing looked up in '{self.name}'."
            )
            return []
        documents = self._documents(concept, parsed.question)
        return documents[:k]

    def lookup(self, term: str) -> int | None:
        """The concept `term` names: exact name (or synonym) first, else full-text match."""
        exact = self._exact(term)
        if exact:
            return exact[0]
        words = _words(term)[:_MAX_TERMS]
        if not words:
            return None
        match = " OR ".join(f'"{word}"' for word in dict.fromkeys(words))
        rows = self._rows(
            "SELECT concept, name, bm25(names_fts) FROM names_fts WHERE names_fts MATCH ? "
            "ORDER BY bm25(names_fts) LIMIT ?",
            (match, _FUZZY_CANDIDATES),
        )
        if not rows:
            return None
        wanted = set(_stems(term))

        def fit(row: tuple[Any, ...]) -> tuple[float, float, int]:
            stems = set(_stems(row[1]))
            shared = len(stems & wanted)
            # Most query words covered, then fewest words of the name left unmatched.
            return (-shared, len(stems - wanted), int(row[0]))

        return int(min(rows, key=fit)[0])

    # ----- internals --------------------------------------------------------------------
    def _exact(self, term: str) -> list[int]:
        key = normalise_name(term)
        rows = self._rows("SELECT concept FROM names WHERE key = ? ORDER BY concept", (key,))
        return [int(row[0]) for row in rows]

    def _documents(self, concept: int, question: str) -> list[Document]:
        name = str(self._one("SELECT name FROM concepts WHERE id = ?", (concept,)))
        candidates: list[tuple[str, str, dict[str, Any]]] = []  # (key, text, metadata)
        definition = self._rows(
            "SELECT text, source, url, ref FROM definitions WHERE concept = ?", (concept,)
        )
        others = [
            str(row[0])
            for row in self._rows(
                "SELECT name FROM names WHERE concept = ? ORDER BY rowid", (concept,)
            )
            if normalise_name(str(row[0])) != normalise_name(name)
        ]
        relations = self._rows(
            "SELECT r.id, r.relation, c.name, r.source, r.url, 'out' FROM relations r "
            "JOIN concepts c ON c.id = r.object WHERE r.subject = ? "
            "UNION ALL "
            "SELECT r.id, r.relation, c.name, r.source, r.url, 'in' FROM relations r "
            "JOIN concepts c ON c.id = r.subject WHERE r.object = ? AND r.subject != ? "
            "LIMIT ?",
            (concept, concept, concept, _MAX_RELATIONS),
        )
        if others:
            text = f"{name} is also called {'; '.join(others)}."
            candidates.append(("synonyms", text, {"relation": "synonym", "other": others}))
        for rid, relation, other, source, url, direction in relations:
            readable = readable_relation(str(relation))
            text = (
                f"{name} {readable} {other}."
                if direction == "out"
                else f"{other} {readable} {name}."
            )
            meta = {"relation": str(relation), "other": str(other), "origin": str(source)}
            candidates.append((f"relation:{rid}", text, meta | {"url": str(url)}))
        # Every name of the concept is "its own": the question's other words pick relations.
        ranked = _rank(question, " ".join([name, *others]), candidates)
        documents: list[Document] = []
        if definition:
            text, source, url, ref = definition[0]
            documents.append(
                self._document(
                    concept,
                    name,
                    "definition",
                    f"{name}: {text}",
                    1.0 + len(ranked),
                    {
                        "relation": "definition",
                        "origin": str(source),
                        "url": str(url),
                        "ref": str(ref),
                    },
                )
            )
        for position, (key, text, meta) in enumerate(ranked):
            score = float(len(ranked) - position)
            documents.append(self._document(concept, name, key, text, score, meta))
        return documents

    def _document(
        self, concept: int, name: str, key: str, text: str, score: float, meta: dict[str, Any]
    ) -> Document:
        identifier = content_id(self.name, str(concept), key, text)
        extra = {k: v for k, v in meta.items() if k != "url"}
        return make_document(
            text,
            id=identifier,
            source=self.name,
            kind="graph",
            title=name,
            url=str(meta.get("url", "")),
            authority=self.authority,
            score=score,
            concept=name,
            **extra,
        )

    def _rows(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._connection.execute(sql, parameters).fetchall()
            except sqlite3.OperationalError:
                return []  # e.g. a full-text query FTS5 cannot parse: nothing matches

    def _one(self, sql: str, parameters: tuple[Any, ...] = ()) -> Any:
        rows = self._rows(sql, parameters)
        return rows[0][0] if rows else None


def _rank(
    question: str, names: str, candidates: list[tuple[str, str, dict[str, Any]]]
) -> list[tuple[str, str, dict[str, Any]]]:
    """The candidates that share a question word beyond the concept's `names`, best first.

    Each shared word counts by its rarity among the candidates (IDF), so "inherited"
    lifts the inheritance relation over the many relations every concept has; ties keep
    the stored order. A relation sharing nothing with the question is left out: it would
    only crowd better documents (an answer-shaped "has semantic type T047" among them). A
    bare term (no question words beyond the name) is a lookup: every relation, in order.
    """
    own = set(_stems(names))
    wanted = set(_stems(question)) - own
    if not wanted:
        return candidates
    stems = [set(_stems(text)) - own for _, text, _ in candidates]
    total = len(candidates)
    weight = {w: math.log(1 + total / (1 + sum(w in s for s in stems))) for w in wanted}
    scores = [sum(weight[w] for w in wanted & s) for s in stems]
    order = sorted((i for i in range(total) if scores[i] > 0), key=lambda i: -scores[i])
    return [candidates[i] for i in order]


def _words(text: str) -> list[str]:
    stopwords = _stopwords()
    return [w for w in _WORDS.findall(text.casefold()) if w not in stopwords]


def _stems(text: str) -> list[str]:
    words = _words(text)
    return shared().stemmer().stemWords(words) if words else []


@cache
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)
