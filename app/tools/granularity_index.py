"""Five nested chunk granularities per document, for Mix-of-Granularity selection.

Level 0 is the finest (½ x base size in words); level j is two adjacent level j-1 chunks,
without overlap, so sizes are ½, 1, 2, 4, 8 x base. The text is stored once: every chunk
is a character span into its document's text, and every level-j chunk is exactly a run of
`2**j` consecutive finest chunks of one document. That makes "the chunk at level g that
contains finest chunk c" an array lookup, which is what MoG's selection rule needs.

Vectors are exact (numpy, in-process): a MoG index is per source and small next to the
main index, and exact search keeps per-level scores comparable between runs.
Saved under `Settings.sources_dir/<source>/mog/`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from langchain_core.documents import Document

from prefrag.documents import NEUTRAL_AUTHORITY, doc_id, make_document
from prefrag.jsonl import read_rows, write_jsonl

if TYPE_CHECKING:
    from prefrag.config import Settings

N_LEVELS = 5
BASE_WORDS = 200  # the finest-but-one level; the levels halve and double it
_WORD = re.compile(r"\S+")
_FORMAT_VERSION = 1
# Metadata carried from a parent document onto each of its chunks.
_CARRIED = ("source", "kind", "title", "url", "date", "authority")


class TextEncoder(Protocol):
    """Anything that turns texts into unit vectors (`prefrag.index.embeddings.Embedder`)."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of shape (len(texts), dim), unit length."""
        ...


