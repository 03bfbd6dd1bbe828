"""Can int8 texts share one ONNX Runtime call? Per-row activation scales vs one call per text.

Run (light, a few CPU seconds; needs the `onnx` package of the dev extra):
  python bench/bench_int8_rows.py [--texts 4] [--pieces 171] [--repeat 5]

One product of the FFN's shape (rows x 384 times 384 x 1,536, 7-bit weights per column as
`prefrag.index.onnx_bert` quantises them), one intra-op thread, random activations with
one outlier channel. Arms:

- per call, one text per call: `DynamicQuantizeMatMul` on each text's rows (the product's way);
- per call, all texts in one call: the same operator over every row (one activation
  scale for the batch: a text's vector would depend on its neighbours);
- per row, int8 x int8: each row's absolute maximum, symmetric int8, `MatMulInteger`, then
  the row and column scales;
- per row, shifted to uint8: the same rows shifted by 128 with one scalar zero point, so
  the uint8 x int8 kernel runs (`MatMulInteger` rejects a zero point per row).

Prints ms CPU per product (best of 3 rounds of `--repeat`) and the largest error against
the float32 product, relative to the output's range.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from prefrag.index.onnx_bert import quantise_columns

HIDDEN, INNER = 384, 1536


def session(nodes: list, initializers: list) -> ort.InferenceSession:
    """A one-thread session of a graph from `x` (rows x HIDDEN) to `y` (rows x INNER)."""
    graph = helper.make_graph(
        nodes,
        "probe",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["rows", HIDDEN])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["rows", INNER])],
        initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)],
    )
    model.ir_version = 10
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    return ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def per_row_nodes(shifted: bool) -> tuple[list, list]:
    """Nodes and constants of per-row symmetric activations times int8 weights."""
    constants = [
        numpy_helper.from_array(np.array([1], dtype=np.int64), "last_axis"),
        numpy_helper.from_array(np.array(127, dtype=np.float32), "levels"),
        numpy_helper.from_array(np.array(1e-12, dtype=np.float32), "tiny"),
    ]
    nodes = [
        helper.make_node("Abs", ["x"], ["magnitude"]),
        helper.make_node("ReduceMax", ["magnitude", "last_axis"], ["peak"], keepdims=1),
        helper.make_node("Max", ["peak", "tiny"], ["peak_safe"]),
        helper.make_node("Div", ["peak_safe", "levels"], ["row_scale"]),
        helper.make_node("Div", ["x", "row_scale"], ["scaled"]),
        helper.make_node("Round", ["scaled"], ["rounded"]),
    ]
    inputs = ["quantised", "weights"]
    if shifted:
        constants += [
            numpy_helper.from_array(np.array(128, dtype=np.float32), "shift"),
            numpy_helper.from_array(np.array(128, dtype=np.uint8), "zero"),
        ]
        nodes += [
            helper.make_node("Add", ["rounded", "shift"], ["moved"]),
            helper.make_node("Cast", ["moved"], ["quantised"], to=TensorProto.UINT8),
        ]
        inputs.append("zero")
    else:
        nodes.append(helper.make_node("Cast", ["rounded"], ["quantised"], to=TensorProto.INT8))
    nodes += [
        helper.make_node("MatMulInteger", inputs, ["integer"]),
        helper.make_node("Cast", ["integer"], ["widened"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["widened", "row_scale"], ["by_row"]),
        helper.make_node("Mul", ["by_row", "column_scale"], ["y"]),
    ]
    return nodes, constants


def cpu_ms(run: Callable[[], object], repeat: int) -> float:
    """Best of 3 rounds: ms CPU per call of `run`."""
    best = float("inf")
    for _ in range(3):
        began = time.process_time()
        for _ in range(repeat):
            run()
        best = min(best, (time.process_time() - began) / repeat)
    return 1000 * best


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--texts", type=int, default=4)
    parser.add_argument("--pieces", type=int, default=171, help="word pieces per text")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    weight = (rng.standard_normal((HIDDEN, INNER)) * 0.05).astype(np.float32)
    values, scale = quantise_columns(weight, 7)
    weights = [
        numpy_helper.from_array(values, "weights"),
        numpy_helper.from_array(scale, "column_scale"),
    ]
    x = rng.standard_normal((args.texts * args.pieces, HIDDEN)).astype(np.float32)
    x[:, 5] *= 8  # an outlier channel, as MiniLM's activations have
    reference = x @ weight
    per_call = session(
        [
            helper.make_node(
                "DynamicQuantizeMatMul",
                ["x", "weights", "column_scale"],
                ["y"],
                domain="com.microsoft",
            )
        ],
        weights,
    )
    arms: dict[str, tuple[ort.InferenceSession, bool]] = {
        "per call, one text per call": (per_call, True),
        "per call, all texts in one call": (per_call, False),
    }
    for label, shifted in (("per row, int8 x int8", False), ("per row, shifted to uint8", True)):
        nodes, constants = per_row_nodes(shifted)
        arms[label] = (session(nodes, weights + constants), False)
    texts = [x[i * args.pieces : (i + 1) * args.pieces] for i in range(args.texts)]
    print(f"{args.texts} texts x {args.pieces} pieces, {HIDDEN} x {INNER}, one thread")
    for label, (arm, one_by_one) in arms.items():
        if one_by_one:
            outputs = [arm.run(None, {"x": text})[0] for text in texts]
            out = np.vstack(outputs)

            def run(arm: ort.InferenceSession = arm) -> object:
                return [arm.run(None, {"x": text}) for text in texts]
        else:
            out = arm.run(None, {"x": x})[0]

            def run(arm: ort.InferenceSession = arm) -> object:
                return arm.run(None, {"x": x})

        error = float(np.abs(out - reference).max() / np.abs(reference).max())
        print(f"{label:>32} | {cpu_ms(run, args.repeat):7.2f} ms CPU | largest error {error:.4f}")


if __name__ == "__main__":
    main()
