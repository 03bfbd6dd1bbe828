"""Static int8 quantisation of the MiniLM graph: CPU per chunk and MedQuAD retrieval vs fp32.

Run (heavy: take the CPU lock):
  python bench/bench_embedder_int8.py --snippets 800 [--work DIR]

The fp32 graph is the one `prefrag.index.onnx_bert` builds from the bundled weights,
written whole (weights inside) with the `onnx` package (dev extra). It is quantised with
`onnxruntime.quantization.quantize_static` (QDQ, int8 weights per channel, activation
ranges calibrated on texts we invented, `CALIBRATION` below: no benchmark text), and
with `quantize_dynamic` (per channel) for comparison. The fused `Attention` holds the
query/key/value projection and is not statically quantisable; every other MatMul is.

Each variant embeds the same seeded MedQuAD snippets, chunked as `prefrag index` chunks
them, and their questions. Reported per variant: ms CPU per chunk (best of `--rounds`
alternating rounds, all threads), the smallest and mean cosine of its chunk vectors
against fp32, and dense retrieval of each question's own snippet (a snippet's score is its
best chunk's): recall@1 and recall@10. Target: <= 22 ms CPU per chunk with recall@10
within 0.5 points of fp32.
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

# Invented calibration text (places, people and procedures that do not exist), mixed in
# length so the activation ranges see short queries and full 256-piece chunks.
_TOWNS = ["Vellmor", "Oskarth", "Brindle Cove", "Tamsworth", "Quillon", "Harrowgate Fen"]
_THINGS = [
    "the ferry timetable changed after the spring floods",
    "a new clinic opened beside the grain market and offers evening appointments",
    "the council voted to repair the old stone bridge before the harvest festival",
    "nurses at the cottage hospital recommend boiling well water during the thaw",
    "the library lends seed packets and publishes a monthly gardening leaflet",
    "symptoms of marsh fever include a mild rash, tiredness and an aching back",
    "the apothecary mixes a tonic of nettle and honey that locals take for coughs",
    "children are screened for short-sightedness in their second school year",
    "a rare inherited condition in the valley families causes brittle fingernails",
    "the lighthouse keeper logs every storm and the height of the tide each night",
    "treatment usually starts with rest and fluids, then a course of bitter bark tea",
    "the orchard cooperative sells cider vinegar, which some people use for sore joints",
]
_QUESTIONS = [
    "What are the symptoms of marsh fever?",
    "How is the valley nail condition inherited?",
    "When does the clinic in {town} open?",
    "What treatment do nurses in {town} suggest?",
    "Who repairs the bridge at {town}?",
]


def calibration_texts(count: int = 96, seed: int = 7) -> list[str]:
    """`count` invented texts: questions, single sentences and long paragraphs."""
    rng = random.Random(seed)
    texts = []
    for i in range(count):
        town = rng.choice(_TOWNS)
        kind = i % 3
        if kind == 0:
            texts.append(rng.choice(_QUESTIONS).format(town=town))
        else:
            n = rng.randint(2, 4) if kind == 1 else rng.randint(10, 24)
            texts.append(
                " ".join(f"In {rng.choice(_TOWNS)}, {rng.choice(_THINGS)}." for _ in range(n))
            )
    return texts


def full_model(embedder: Embedder):  # type: ignore[no-untyped-def]
    """The fp32 graph as an `onnx.ModelProto` with its weights inside."""
    import onnx
    from onnx import numpy_helper
    from safetensors.numpy import load_file

    from prefrag.index.onnx_bert import build_bert_graph

    graph, arrays = build_bert_graph(
        load_file(str(embedder.model_dir / "model.safetensors")),
        embedder._config,
    )
    model = onnx.load_from_string(graph)
    for node in model.graph.node:  # named by their output, to include or exclude them
        node.name = node.output[0]
    initializers = [
        numpy_helper.from_array(arrays[t.name], t.name) for t in model.graph.initializer
    ]
    del model.graph.initializer[:]
    model.graph.initializer.extend(initializers)
    return model


class _Reader:
    """Calibration batches (one text each) as the graph's int32 inputs."""

    def __init__(self, embedder: Embedder, texts: list[str]) -> None:
        tokenizer = embedder._tokenizer
        self._feeds = []
        for text in texts:
            encoding = tokenizer.encode_batch([text])[0]
            self._feeds.append(
                {
                    "input_ids": np.array([encoding.ids], dtype=np.int32),
                    "attention_mask": np.array([encoding.attention_mask], dtype=np.int32),
                }
            )
        self._iter = iter(self._feeds)

    def get_next(self):  # type: ignore[no-untyped-def]
        return next(self._iter, None)

    def rewind(self) -> None:
        self._iter = iter(self._feeds)


