"""Two builds of the same MedQuAD sources at two precisions: retrieval of each question's snippet.

Run (light: only the questions are embedded; the chunks come from the two homes):
  python bench/bench_precision_sources.py --reference HOME_FP32 --candidate HOME_INT8

Both homes hold sources built by `prefrag sources build-medquad-demo` (the same chunking),
one at fp32 and one at int8 (each manifest's `embedding_precision`). Every `medquad-<site>`
source present in both is compared chunk by chunk (by chunk id): the smallest and mean
cosine between the two vectors of a chunk; then each snippet's own question (MedQuAD row
`question`) is searched among all snippets of those sites (a snippet scores as its best
chunk; exact dense search) with query vectors of the same precision, and recall@1 and
recall@10 are printed for: fp32 chunks + fp32 queries, int8 chunks + int8 queries, and fp32
chunks + int8 queries (an fp32 source searched by an int8 embedder: what mixing would cost).
Criterion (issue 21): int8 recall@10 within 0.5 points of fp32.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from _common import SHARED_DATA
from bench_embedder_int8 import recall

from prefrag.index import docstore
from prefrag.index.embeddings import Embedder, resolve_model_dir
from prefrag.jsonl import read_rows


def load_source(folder: Path) -> tuple[list[dict], np.ndarray, str]:
    """(records, vectors, precision) of a source's current generation (delta included)."""
    manifest = docstore.read_manifest(folder)
    assert manifest is not None, folder
    generation = folder / manifest.generation
    records = list(read_rows(generation / "chunks.jsonl"))
    vectors = np.load(generation / "vectors.npy")
    delta = generation / "delta"
    if delta.is_dir():
        records += list(read_rows(delta / "chunks.jsonl"))
        vectors = np.vstack([vectors, np.load(delta / "vectors.npy")])
    return records, vectors, manifest.embedding_precision


def main() -> None:
    """Print the chunk cosines and the recall table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reference", type=Path, required=True, help="PREFRAG_HOME at fp32")
    parser.add_argument("--candidate", type=Path, required=True, help="PREFRAG_HOME at int8")
    parser.add_argument("--data", type=Path, default=SHARED_DATA / "medquad")
    parser.add_argument("--out", default="bench/results/precision_sources.json")
    args = parser.parse_args()
    sites = sorted(
        path.name
        for path in (args.candidate / "sources").glob("medquad-*")
        if (path / docstore.MANIFEST).is_file()
        and (args.reference / "sources" / path.name / docstore.MANIFEST).is_file()
        and path.name != "medquad-graph"
    )
    questions = {
        row["id"]: row["question"] for path in args.data.glob("*.jsonl") for row in read_rows(path)
    }
    fp32_chunks, int8_chunks, owners_by_chunk = [], [], []
    for site in sites:
        ref_records, ref_vectors, ref_precision = load_source(args.reference / "sources" / site)
        records, vectors, precision = load_source(args.candidate / "sources" / site)
        assert (ref_precision, precision) == ("fp32", "int8"), (site, ref_precision, precision)
        row_of = {record["id"]: row for row, record in enumerate(ref_records)}
        assert len(row_of) == len(records) and all(r["id"] in row_of for r in records), site
        fp32_chunks.append(ref_vectors[[row_of[r["id"]] for r in records]])
        int8_chunks.append(vectors)
        owners_by_chunk += [r["parent_id"] for r in records]
    snippets = sorted(set(owners_by_chunk))
    number = {snippet: n for n, snippet in enumerate(snippets)}
    owners = np.array([number[s] for s in owners_by_chunk])
    fp32, int8 = np.vstack(fp32_chunks), np.vstack(int8_chunks)
    cosines = (fp32 * int8).sum(1)
    texts = [questions[snippet] for snippet in snippets]
    model = resolve_model_dir("bundled:all-MiniLM-L6-v2")
    fp32_queries = Embedder(model, runtime="onnxruntime", precision="fp32").encode(texts)
    int8_queries = Embedder(model, runtime="onnxruntime", precision="int8").encode(texts)
    print(
        f"{', '.join(sites)}: {len(snippets)} snippets, {len(fp32)} chunks; chunk cosine "
        f"int8 vs fp32: min {cosines.min():.4f}, mean {cosines.mean():.5f}"
    )
    results: dict[str, dict[str, float]] = {}
    for label, chunks, queries in (
        ("fp32 chunks, fp32 queries", fp32, fp32_queries),
        ("int8 chunks, int8 queries", int8, int8_queries),
        ("fp32 chunks, int8 queries", fp32, int8_queries),
    ):
        r1, r10 = recall(chunks, owners, queries)
        results[label] = {"recall_at_1": r1, "recall_at_10": r10}
        print(f"{label:>28} | recall@1 {100 * r1:6.2f} | recall@10 {100 * r10:6.2f}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(
        json.dumps(
            {
                "sites": sites,
                "snippets": len(snippets),
                "chunks": len(fp32),
                "min_cosine": float(cosines.min()),
                "mean_cosine": float(cosines.mean()),
                "arms": results,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
