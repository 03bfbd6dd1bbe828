"""Static int8 MiniLM (calibrated on MedQuAD chunks) against fp32 and the product's int8.

Run (heavy: take the CPU lock; needs the `onnx` package, for this bench only):
  python bench/bench_embedder_static_int8.py --snippets 500 --calibration-chunks 300

Issue 21 proposed static quantisation with calibration for the <= 22 ms CPU per chunk
target. The fp32 graph is the one `prefrag.index.onnx_bert` builds from the bundled
weights, written whole with the `onnx` package and quantised by ONNX Runtime's
`quantize_static`: int8 weights per channel in 7 bits (`reduce_range`: AVX2 without VNNI
saturates 8-bit weights, as `onnx_bert.quantise_columns` explains), uint8 activations
with fixed ranges calibrated on `--calibration-chunks` MedQuAD chunks of snippets outside
the measured sample. The fused `Attention` holds the query/key/value product and has no
static quantised form: it stays fp32 (`quantize_static` could not quantise the product's
graph with that product in dynamic int8, `QAttention`, beside static MatMuls).

Every arm embeds the same seeded MedQuAD snippets, chunked as `prefrag index` chunks them,
and their questions, in one process (`bench_embedder_int8.py`'s harness): fp32 (the
product, batches of 4, and one text per call), the product's dynamic int8 (7-bit weights,
one text per call), and the static variants (one text per call; fixed activation scales
make a text's vector independent of its batch). Reported: ms CPU per chunk and per 1,000
word pieces (best of `--rounds` alternating passes), min / mean cosine of chunk vectors
against fp32, and recall@1 / @10 of each question's own snippet by exact dense search.
Target (issue 21): <= 22 ms CPU per chunk with recall@10 within 0.5 points of fp32.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np
from bench_embedder_int8 import recall, snippets_and_chunks

from prefrag.config import get_settings
from prefrag.index.chunking import chunk_document
from prefrag.index.embeddings import Embedder, load_weights, resolve_model_dir
from prefrag.index.ingest import source_chunking
from prefrag.index.loaders import RawDocument

FP32 = "fp32, batches of 4 (default)"


def calibration_chunks(count: int, exclude: set[str], seed: int) -> list[str]:
    """`count` MedQuAD chunk texts of snippets not in `exclude` (the measured sample)."""
    from _common import SHARED_DATA

    from prefrag.jsonl import read_rows

    settings = get_settings()
    rows = [
        row
        for path in sorted((SHARED_DATA / "medquad").glob("*.jsonl"))
        for row in read_rows(path)
        if row["id"] not in exclude
    ]
    random.Random(seed).shuffle(rows)
    chunking = source_chunking(None, settings)
    texts: list[str] = []
    for row in rows:
        raw = RawDocument(
            text=row["content"], location="medquad", title=row.get("title", ""), id=row["id"]
        )
        for chunk in chunk_document(
            raw, source="calibration", chunking=chunking, settings=settings, authority=0.5
        ):
            texts.append(chunk.page_content)
        if len(texts) >= count:
            return texts[:count]
    return texts


def full_model(embedder: Embedder, int8: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
    """The product's graph as an `onnx.ModelProto` with its weights inside."""
    import onnx
    from onnx import numpy_helper

    from prefrag.index.onnx_bert import build_bert_graph

    graph, arrays = build_bert_graph(load_weights(embedder.model_dir), embedder._config, int8=int8)
    model = onnx.load_from_string(graph)
    for node in model.graph.node:  # named by their output, to exclude them by name
        node.name = node.output[0]
    del model.graph.initializer[:]
    model.graph.initializer.extend(numpy_helper.from_array(a, n) for n, a in arrays.items())
    return model


