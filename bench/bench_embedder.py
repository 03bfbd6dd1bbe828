"""Bulk embedding: ONNX Runtime against the numpy MiniLM pass (and sentence-transformers).

Run: `python bench/bench_embedder.py [--chunks 400] [--rounds 3] [--sentence-transformers]`
(needs ../shared/data; sentence-transformers from the `dev` extra for the third column).
All runtimes embed the same MedQuAD chunks, cut as `prefrag index` cuts them; rounds
alternate between runtimes and the best round of each is kept, so load from other processes
hits them alike. CPU time is the process's (all threads): on a shared machine it is the
figure that does not depend on load. Target: <= 22 ms CPU per chunk. Parity: the largest
absolute difference and the smallest cosine of each runtime's vectors against numpy's
(target: cosine >= 0.999).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _common import SHARED_DATA

from prefrag.config import get_settings
from prefrag.index.chunking import chunk_document
from prefrag.index.embeddings import Embedder, resolve_model_dir
from prefrag.index.ingest import source_chunking
from prefrag.index.loaders import RawDocument
from prefrag.jsonl import read_rows


def medquad_chunks(count: int, seed: int = 0) -> list[str]:
    """`count` chunk texts of a seeded sample of MedQuAD snippets, cut as indexing cuts."""
    settings = get_settings()
    rows = [
        row for path in sorted((SHARED_DATA / "medquad").glob("*.jsonl")) for row in read_rows(path)
    ]
    random.Random(seed).shuffle(rows)
    texts: list[str] = []
    for row in rows:
        raw = RawDocument(
            text=row["content"], location="medquad", title=row.get("title", ""), id=row["id"]
        )
        chunking = source_chunking(None, settings)
        chunks = chunk_document(
            raw, source="bench", chunking=chunking, settings=settings, authority=0.5
        )
        texts += [chunk.page_content for chunk in chunks]
        if len(texts) >= count:
            return texts[:count]
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=400, help="chunks to encode")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sentence-transformers", action="store_true")
    args = parser.parse_args()
    texts = medquad_chunks(args.chunks)
    model_dir = resolve_model_dir("bundled:all-MiniLM-L6-v2")
    encoders: dict[str, Callable[[list[str]], np.ndarray]] = {}
    for runtime in ("numpy", "onnxruntime"):
        started = time.perf_counter()
        embedder = Embedder(model_dir, runtime=runtime)  # type: ignore[arg-type]
        embedder.encode(texts[:8])
        print(f"{runtime:>22}: loaded in {time.perf_counter() - started:.1f} s")
        encoders[runtime] = embedder.encode
    if args.sentence_transformers:
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(model_dir), device="cpu")
        model.encode(texts[:8])
        encoders["sentence-transformers"] = lambda batch: model.encode(
            batch, batch_size=32, normalize_embeddings=True
        )
    lengths = [len(e.ids) for e in _untruncated(model_dir).encode_batch(texts)]
    cpu = dict.fromkeys(encoders, float("inf"))
    wall = dict.fromkeys(encoders, float("inf"))
    vectors: dict[str, np.ndarray] = {}
    for _ in range(args.rounds):
        for name, encode in encoders.items():
            cpu_start, wall_start = time.process_time(), time.perf_counter()
            vectors[name] = encode(texts)
            cpu[name] = min(cpu[name], time.process_time() - cpu_start)
            wall[name] = min(wall[name], time.perf_counter() - wall_start)
    print(
        f"{len(texts)} MedQuAD chunks, {np.mean(lengths):.0f} word pieces on average "
        f"({np.mean([n > 256 for n in lengths]):.0%} longer than the 256-piece window)"
    )
    print(f"{'runtime':>22} | ms CPU/chunk | chunks/s wall | max |diff| | min cosine (vs numpy)")
    for name in encoders:
        diff = np.abs(vectors[name] - vectors["numpy"]).max()
        cosine = (vectors[name] * vectors["numpy"]).sum(1).min()
        print(
            f"{name:>22} | {1000 * cpu[name] / len(texts):12.1f} | "
            f"{len(texts) / wall[name]:13.1f} | {diff:10.1e} | {cosine:.7f}"
        )
    print(
        f"CPU ratio numpy / onnxruntime: {cpu['numpy'] / cpu['onnxruntime']:.2f}x "
        f"(target: <= 22 ms CPU per chunk)"
    )


def _untruncated(model_dir: Path):  # type: ignore[no-untyped-def]
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(model_dir / "tokenizer.json"))


if __name__ == "__main__":
    main()