class MultiGranularIndex(Protocol):
    """What MoG selection needs from a multi-granularity index (chunks or graph hops)."""

    n_levels: int

    def encode_query(self, text: str) -> np.ndarray:
        """The query vector."""
        ...

    def search(self, level: int, query_vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Indices and scores of the top-`k` chunks of `level`, best first."""
        ...

    def members(self, level: int, index: int) -> np.ndarray:
        """Finest-chunk indices that lie inside chunk `index` of `level`."""
        ...

    def container(self, level: int, finest: int) -> int:
        """The chunk of `level` that contains (or is centred on) finest chunk `finest`."""
        ...

    def chunk_document(self, level: int, index: int, *, score: float = 0.0) -> Document:
        """Chunk `index` of `level` as a PrefRAG document."""
        ...


@dataclass
class _Level:
    doc: np.ndarray  # int32, parent document index
    start: np.ndarray  # int32, char offset into the parent text
    end: np.ndarray  # int32
    first: np.ndarray  # int32, first finest chunk inside
    count: np.ndarray  # int32, number of finest chunks inside
    ordinal: np.ndarray  # int32, position of the chunk within its document at this level
    vectors: np.ndarray  # float32 (n, dim)


def chunk_sizes(base_size: int, n_levels: int = N_LEVELS) -> list[int]:
    """Chunk sizes in words per level: ½, 1, 2, 4, 8 x `base_size` for five levels."""
    finest = max(1, base_size // 2)
    return [finest * 2**level for level in range(n_levels)]


class GranularityIndex:
    """Nested fixed-size chunks of a set of documents at `n_levels` granularities.

    Build with `GranularityIndex.build(documents, base_size=...)`, save with `save(path)`,
    open with `GranularityIndex.load(path)`.
    """

    def __init__(
        self,
        *,
        texts: list[str],
        metadata: list[dict[str, Any]],
        levels: list[_Level],
        base_size: int,
        encoder: TextEncoder | None = None,
    ) -> None:
        self.texts = texts
        self.metadata = metadata
        self.levels = levels
        self.base_size = base_size
        self.n_levels = len(levels)
        self._encoder = encoder
        self._finest_to_level = [
            np.repeat(np.arange(len(lv.count), dtype=np.int32), lv.count) for lv in levels
        ]

    # ----- building -----------------------------------------------------------------
    @classmethod
    def build(
        cls,
        documents: Sequence[Document],
        *,
        base_size: int,
        n_levels: int = N_LEVELS,
        encoder: TextEncoder | None = None,
    ) -> GranularityIndex:
        """Chunk `documents` at every level and embed each chunk once.

        Args:
            documents: Whole documents (one per parent); their metadata is carried onto chunks.
            base_size: Base chunk size in words (level 1); level 0 is half of it.
            n_levels: Number of levels (paper: 5).
            encoder: Embedder; defaults to the configured MiniLM embedder.
        """
        encoder = encoder or _default_encoder()
        finest_words = chunk_sizes(base_size, 1)[0]
        texts = [d.page_content for d in documents]
        metadata = [_parent_metadata(d) for d in documents]
        # Finest spans per document: (doc, start, end).
        fin_doc: list[int] = []
        fin_start: list[int] = []
        fin_end: list[int] = []
        per_doc_finest: list[int] = []
        for d, text in enumerate(texts):
            words = [(m.start(), m.end()) for m in _WORD.finditer(text)]
            n = 0
            for i in range(0, len(words), finest_words):
                group = words[i : i + finest_words]
                fin_doc.append(d)
                fin_start.append(group[0][0])
                fin_end.append(group[-1][1])
                n += 1
            per_doc_finest.append(n)
        fin_doc_a = np.asarray(fin_doc, dtype=np.int32)
        fin_start_a = np.asarray(fin_start, dtype=np.int32)
        fin_end_a = np.asarray(fin_end, dtype=np.int32)
        doc_first = np.concatenate([[0], np.cumsum(per_doc_finest)]).astype(np.int32)

        spans: list[tuple[np.ndarray, ...]] = []
        for level in range(n_levels):
            width = 2**level
            doc, first, count, ordinal = [], [], [], []
            for d, n in enumerate(per_doc_finest):
                for o, offset in enumerate(range(0, n, width)):
                    doc.append(d)
                    first.append(doc_first[d] + offset)
                    count.append(min(width, n - offset))
                    ordinal.append(o)
            first_a = np.asarray(first, dtype=np.int32)
            count_a = np.asarray(count, dtype=np.int32)
            spans.append(
                (
                    np.asarray(doc, dtype=np.int32),
                    fin_start_a[first_a] if len(first_a) else first_a,
                    fin_end_a[first_a + count_a - 1] if len(first_a) else first_a,
                    first_a,
                    count_a,
                    np.asarray(ordinal, dtype=np.int32),
                )
            )
        del fin_doc_a
        # Embed each distinct chunk text once: short documents repeat across levels.
        chunk_texts = [
            [texts[d][s:e] for d, s, e in zip(sp[0], sp[1], sp[2], strict=True)] for sp in spans
        ]
        unique = list(dict.fromkeys(t for level_texts in chunk_texts for t in level_texts))
        vectors = encoder.encode(unique) if unique else np.zeros((0, 1), dtype=np.float32)
        position = {t: i for i, t in enumerate(unique)}
        levels = []
        for sp, level_texts in zip(spans, chunk_texts, strict=True):
            idx = np.asarray([position[t] for t in level_texts], dtype=np.int64)
            vecs = vectors[idx] if len(idx) else np.zeros((0, vectors.shape[1]), np.float32)
            doc_a, start_a, end_a, first_a, count_a, ordinal_a = sp
            levels.append(
                _Level(
                    doc=doc_a,
                    start=start_a,
                    end=end_a,
                    first=first_a,
                    count=count_a,
                    ordinal=ordinal_a,
                    vectors=np.ascontiguousarray(vecs, dtype=np.float32),
                )
            )
        return cls(
            texts=texts, metadata=metadata, levels=levels, base_size=base_size, encoder=encoder
        )

    # ----- querying -----------------------------------------------------------------
    def encode_query(self, text: str) -> np.ndarray:
        """The query vector (from the index's embedder)."""
        if self._encoder is None:
            self._encoder = _default_encoder()
        return np.asarray(self._encoder.encode([text])[0], dtype=np.float32)

    def search(self, level: int, query_vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-`k` chunk indices of `level` by cosine similarity, best first."""
        vectors = self.levels[level].vectors
        if len(vectors) == 0 or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        scores = vectors @ query_vector
        return _top_k(scores, k)

    def members(self, level: int, index: int) -> np.ndarray:
        """Finest-chunk indices inside chunk `index` of `level`."""
        lv = self.levels[level]
        return np.arange(lv.first[index], lv.first[index] + lv.count[index])

    def container(self, level: int, finest: int) -> int:
        """The chunk of `level` that contains finest chunk `finest`."""
        return int(self._finest_to_level[level][finest])

    def parent(self, level: int, index: int) -> int | None:
        """The chunk of `level + 1` that contains chunk `index` of `level`, if any."""
        if level + 1 >= self.n_levels:
            return None
        return self.container(level + 1, int(self.levels[level].first[index]))

    def children(self, level: int, index: int) -> list[int]:
        """The chunks of `level - 1` inside chunk `index` of `level` (two, or one at an end)."""
        if level == 0:
            return []
        finest = self.members(level, index)
        return sorted({self.container(level - 1, int(f)) for f in finest})

    def chunk_text(self, level: int, index: int) -> str:
        """The text of chunk `index` of `level` (a span of its document's text)."""
        lv = self.levels[level]
        return self.texts[lv.doc[index]][lv.start[index] : lv.end[index]]

    def chunk_id(self, level: int, index: int) -> str:
        """Stable id `<document id>/g<level>/<ordinal>` of a chunk."""
        lv = self.levels[level]
        return f"{self.metadata[lv.doc[index]]['id']}/g{level}/{lv.ordinal[index]}"

    def chunk_document(self, level: int, index: int, *, score: float = 0.0) -> Document:
        """Chunk `index` of `level` as a document; `parent_id` is the whole document's id."""
        lv = self.levels[level]
        meta = self.metadata[lv.doc[index]]
        parent = self.parent(level, index)
        return make_document(
            self.chunk_text(level, index),
            id=self.chunk_id(level, index),
            parent_id=meta["id"],
            granularity=level,
            score=score,
            container_id=self.chunk_id(level + 1, parent) if parent is not None else None,
            span=[int(lv.start[index]), int(lv.end[index])],
            **{key: meta[key] for key in _CARRIED if key in meta},
        )

    # ----- persistence --------------------------------------------------------------
    def save(self, path: Path) -> None:
        """Write the index to folder `path` (texts once, spans and vectors per level)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        write_jsonl(
            (
                {"text": text, "metadata": meta}
                for text, meta in zip(self.texts, self.metadata, strict=True)
            ),
            path / "documents.jsonl",
        )
        arrays: dict[str, Any] = {}
        for j, lv in enumerate(self.levels):
            for field in ("doc", "start", "end", "first", "count", "ordinal"):
                arrays[f"{field}_{j}"] = getattr(lv, field)
            # float16 halves the size on disk; cosine ranks are unaffected in practice.
            arrays[f"vectors_{j}"] = lv.vectors.astype(np.float16)
        np.savez(path / "levels.npz", **arrays)
        info = {"version": _FORMAT_VERSION, "base_size": self.base_size, "n_levels": self.n_levels}
        (path / "index.json").write_text(json.dumps(info))

    @classmethod
    def load(cls, path: Path, *, encoder: TextEncoder | None = None) -> GranularityIndex:
        """Open an index written by `save`."""
        path = Path(path)
        info = json.loads((path / "index.json").read_text())
        records = read_rows(path / "documents.jsonl")
        texts = [record["text"] for record in records]
        metadata = [record["metadata"] for record in records]
        with np.load(path / "levels.npz") as data:
            levels = [
                _Level(
                    doc=data[f"doc_{j}"],
                    start=data[f"start_{j}"],
                    end=data[f"end_{j}"],
                    first=data[f"first_{j}"],
                    count=data[f"count_{j}"],
                    ordinal=data[f"ordinal_{j}"],
                    vectors=data[f"vectors_{j}"].astype(np.float32),
                )
                for j in range(info["n_levels"])
            ]
        return cls(
            texts=texts,
            metadata=metadata,
            levels=levels,
            base_size=info["base_size"],
            encoder=encoder,
        )

    # ----- reporting ----------------------------------------------------------------
    def size_report(self) -> dict[str, float]:
        """Chunk counts and bytes: text once, spans, and float16 vectors per level."""
        text_bytes = sum(len(t.encode("utf-8")) for t in self.texts)
        report: dict[str, float] = {"text_bytes": text_bytes}
        total_vec = 0
        for j, lv in enumerate(self.levels):
            vec = lv.vectors.shape[0] * lv.vectors.shape[1] * 2
            span = sum(getattr(lv, f).nbytes for f in ("doc", "start", "end", "first", "count"))
            report[f"chunks_{j}"] = len(lv.doc)
            report[f"vector_bytes_{j}"] = vec
            report[f"span_bytes_{j}"] = span
            total_vec += vec + span
        report["total_bytes"] = text_bytes + total_vec
        return report


def _top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    order = top[np.argsort(-scores[top], kind="stable")]
    return order, scores[order]


def _parent_metadata(document: Document) -> dict[str, Any]:
    meta = dict(document.metadata)
    meta["id"] = doc_id(document)
    meta.setdefault("authority", NEUTRAL_AUTHORITY)
    # Keep only JSON-friendly values so the index can be saved.
    return {k: v for k, v in meta.items() if isinstance(v, str | int | float | bool | type(None))}


def _default_encoder() -> TextEncoder:
    from prefrag.index.embeddings import get_embedder

    return get_embedder()


def mog_index_dir(source: str, settings: Settings | None = None) -> Path:
    """Where the MoG index of local source `source` lives (under `settings`' data folder)."""
    from prefrag.config import get_settings

    return (settings or get_settings()).sources_dir / source / "mog"


def build_source_index(
    source: str,
    documents: Sequence[Document],
    *,
    base_size: int | None = None,
    encoder: TextEncoder | None = None,
    settings: Settings | None = None,
    folder: Path | None = None,
) -> GranularityIndex:
    """Build and save the MoG index of local source `source` from its whole documents.

    Args:
        source: The source name; the index goes to `<sources_dir>/<source>/mog`.
        documents: The source's documents, unchunked.
        base_size: Base chunk size in words; default `BASE_WORDS`.
        encoder: Embedder; default the configured one.
        settings: Settings whose data folder holds the source; default the process ones.
        folder: Save here instead of the source's folder.
    """
    from prefrag.config import get_settings

    settings = settings or get_settings()
    size = base_size or BASE_WORDS
    if encoder is None:
        from prefrag.index.embeddings import get_embedder

        encoder = get_embedder(settings)
    index = GranularityIndex.build(documents, base_size=size, encoder=encoder)
    index.save(folder if folder is not None else mog_index_dir(source, settings))
    return index
