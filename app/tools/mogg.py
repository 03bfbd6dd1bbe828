"""MoG-Graph (MoGG): sentence nodes linked by BM25, granularity = hop range.

Each document is split into nodes of one or two sentences. Every node is used as a BM25
query against all nodes; it is linked to its `k_graph` nearest nodes whose score, relative
to the best score of that query (normally the node itself), reaches `t_graph`. Level h
chunks are "a node plus every node within h hops" (duplicates counted once, capped at
`max_nodes` in breadth-first order), so related sentences from distant places — other
documents included — can come back together. The selection rule is MoG's, unchanged:
finest chunks are the nodes, and the chunk "containing" a node at level h is the one
centred on it.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.documents import Document

from prefrag.documents import make_document
from prefrag.jsonl import read_rows, write_jsonl
from prefrag.tools.granularity_index import (
    N_LEVELS,
    TextEncoder,
    _default_encoder,
    _parent_metadata,
    _top_k,
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[-])")
_WORD = re.compile(r"\S+")
_CARRIED = ("source", "kind", "title", "url", "date", "authority")


def split_nodes(text: str, *, max_node_words: int = 60) -> list[tuple[int, int]]:
    """Character spans of one-or-two-sentence nodes of `text`.

    Consecutive sentences are paired; a sentence longer than `max_node_words / 2` stays
    alone, and one longer than `max_node_words` is cut on word boundaries (bullet lists
    without full stops would otherwise become one giant node).
    """
    sentences: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        sentences.append((start, match.start()))
        start = match.end()
    sentences.append((start, len(text)))
    pieces: list[tuple[int, int, int]] = []  # start, end, words
    for s, e in sentences:
        words = [(m.start() + s, m.end() + s) for m in _WORD.finditer(text[s:e])]
        for i in range(0, len(words), max_node_words):
            group = words[i : i + max_node_words]
            pieces.append((group[0][0], group[-1][1], len(group)))
    nodes: list[tuple[int, int]] = []
    i = 0
    while i < len(pieces):
        s, e, n = pieces[i]
        if n <= max_node_words // 2 and i + 1 < len(pieces):
            _, e2, n2 = pieces[i + 1]
            if n + n2 <= max_node_words:
                nodes.append((s, e2))
                i += 2
                continue
        nodes.append((s, e))
        i += 1
    return nodes


class GraphGranularityIndex:
    """Sentence-node graph of a set of documents with hop-range levels (MoGG)."""

    def __init__(
        self,
        *,
        texts: list[str],
        metadata: list[dict[str, Any]],
        node_doc: np.ndarray,
        node_span: np.ndarray,
        neighbours: list[np.ndarray],
        level_members: list[list[np.ndarray]],
        vectors: list[np.ndarray],
        encoder: TextEncoder | None = None,
        params: dict[str, Any] | None = None,
    ) -> None:
        self.texts = texts
        self.metadata = metadata
        self.node_doc = node_doc
        self.node_span = node_span
        self.neighbours = neighbours
        self.level_members = level_members
        self.vectors = vectors
        self.n_levels = len(vectors)
        self.params = params or {}
        self._encoder = encoder

    @classmethod
    def build(
        cls,
        documents: Sequence[Document],
        *,
        k_graph: int = 3,
        t_graph: float = 0.2,
        n_levels: int = N_LEVELS,
        max_nodes: int = 16,
        max_node_words: int = 60,
        encoder: TextEncoder | None = None,
    ) -> GraphGranularityIndex:
        """Split `documents` into nodes, link them by BM25 and embed every hop range.

        Args:
            documents: Whole documents; their metadata is carried onto chunks.
            k_graph: Neighbours searched per node (paper's figure: 3).
            t_graph: Minimum BM25 score relative to the query's best score for an edge.
            n_levels: Hop ranges 0 .. n_levels - 1.
            max_nodes: Cap on nodes per chunk (breadth-first), to keep chunks embeddable.
            max_node_words: Longest node in words.
            encoder: Embedder; defaults to the configured MiniLM embedder.
        """
        encoder = encoder or _default_encoder()
        texts = [d.page_content for d in documents]
        metadata = [_parent_metadata(d) for d in documents]
        node_doc_l: list[int] = []
        spans: list[tuple[int, int]] = []
        for d, text in enumerate(texts):
            for span in split_nodes(text, max_node_words=max_node_words):
                node_doc_l.append(d)
                spans.append(span)
        node_doc = np.asarray(node_doc_l, dtype=np.int32)
        node_span = np.asarray(spans, dtype=np.int32).reshape(-1, 2)
        node_texts = [texts[d][s:e] for d, (s, e) in zip(node_doc, node_span, strict=True)]
        neighbours = bm25_edges(node_texts, k_graph=k_graph, t_graph=t_graph)
        level_members = [
            [_ball(neighbours, c, hops, max_nodes) for c in range(len(node_texts))]
            for hops in range(n_levels)
        ]
        level_texts = [
            [" ".join(node_texts[m] for m in members) for members in level]
            for level in level_members
        ]
        unique = list(dict.fromkeys(t for level in level_texts for t in level))
        encoded = encoder.encode(unique) if unique else np.zeros((0, 1), np.float32)
        position = {t: i for i, t in enumerate(unique)}
        vectors = [
            np.ascontiguousarray(encoded[[position[t] for t in level]], dtype=np.float32)
            if level
            else np.zeros((0, encoded.shape[1]), np.float32)
            for level in level_texts
        ]
        params = {"k_graph": k_graph, "t_graph": t_graph, "max_nodes": max_nodes}
        return cls(
            texts=texts,
            metadata=metadata,
            node_doc=node_doc,
            node_span=node_span,
            neighbours=neighbours,
            level_members=level_members,
            vectors=vectors,
            encoder=encoder,
            params=params,
        )

    @property
    def n_nodes(self) -> int:
        """Number of sentence nodes."""
        return len(self.node_doc)

    def node_text(self, node: int) -> str:
        """The text of one node (a span of its document)."""
        s, e = self.node_span[node]
        return self.texts[self.node_doc[node]][s:e]

    def encode_query(self, text: str) -> np.ndarray:
        """The query vector."""
        if self._encoder is None:
            self._encoder = _default_encoder()
        return np.asarray(self._encoder.encode([text])[0], dtype=np.float32)

    def search(self, level: int, query_vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-`k` hop-range chunks of `level` (index = centre node), best first."""
        vectors = self.vectors[level]
        if len(vectors) == 0 or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        return _top_k(vectors @ query_vector, k)

    def members(self, level: int, index: int) -> np.ndarray:
        """Nodes within `level` hops of centre node `index`."""
        return self.level_members[level][index]

    def container(self, level: int, finest: int) -> int:
        """The level-`level` chunk centred on node `finest`."""
        return finest

    def chunk_document(self, level: int, index: int, *, score: float = 0.0) -> Document:
        """The hop-range chunk centred on node `index`; `parent_id` is the centre's document."""
        members = self.level_members[level][index]
        meta = self.metadata[self.node_doc[index]]
        text = " ".join(self.node_text(int(m)) for m in members)
        member_parents = list(
            dict.fromkeys(self.metadata[self.node_doc[int(m)]]["id"] for m in members)
        )
        return make_document(
            text,
            id=f"{meta['id']}/h{level}/{index}",
            parent_id=meta["id"],
            granularity=level,
            score=score,
            kind="graph",
            member_parents=member_parents,
            **{key: meta[key] for key in _CARRIED if key in meta and key != "kind"},
        )

    def save(self, path: Path) -> None:
        """Write the graph index to folder `path`."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        write_jsonl(
            (
                {"text": text, "metadata": meta}
                for text, meta in zip(self.texts, self.metadata, strict=True)
            ),
            path / "documents.jsonl",
        )
        arrays: dict[str, Any] = {"node_doc": self.node_doc, "node_span": self.node_span}
        arrays.update(_csr("neighbours", self.neighbours))
        for j in range(self.n_levels):
            arrays.update(_csr(f"members_{j}", self.level_members[j]))
            arrays[f"vectors_{j}"] = self.vectors[j].astype(np.float16)
        np.savez(path / "graph.npz", **arrays)
        (path / "graph.json").write_text(json.dumps({"n_levels": self.n_levels, **self.params}))

    @classmethod
    def load(cls, path: Path, *, encoder: TextEncoder | None = None) -> GraphGranularityIndex:
        """Open a graph index written by `save`."""
        path = Path(path)
        info = json.loads((path / "graph.json").read_text())
        records = read_rows(path / "documents.jsonl")
        with np.load(path / "graph.npz") as data:
            n_levels = info.pop("n_levels")
            return cls(
                texts=[r["text"] for r in records],
                metadata=[r["metadata"] for r in records],
                node_doc=data["node_doc"],
                node_span=data["node_span"],
                neighbours=_uncsr(data, "neighbours"),
                level_members=[_uncsr(data, f"members_{j}") for j in range(n_levels)],
                vectors=[data[f"vectors_{j}"].astype(np.float32) for j in range(n_levels)],
                encoder=encoder,
                params=info,
            )


def bm25_edges(node_texts: Sequence[str], *, k_graph: int, t_graph: float) -> list[np.ndarray]:
    """Undirected adjacency lists: each node to its `k_graph` BM25-nearest above `t_graph`."""
    import bm25s

    n = len(node_texts)
    adjacency: list[set[int]] = [set() for _ in range(n)]
    if n < 2:
        return [np.zeros(0, dtype=np.int32) for _ in range(n)]
    tokens = bm25s.tokenize(list(node_texts), stopwords="en", show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    k = min(k_graph + 1, n)
    ids, scores = retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
    for node in range(n):
        best = float(scores[node].max()) if k else 0.0
        if best <= 0:
            continue
        taken = 0
        for other, score in zip(ids[node], scores[node], strict=True):
            other = int(other)
            if other == node or taken >= k_graph:
                continue
            taken += 1
            if score / best >= t_graph:
                adjacency[node].add(other)
                adjacency[other].add(node)
    return [np.asarray(sorted(a), dtype=np.int32) for a in adjacency]


def _ball(neighbours: list[np.ndarray], centre: int, hops: int, cap: int) -> np.ndarray:
    seen = {centre}
    order = [centre]
    frontier = deque([(centre, 0)])
    while frontier and len(order) < cap:
        node, depth = frontier.popleft()
        if depth >= hops:
            continue
        for other in neighbours[node]:
            other = int(other)
            if other not in seen:
                seen.add(other)
                order.append(other)
                frontier.append((other, depth + 1))
                if len(order) >= cap:
                    break
    return np.asarray(order, dtype=np.int32)


def _csr(name: str, rows: list[np.ndarray]) -> dict[str, np.ndarray]:
    lengths = np.asarray([len(r) for r in rows], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    flat = np.concatenate(rows).astype(np.int32) if rows else np.zeros(0, np.int32)
    return {f"{name}_offsets": offsets, f"{name}_flat": flat}


def _uncsr(data: Any, name: str) -> list[np.ndarray]:
    offsets, flat = data[f"{name}_offsets"], data[f"{name}_flat"]
    return [flat[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]
