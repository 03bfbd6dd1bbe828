"""A local source: hybrid dense + BM25 search over one index built by `prefrag index`."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from langchain_core.documents import Document

from prefrag.errors import DamagedStoreError
from prefrag.index import docstore
from prefrag.index.fusion import reciprocal_rank_fusion
from prefrag.sources.base import DEFAULT_QUERY_FORMAT, SourceKind

if TYPE_CHECKING:
    from prefrag.config import Settings
    from prefrag.index.dense import NumpyDenseIndex, QdrantStore
    from prefrag.index.embeddings import Embedder
    from prefrag.index.hnsw import HnswIndex
    from prefrag.index.lexical import LexicalIndex
    from prefrag.index.rows import Records, VectorRows
    from prefrag.index.sparse_lexical import SparseLexicalIndex

    LexicalSearch = LexicalIndex | SparseLexicalIndex

SearchMode = Literal["hybrid", "dense", "lexical"]
_MODES = ("hybrid", "dense", "lexical")
logger = logging.getLogger(__name__)
_FUSION_DEPTH = 20  # candidates per retriever before fusion; more rarely changes the top 5


class LocalSource:
    """One indexed local source, searched dense, lexical, or both fused by reciprocal rank.

    With embedded Qdrant (the default) queries go to an exact in-process numpy index of
    the same vectors, so reading never opens (or locks) the Qdrant store; with
    `QDRANT_URL` set, dense queries go to the server with `query_points`.

    Raises:
        StoreMissingError: `name` has not been indexed under the data directory.
        ConfigurationError: `name` is not a valid source name or `mode` is unknown.
    """

    kind: SourceKind = "local"

    def __init__(
        self,
        name: str,
        *,
        settings: Settings | None = None,
        description: str | None = None,
        mode: SearchMode = "hybrid",
        query_format: str = DEFAULT_QUERY_FORMAT,
        authority: float | None = None,
        label: str | None = None,
        lazy: bool = False,
    ) -> None:
        from prefrag.config import get_settings
        from prefrag.errors import ConfigurationError

        if mode not in _MODES:
            known = ", ".join(_MODES)
            raise ConfigurationError(f"Search mode must be one of {known}; got {mode!r}.")
        self.settings = settings or get_settings()
        self.store = docstore.check_source_name(name)
        # A registry may show the index under another name; documents carry that name.
        self.name = label or name
        self.mode: SearchMode = mode
        folder = self.settings.sources_dir / name
        manifest = docstore.require_manifest(folder, name)
        generation = folder / manifest.generation
        self.authority = float(manifest.authority if authority is None else authority)
        self.query_format = query_format
        self.description = (
            description
            or manifest.description
            or f"Local documents indexed as '{name}' ({manifest.documents} documents)."
        )
        self.manifest = manifest
        self._note: str | None = None
        self._embedder: Embedder | None = None
        self._lexical: LexicalSearch | None = None
        self._numpy: NumpyDenseIndex | None = None
        self._hnsw: HnswIndex | None = None
        self._delta: NumpyDenseIndex | None = None
        self._vectors: VectorRows | None = None
        self._qdrant: QdrantStore | None = None
        self._records: Sequence[dict[str, Any]] = []
        self._ids: Records | None = None
        self._folder, self._generation = folder, generation
        self._opened = False
        if not lazy:
            self.open()

    def open(self) -> LocalSource:
        """Read the generation's records and indexes, once.

        A `lazy` source does it at its first search, so a run opens only what it searches.

        Raises:
            DamagedStoreError: A part is missing, unreadable or disagrees with the others.
        """
        if self._opened:
            return self
        if self.manifest.records_store == "collection":  # every chunk in the server's collection
            self._open_server()
            self._opened = True
            return self
        try:
            self._open(self._folder, self._generation)
        except DamagedStoreError:
            raise
        except Exception as error:  # truncated or garbage files of any part
            problem = f"{self._generation} cannot be read ({type(error).__name__}: {error})"
            raise DamagedStoreError(docstore.damage_message(self.store, problem), problem) from None
        self._opened = True
        return self

    def vectors_of(self, documents: list[Document]) -> list[np.ndarray | None]:
        """The stored dense vectors of `documents` (None for one this index does not hold).

        Lets a reranker score this source's documents without embedding them again.
        """
        return self.vectors_by_id([str(d.metadata.get("id")) for d in documents])

    def vectors_by_id(self, chunk_ids: Sequence[str]) -> list[np.ndarray | None]:
        """The stored unit vector of each chunk id (None for an id this source lacks).

        Read from the generation's memory-mapped `vectors.npy` whatever searches it
        (exact, HNSW or a Qdrant server), so nothing is embedded again.
        """
        self.open()
        if self.manifest.records_store == "collection":
            assert self._qdrant is not None
            found = {
                point: vector
                for point, _, vector in self._qdrant.points(list(chunk_ids), with_payload=False)
            }
            return [found.get(chunk_id) for chunk_id in chunk_ids]
        if self._vectors is None:
            return [None] * len(chunk_ids)
        assert self._ids is not None
        rows = self._ids.rows_of(chunk_ids).tolist()
        return [None if row < 0 else np.array(self._vectors[row]) for row in rows]

    @property
    def dense_search(self) -> str:
        """How dense queries are answered: 'exact', 'hnsw', 'qdrant-server' or 'none'."""
        self.open()
        if self._qdrant is not None:
            return "qdrant-server"
        if self._hnsw is not None:
            return "hnsw"
        return "exact" if self._numpy is not None else "none"

    def _open(self, folder: Path, generation: Path) -> None:
        """Open the generation's parts and check that they agree with each other.

        Records are parsed when a search returns them, not here (`prefrag.index.rows`).
        """
        from prefrag.index.rows import Records

        self._ids = records = Records(generation)
        self._records = records
        problems = records.problems()
        if len(self._records) != self.manifest.chunks:
            problems.append(
                f"{generation / docstore.CHUNKS} has {len(self._records)} records, "
                f"the manifest {self.manifest.chunks}"
            )
        if self.mode != "dense" and self.manifest.lexical_store == "collection":
            self._open_server()
        elif self.mode != "dense":
            self._lexical = self._open_lexical(generation, len(records.parts) > 1)
            if self._lexical.documents != len(self._records):
                problems.append(
                    f"{generation / docstore.LEXICAL} indexes {self._lexical.documents} "
                    f"documents for {len(self._records)} records"
                )
        if self.mode != "lexical":
            self._open_dense(folder, generation)
            if self._numpy is not None and self._numpy.shape != (
                len(self._records),
                self.manifest.dimension,
            ):
                rows, dimension = self._numpy.shape
                problems.append(
                    f"{generation / docstore.VECTORS} has {rows} {dimension}-d vectors for "
                    f"{len(self._records)} records of {self.manifest.dimension}-d"
                )
        if problems:
            problem = "; ".join(problems)
            raise DamagedStoreError(docstore.damage_message(self.store, problem), problem)

    def _open_lexical(self, generation: Path, with_delta: bool) -> LexicalSearch:
        """The generation's lexical index: Qdrant sparse vectors, or bm25s (format 2 and 1).

        Every file is checked first: a garbage one would load and then fail (or score
        wrongly) at the first query.
        """
        from prefrag.index.rows import DELTA

        folder = generation / docstore.LEXICAL
        from prefrag.index import sparse_lexical

        if sparse_lexical.is_sparse_index(folder):
            checked = sparse_lexical.problem(folder)
            if isinstance(checked, str):
                raise DamagedStoreError(docstore.damage_message(self.store, checked), checked)
            delta = generation / DELTA / sparse_lexical.DELTA_SPARSE if with_delta else None
            return sparse_lexical.SparseLexicalIndex.load(folder, delta)
        from prefrag.index.integrity import lexical_problem
        from prefrag.index.lexical import DELTA_TERMS, LexicalIndex

        checked = lexical_problem(folder)
        if isinstance(checked, str):
            raise DamagedStoreError(docstore.damage_message(self.store, checked), checked)
        terms = generation / DELTA / DELTA_TERMS if with_delta else None
        return LexicalIndex.load(folder, len(self._records), terms)

    def _open_server(self) -> QdrantStore:
        """The source's collection on the Qdrant server (`QDRANT_URL`).

        Raises:
            ConfigurationError: The source lives on a server and `QDRANT_URL` is not set.
        """
        if self._qdrant is None:
            if self.settings.qdrant_url is None:
                from prefrag.errors import ConfigurationError

                if self.manifest.records_store == "collection":
                    raise ConfigurationError(
                        f"Source '{self.store}' keeps its chunks in its Qdrant server "
                        "collection; set QDRANT_URL to that server."
                    )
                raise ConfigurationError(
                    f"Source '{self.store}' keeps its lexical index in its Qdrant server "
                    "collection; set QDRANT_URL to that server (or search it with --mode dense)."
                )
            from prefrag.index.dense import QdrantStore

            self._qdrant = QdrantStore(self.store, self._folder / docstore.QDRANT, self.settings)
        return self._qdrant

    def _open_dense(self, folder: Path, generation: Path) -> None:
        from prefrag.index.rows import VectorRows

        self._vectors = VectorRows.of(generation)
        if self.settings.qdrant_url is not None:
            self._open_server()
            return
        from prefrag.index.dense import NumpyDenseIndex

        self._numpy = NumpyDenseIndex(*self._vectors.arrays)
        self._hnsw = self._open_hnsw(generation)
        if self._hnsw is not None and len(self._vectors.arrays) > 1:
            self._delta = NumpyDenseIndex(*self._vectors.arrays[1:])

    def _open_hnsw(self, generation: Path) -> HnswIndex | None:
        """The generation's HNSW shard when the source is past the HNSW size, else None.

        The shard is derived from `vectors.npy`: one that cannot be read or disagrees
        with the records is left aside (exact search answers; the next `prefrag index`
        writes it again).
        """
        from prefrag.index import hnsw

        shard = generation / hnsw.HNSW
        if len(self._records) < self.settings.hnsw_min_chunks or not shard.is_dir():
            return None
        if not hnsw.available():
            logger.warning(
                "Source '%s' has an HNSW index but qdrant-edge-py cannot be imported; "
                "searching it exactly.",
                self.store,
            )
            return None
        try:
            index = hnsw.HnswIndex(shard, self.settings.hnsw_ef)
        except Exception as error:  # a damaged shard: exact search is still right
            logger.warning(
                "HNSW index of '%s' unreadable (%s); searching exactly.", self.store, error
            )
            return None
        assert self._vectors is not None
        base = len(self._vectors.arrays[0])  # an HNSW shard covers the base part's rows
        if index.size != base:
            logger.warning(
                "HNSW index of '%s' holds %d vectors for %d records; searching exactly.",
                self.store,
                index.size,
                len(self._records),
            )
            index.close()
            return None
        return index

    @property
    def last_note(self) -> str | None:
        """Why the last search returned nothing, if it did."""
        return self._note

    def __len__(self) -> int:
        if self.open().manifest.records_store == "collection":
            return self.manifest.chunks
        return len(self._records)

    def __bool__(self) -> bool:
        """Always true: `source or other` must not read a lazy source's files to count them."""
        return True

    def search(self, query: str, k: int) -> list[Document]:
        """The top-`k` chunks for `query`, best first, with metadata `score`.

        Hybrid scores are reciprocal-rank-fusion scores; dense scores are cosines; lexical
        scores are BM25 scores.
        """
        self._note = None
        self.open()
        if k <= 0:
            return []
        if not query.strip():
            self._note = f"Empty query: nothing searched in '{self.name}'."
            return []
        if self.manifest.records_store == "collection":
            found = self._server_hits(query, k)
        else:
            if self.mode == "dense":
                hits = self._dense(query, k)
            elif self.mode == "lexical":
                hits = self._lexical_hits(query, k)
            else:
                depth = max(k, _FUSION_DEPTH)
                dense = [row for row, _ in self._dense(query, depth)]
                lexical = [row for row, _ in self._lexical_hits(query, depth)]
                hits = reciprocal_rank_fusion([dense, lexical], limit=k)
            found = [(self._record(row), score) for row, score in hits]
        if not found:
            self._note = f"No document in '{self.name}' matches the query."
        documents = [docstore.record_to_document(record, score) for record, score in found]
        if self.name != self.store:
            for document in documents:
                document.metadata["source"] = self.name
        return documents

    def _server_hits(self, query: str, k: int) -> list[tuple[dict[str, Any], float]]:
        """(record, score) of the best `k` chunks, as the server's collection answers.

        The same retrievers and fusion as in process: the collection's dense vectors, its
        BM25 sparse vectors, or both fused by reciprocal rank; records come as payloads.
        """
        assert self._qdrant is not None
        depth = k if self.mode != "hybrid" else max(k, _FUSION_DEPTH)
        dense: list[tuple[str, float, dict[str, Any]]] = []
        lexical: list[tuple[str, float, dict[str, Any]]] = []
        if self.mode != "lexical":
            dense = self._qdrant.dense_records(self._query_vector(query), depth)
        if self.mode != "dense":
            lexical = self._qdrant.lexical_records(query, depth)
        records = {point: {**payload, "id": point} for point, _, payload in [*dense, *lexical]}
        if self.mode == "dense":
            return [(records[point], score) for point, score, _ in dense]
        if self.mode == "lexical":
            return [(records[point], score) for point, score, _ in lexical]
        fused = reciprocal_rank_fusion(
            [[point for point, _, _ in dense], [point for point, _, _ in lexical]], limit=k
        )
        return [(records[point], score) for point, score in fused]

    def _record(self, row: int) -> dict[str, Any]:
        from prefrag.index.rows import RowsDamagedError

        try:
            return self._records[row]
        except RowsDamagedError as error:
            problem = str(error)
            raise DamagedStoreError(docstore.damage_message(self.store, problem), problem) from None

    def _lexical_hits(self, query: str, k: int) -> list[tuple[int, float]]:
        if self._lexical is None:  # the server's collection holds the BM25 vectors
            found = self._open_server().lexical_search(query, k)
            assert self._ids is not None
            rows = self._ids.rows_of([point for point, _ in found]).tolist()
            return [(row, score) for row, (_, score) in zip(rows, found, strict=True) if row >= 0]
        return self._lexical.search(query, k)

    def _dense(self, query: str, k: int) -> list[tuple[int, float]]:
        return self.dense_hits(self._query_vector(query), k)

    def _query_vector(self, query: str) -> np.ndarray:
        if self._embedder is None:
            from prefrag.index.embeddings import get_embedder, with_precision

            # Queries at the precision the source's chunks were embedded with.
            precision = self.manifest.embedding_precision
            self._embedder = get_embedder(with_precision(self.settings, precision))
        return self._embedder.encode_one(query)

    def dense_hits(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Up to `k` (row, cosine) pairs for a query vector, best first.

        Past the HNSW size the shard answers for the base rows and the delta part's rows
        (added since the last full write) are scanned exactly beside it.
        """
        self.open()
        if self._hnsw is not None:
            hits = self._hnsw.search(vector, k)
            if self._delta is not None:
                base = self._hnsw.size
                extra = [(base + row, score) for row, score in self._delta.search(vector, k)]
                hits = sorted([*hits, *extra], key=lambda hit: (-hit[1], hit[0]))[:k]
            return hits
        if self._numpy is not None:
            return self._numpy.search(vector, k)
        assert self._qdrant is not None
        found = self._qdrant.search(vector, k)
        assert self._ids is not None
        rows = self._ids.rows_of([point for point, _ in found]).tolist()
        return [(row, score) for row, (_, score) in zip(rows, found, strict=True) if row >= 0]