class _Reader:
    """Calibration feeds, one text each, as the graph's int32 inputs."""

    def __init__(self, embedder: Embedder, texts: list[str], fixed: bool = False) -> None:
        from prefrag.index.embeddings import _padded

        self._feeds = []
        for text in texts:
            ids, mask = _padded(embedder._tokenizer.encode_batch([text]), embedder.max_length)
            if fixed:  # padded to the window (padding rows enter the ranges too)
                width = embedder.max_length - ids.shape[1]
                ids, mask = np.pad(ids, ((0, 0), (0, width))), np.pad(mask, ((0, 0), (0, width)))
            self._feeds.append(
                {"input_ids": ids.astype(np.int32), "attention_mask": mask.astype(np.int32)}
            )
        self._iter = iter(self._feeds)

    def get_next(self):  # type: ignore[no-untyped-def]
        return next(self._iter, None)

    def rewind(self) -> None:
        self._iter = iter(self._feeds)


class _Session:
    """An ONNX Runtime session on a model file, standing in for the embedder's `OnnxBert`."""

    def __init__(self, path: Path) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def __call__(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feeds = {
            "input_ids": np.ascontiguousarray(ids, dtype=np.int32),
            "attention_mask": np.ascontiguousarray(mask, dtype=np.int32),
        }
        return np.asarray(self.session.run(None, feeds)[0])


# (label, format, calibration, MatMuls left in fp32 in every layer, start from int8 qkv)
VARIANTS = [
    ("static QOperator, every MatMul", "QOperator", "MinMax", (), False),
    ("static QOperator, FFN down in fp32", "QOperator", "MinMax", ("down",), False),
    ("static QOperator, percentile ranges", "QOperator", "Percentile", (), False),
    ("static QDQ, every MatMul", "QDQ", "MinMax", (), False),
]


def static_arms(work: Path, calibration: list[str], wanted: list[str]) -> dict[str, Embedder]:
    """One embedder per static variant in `wanted` (a variant that fails is reported)."""
    import onnx
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    model_dir = resolve_model_dir("bundled:all-MiniLM-L6-v2")
    base = Embedder(model_dir, runtime="onnxruntime")
    base.encode(["warm up"])
    work.mkdir(parents=True, exist_ok=True)
    arms: dict[str, Embedder] = {}
    for label, fmt, method, keep, qattention in VARIANTS:
        if label not in wanted:
            continue
        source = work / f"minilm-fp32{'-qkv8' if qattention else ''}.onnx"
        target = work / f"{label.replace(' ', '_').replace(',', '')}.onnx"
        started = time.perf_counter()
        try:
            if not source.exists():
                onnx.save(full_model(base, ("qkv",) if qattention else ()), str(source))
                # Symbolic shape inference types the fused (com.microsoft) operators' outputs.
                quant_pre_process(str(source), str(source), skip_optimization=True)
            quantize_static(
                str(source),
                str(target),
                # Histograms (percentile ranges) need one shape: texts padded to the window.
                _Reader(base, calibration, fixed=method != "MinMax"),
                quant_format=getattr(QuantFormat, fmt),
                op_types_to_quantize=["MatMul"],
                per_channel=True,
                reduce_range=True,
                activation_type=QuantType.QUInt8,
                weight_type=QuantType.QInt8,
                calibrate_method=getattr(CalibrationMethod, method),
                nodes_to_exclude=[f"encoder.layer.{i}.{name}" for i in range(6) for name in keep],
                extra_options={"ActivationSymmetric": False, "WeightSymmetric": True},
                calibration_cache_path=work
                / f"ranges-{method}{'-qkv8' if qattention else ''}-{len(calibration)}.json",
            )
        except Exception as error:  # a variant ONNX Runtime cannot quantise is reported
            print(f"{label}: not quantised ({type(error).__name__}: {error})", flush=True)
            continue
        print(f"{label}: quantised in {time.perf_counter() - started:.1f} s wall", flush=True)
        embedder = Embedder(model_dir, runtime="onnxruntime")
        embedder.encode(["warm up"])
        embedder._bert = _Session(target)
        embedder.batch_size = 1
        arms[label] = embedder
    return arms


def _line(
    name: str,
    embedder: Embedder,
    vectors: dict[str, np.ndarray],
    cpu: dict[str, float],
    owners: np.ndarray,
    questions: list[str],
    pieces: int,
) -> dict[str, float]:
    """One arm's figures against fp32 (timed first), printed as a table row."""
    cosines = (vectors[name] * vectors[FP32]).sum(1)
    r1, r10 = recall(vectors[name], owners, embedder.encode(questions))
    r = {
        "ms_cpu_per_chunk": 1000 * cpu[name] / len(vectors[name]),
        "ms_cpu_per_1k_pieces": 1e6 * cpu[name] / pieces,
        "cpu_ratio": cpu[FP32] / cpu[name],
        "min_cosine": float(cosines.min()),
        "mean_cosine": float(cosines.mean()),
        "recall_at_1": r1,
        "recall_at_10": r10,
    }
    print(
        f"{name:>40} | {r['ms_cpu_per_chunk']:12.1f} | {r['ms_cpu_per_1k_pieces']:16.1f} | "
        f"{r['cpu_ratio']:10.2f}x | {r['min_cosine']:.4f} | {r['mean_cosine']:.5f} | "
        f"{100 * r1:8.2f} | {100 * r10:9.2f}",
        flush=True,
    )
    return r


def main() -> None:
    """Quantise, embed the sample with every arm, print and write the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--snippets", type=int, default=500)
    parser.add_argument("--calibration-chunks", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--variant",
        action="append",
        help="a static variant's label (repeatable; default: every one of VARIANTS)",
    )
    parser.add_argument("--work", default="runs/embedder-static-int8")
    parser.add_argument("--out", default="bench/results/embedder_static_int8.json")
    args = parser.parse_args()
    rows, texts, owners = snippets_and_chunks(args.snippets, args.seed)
    questions = [row["question"] for row in rows]
    calibration = calibration_chunks(
        args.calibration_chunks, {row["id"] for row in rows}, args.seed + 1
    )
    model_dir = resolve_model_dir("bundled:all-MiniLM-L6-v2")
    arms: dict[str, Embedder] = {}
    for label, precision, batch in [
        (FP32, "fp32", 4),
        ("fp32, one text per call", "fp32", 1),
        ("dynamic int8 7-bit (product's opt-in)", "int8", 1),
    ]:
        embedder = Embedder(model_dir, runtime="onnxruntime", precision=precision)  # type: ignore[arg-type]
        embedder.encode(["warm up"])
        embedder.batch_size = batch
        arms[label] = embedder
    arms.update(static_arms(Path(args.work), calibration, args.variant or [v[0] for v in VARIANTS]))
    tokenizer = arms[FP32]._tokenizer
    pieces = sum(sum(e.attention_mask) for e in tokenizer.encode_batch(texts))
    print(
        f"{len(rows)} MedQuAD snippets, {len(texts)} chunks ({pieces / len(texts):.0f} word "
        f"pieces on average), {len(questions)} questions; calibration: {len(calibration)} "
        "chunks of other snippets",
        flush=True,
    )
    cpu = dict.fromkeys(arms, float("inf"))
    vectors: dict[str, np.ndarray] = {}
    owner_array = np.array(owners)
    results = {}
    print(
        f"{'arm':>40} | ms CPU/chunk | ms CPU/1k pieces | CPU vs fp32 | min cos | mean cos "
        "| recall@1 | recall@10"
    )
    for round_number in range(args.rounds):
        for name, embedder in arms.items():
            began = time.process_time()
            vectors[name] = embedder.encode(texts)
            cpu[name] = min(cpu[name], time.process_time() - began)
            if round_number == args.rounds - 1:  # each arm's line as soon as it is timed
                results[name] = _line(name, embedder, vectors, cpu, owner_array, questions, pieces)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(
        json.dumps(
            {
                "snippets": len(rows),
                "chunks": len(texts),
                "pieces": pieces,
                "calibration_chunks": len(calibration),
                "rounds": args.rounds,
                "arms": results,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
