"""`prefrag index --kind graph`: load concept triples into one SQLite knowledge graph.

A graph source is one SQLite file, `<home>/graphs/<name>.sqlite`. Every triple ever
indexed is kept in `triples` (unique, so re-indexing the same file adds nothing); the
lookup tables are rebuilt from all triples in the same transaction:

- `concepts`: one row per concept; names joined by `synonym` triples are one concept.
- `names`: every name (normalised) to its concept, for exact lookup; `names_fts` is the
  SQLite FTS5 index of the same names, for fuzzy lookup.
- `definitions`: one definition per concept, the one of lowest `priority` (then first
  indexed).
- `relations`: typed one-hop relations between concepts, with a readable relation name.

A triple is `subject`, `relation`, `object`, plus optional `source` (where it came from),
`priority` (for definitions: lower wins), `url` and `ref` (e.g. the id of the document a
definition was taken from). Relation `definition` gives the subject's definition (the
object is its text); `synonym` says the object is another name of the subject.
"""

from __future__ import annotations

import csv
import io
import re
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prefrag.errors import ConfigurationError, IngestError
from prefrag.index import docstore
from prefrag.jsonl import parse_line

if TYPE_CHECKING:
    from prefrag.config import Settings

DEFINITION = "definition"
SYNONYM = "synonym"
_FIELDS = ("subject", "relation", "object")
_OPTIONAL = ("source", "priority", "url", "ref")
_SPACE = re.compile(r"\s+")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS triples (
    subject TEXT NOT NULL, relation TEXT NOT NULL, object TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT '', priority REAL NOT NULL DEFAULT 0,
    url TEXT NOT NULL DEFAULT '', ref TEXT NOT NULL DEFAULT '',
    UNIQUE (subject, relation, object, source)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_DERIVED = """
DROP TABLE IF EXISTS concepts; DROP TABLE IF EXISTS names; DROP TABLE IF EXISTS names_fts;
DROP TABLE IF EXISTS definitions; DROP TABLE IF EXISTS relations;
CREATE TABLE concepts (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE names (key TEXT NOT NULL, concept INTEGER NOT NULL, name TEXT NOT NULL,
                    PRIMARY KEY (key, concept));
CREATE VIRTUAL TABLE names_fts USING fts5(
    name, concept UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TABLE definitions (concept INTEGER PRIMARY KEY, text TEXT NOT NULL,
                          source TEXT NOT NULL, url TEXT NOT NULL, ref TEXT NOT NULL);
CREATE TABLE relations (id INTEGER PRIMARY KEY, subject INTEGER NOT NULL,
                        relation TEXT NOT NULL, object INTEGER NOT NULL,
                        source TEXT NOT NULL, url TEXT NOT NULL,
                        UNIQUE (subject, relation, object));
CREATE INDEX relations_subject ON relations (subject);
CREATE INDEX relations_object ON relations (object);
"""


@dataclass(frozen=True)
class Triple:
    """One fact: `subject` —`relation`→ `object`, with where it came from."""

    subject: str
    relation: str
    object: str
    source: str = ""
    priority: float = 0.0
    url: str = ""
    ref: str = ""


@dataclass(frozen=True)
class GraphReport:
    """What one graph indexing run did (triples added or already known, graph size)."""

    source: str
    path: Path
    files: int
    triples: int
    added: int
    skipped: int
    concepts: int
    definitions: int
    relations: int


def graph_path(name: str, settings: Settings | None = None) -> Path:
    """Where graph source `name` lives: `<home>/graphs/<name>.sqlite`."""
    from prefrag.config import get_settings

    settings = settings or get_settings()
    return settings.home_dir / "graphs" / f"{docstore.check_source_name(name)}.sqlite"


def list_graphs(settings: Settings | None = None) -> list[str]:
    """Names of the indexed graph sources."""
    from prefrag.config import get_settings

    folder = (settings or get_settings()).home_dir / "graphs"
    return sorted(p.stem for p in folder.glob("*.sqlite")) if folder.is_dir() else []


def normalise_name(name: str) -> str:
    """The key a name is looked up by: case-folded, inner whitespace collapsed."""
    return _SPACE.sub(" ", name).strip().casefold()


def readable_relation(relation: str) -> str:
    """`has_semantic_type` → `has semantic type` (how a relation is shown)."""
    return _SPACE.sub(" ", relation.replace("_", " ")).strip()


def read_triples(path: Path) -> list[Triple]:
    """The triples of one JSONL or CSV file (CSV: a header with subject, relation, object).

    Raises:
        IngestError: The file is missing or unreadable, or a row lacks a field or has a
            bad priority; the message names the file and the line.
    """
    suffix = path.suffix.lower()
    if suffix not in (".jsonl", ".csv"):
        raise IngestError(f"{path}: a graph file must be .jsonl or .csv.")
    try:
        rows = list(_csv_rows(path) if suffix == ".csv" else _jsonl_rows(path))
    except OSError as error:
        raise IngestError(f"Cannot read {path}: {error.strerror or error}.") from None
    return [_triple(row, f"{path}, line {line}") for line, row in rows]


def _text(path: Path) -> str:
    """The file's text: UTF-8 (a byte-order mark is allowed), or UTF-16 with its mark.

    Raises:
        IngestError: Any other encoding (e.g. Latin-1); the message names the line.
    """
    data = path.read_bytes()
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise IngestError(f"{path}: not valid UTF-16 text; save it as UTF-8.") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise IngestError(
            f"{path}, line {line}: not UTF-8 text (byte 0x{data[error.start]:02x}); save the "
            "file as UTF-8."
        ) from None


def _jsonl_rows(path: Path) -> Iterator[tuple[int, Any]]:
    for line, text in enumerate(_text(path).split("\n"), start=1):
        if not text.strip():
            continue
        yield line, parse_line(text, f"{path}, line {line}")


def _csv_rows(path: Path) -> Iterator[tuple[int, Any]]:
    reader = csv.DictReader(io.StringIO(_text(path), newline=""))
    try:
        missing = [f for f in _FIELDS if f not in (reader.fieldnames or [])]
        if missing:
            raise IngestError(
                f"{path}, line 1: the CSV header must name {', '.join(_FIELDS)} "
                f"(missing {', '.join(missing)})."
            )
        for row in reader:
            yield reader.line_num, row
    except csv.Error as error:  # e.g. a field over csv.field_size_limit() characters
        raise IngestError(
            f"{path}, line {reader.line_num}: not readable as CSV ({error})."
        ) from None


def _triple(row: Any, where: str) -> Triple:
    if not isinstance(row, dict):
        raise IngestError(f"{where}: a triple must be an object with {', '.join(_FIELDS)}.")
    values: dict[str, Any] = {}
    for key in _FIELDS:
        value = row.get(key)
        if not isinstance(value, str) or not value.strip():
            raise IngestError(f"{where}: '{key}' must be non-empty text (got {value!r}).")
        values[key] = value.strip()
    for key in ("source", "url", "ref"):
        value = row.get(key)
        if value is not None and not isinstance(value, str):
            raise IngestError(f"{where}: '{key}' must be text (got {value!r}).")
        values[key] = (value or "").strip()
    priority = row.get("priority")
    if priority in (None, ""):
        values["priority"] = 0.0
    else:
        try:
            values["priority"] = float(priority)
        except (TypeError, ValueError):
            raise IngestError(f"{where}: 'priority' must be a number (got {priority!r}).") from None
        if isinstance(priority, bool):
            raise IngestError(f"{where}: 'priority' must be a number (got {priority!r}).")
    values["relation"] = values["relation"].strip()
    return Triple(**values)


def index_graph(
    paths: Iterable[str | Path] | str | Path,
    source: str,
    *,
    settings: Settings | None = None,
    description: str | None = None,
    authority: float | None = None,
) -> GraphReport:
    """Add the triples of JSONL/CSV files to graph source `source` and rebuild its lookup.

    Every file is read and checked before the database is touched; re-indexing a file
    adds nothing. `description` and `authority` are kept for later runs.

    Raises:
        IngestError: A path is missing or a row is malformed (names file and line), or
            no triple was found.
        ConfigurationError: Bad source name.
    """
    if authority is not None and not 0.0 <= authority <= 1.0:
        raise ConfigurationError(f"Authority must be in [0, 1]; got {authority}.")
    if isinstance(paths, str | Path):
        paths = [paths]
    files = _graph_files([Path(p) for p in paths])
    triples = [triple for path in files for triple in read_triples(path)]
    if not triples:
        raise IngestError(f"Found no triples in {', '.join(str(p) for p in files)}.")
    target = graph_path(source, settings)
    target.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(target)
    try:
        with connection:
            connection.executescript(_SCHEMA)
            before = _count(connection, "triples")
            connection.executemany(
                "INSERT OR IGNORE INTO triples VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (t.subject, t.relation, t.object, t.source, t.priority, t.url, t.ref)
                    for t in triples
                ],
            )
            added = _count(connection, "triples") - before
            if added or not _has_table(connection, "concepts"):
                _rebuild(connection)
            for key, value in (("description", description), ("authority", authority)):
                if value is not None:
                    connection.execute(
                        "INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, str(value))
                    )
        return GraphReport(
            source=source,
            path=target,
            files=len(files),
            triples=len(triples),
            added=added,
            skipped=len(triples) - added,
            concepts=_count(connection, "concepts"),
            definitions=_count(connection, "definitions"),
            relations=_count(connection, "relations"),
        )
    except sqlite3.DatabaseError as error:
        raise ConfigurationError(
            f"Graph source '{source}' at {target} is unusable: {error}."
        ) from None
    finally:
        connection.close()


