"""A local source: hybrid dense + BM25 search over one index built by `prefrag index`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

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
    from prefrag.index.lexical import LexicalIndex

SearchMode = Literal["hybrid", "dense", "lexical"]
_MODES = ("hybrid", "dense", "lexical")
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
        self._lexical: LexicalIndex | None = None
        self._numpy: NumpyDenseIndex | None = None
        self._qdrant: QdrantStore | None = None
        self._rows: dict[str, int] = {}
        try:
            self._open(folder, generation)
        except DamagedStoreError:
            raise
        except Exception as error:  # truncated or garbage files of any part
            problem = f"{generation} cannot be read ({type(error).__name__}: {error})"
            raise DamagedStoreError(docstore.damage_message(name, problem), problem) from None

    def vectors_of(self, documents: list[Document]) -> list[np.ndarray | None]:
        """The stored dense vectors of `documents` (None for one this index does not hold).

        Lets a reranker score this source's documents without embedding them again.
        """
        if self._numpy is None:
            return [None] * len(documents)
        if not self._rows:
            self._rows = {record["id"]: row for row, record in enumerate(self._records)}
        rows = [self._rows.get(str(d.metadata.get("id"))) for d in documents]
        return [None if row is None else self._numpy.vectors[row] for row in rows]

    def _open(self, folder: Path, generation: Path) -> None:
        """Load the generation's parts and check that they agree with each other."""
        self._records = docstore.load_records(generation)
        problems = []
        if len(self._records) != self.manifest.chunks:
            problems.append(
                f"{generation / docstore.CHUNKS} has {len(self._records)} records, "
                f"the manifest {self.manifest.chunks}"
            )
        if self.mode != "dense":
            from prefrag.index.integrity import lexical_problem
            from prefrag.index.lexical import LexicalIndex

            # Every file is checked first: a garbage one would load and then fail (or
            # score wrongly) at the first query.
            checked = lexical_problem(generation / docstore.LEXICAL)
            if isinstance(checked, str):
                raise DamagedStoreError(docstore.damage_message(self.store, checked), checked)
            self._lexical = LexicalIndex.load(generation / docstore.LEXICAL, len(self._records))
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

    def _open_dense(self, folder: Path, generation: Path) -> None:
        if self.settings.qdrant_url is None:
            from prefrag.index.dense import NumpyDenseIndex

            self._numpy = NumpyDenseIndex(docstore.load_vectors(generation))
        else:
            from prefrag.index.dense import QdrantStore

            self._qdrant = QdrantStore(self.store, folder / docstore.QDRANT, self.settings)
            self._rows = {record["id"]: row for row, record in enumerate(self._records)}

    @property
    def last_note(self) -> str | None:
        """Why the last search returned nothing, if it did."""
        return self._note

    def __len__(self) -> int:
        return len(self._records)

    def search(self, query: str, k: int) -> list[Document]:
        """The top-`k` chunks for `query`, best first, with metadata `score`.

        Hybrid scores are reciprocal-rank-fusion scores; dense scores are cosines; lexical
        scores are BM25 scores.
        """
        self._note = None
        if k <= 0:
            return []
        if not query.strip():
            self._note = f"Empty query: nothing searched in '{self.name}'."
            return []
        if self.mode == "dense":
            hits = self._dense(query, k)
        elif self.mode == "lexical":
            hits = self._lexical_hits(query, k)
        else:
            depth = max(k, _FUSION_DEPTH)
            dense = [row for row, _ in self._dense(query, depth)]
            lexical = [row for row, _ in self._lexical_hits(query, depth)]
            hits = reciprocal_rank_fusion([dense, lexical], limit=k)
        if not hits:
            self._note = f"No document in '{self.name}' matches the query."
        documents = [docstore.record_to_document(self._records[row], score) for row, score in hits]
        if self.name != self.store:
            for document in documents:
                document.metadata["source"] = self.name
        return documents

    def _lexical_hits(self, query: str, k: int) -> list[tuple[int, float]]:
        assert self._lexical is not None
        return self._lexical.search(query, k)

    def _dense(self, query: str, k: int) -> list[tuple[int, float]]:
        if self._embedder is None:
            from prefrag.index.embeddings import get_embedder

            self._embedder = get_embedder(self.settings)
        vector = self._embedder.encode_one(query)
        if self._numpy is not None:
            return self._numpy.search(vector, k)
        assert self._qdrant is not None
        hits = self._qdrant.search(vector, k)
        return [(self._rows[point], score) for point, score in hits if point in self._rows]