class _Session:
    """An ONNX Runtime session standing in for the embedder's `OnnxBert`."""

    def __init__(self, path: Path) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def __call__(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feeds = {"input_ids": ids.astype(np.int32), "attention_mask": mask.astype(np.int32)}
        return np.asarray(self.session.run(None, feeds)[0])


def variants(
    work: Path, method: str, fmt: str, per_channel: bool, keep: list[tuple[str, ...]]
) -> dict[str, Embedder]:
    """fp32 (the product's session), one static int8 per `keep` (MatMuls left in fp32 in
    every layer), and dynamic int8."""
    import onnx
    from onnxruntime.quantization import (
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_dynamic,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    model_dir = resolve_model_dir("bundled:all-MiniLM-L6-v2")
    fp32 = Embedder(model_dir, runtime="onnxruntime")
    fp32.encode(["warm up"])
    work.mkdir(parents=True, exist_ok=True)
    source = work / "minilm-fp32.onnx"
    onnx.save(full_model(fp32), str(source))
    # Symbolic shape inference types the outputs of the fused (com.microsoft) operators.
    quant_pre_process(str(source), str(source), skip_optimization=True)
    files: dict[str, Path] = {}
    for skip in keep:
        label = (
            f"static int8, {fmt}, {'per channel' if per_channel else 'per tensor'}, {method}, "
            + (f"{'+'.join(skip)} in fp32" if skip else "every MatMul")
        )
        files[label] = work / f"minilm-int8-static-{'-'.join(skip) or 'all'}.onnx"
        started = time.perf_counter()
        quantize_static(
            str(source),
            str(files[label]),
            _Reader(fp32, calibration_texts()),
            quant_format=getattr(QuantFormat, fmt),
            op_types_to_quantize=["MatMul"],
            per_channel=per_channel,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            calibrate_method=getattr(CalibrationMethod, method),
            nodes_to_exclude=[f"encoder.layer.{i}.{name}" for i in range(6) for name in skip],
            extra_options={
                "ActivationSymmetric": False,
                "WeightSymmetric": True,
                "DefaultTensorType": onnx.TensorProto.FLOAT,
            },
        )
        print(f"{label}: quantised in {time.perf_counter() - started:.1f} s", flush=True)
    files["dynamic int8, every MatMul, per channel"] = work / "minilm-int8-dynamic.onnx"
    quantize_dynamic(
        str(source),
        str(work / "minilm-int8-dynamic.onnx"),
        op_types_to_quantize=["MatMul"],
        per_channel=True,
        weight_type=QuantType.QInt8,
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )
    out = {"ONNX Runtime fp32 (now)": fp32}
    for label, path in files.items():
        embedder = Embedder(model_dir, runtime="onnxruntime")
        embedder.encode(["warm up"])
        embedder._bert = _Session(path)
        out[label] = embedder
    return out


def snippets_and_chunks(count: int, seed: int) -> tuple[list[dict], list[str], list[int]]:
    """Seeded MedQuAD snippets, their chunk texts (as indexing cuts them) and owners."""
    settings = get_settings()
    rows = [
        row for path in sorted((SHARED_DATA / "medquad").glob("*.jsonl")) for row in read_rows(path)
    ]
    chosen = random.Random(seed).sample(rows, count)
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
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--snippets", type=int, default=800)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--calibration", default="MinMax", choices=["MinMax", "Percentile", "Entropy"]
    )
    parser.add_argument("--format", default="QOperator", choices=["QDQ", "QOperator"])
    parser.add_argument("--per-tensor", action="store_true", help="static: one scale per weight")
    parser.add_argument(
        "--keep-fp32",
        action="append",
        help="a static variant: comma-separated MatMuls left in fp32 in every layer (attended, "
        "up, down; '' for none); repeatable (default: '' and 'down')",
    )
    parser.add_argument("--work", default="runs/embedder-int8")
    args = parser.parse_args()
    keep = [tuple(n for n in names.split(",") if n) for names in args.keep_fp32 or ["", "down"]]
    embedders = variants(Path(args.work), args.calibration, args.format, not args.per_tensor, keep)
    rows, texts, owners = snippets_and_chunks(args.snippets, args.seed)
    questions = [row["question"] for row in rows]
    cpu = dict.fromkeys(embedders, float("inf"))
    vectors: dict[str, np.ndarray] = {}
    for _ in range(args.rounds):
        for name, embedder in embedders.items():
            began = time.process_time()
            vectors[name] = embedder.encode(texts)
            cpu[name] = min(cpu[name], time.process_time() - began)
    results = {}
    print(f"{len(rows)} MedQuAD snippets, {len(texts)} chunks, {len(questions)} questions")
    print(f"{'variant':>58} | ms CPU/chunk | min cos | mean cos | recall@1 | recall@10")
    for name, embedder in embedders.items():
        cosines = (vectors[name] * vectors["ONNX Runtime fp32 (now)"]).sum(1)
        r1, r10 = recall(vectors[name], np.array(owners), embedder.encode(questions))
        results[name] = {
            "ms_cpu_per_chunk": 1000 * cpu[name] / len(texts),
            "min_cosine": float(cosines.min()),
            "mean_cosine": float(cosines.mean()),
            "recall_at_1": r1,
            "recall_at_10": r10,
        }
        r = results[name]
        print(
            f"{name:>58} | {r['ms_cpu_per_chunk']:12.1f} | {r['min_cosine']:.4f} | "
            f"{r['mean_cosine']:.5f} | {100 * r1:8.1f} | {100 * r10:9.1f}",
            flush=True,
        )
    (Path(args.work) / "results.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
