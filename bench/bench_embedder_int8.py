"""int8 MiniLM against fp32: CPU per chunk and MedQuAD retrieval (question -> its snippet).

Run (heavy: take the CPU lock):
  python bench/bench_embedder_int8.py --snippets 2500 [--arm fp32:4 --arm int8:1 ...]

Each arm is the product's embedder (`prefrag.index.embeddings.Embedder` in ONNX Runtime)
at a precision and a batch size (texts per ONNX Runtime call): fp32, and int8 (every
weight product, `onnx_bert.QUANTISABLE`, in int8: weights per column in 7 bits,
activations per call; one text per call, as the product runs it). All arms embed the same
seeded MedQuAD snippets, chunked as `prefrag index` chunks them, and their questions.
Reported per arm: ms CPU per chunk and per 1,000 word pieces (one timed pass each, one arm
after the other; all threads), the smallest and
mean cosine of its chunk vectors against the first arm's, and exact dense retrieval of each
question's own snippet among all sampled snippets (a snippet's score is its best chunk's):
recall@1 and recall@10. "queries on ... chunks" is a source indexed by the first arm
searched with int8 query vectors. Criterion (issue 21): recall@10 within 0.5 points of fp32.

The static-quantisation variants of docs/scale.md (quantize_static, QDQ/QOperator) were
measured by this script's version at commit 178cea3.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np
from _common import SHARED_DATA

from prefrag.config import get_settings
from prefrag.index.chunking import chunk_document
from prefrag.index.embeddings import Embedder, resolve_model_dir
from prefrag.index.ingest import source_chunking
from prefrag.index.loaders import RawDocument
from prefrag.jsonl import read_rows


def snippets_and_chunks(count: int, seed: int) -> tuple[list[dict], list[str], list[int]]:
    """Seeded MedQuAD snippets, their chunk texts (as indexing cuts them) and owners."""
    settings = get_settings()
    rows = [
        row for path in sorted((SHARED_DATA / "medquad").glob("*.jsonl")) for row in read_rows(path)
    ]
    chosen = random.Random(seed).sample(rows, min(count, len(rows)))
    chunking = source_chunking(None, settings)
    texts, owners = [], []
    for number, row in enumerate(chosen):
        raw = RawDocument(
            text=row["content"], location="medquad", title=row.get("title", ""), id=row["id"]
        )
        for chunk in chunk_document(
            raw, source="bench", chunking=chunking, settings=settings, authority=0.5
        ):
            texts.append(chunk.page_content)
            owners.append(number)
    return chosen, texts, owners


def recall(chunks: np.ndarray, owners: np.ndarray, questions: np.ndarray) -> tuple[float, float]:
    """recall@1 and @10 of each question's own snippet (snippet score = best chunk's)."""
    scores = questions @ chunks.T
    per_snippet = np.full((len(questions), owners.max() + 1), -np.inf, dtype=np.float32)
    for column, owner in enumerate(owners):
        np.maximum(per_snippet[:, owner], scores[:, column], out=per_snippet[:, owner])
    gold = per_snippet[np.arange(len(questions)), np.arange(len(questions))]
    rank = (per_snippet > gold[:, None]).sum(1)
    return float(np.mean(rank < 1)), float(np.mean(rank < 10))


def main() -> None:
    """Embed the sample with each arm and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--snippets", type=int, default=2500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--arm",
        action="append",
        help="an arm as PRECISION:BATCH (texts per ONNX Runtime call), e.g. fp32:4 or int8:1; "
        "repeatable; the first is the reference (default: fp32:4 fp32:1 int8:1)",
    )
    parser.add_argument("--out", default="bench/results/embedder_int8.json")
    parser.add_argument(
        "--cache",
        default="bench/results/embedder_int8",
        help="folder keeping each arm's vectors and CPU time, so a run split over several "
        "CPU-lock holds embeds each arm once",
    )
    args = parser.parse_args()
    model_dir = resolve_model_dir("bundled:all-MiniLM-L6-v2")
    arms: dict[str, Embedder] = {}
    for arm in args.arm or ["fp32:4", "fp32:1", "int8:1"]:
        precision, batch = arm.split(":")
        embedder = Embedder(model_dir, runtime="onnxruntime", precision=precision)  # type: ignore[arg-type]
        embedder.batch_size = int(batch)
        arms[f"{precision}, batches of {batch}"] = embedder
    reference = next(iter(arms))
    rows, texts, owners = snippets_and_chunks(args.snippets, args.seed)
    questions = [row["question"] for row in rows]
    tokenizer = _tokenizer(arms[reference])
    pieces = sum(sum(e.attention_mask) for e in tokenizer.encode_batch(texts))
    print(
        f"{len(rows)} MedQuAD snippets, {len(texts)} chunks ({pieces / len(texts):.0f} word "
        f"pieces on average), {len(questions)} questions",
        flush=True,
    )
    print(
        f"{'arm':>36} | ms CPU/chunk | ms CPU/1k pieces | CPU vs first | min cos | mean cos "
        "| recall@1 | recall@10"
    )
    cache = Path(args.cache) / f"seed{args.seed}-snippets{len(rows)}-chunks{len(texts)}"
    cache.mkdir(parents=True, exist_ok=True)
    owner_array = np.array(owners)
    results: dict[str, dict] = {}
    chunk_vectors: dict[str, np.ndarray] = {}
    for name, embedder in arms.items():
        slug = name.replace(", batches of ", "-b")
        stored = cache / f"{slug}.json"
        if stored.exists():
            seconds = json.loads(stored.read_text())["cpu_seconds"]
            chunks = np.load(cache / f"{slug}.chunks.npy")
            queries = np.load(cache / f"{slug}.questions.npy")
        else:
            embedder.encode(["warm up"])
            began = time.process_time()
            chunks = embedder.encode(texts)
            seconds = time.process_time() - began
            queries = embedder.encode(questions)
            np.save(cache / f"{slug}.chunks.npy", chunks)
            np.save(cache / f"{slug}.questions.npy", queries)
            stored.write_text(json.dumps({"cpu_seconds": seconds}))
        chunk_vectors[name] = chunks
        lines = [(name, chunks, queries, seconds)]
        if name.startswith("int8"):
            label = f"{name}: queries on {reference} chunks"
            lines.append((label, chunk_vectors[reference], queries, None))
        reference_seconds = results[reference]["cpu_seconds"] if results else seconds
        for label, vectors, query_vectors, cpu in lines:
            results[label] = _line(
                label,
                vectors,
                chunk_vectors[reference],
                owner_array,
                query_vectors,
                cpu,
                pieces,
                reference_seconds,
            )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(
        json.dumps({"snippets": len(rows), "chunks": len(texts), "arms": results}, indent=2)
    )


