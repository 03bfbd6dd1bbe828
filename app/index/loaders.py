"""Read JSONL, Markdown and plain-text files into validated raw documents.

Everything is parsed and checked before anything is written, so a bad line stops an
indexing run with the file and line number and leaves the store untouched.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefrag.errors import IngestError
from prefrag.jsonl import parse_line

JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
TEXT_SUFFIXES = frozenset({".txt", ".text"})
SUPPORTED_SUFFIXES = JSONL_SUFFIXES | MARKDOWN_SUFFIXES | TEXT_SUFFIXES
# One document of this size takes minutes to embed (about 7,000 chunks); larger inputs are
# refused before anything is embedded, with the fix in the message.
MAX_DOCUMENT_CHARS = 10_000_000
MAX_LINE_CHARS = MAX_DOCUMENT_CHARS

# Keys with a meaning of their own; everything else in a JSONL record is kept as metadata.
_RESERVED = frozenset(
    {"id", "title", "text", "content", "url", "date", "year", "source", "authority"}
)
# Metadata keys the chunk builder sets itself; a record may not override them.
_PROTECTED = frozenset(
    {"kind", "parent_id", "granularity", "score", "origin", "chunk", "chunks", "location"}
)
_HEADING = re.compile(r"^\s{0,3}#\s+(.+?)\s*#*\s*$", re.MULTILINE)


@dataclass(frozen=True)
class RawDocument:
    """One input document before chunking.

    Attributes:
        text: The document body (non-empty).
        location: `file:line` (JSONL) or the file path, for error messages.
        id: The id given in the input, or None to derive one from content.
        title: Title, or the file name for Markdown/text without a heading.
        url: Link to the original, if known.
        date: ISO date or year as given, or "".
        origin: The record's own `source` field (e.g. a publisher), or "".
        authority: The record's authority in [0, 1], or None to use the source's.
        extra: Further scalar fields of a JSONL record, kept as chunk metadata.
    """

    text: str
    location: str
    id: str | None = None
    title: str = ""
    url: str = ""
    date: str = ""
    origin: str = ""
    authority: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def iter_input_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Files to index: each named file, and supported files found under named folders.

    Raises:
        IngestError: A path does not exist, is not a regular file or folder (a device such
            as /dev/null, a socket), a named file has an unsupported type, or a folder
            below a named one cannot be read.
    """
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            yield from sorted(_files_under(path))
        elif path.is_file():
            if path.suffix.lower() not in SUPPORTED_SUFFIXES:
                kinds = ", ".join(sorted(SUPPORTED_SUFFIXES))
                raise IngestError(f"Cannot index '{path}': unsupported file type (use {kinds}).")
            yield path
        elif path.exists():
            raise IngestError(
                f"Cannot index '{path}': it is not a regular file or folder (a device, pipe "
                "or socket)."
            )
        else:
            raise IngestError(f"Cannot read '{path}': no such file or folder.")


def _files_under(folder: Path) -> Iterator[Path]:
    """Supported files below `folder`; an unreadable subfolder is an error, not a gap."""

    def refuse(error: OSError) -> None:
        raise IngestError(
            f"Cannot read folder '{error.filename}': {error.strerror or error}; fix its "
            "permissions or leave it out."
        )

    for root, _, names in os.walk(folder, onerror=refuse):
        for name in names:
            path = Path(root) / name
            if path.suffix.lower() in SUPPORTED_SUFFIXES and path.is_file():
                yield path


def load_file(path: Path) -> list[RawDocument]:
    """The documents in one file, validated.

    Raises:
        IngestError: The file cannot be read, is not UTF-8, or has a malformed line.
    """
    try:
        content = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise IngestError(f"Cannot read '{path}': it is not UTF-8 text.") from None
    except OSError as error:
        raise IngestError(f"Cannot read '{path}': {error.strerror or error}.") from None
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        return list(_parse_jsonl(path, content))
    document = _parse_prose(path, content, markdown=suffix in MARKDOWN_SUFFIXES)
    return [document] if document else []


def _parse_prose(path: Path, content: str, *, markdown: bool) -> RawDocument | None:
    text = content.strip()
    if not text:
        return None
    if len(text) > MAX_DOCUMENT_CHARS:
        raise IngestError(
            f"Cannot index '{path}': {len(text):,} characters is over the limit of "
            f"{MAX_DOCUMENT_CHARS:,} for one document; split it into several files."
        )
    heading = _HEADING.search(text) if markdown else None
    title = heading.group(1).strip() if heading else path.stem.replace("_", " ")
    return RawDocument(text=text, location=str(path), title=title, url=path.resolve().as_uri())


def _parse_jsonl(path: Path, content: str) -> Iterator[RawDocument]:
    for number, line in enumerate(content.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        if len(line) > MAX_LINE_CHARS:
            raise IngestError(
                f"{where}: a line of {len(line):,} characters is over the limit of "
                f"{MAX_LINE_CHARS:,}; split the document into several lines."
            )
        yield _record_to_document(parse_line(line, where), where)


def _record_to_document(record: Any, where: str) -> RawDocument:
    if not isinstance(record, dict):
        raise IngestError(f"{where}: expected a JSON object, got {type(record).__name__}.")
    text = record.get("text", record.get("content"))
    if not isinstance(text, str) or not text.strip():
        raise IngestError(f"{where}: needs a non-empty string 'text' or 'content'.")
    strings = {key: _optional_string(record, key, where) for key in ("title", "url", "source")}
    doc_id = record.get("id")
    if doc_id is not None and (isinstance(doc_id, bool) or not isinstance(doc_id, str | int)):
        raise IngestError(f"{where}: 'id' must be a string or an integer.")
    date = record.get("date", record.get("year"))
    if date is not None and (isinstance(date, bool) or not isinstance(date, str | int)):
        raise IngestError(f"{where}: 'date' must be a string like 2024-05-01 or a year.")
    authority = record.get("authority")
    if authority is not None:
        if isinstance(authority, bool) or not isinstance(authority, int | float):
            raise IngestError(f"{where}: 'authority' must be a number in [0, 1].")
        if not 0.0 <= float(authority) <= 1.0:
            raise IngestError(f"{where}: 'authority' {authority} is outside [0, 1].")
    extra = {
        key: value
        for key, value in record.items()
        if key not in _RESERVED and key not in _PROTECTED and _is_plain(value)
    }
    return RawDocument(
        text=text.strip(),
        location=where,
        id=None if doc_id is None or str(doc_id) == "" else str(doc_id),
        title=strings["title"],
        url=strings["url"],
        date="" if date is None else str(date),
        origin=strings["source"],
        authority=None if authority is None else float(authority),
        extra=extra,
    )


def _optional_string(record: dict[str, Any], key: str, where: str) -> str:
    value = record.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise IngestError(f"{where}: '{key}' must be a string.")
    return value.strip()


def _is_plain(value: Any) -> bool:
    """JSON scalars and flat lists of them: what Qdrant payloads and filters handle well."""
    if isinstance(value, str | int | float | bool):
        return True
    return isinstance(value, list) and all(isinstance(v, str | int | float | bool) for v in value)
