"""Polyview reranking (PolyRAG §3): judge documents from several views, then mix.

Views, each a separate scorer returning values in [0, 1]:

- R relevance: embedding cosine (or a chat-model judgement when a model is given);
- U utility, S supplement: batched chat-model judgements (off without a model);
- A authority: the document's authority, else the domain table's score for its URL;
- T timeliness: recency of its publication date with a half-life (undated: 0.5);
- C composability: a topic cluster per document (DBSCAN or k-means on embeddings), used
  as the constraint that the top-k covers as many clusters as the pool allows.

The score is y = Σ αᵢ·viewᵢ over the views that are on (weights renormalised). Beyond the
paper: when an authoritative older document and a newer, less authoritative one on the
same topic disagree, the result carries a `Conflict` saying which is which.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

import numpy as np
from langchain_core.documents import Document

from prefrag.documents import NEUTRAL_AUTHORITY, display_id, doc_id, format_documents
from prefrag.errors import ConfigurationError
from prefrag.reasoners.base import Usage
from prefrag.shared import shared
from prefrag.tools.dates import document_date, recency_score

VIEWS = ("R", "U", "S", "A", "T")
# PolyRAG §5.1.3: [R, U, S, A, T].
PROFILES: dict[str, tuple[float, float, float, float, float]] = {
    "inquiry": (0.35, 0.35, 0.1, 0.1, 0.1),
    "policy": (0.35, 0.35, 0.1, 0.1, 0.1),
    "care": (0.35, 0.35, 0.1, 0.2, 0.0),
}
DEFAULT_HALF_LIFE_DAYS = 3 * 365.0
DEFAULT_VECTOR_CACHE_SIZE = 4096
# Cache namespace of query vectors: document ids never take this value.
_QUERY_ID = "\x00query"
_NEGATION_CUES = re.compile(
    r"\b(not recommended|no longer|should not|shouldn't|do not|don't|avoid|contraindicated|"
    r"ineffective|not effective|discouraged|withdrawn|not advised|not safe|unsafe|"
    r"does not|doesn't|never)\b",
    re.I,
)


@dataclass
class Conflict:
    """An authoritative older document and a newer, less authoritative one that disagree."""

    topic: int
    authoritative_id: str
    newer_id: str
    authoritative_date: str
    newer_date: str
    authoritative_authority: float
    newer_authority: float
    authoritative_label: str = ""
    newer_label: str = ""

    def note(self) -> str:
        """One sentence for the user and the trace, naming both documents by the user's ids."""
        older = self.authoritative_label or self.authoritative_id
        newer = self.newer_label or self.newer_id
        return (
            f"Possible conflict on one topic: [{older}] is more authoritative "
            f"(authority {self.authoritative_authority:.2f}, dated {self.authoritative_date}) "
            f"but older; [{newer}] is newer (dated {self.newer_date}) but less "
            f"authoritative (authority {self.newer_authority:.2f})."
        )


@dataclass
class PolyviewResult:
    """The reranked top-k, conflicts among the candidates, and trace notes."""

    documents: list[Document]
    conflicts: list[Conflict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)


def profile_weights(
    profile: str = "inquiry",
    weights: Sequence[float] | dict[str, float] | None = None,
    *,
    active: Sequence[str] = VIEWS,
) -> dict[str, float]:
    """The view weights of `profile` (or explicit `weights`), renormalised over `active` views.

    Raises:
        ValueError: Unknown profile, or weights of the wrong length.
    """
    if weights is None:
        if profile not in PROFILES:
            raise ValueError(
                f"Unknown polyview profile '{profile}' (known: {', '.join(PROFILES)})."
            )
        raw = dict(zip(VIEWS, PROFILES[profile], strict=True))
    elif isinstance(weights, dict):
        raw = {view: float(weights.get(view, 0.0)) for view in VIEWS}
    else:
        if len(weights) != len(VIEWS):
            raise ValueError(f"Polyview weights need {len(VIEWS)} values (R, U, S, A, T).")
        raw = dict(zip(VIEWS, (float(w) for w in weights), strict=True))
    kept = {view: raw[view] for view in VIEWS if view in active}
    total = sum(kept.values())
    if total <= 0:
        # Every active view weighted 0: fall back to relevance alone rather than ties.
        return {view: (1.0 if view == "R" else 0.0) for view in kept}
    return {view: value / total for view, value in kept.items()}


