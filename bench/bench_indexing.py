"""Indexing throughput: `index_paths` versus raw MiniLM `Embedder.encode` on the same texts.

Run: `python bench/bench_indexing.py [--limit N]` (needs ../shared/data; target: ratio >= 0.75).
The corpus is every distinct HotpotQA-350 paragraph (one chunk each at the default chunk
size). The embedder is loaded before either timing, so both measure steady-state work;
`index_paths` adds parsing, chunking, BM25 indexing, the Qdrant upsert and the docstore.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _common import hotpot_corpus_rows, write_jsonl

from prefrag.config import Settings
from prefrag.index.chunking import chunk_texts
from prefrag.index.embeddings import get_embedder
from prefrag.index.ingest import index_paths, source_chunking


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=None, help="index only the first N rows")
    args = parser.parse_args()
    rows = hotpot_corpus_rows()[: args.limit]
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(home=Path(folder) / "home")
        corpus = write_jsonl(Path(folder) / "hotpot.jsonl", rows)
        embedder = get_embedder(settings)
        embedder.encode(["warm up the model", "and the torch path"] * 8)

        chunking = source_chunking(None, settings)
        texts = [chunk for row in rows for chunk in chunk_texts(row["text"], chunking, settings)]
        start = time.perf_counter()
        embedder.encode(texts)
        encode_seconds = time.perf_counter() - start

        report = index_paths([corpus], "hotpot", settings=settings, progress=False)
        again = index_paths([corpus], "hotpot", settings=settings, progress=False)

    n = len(rows)
    chunks = report.added
    print(f"corpus: {n} paragraphs -> {chunks} chunks (raw encode: {len(texts)} texts)")
    print(
        f"raw Embedder.encode: {encode_seconds:.1f} s ({len(texts) / encode_seconds:.1f} texts/s)"
    )
    print(f"index_paths:         {report.seconds:.1f} s ({chunks / report.seconds:.1f} chunks/s)")
    print(f"re-index (all skipped): {again.seconds:.2f} s, added {again.added}")
    print(f"ratio: {encode_seconds / report.seconds:.2f} of raw encode throughput (target >= 0.75)")


if __name__ == "__main__":
    main()
