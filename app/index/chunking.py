"""Split raw documents into word windows carrying the metadata every source promises."""

from __future__ import annotations

from langchain_core.documents import Document

from prefrag.documents import content_id, make_document
from prefrag.errors import ConfigurationError
from prefrag.index.loaders import RawDocument


def chunk_words(text: str, size: int, overlap: int = 0) -> list[str]:
    """Windows of at most `size` words, each starting `size - overlap` words after the last.

    Whitespace is normalised to single spaces. The last window is dropped when it would
    only repeat the overlap of the one before.

    Raises:
        ConfigurationError: `size` < 1 or `overlap` not in [0, size).
    """
    if size < 1 or not 0 <= overlap < size:
        raise ConfigurationError(
            f"Chunk size must be >= 1 and overlap in [0, size); got {size} and {overlap}."
        )
    words = text.split()
    if len(words) <= size:
        return [" ".join(words)] if words else []
    step = size - overlap
    starts = range(0, len(words) - overlap, step)
    return [" ".join(words[start : start + size]) for start in starts]


def parent_id_of(raw: RawDocument) -> str:
    """The document id: the one given in the input, else derived from title and text."""
    return raw.id if raw.id is not None else content_id(raw.title, raw.text)


def chunk_document(
    raw: RawDocument, *, source: str, size: int, overlap: int, authority: float
) -> list[Document]:
    """The chunks of `raw` as Documents with content-derived ids.

    A chunk's id depends on the source name, its parent id, its position and its text, so
    indexing the same input again yields the same ids. `authority` applies when the
    record carries none of its own.
    """
    parent = parent_id_of(raw)
    chunks = chunk_words(raw.text, size, overlap)
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
