"""Split raw documents into chunks that fit the embedder, carrying every source's metadata.

Chunks are measured in the embedder's own word pieces, so each one fits the window MiniLM
reads (256 pieces with [CLS] and [SEP]) and no tail goes unembedded. Cuts fall on a line
break near the end of the window, else on a sentence end, else on a word boundary; the next
chunk starts at the earliest sentence start within the last `overlap` pieces (so answers
taken from a chunk's first sentence are whole sentences), else where the last one ended.
A chunk keeps the line breaks of its text: line-anchored
filters downstream (control lines such as "Status: ..." in a document) see every line, not
only the first. Sources built before this (`chunk_unit` "words" in their manifest) keep
word windows, so re-indexing them adds nothing twice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from langchain_core.documents import Document

from prefrag.documents import content_id, make_document
from prefrag.errors import ConfigurationError
from prefrag.index.loaders import RawDocument

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from prefrag.config import Settings

ChunkUnit = Literal["tokens", "words"]
SPECIAL_TOKENS = 2  # [CLS] and [SEP] take two places of the embedder's window
_LINE_BREAK_SEARCH = 0.25  # look for a line break in the last quarter of a window
_SENTENCE_SEARCH = 0.5  # else for a sentence end in its last half
_SPACES = re.compile(r"[^\S\n]+")


@dataclass(frozen=True)
class Chunking:
    """How a source cuts documents: `size` and `overlap` in word pieces or in words."""

    unit: ChunkUnit
    size: int
    overlap: int

    def __post_init__(self) -> None:
        if self.size < 1 or not 0 <= self.overlap < self.size:
            raise ConfigurationError(
                f"Chunk size must be >= 1 and overlap in [0, size); got {self.size} and "
                f"{self.overlap}."
            )


def chunk_words(text: str, size: int, overlap: int = 0) -> list[str]:
    """Windows of at most `size` words, each starting `size - overlap` words after the last.

    Whitespace is normalised to single spaces (the layout of sources indexed before token
    chunking). The last window is dropped when it would only repeat the overlap.

    Raises:
        ConfigurationError: `size` < 1 or `overlap` not in [0, size).
    """
    Chunking("words", size, overlap)
    words = text.split()
    if len(words) <= size:
        return [" ".join(words)] if words else []
    step = size - overlap
    starts = range(0, len(words) - overlap, step)
    return [" ".join(words[start : start + size]) for start in starts]


def normalise_lines(text: str) -> str:
    """`text` with runs of spaces and tabs made one space and blank lines dropped."""
    lines = (_SPACES.sub(" ", line).strip() for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def chunk_tokens(text: str, tokenizer: Tokenizer, size: int, overlap: int = 0) -> list[str]:
    """Windows of at most `size` word pieces of `tokenizer`, sharing up to `overlap` pieces.

    Line breaks are kept. A window ends at the last line break in its final quarter, else
    at the last sentence end in its final half, else at the last word boundary; a single
    word longer than the window is cut inside it. The next window starts at the earliest
    line or sentence start among the last `overlap` pieces, else right after this one.

    Raises:
        ConfigurationError: `size` < 1 or `overlap` not in [0, size).
    """
    Chunking("tokens", size, overlap)
    text = normalise_lines(text)
    if not text:
        return []
    offsets = tokenizer.encode(text, add_special_tokens=False).offsets
    count = len(offsets)
    if count <= size:
        return [text]
    # A piece starts a word when whitespace precedes it; a line when that holds a newline.
    word_start = [i == 0 or offsets[i][0] > offsets[i - 1][1] for i in range(count)]
    line_start = [i == 0 or "\n" in text[offsets[i - 1][1] : offsets[i][0]] for i in range(count)]
    sentence_start = [
        line_start[i] or (word_start[i] and text[offsets[i - 1][1] - 1] in ".!?")
        for i in range(count)
    ]
    chunks: list[str] = []
    start = 0
    while start < count:
        end = min(start + size, count)
        if end < count:
            end = _cut(start, end, size, [line_start, sentence_start, word_start])
        chunks.append(text[offsets[start][0] : offsets[end - 1][1]])
        if end >= count:
            break
        start = next(
            (i for i in range(max(end - overlap, start + 1), end) if sentence_start[i]), end
        )
    return chunks


def _cut(start: int, end: int, size: int, boundaries: list[list[bool]]) -> int:
    """Where a full window from `start` ends: the latest line, sentence or word start.

    Line starts are searched in the window's last quarter, sentence starts in its last
    half, word starts anywhere after `start`.
    """
    reach = (_LINE_BREAK_SEARCH, _SENTENCE_SEARCH, 1.0)
    for kind, share in zip(boundaries, reach, strict=True):
        earliest = end - max(1, int(size * share))
        for i in range(end, max(start, earliest), -1):
            if kind[i]:
                return i
    return end


def parent_id_of(raw: RawDocument) -> str:
    """The document id: the one given in the input, else derived from title and text."""
    return raw.id if raw.id is not None else content_id(raw.title, raw.text)


def chunk_tokenizer(settings: Settings) -> Tokenizer:
    """The embedder's tokenizer (no truncation, no padding: it counts every piece).

    The same object the embedder encodes with, loaded once per process.
    """
    from prefrag.index.embeddings import resolve_model_dir, word_piece_tokenizer

    tokenizer: Tokenizer = word_piece_tokenizer(resolve_model_dir(settings.embedding_model))
    return tokenizer


def chunk_texts(text: str, chunking: Chunking, settings: Settings) -> list[str]:
    """The chunk texts of `text` cut as `chunking` says."""
    if chunking.unit == "words":
        return chunk_words(text, chunking.size, chunking.overlap)
    return chunk_tokens(text, chunk_tokenizer(settings), chunking.size, chunking.overlap)


def chunk_document(
    raw: RawDocument,
    *,
    source: str,
    chunking: Chunking,
    settings: Settings,
    authority: float,
) -> list[Document]:
    """The chunks of `raw` as Documents with content-derived ids.

    A chunk's id depends on the source name, its parent id, its position and its text, so
    indexing the same input again yields the same ids. `authority` applies when the
    record carries none of its own.
    """
    parent = parent_id_of(raw)
    chunks = chunk_texts(raw.text, chunking, settings)
    return [
        make_document(
            text,
            id=content_id(source, parent, str(position), text),
            source=source,
            kind="local",
            title=raw.title,
            url=raw.url,
            date=raw.date,
            authority=authority if raw.authority is None else raw.authority,
            parent_id=parent,
            granularity=0,
            chunk=position,
            chunks=len(chunks),
            origin=raw.origin,
            **raw.extra,
        )
        for position, text in enumerate(chunks)
    ]
