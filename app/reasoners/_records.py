"""Records as bridges: the table row a question's description picks out, read by its key.

"The podiatrist whose special interest is heel pain" names nobody; a staff table does, one
row per person ("Mira Tolland, role: Podiatrist; special interest: heel pain, insoles").
Indexing writes each row as its first cell, then each other cell after its column's header
(`_text.listed_sentences`). The row the description picks is the one holding most of the
description's own words, leaving out those every row holds (the headers: "special
interest"); its first cell is the thing described, to be asked about by name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.documents import Document

from prefrag.reasoners._evidence import Evidence
from prefrag.reasoners._text import term_set

# A table row as indexing writes it: "key, header: cell; header: cell".
_ROW_RE = re.compile(r"^(?P<key>[^,;:]{2,60}), (?:[^:;]{1,40}: [^;]+)(?:; [^:;]{1,40}: [^;]+)*$")


def row_key(sentence: str) -> str:
    """The key (first cell) of a sentence that is a table row, or ""."""
    match = _ROW_RE.match(sentence.strip())
    return match.group("key").strip() if match else ""


def described_row(
    tables: Sequence[tuple[str, Sequence[str]]], clause: str, question: str
) -> tuple[str, str]:
    """The key of the one row holding most of the description's words, and its note's id.

    `tables` are the held tables, each its document's id and its row sentences; `clause` is
    what the description says of the thing ("whose special interest is heel pain"). Words
    every row of a table holds (its headers) do not pick a row; the picked row must hold at
    least half of the others and more than any other row; its key
    must be no name the question gives. ("", "") when no row is picked.
    """
    said = term_set(clause)
    held: list[tuple[int, str, str]] = []
    for doc_id, rows in tables:
        keyed = [(key, term_set(row)) for row in rows if (key := row_key(row))]
        if len(keyed) < 2:
            continue
        wanted = said - frozenset.intersection(*(terms for _, terms in keyed))
        held += [
            (count, key, doc_id)
            for key, terms in keyed
            if (count := len(wanted & terms)) * 2 >= len(wanted) and count
        ]
    held.sort(reverse=True)
    if not held or (len(held) > 1 and held[1][0] == held[0][0]):
        return "", ""
    _, key, doc_id = held[0]
    return ("", "") if term_set(key) <= term_set(question) else (key, doc_id)


def held_tables(documents: Sequence[Document]) -> list[tuple[str, list[str]]]:
    """Each table the documents hold: its document's id and its row sentences."""
    evidence = Evidence(documents)
    tables: dict[tuple[int, tuple[int, int]], list[str]] = {}
    for sentence in evidence.sentences:
        if sentence.block is not None and row_key(sentence.text):
            tables.setdefault((sentence.doc, sentence.block), []).append(sentence.text)
    return [(evidence.ids[doc], rows) for (doc, _), rows in tables.items()]


__all__ = ["described_row", "held_tables", "row_key"]
