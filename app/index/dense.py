"""Dense vector search (an exact in-process numpy index) and a source's server collection.

In process a source's chunks live once, in its generation's files: queries go to the
numpy index (exact cosine search, one matrix-vector product over memory-mapped vectors)
or, past the HNSW size, the generation's HNSW shards (`prefrag.index.hnsw`). Neither
needs a lock, so any number of processes can read a source while one writes it. On a
server or cluster (`QDRANT_URL`) a source is one collection (`QdrantStore`): records as
payload, dense and BM25 vectors; it answers every query and nothing is kept locally.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from prefrag.index.point_store import PointStore as PointStore  # what open_store returns

if TYPE_CHECKING:
    from prefrag.config import Settings

_UPSERT_BATCH = 256
_MEAN_LENGTH = "prefrag_bm25_mean_words"  # collection metadata: BM25's mean document length
PARENT = "parent_id"  # the payload field naming a chunk's document
_FILLING = "@"  # "ALIAS@TOKEN": one filling of a source (no source name holds "@")


class NumpyDenseIndex:
    """Exact cosine search over unit row vectors (in memory or memory-mapped).

    Given several arrays (a generation's parts), their rows are numbered one after the
    other, as if stacked, without copying them into one.
    """

    def __init__(self, *parts: np.ndarray) -> None:
        self.parts = [np.ascontiguousarray(part, dtype=np.float32) for part in parts]
        self.vectors = self.parts[0]

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, dimension); a malformed file that loaded as another shape shows here."""
        rows, dimensions = 0, set()
        for part in self.parts:
            if part.ndim != 2:
                return (len(part) if part.ndim else 0, 0)
            rows += int(part.shape[0])
            dimensions.add(int(part.shape[1]))
        return (rows, dimensions.pop() if len(dimensions) == 1 else 0)

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Up to `k` (row, cosine) pairs, best first."""
        size = sum(len(part) for part in self.parts)
        k = min(k, size)
        if k <= 0:
            return []
        from prefrag.index.threads import single_blas_thread

        vector = np.asarray(query, dtype=np.float32)
        with single_blas_thread():
            pieces = [part @ vector for part in self.parts]
            scores = pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
        if k < size:
            top = np.argpartition(-scores, k - 1)[:k]
        else:
            top = np.arange(size)
        # Ties broken by row so results are stable from run to run.
        top = top[np.lexsort((top, -scores[top]))]
        return [(int(row), float(scores[row])) for row in top]


def collection_name(source: str) -> str:
    """The Qdrant collection of a source (prefixed so a shared server stays tidy)."""
    return f"prefrag-{source}"


class QdrantStore(PointStore):
    """One source's collection on a Qdrant server or cluster (`QDRANT_URL`).

    Each point holds the chunk's dense vector, its Qdrant BM25 sparse vector (named
    `sparse_lexical.VECTOR`, IDF applied by the server: `Modifier.IDF`) and its record as
    payload, so the server answers dense and lexical queries and nothing lexical lives
    on the machine. The mean length BM25 normalises by is fixed by the first write and
    kept in the collection's metadata.

    Every read and add goes through the source's alias (`collection_name`), which names
    one filling of the source, a collection `ALIAS@TOKEN`; the server resolves the alias.
    `replace_all` fills a new collection and switches the alias to it in one operation,
    so a rebuild killed before the switch leaves the previous collection serving.
    Earlier versions named the collection as the alias itself: it serves as before and
    is replaced by an aliased one at its next `replace_all`.
    """

    server = True
    batch = _UPSERT_BATCH

    def __init__(self, source: str, folder: Path, settings: Settings) -> None:
        from qdrant_client import QdrantClient

        self.collection = collection_name(source)  # the alias (or an older version's name)
        self.client = QdrantClient(
            url=settings.qdrant_url,
            api_key=settings.qdrant_api_key,
            timeout=int(settings.request_timeout),
        )
        self._dimension: int | None = None  # a collection to create at the first upsert
        self._exists_known = False

    def close(self) -> None:
        """Release the client."""
        self.client.close()

    def target(self) -> str | None:
        """The collection the source's alias names (None before the first write).

        A collection of an earlier version, named as the alias itself, is its own target.
        """
        for alias in self.client.get_aliases().aliases:
            if alias.alias_name == self.collection:
                return str(alias.collection_name)
        return self.collection if self.client.collection_exists(self.collection) else None

    def ensure_collection(self, dimension: int) -> None:
        """Create the collection (cosine distance) at the first upsert unless it exists."""
        if not self._exists():
            self._dimension = dimension

    def _create(self, records: Sequence[dict[str, Any]]) -> str:
        """A new collection `ALIAS@TOKEN` for `records` (not yet named by the alias)."""
        import uuid

        from qdrant_client import models

        from prefrag.index.lexical import record_texts
        from prefrag.index.sparse_lexical import VECTOR, mean_words

        assert self._dimension is not None
        name = f"{self.collection}{_FILLING}{uuid.uuid4().hex[:12]}"
        self.client.create_collection(
            name,
            vectors_config=models.VectorParams(
                size=self._dimension, distance=models.Distance.COSINE
            ),
            sparse_vectors_config={VECTOR: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            metadata={_MEAN_LENGTH: mean_words(record_texts(records))},
        )
        # Which documents a source holds is asked by parent id (`has_parents`).
        with warnings.catch_warnings():  # qdrant-client's local engine has no such index
            warnings.filterwarnings("ignore", "Payload indexes have no effect", UserWarning)
            self.client.create_payload_index(
                name, PARENT, field_schema=models.PayloadSchemaType.KEYWORD
            )
        self._dimension = None
        return name

    def _switch(self, name: str, old: str | None) -> None:
        """Point the source's alias at collection `name` (one operation), drop `old`."""
        from qdrant_client import models

        operations: list[Any] = []
        if old == self.collection:
            # An earlier version's collection holds the alias's name: it must go first
            # (the one moment the source has no collection).
            self.client.delete_collection(old)
        elif old is not None:
            operations.append(
                models.DeleteAliasOperation(
                    delete_alias=models.DeleteAlias(alias_name=self.collection)
                )
            )
        operations.append(
            models.CreateAliasOperation(
                create_alias=models.CreateAlias(collection_name=name, alias_name=self.collection)
            )
        )
        self.client.update_collection_aliases(change_aliases_operations=operations)
        self._exists_known = True
        if old is not None and old != self.collection:
            self.client.delete_collection(old)

    def drop_strays(self) -> list[str]:
        """Delete collections of this source the alias does not name (a killed rebuild's).

        None while no collection serves (a kill between dropping an earlier version's
        collection and naming its replacement): the replacement is then the only copy.
        """
        serving = self.target()
        if serving is None:
            return []
        strays = [name for name in self._fillings() if name != serving]
        for name in strays:
            self.client.delete_collection(name)
        return strays

    def _fillings(self) -> list[str]:
        """Every collection `ALIAS@TOKEN` of this source on the server."""
        prefix = f"{self.collection}{_FILLING}"
        return [
            c.name for c in self.client.get_collections().collections if c.name.startswith(prefix)
        ]

    def replace_all(self, records: Sequence[dict[str, Any]], vectors: np.ndarray) -> None:
        """Make the source hold exactly `records`: a new collection, then the alias switch.

        Until the switch readers keep the previous collection, which is dropped after it;
        a kill before the switch leaves the previous one serving and a half-filled
        collection the next write removes (`drop_strays`).
        """
        if not records:
            self._drop()
            return
        old = self.target()
        self._dimension = int(vectors.shape[1])
        name = self._create(records)
        self._upsert_into(name, records, vectors)
        self._switch(name, old)
        self.drop_strays()

    def drop(self) -> None:
        """Delete the source's collection, its alias and any stray filling."""
        self._drop()

    def holds_lexical(self) -> bool:
        """Whether the collection has the BM25 sparse vectors (earlier versions' had not)."""
        from prefrag.index.sparse_lexical import VECTOR

        if not self._exists():
            return True  # it will, from its first write
        config = self.client.get_collection(self.collection).config
        return VECTOR in (config.params.sparse_vectors or {}) and self._mean_length() is not None

    def _mean_length(self, name: str | None = None) -> float | None:
        collection = self.client.get_collection(name or self.collection)
        metadata = getattr(collection.config, "metadata", None)
        value = (metadata or {}).get(_MEAN_LENGTH)
        return float(value) if isinstance(value, int | float) and value > 0 else None

    def lexical_search(self, query: str, k: int) -> list[tuple[str, float]]:
        """Up to `k` (chunk id, BM25 score) pairs by the collection's sparse vectors."""
        return [(point, score) for point, score, _ in self.lexical_records(query, k, False)]

    def lexical_records(
        self, query: str, k: int, with_payload: bool = True
    ) -> list[tuple[str, float, dict[str, Any]]]:
        """Up to `k` (chunk id, BM25 score, record) by the collection's sparse vectors."""
        from qdrant_client import models

        from prefrag.index.sparse_lexical import VECTOR, query_terms

        terms = query_terms(query)
        if k <= 0 or not terms or not self._exists():
            return []
        response = self.client.query_points(
            self.collection,
            query=models.SparseVector(indices=terms, values=[1.0] * len(terms)),
            using=VECTOR,
            limit=k,
            with_payload=with_payload,
        )
        return [
            (str(p.id), float(p.score), dict(p.payload or {}))
            for p in response.points
            if p.score > 0
        ]

    def dense_records(self, vector: np.ndarray, k: int) -> list[tuple[str, float, dict[str, Any]]]:
        """Up to `k` (chunk id, cosine, record) nearest to `vector`, best first."""
        if k <= 0 or not self._exists():
            return []
        response = self.client.query_points(
            self.collection,
            query=np.asarray(vector, dtype=np.float32).tolist(),
            limit=k,
            with_payload=True,
        )
        return [(str(p.id), float(p.score), dict(p.payload or {})) for p in response.points]

    def existing(self, ids: Sequence[str]) -> set[str]:
        """Which of the chunk ids `ids` the collection holds."""
        if not ids or not self._exists():
            return set()
        return {
            str(point.id)
            for start in range(0, len(ids), self.batch)
            for point in self._retrieve(ids[start : start + self.batch], False, False)
        }

    def has_parents(self, parent_ids: Sequence[str]) -> set[str]:
        """Which of the documents `parent_ids` have a chunk in the collection."""
        from qdrant_client import models

        found: set[str] = set()
        if not parent_ids or not self._exists():
            return found
        for start in range(0, len(parent_ids), self.batch):
            wanted = list(parent_ids[start : start + self.batch])
            condition = models.FieldCondition(key=PARENT, match=models.MatchAny(any=wanted))
            seen: set[str] = set()
            offset = None
            while True:
                page, offset = self.client.scroll(
                    self.collection,
                    scroll_filter=models.Filter(must=[condition]),
                    limit=self.batch,
                    offset=offset,
                    with_payload=[PARENT],
                    with_vectors=False,
                )
                seen.update(str((p.payload or {}).get(PARENT)) for p in page)
                if offset is None or len(seen) == len(set(wanted)):
                    break
            found |= seen
        return found

    def count(self) -> int:
        """How many points the collection holds (0 when it does not exist)."""
        if not self._exists():
            return 0
        return int(self.client.count(self.collection, exact=True).count)

    def document_count(self) -> int:
        """How many documents (distinct parent ids) the collection holds: reads every point."""
        if not self._exists():
            return 0
        parents: set[str] = set()
        offset = None
        while True:
            page, offset = self.client.scroll(
                self.collection,
                limit=self.batch,
                offset=offset,
                with_payload=[PARENT],
                with_vectors=False,
            )
            parents.update(str((p.payload or {}).get(PARENT, p.id)) for p in page)
            if offset is None:
                return len(parents)

    def upsert(self, records: Sequence[dict[str, Any]], vectors: np.ndarray) -> None:
        """Write chunk records (as payload), their dense and BM25 vectors under the chunk ids."""
        if not records:
            return
        if self._dimension is not None:  # the source's first write
            name = self._create(records)
            self._switch(name, None)
        self._upsert_into(self.collection, records, vectors)

    def _upsert_into(
        self, name: str, records: Sequence[dict[str, Any]], vectors: np.ndarray
    ) -> None:
        from qdrant_client import models

        from prefrag.index.lexical import record_texts
        from prefrag.index.sparse_lexical import VECTOR, document_vectors

        mean = self._mean_length(name)
        assert mean is not None, "a collection without BM25 vectors is replaced first"
        for start in range(0, len(records), _UPSERT_BATCH):
            stop = start + _UPSERT_BATCH
            batch = records[start:stop]
            sparse = document_vectors(record_texts(batch), mean)
            points = [
                models.PointStruct(
                    id=record["id"],
                    vector={
                        "": vector.tolist(),
                        VECTOR: models.SparseVector(
                            indices=list(bm25.indices), values=list(bm25.values)
                        ),
                    },
                    payload=record,
                )
                for record, vector, bm25 in zip(batch, vectors[start:stop], sparse, strict=True)
            ]
            self.client.upsert(name, points=points, wait=True)

    def delete(self, ids: Sequence[str]) -> None:
        """Remove the points `ids`."""
        from qdrant_client import models

        if ids and self._exists():
            self.client.delete(self.collection, models.PointIdsList(points=list(ids)))

    def _exists(self) -> bool:
        # Asked before reads; once the source has a collection it keeps one.
        if not self._exists_known:
            self._exists_known = self.target() is not None
        return self._exists_known

    def _nearest(self, vector: list[float], k: int) -> Sequence[Any]:
        try:
            response = self.client.query_points(
                self.collection, query=vector, limit=k, with_payload=False
            )
        except Exception:
            if self._exists():
                raise
            return []  # no collection before the first write (asked only after a failure)
        return response.points

    def _retrieve(self, ids: Sequence[str], with_payload: bool, with_vectors: bool) -> list[Any]:
        return list(
            self.client.retrieve(
                self.collection,
                ids=list(ids),
                with_payload=with_payload,
                with_vectors=with_vectors,
            )
        )

    def _scroll(self, offset: Any, with_payload: bool, with_vectors: bool) -> tuple[list[Any], Any]:
        page, offset = self.client.scroll(
            self.collection,
            limit=self.batch,
            offset=offset,
            with_payload=with_payload,
            with_vectors=with_vectors,
        )
        return list(page), offset

    def _drop(self) -> None:
        from qdrant_client import models

        serving = self.target()
        if serving is not None and serving != self.collection:
            alias = models.DeleteAlias(alias_name=self.collection)
            self.client.update_collection_aliases(
                change_aliases_operations=[models.DeleteAliasOperation(delete_alias=alias)]
            )
        if serving is not None:
            self.client.delete_collection(serving)
        for stray in self._fillings():
            self.client.delete_collection(stray)
        self._dimension = None
        self._exists_known = False


def open_store(source: str, folder: Path, settings: Settings) -> PointStore:
    """The Qdrant points of `source`.

    Its collection on the Qdrant server when `QDRANT_URL` is set, else the Qdrant Edge
    shard in `folder` (the store of record earlier versions kept, read to repair).

    Raises:
        StoreLockedError: Another process has the embedded shard open.
        StoreUnreadableError: The embedded shard's files cannot be loaded.
    """
    if settings.qdrant_url is not None:
        return QdrantStore(source, folder, settings)
    from prefrag.index.edge_store import EdgeStore

    return EdgeStore(source, folder)