def _graph_files(paths: Sequence[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(
                sorted(p for p in path.rglob("*") if p.suffix.lower() in (".jsonl", ".csv"))
            )
        elif path.exists():
            files.append(path)
        else:
            raise IngestError(f"{path} does not exist.")
    if not files:
        raise IngestError(f"Found no .jsonl or .csv file in {', '.join(map(str, paths))}.")
    return files


def _count(connection: sqlite3.Connection, table: str) -> int:
    if not _has_table(connection, table):
        return 0
    return int(connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def _has_table(connection: sqlite3.Connection, table: str) -> bool:
    row = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE name = ? AND type IN ('table', 'view')", (table,)
    ).fetchone()
    return row is not None


class _Names:
    """Union-find over normalised names: names joined by `synonym` are one concept."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}
        self.shown: dict[str, str] = {}  # key -> first spelling met
        self.order: dict[str, int] = {}

    def add(self, name: str) -> str:
        key = normalise_name(name)
        if key not in self.parent:
            self.parent[key] = key
            self.shown[key] = name
            self.order[key] = len(self.order)
        return key

    def root(self, key: str) -> str:
        while self.parent[key] != key:
            self.parent[key] = self.parent[self.parent[key]]
            key = self.parent[key]
        return key

    def join(self, first: str, second: str) -> None:
        a, b = self.root(self.add(first)), self.root(self.add(second))
        if a != b:
            # The name met first stays the concept's preferred name.
            keep, drop = (a, b) if self.order[a] < self.order[b] else (b, a)
            self.parent[drop] = keep


def _rebuild(connection: sqlite3.Connection) -> None:
    """Recompute concepts, names, definitions and relations from every stored triple."""
    rows = connection.execute(
        "SELECT subject, relation, object, source, priority, url, ref FROM triples ORDER BY rowid"
    ).fetchall()
    names = _Names()
    for subject, relation, obj, *_ in rows:
        names.add(subject)
        if relation == SYNONYM:
            names.join(subject, obj)
        elif relation != DEFINITION:
            names.add(obj)
    concept_of: dict[str, int] = {}
    for key in names.parent:
        root = names.root(key)
        if root not in concept_of:
            concept_of[root] = len(concept_of) + 1
    connection.executescript(_DERIVED)
    connection.executemany(
        "INSERT INTO concepts VALUES (?, ?)",
        [(number, names.shown[root]) for root, number in concept_of.items()],
    )
    name_rows = [(key, concept_of[names.root(key)], names.shown[key]) for key in names.parent]
    connection.executemany("INSERT OR IGNORE INTO names VALUES (?, ?, ?)", name_rows)
    connection.executemany(
        "INSERT INTO names_fts (name, concept) VALUES (?, ?)",
        [(shown, concept) for _, concept, shown in name_rows],
    )
    best: dict[int, tuple[float, int, str, str, str, str]] = {}
    relations: list[tuple[int, str, int, str, str]] = []
    for order, (subject, relation, obj, source, priority, url, ref) in enumerate(rows):
        concept = concept_of[names.root(normalise_name(subject))]
        if relation == DEFINITION:
            candidate = (float(priority), order, obj, source, url, ref)
            if concept not in best or candidate[:2] < best[concept][:2]:
                best[concept] = candidate
        elif relation != SYNONYM:
            target = concept_of[names.root(normalise_name(obj))]
            relations.append((concept, relation, target, source, url))
    connection.executemany(
        "INSERT INTO definitions VALUES (?, ?, ?, ?, ?)",
        [(concept, *values[2:]) for concept, values in best.items()],
    )
    connection.executemany(
        "INSERT OR IGNORE INTO relations (subject, relation, object, source, url) "
        "VALUES (?, ?, ?, ?, ?)",
        relations,
    )
