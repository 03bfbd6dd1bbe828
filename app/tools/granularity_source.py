"""Build a local source's Mix-of-Granularity index from what the source already holds."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from prefrag.documents import make_document
from prefrag.index import docstore

if TYPE_CHECKING:
    from langchain_core.documents import Document

    from prefrag.config import Settings
    from prefrag.tools.granularity_index import GranularityIndex


def _records(
    name: str, folder: Any, manifest: docstore.Manifest, settings: Settings
) -> list[dict[str, Any]]:
    """Every chunk record of the source, in document and chunk order.

    From the generation's files, or from the Qdrant server collection of a source whose
    chunks live there (`QDRANT_URL`).
    """
    if manifest.records_store != "collection":
        return docstore.load_records(folder / manifest.generation)
    from prefrag.index.dense import QdrantStore

    with QdrantStore(name, folder / docstore.QDRANT, settings) as server:
        records = [
            {**payload, "id": point} for point, payload, _ in server.points(with_vectors=False)
        ]
    return sorted(records, key=lambda r: (str(r.get("parent_id", r["id"])), r.get("chunk", 0)))


def source_documents(name: str, settings: Settings | None = None) -> list[Document]:
    """The whole documents of local source `name`, rebuilt from its chunks in order.

    Chunks of one parent are joined with a space, which restores the text exactly when the
    source was chunked without overlap (the default) and up to the overlap otherwise.
    """
    from prefrag.config import get_settings

    settings = settings or get_settings()
    folder = settings.sources_dir / name
    manifest = docstore.require_manifest(folder, name)
    parents: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
    for record in _records(name, folder, manifest, settings):
        parents.setdefault(str(record.get("parent_id") or record["id"]), []).append(record)
    documents = []
    for parent_id, chunks in parents.items():
        first = chunks[0]
        documents.append(
            make_document(
                " ".join(chunk["text"] for chunk in chunks),
                id=parent_id,
                source=name,
                title=first.get("title", ""),
                url=first.get("url", ""),
                date=first.get("date", ""),
                authority=first.get("authority", docstore.DEFAULT_AUTHORITY),
            )
        )
    return documents


def build_mog_index(
    name: str, settings: Settings | None = None, *, base_size: int | None = None
) -> GranularityIndex:
    """Build and save the five-level granularity index of local source `name`."""
    from prefrag.tools.granularity_index import build_source_index

    documents = source_documents(name, settings)
    return build_source_index(name, documents, base_size=base_size, settings=settings)