class VectorCache:
    """A bounded, thread-safe LRU of embeddings keyed by document id and text hash.

    Documents recur across the steps of one question and across questions (the same
    paragraph is found by several sub-queries), and embedding them dominates the reranker's
    time on a CPU. The id and the text hash together keep a changed text under an unchanged
    id from reusing a stale vector.

    Args:
        maxsize: Most vectors kept; 0 turns caching off.
    """

    def __init__(self, maxsize: int = DEFAULT_VECTOR_CACHE_SIZE) -> None:
        self.maxsize = max(0, int(maxsize))
        self.hits = 0
        self.misses = 0
        self._vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(identifier: str, text: str) -> tuple[str, str]:
        """The cache key of `text` under `identifier`."""
        return identifier, hashlib.sha1(text.encode("utf-8")).hexdigest()

    def encode(self, encoder: Any, identifiers: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        """Vectors of `texts`, embedding with `encoder` only those not cached."""
        keys = [self.key(i, t) for i, t in zip(identifiers, texts, strict=True)]
        found: dict[tuple[str, str], np.ndarray] = {}
        with self._lock:
            for key in keys:
                vector = self._vectors.get(key)
                if vector is not None:
                    self._vectors.move_to_end(key)
                    found[key] = vector
            self.hits += sum(1 for key in keys if key in found)
            self.misses += sum(1 for key in keys if key not in found)
        # Embed outside the lock: other threads keep reading while this one encodes.
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        if missing:
            position = {key: i for i, key in enumerate(keys)}
            encoded = encoder.encode([texts[position[key]] for key in missing])
            for key, vector in zip(missing, encoded, strict=True):
                found[key] = np.asarray(vector, dtype=np.float32)
            self.put(missing, [found[key] for key in missing])
        return np.stack([found[key] for key in keys])

    def put(self, keys: Sequence[tuple[str, str]], vectors: Sequence[np.ndarray]) -> None:
        """Store vectors under `keys` (e.g. vectors an index already holds)."""
        if self.maxsize == 0:
            return
        with self._lock:
            for key, vector in zip(keys, vectors, strict=True):
                self._vectors[key] = np.asarray(vector, dtype=np.float32)
                self._vectors.move_to_end(key)
            while len(self._vectors) > self.maxsize:
                self._vectors.popitem(last=False)

    def info(self) -> dict[str, int]:
        """Hits, misses, current size and bound."""
        with self._lock:
            return {
                "hits": self.hits,
                "misses": self.misses,
                "size": len(self._vectors),
                "maxsize": self.maxsize,
            }

    def __len__(self) -> int:
        return len(self._vectors)


def authority_view(documents: Sequence[Document], table: Any = ...) -> np.ndarray:
    """The authority view A: each document's own authority, else its URL's table score.

    `table` has `.score(url)`; by default the bundled domain table (if it loads), None for
    none. Documents without either get the neutral 0.5. Values are clipped to [0, 1]. The
    reranker and the extractive reasoner's conflict handling both use this function.
    """
    if table is ...:
        table = _bundled_table()
    scores = []
    for document in documents:
        value = document.metadata.get("authority")
        url = document.metadata.get("url") or ""
        if (value is None or float(value) == NEUTRAL_AUTHORITY) and url and table:
            value = table.score(url)
        scores.append(float(value) if value is not None else NEUTRAL_AUTHORITY)
    return np.clip(np.asarray(scores, dtype=np.float32), 0.0, 1.0)


def timeliness_view(
    documents: Sequence[Document],
    *,
    now: date | None = None,
    half_life_days: float = DEFAULT_HALF_LIFE_DAYS,
) -> tuple[np.ndarray, list[date | None]]:
    """The timeliness view T: recency of each document's date (undated 0.5), and the dates.

    Recency halves every `half_life_days` before `now` (default today). The reranker and the
    extractive reasoner's conflict handling both use this function.
    """
    today = now or date.today()
    dates = [document_date(d) for d in documents]
    scores = [recency_score(d, now=today, half_life_days=half_life_days) for d in dates]
    return np.asarray(scores, dtype=np.float32), dates


class PolyviewReranker:
    """Reranks candidate documents by a weighted mix of views under topic coverage.

    Args:
        embedder: Encoder with `.encode(texts)` (unit vectors); default the configured one.
        profile: "inquiry", "policy" or "care" (PolyRAG's weight profiles).
        weights: Explicit weights for R, U, S, A, T (list or dict), overriding `profile`.
        half_life_days: Age at which timeliness halves.
        chat_model: A LangChain chat model; turns on U and S and the LLM relevance view.
        now: "Today" for timeliness (default: the real today).
        authority_table: Domain table with `.score(url)`; default the bundled one if any.
        cluster_method: "dbscan" (default) or "kmeans" for the composability view.
        cluster_eps: DBSCAN radius in cosine distance.
        coverage: Apply the topic-coverage constraint to the top-k.
        views: Restrict which of R, U, S, A, T may be on (for ablations).
        conflict_authority_gap: How much more authoritative the older document must be.
        vector_cache_size: Document and query vectors kept between calls (0: none).
    """

    def __init__(
        self,
        *,
        embedder: Any = None,
        profile: str = "inquiry",
        weights: Sequence[float] | dict[str, float] | None = None,
        half_life_days: float = DEFAULT_HALF_LIFE_DAYS,
        chat_model: Any = None,
        now: date | None = None,
        authority_table: Any = None,
        cluster_method: Literal["dbscan", "kmeans"] = "dbscan",
        cluster_eps: float = 0.3,
        coverage: bool = True,
        views: Sequence[str] = VIEWS,
        conflict_authority_gap: float = 0.2,
        vector_cache_size: int = DEFAULT_VECTOR_CACHE_SIZE,
    ) -> None:
        profile_weights(profile, weights)  # validate early
        self.profile = profile
        self.weights = weights
        self.half_life_days = half_life_days
        self.chat_model = chat_model
        self.now = now
        self.cluster_method = cluster_method
        self.cluster_eps = cluster_eps
        self.coverage = coverage
        self.allowed_views = tuple(v for v in VIEWS if v in views)
        self.conflict_authority_gap = conflict_authority_gap
        self._embedder = embedder
        self._authority_table = authority_table if authority_table is not None else _bundled_table()
        self.vector_cache = VectorCache(vector_cache_size)

    # ----- views ----------------------------------------------------------------------
    def relevance(self, query_vector: np.ndarray, doc_vectors: np.ndarray) -> np.ndarray:
        """R: cosine similarity of each document to the question, negatives clipped to 0."""
        if len(doc_vectors) == 0:
            return np.zeros(0, dtype=np.float32)
        return np.clip(doc_vectors @ query_vector, 0.0, 1.0)

    def authority(self, documents: Sequence[Document]) -> np.ndarray:
        """A: the document's own authority, else the domain table's score, else 0.5."""
        return authority_view(documents, self._authority_table)

    def timeliness(self, documents: Sequence[Document]) -> tuple[np.ndarray, list[date | None]]:
        """T: recency of each document's date (undated 0.5), plus the dates found."""
        return timeliness_view(documents, now=self.now, half_life_days=self.half_life_days)

    def clusters(self, doc_vectors: np.ndarray, k: int) -> np.ndarray:
        """C: a topic cluster id per document (DBSCAN on cosine distance, or k-means)."""
        n = len(doc_vectors)
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        if n == 1:
            return np.zeros(1, dtype=np.int64)
        if self.cluster_method == "kmeans":
            try:
                from sklearn.cluster import KMeans
            except ImportError:
                raise ConfigurationError(
                    "k-means topic clustering needs scikit-learn; install it with "
                    "`pip install 'prefrag[clustering]'` or use the default DBSCAN clustering."
                ) from None

            n_clusters = max(1, min(k, n))
            model = KMeans(n_clusters=n_clusters, n_init=3, random_state=0)
            return model.fit_predict(doc_vectors).astype(np.int64)
        distances = np.clip(1.0 - doc_vectors @ doc_vectors.T, 0.0, 2.0)
        return linked_clusters(distances, self.cluster_eps)

    def llm_view(
        self,
        view: Literal["R", "U", "S"],
        question: str,
        documents: Sequence[Document],
        usage: Usage,
    ) -> np.ndarray | None:
        """R, U or S judged by the chat model in one batched call; None when it fails.

        The call (and its tokens) is counted in `usage`, whether or not its reply parses.
        """
        if self.chat_model is None:
            return None
        from prefrag.prompts import render_prompt

        name = {"R": "polyview_relevance", "U": "polyview_utility", "S": "polyview_supplement"}[
            view
        ]
        prompt = render_prompt(
            name, question=question, documents=format_documents(documents, max_chars=1500)
        )
        try:
            reply = self.chat_model.invoke(prompt)
        except Exception:
            usage.calls += 1  # attempted: an endpoint error still costs the call
            return None
        usage.record(reply)
        try:
            text = reply.content if hasattr(reply, "content") else str(reply)
            scores = _parse_scores(text if isinstance(text, str) else str(text))
        except Exception:
            return None
        if scores is None:
            return None
        ids = [doc_id(d) for d in documents]
        values = [scores.get(i) for i in ids]
        if all(v is None for v in values):
            return None
        return np.clip(np.asarray([v if v is not None else 0.0 for v in values], np.float32), 0, 1)

    # ----- integration ----------------------------------------------------------------
    def rerank(
        self,
        question: str,
        documents: Sequence[Document],
        k: int,
        *,
        query_vector: np.ndarray | None = None,
        doc_vectors: np.ndarray | None = None,
    ) -> PolyviewResult:
        """The top-`k` documents by polyview score under the coverage constraint.

        Args:
            question: The user's question (or sub-query).
            documents: Candidates (not modified; copies carry `metadata["polyview"]`).
            k: How many to keep.
            query_vector: Precomputed question embedding, if the caller has it.
            doc_vectors: Precomputed document embeddings, if the caller has them.
        """
        notes: list[str] = []
        usage = Usage()
        documents = list(documents)
        if not documents or k <= 0:
            return PolyviewResult([], [], notes)
        if query_vector is None:
            query_vector = self._encode([question], [_QUERY_ID])[0]
        if doc_vectors is None:
            doc_vectors = self._encode(
                [d.page_content for d in documents], [doc_id(d) for d in documents]
            )
        views: dict[str, np.ndarray] = {}
        if "R" in self.allowed_views:
            llm_r = self.llm_view("R", question, documents, usage)
            views["R"] = llm_r if llm_r is not None else self.relevance(query_vector, doc_vectors)
        for view in ("U", "S"):
            if view in self.allowed_views and self.chat_model is not None:
                scored = self.llm_view(view, question, documents, usage)
                if scored is None:
                    notes.append(f"Polyview: the {view} judge gave no usable scores; view off.")
                else:
                    views[view] = scored
        if "A" in self.allowed_views:
            views["A"] = self.authority(documents)
        dates: list[date | None] = [None] * len(documents)
        if "T" in self.allowed_views:
            views["T"], dates = self.timeliness(documents)
        weights = profile_weights(self.profile, self.weights, active=list(views))
        y = np.zeros(len(documents), dtype=np.float32)
        for view, values in views.items():
            y += weights[view] * values
        clusters = self.clusters(doc_vectors, k)
        chosen = select_with_coverage(y, clusters, k) if self.coverage else _top(y, k)
        conflicts = self._conflicts(documents, doc_vectors, clusters, dates, views.get("A"))
        conflict_notes = {c.authoritative_id: c.note() for c in conflicts}
        conflict_notes.update({c.newer_id: c.note() for c in conflicts})
        ranked: list[Document] = []
        for i in chosen:
            source = documents[i]
            meta = dict(source.metadata)
            meta["polyview"] = {
                **{view: round(float(values[i]), 4) for view, values in views.items()},
                "score": round(float(y[i]), 4),
                "cluster": int(clusters[i]),
                "date": _iso(dates[i]),
                "weights": {view: round(w, 4) for view, w in weights.items()},
            }
            if doc_id(source) in conflict_notes:
                meta["polyview"]["conflict"] = conflict_notes[doc_id(source)]
            ranked.append(Document(page_content=source.page_content, metadata=meta, id=source.id))
        n_topics = len(set(clusters.tolist()))
        notes.append(
            f"Polyview ({self.profile}; views {'/'.join(views)}): kept {len(ranked)} of "
            f"{len(documents)} documents covering {len({int(clusters[i]) for i in chosen})} of "
            f"{n_topics} topics."
        )
        notes.extend(c.note() for c in conflicts)
        return PolyviewResult(ranked, conflicts, notes, usage)

    def as_tool(self) -> Any:
        """This reranker as a LangChain tool (question + documents as dicts → ranked dicts)."""
        from langchain_core.tools import StructuredTool

        def polyview_rerank(
            question: str, documents: list[dict[str, Any]], k: int = 5
        ) -> dict[str, Any]:
            """Rerank documents by relevance, authority and timeliness, covering distinct topics.

            Each document is a dict with `content` and optionally id, title, url, date, authority.
            """
            from prefrag.documents import content_id, make_document

            docs = [
                make_document(
                    str(d.get("content", "")),
                    id=str(d.get("id") or content_id(str(d.get("content", "")))),
                    source=str(d.get("source", "tool")),
                    title=str(d.get("title", "")),
                    url=str(d.get("url", "")),
                    date=str(d.get("date", "")),
                    authority=float(d.get("authority", NEUTRAL_AUTHORITY)),
                )
                for d in documents
            ]
            result = self.rerank(question, docs, k)
            return {
                "documents": [
                    {
                        "id": doc_id(d),
                        "title": d.metadata.get("title", ""),
                        **d.metadata["polyview"],
                    }
                    for d in result.documents
                ],
                "conflicts": [c.note() for c in result.conflicts],
            }

        return StructuredTool.from_function(polyview_rerank, name="polyview_rerank")

    # ----- internals ------------------------------------------------------------------
    def cache_info(self) -> dict[str, int]:
        """Hits, misses and size of the vector cache (queries and documents)."""
        return self.vector_cache.info()

    def _encode(self, texts: Sequence[str], ids: Sequence[str] | None = None) -> np.ndarray:
        if self._embedder is None:
            from prefrag.index.embeddings import get_embedder

            self._embedder = get_embedder()
        ids = ids if ids is not None else [""] * len(texts)
        return self.vector_cache.encode(self._embedder, ids, texts)

    def _conflicts(
        self,
        documents: Sequence[Document],
        doc_vectors: np.ndarray,
        clusters: np.ndarray,
        dates: Sequence[date | None],
        authority: np.ndarray | None,
    ) -> list[Conflict]:
        if authority is None:
            authority = self.authority(documents)
        found: list[Conflict] = []
        for i in range(len(documents)):
            for j in range(len(documents)):
                old_date, new_date = dates[i], dates[j]
                if i == j or old_date is None or new_date is None or old_date >= new_date:
                    continue
                if clusters[i] != clusters[j]:
                    continue
                if authority[i] < authority[j] + self.conflict_authority_gap:
                    continue
                if not disagree(documents[i].page_content, documents[j].page_content):
                    continue
                found.append(
                    Conflict(
                        topic=int(clusters[i]),
                        authoritative_id=doc_id(documents[i]),
                        newer_id=doc_id(documents[j]),
                        authoritative_date=old_date.isoformat(),
                        newer_date=new_date.isoformat(),
                        authoritative_authority=float(authority[i]),
                        newer_authority=float(authority[j]),
                        authoritative_label=display_id(documents[i]),
                        newer_label=display_id(documents[j]),
                    )
                )
        return found


def disagree(first: str, second: str) -> bool:
    """A cheap offline disagreement test: one text negates/advises against, the other not.

    Conflict detection runs without a model, so it looks for a polarity mismatch in
    advice cues ("not recommended", "no longer", "avoid", ...). It misses disagreements
    about numbers and can fire on unrelated negations; the note says "possible conflict".
    """
    return bool(_NEGATION_CUES.search(first)) != bool(_NEGATION_CUES.search(second))


def select_with_coverage(scores: np.ndarray, clusters: np.ndarray, k: int) -> list[int]:
    """Top-`k` indices by score such that every cluster gets one before any gets two.

    The best document of each cluster is taken first (clusters visited by their best
    score) until `k` are chosen or every cluster is covered; remaining slots go by
    score. The result is ordered by score.
    """
    order = list(np.argsort(-scores, kind="stable"))
    chosen: list[int] = []
    covered: set[int] = set()
    for i in order:
        if len(chosen) >= k:
            break
        if int(clusters[i]) not in covered:
            covered.add(int(clusters[i]))
            chosen.append(int(i))
    for i in order:
        if len(chosen) >= k:
            break
        if int(i) not in chosen:
            chosen.append(int(i))
    return sorted(chosen, key=lambda i: (-float(scores[i]), i))


def _iso(value: date | None) -> str:
    return value.isoformat() if value is not None else ""


def _top(scores: np.ndarray, k: int) -> list[int]:
    return [int(i) for i in np.argsort(-scores, kind="stable")[:k]]


def _parse_scores(text: str) -> dict[str, float] | None:
    match = re.search(r"\{.*\}", text, re.S)
    if not match:
        return None
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError:
        return None
    scores = data.get("scores", data) if isinstance(data, dict) else None
    if not isinstance(scores, dict):
        return None
    out: dict[str, float] = {}
    for key, value in scores.items():
        try:
            out[str(key).strip("[]")] = float(value)
        except (TypeError, ValueError):
            continue
    return out


def _bundled_table() -> Any:
    """The bundled authority table, read once per process (`prefrag.shared`)."""
    return shared().once("bundled authority table", _read_bundled_table)


def _read_bundled_table() -> Any:
    try:
        from prefrag.sources.authority import AuthorityTable

        return AuthorityTable.load()
    except Exception:
        return None


def linked_clusters(distances: np.ndarray, eps: float) -> np.ndarray:
    """DBSCAN with `min_samples=1` on precomputed distances, as scikit-learn labels it.

    With one sample enough for a core point, every document is a core point and a cluster
    is a connected component of the graph joining documents within `eps` of each other;
    clusters are numbered in the order of their first document (scikit-learn's order).
    """
    n = len(distances)
    labels = np.full(n, -1, dtype=np.int64)
    near = distances <= eps
    cluster = 0
    for start in range(n):
        if labels[start] >= 0:
            continue
        labels[start] = cluster
        frontier = [start]
        while frontier:
            row = frontier.pop()
            for other in np.flatnonzero(near[row] & (labels < 0)):
                labels[other] = cluster
                frontier.append(int(other))
        cluster += 1
    return labels