def _tokenizer(embedder: Embedder):  # type: ignore[no-untyped-def]
    embedder.encode(["warm up"])
    return embedder._tokenizer


def _line(
    name: str,
    chunks: np.ndarray,
    reference_chunks: np.ndarray,
    owners: np.ndarray,
    queries: np.ndarray,
    seconds: float | None,
    pieces: int,
    reference_seconds: float | None,
) -> dict:
    """One arm's figures, printed as a table row."""
    cosines = (chunks * reference_chunks).sum(1)
    r1, r10 = recall(chunks, owners, queries)
    result = {
        "cpu_seconds": seconds,
        "ms_cpu_per_chunk": None if seconds is None else 1000 * seconds / len(chunks),
        "ms_cpu_per_1k_pieces": None if seconds is None else 1e6 * seconds / pieces,
        "cpu_ratio": None
        if seconds is None or reference_seconds is None
        else reference_seconds / seconds,
        "min_cosine": float(cosines.min()),
        "mean_cosine": float(cosines.mean()),
        "recall_at_1": r1,
        "recall_at_10": r10,
    }
    timing = (
        "           - |                - |           -"
        if seconds is None
        else f"{result['ms_cpu_per_chunk']:12.1f} | {result['ms_cpu_per_1k_pieces']:16.1f} "
        f"| {result['cpu_ratio']:10.2f}x"
    )
    print(
        f"{name:>36} | {timing} | {result['min_cosine']:.4f} | {result['mean_cosine']:.5f} "
        f"| {100 * r1:8.2f} | {100 * r10:9.2f}",
        flush=True,
    )
    return result


if __name__ == "__main__":
    main()
