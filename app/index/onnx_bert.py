"""The BERT encoder as an ONNX Runtime session built from safetensors weights.

No export step, no torch and no `onnx` package: the graph is written node by node
(`prefrag.index.onnx_proto`) from the same weights the numpy forward pass reads, with ONNX
Runtime's fused transformer operators (`EmbedLayerNormalization`, `Attention`,
`SkipLayerNormalization`, `BiasGelu`), so the session needs no pattern matching to be
fast. The graph holds no weights (15 KB); the session receives them from memory as
external initializers. Nothing is written to disk or shipped.

The graph takes `input_ids` and `attention_mask` (int32, batch x tokens) and returns the
last hidden states (float32, batch x tokens x hidden); pooling happens in the caller.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from prefrag.index import onnx_proto as proto

_MS = "com.microsoft"


def build_bert_graph(
    weights: dict[str, np.ndarray], config: dict[str, Any]
) -> tuple[bytes, dict[str, np.ndarray]]:
    """(serialised graph, its initializers) of the BERT encoder with these weights."""
    raw = {name.removeprefix("bert."): value for name, value in weights.items()}
    hidden = int(config["hidden_size"])
    eps = float(config["layer_norm_eps"])
    arrays: dict[str, np.ndarray] = {}
    nodes: list[bytes] = []

    def weight(name: str, value: np.ndarray) -> str:
        arrays[name] = np.ascontiguousarray(value, dtype=np.float32)
        return name

    def dense(name: str) -> str:
        """A dense layer's weight transposed to (in, out) for MatMul."""
        return weight(f"{name}.weight.t", raw[f"{name}.weight"].T)

    def vector(name: str) -> str:
        return weight(name, raw[name])

    emb = "embeddings."
    nodes.append(
        proto.node(
            "EmbedLayerNormalization",
            [
                "input_ids",
                "",  # segment ids are all zero: the type embedding is folded into positions
                weight("word", raw[f"{emb}word_embeddings.weight"]),
                weight(
                    "position",
                    raw[f"{emb}position_embeddings.weight"]
                    + raw[f"{emb}token_type_embeddings.weight"][0],
                ),
                "",
                vector(f"{emb}LayerNorm.weight"),
                vector(f"{emb}LayerNorm.bias"),
                "attention_mask",
            ],
            ["x0", "mask_index"],
            domain=_MS,
            epsilon=eps,
        )
    )
    for i in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{i}."
        x, attention = f"x{i}", f"{p}attention.self."
        qkv = ("query", "key", "value")
        nodes += [
            proto.node(
                "Attention",
                [
                    x,
                    weight(
                        f"{attention}qkv.weight",
                        np.concatenate([raw[f"{attention}{n}.weight"].T for n in qkv], axis=1),
                    ),
                    weight(
                        f"{attention}qkv.bias",
                        np.concatenate([raw[f"{attention}{n}.bias"] for n in qkv]),
                    ),
                    "attention_mask",
                ],
                [f"{p}context"],
                domain=_MS,
                num_heads=int(config["num_attention_heads"]),
            ),
            proto.node(
                "MatMul", [f"{p}context", dense(f"{p}attention.output.dense")], [f"{p}attended"]
            ),
            proto.node(
                "SkipLayerNormalization",
                [
                    f"{p}attended",
                    x,
                    vector(f"{p}attention.output.LayerNorm.weight"),
                    vector(f"{p}attention.output.LayerNorm.bias"),
                    vector(f"{p}attention.output.dense.bias"),
                ],
                [f"{p}x1"],
                domain=_MS,
                epsilon=eps,
            ),
            proto.node("MatMul", [f"{p}x1", dense(f"{p}intermediate.dense")], [f"{p}up"]),
            proto.node(
                "BiasGelu",
                [f"{p}up", vector(f"{p}intermediate.dense.bias")],
                [f"{p}inner"],
                domain=_MS,
            ),
            proto.node("MatMul", [f"{p}inner", dense(f"{p}output.dense")], [f"{p}down"]),
            proto.node(
                "SkipLayerNormalization",
                [
                    f"{p}down",
                    f"{p}x1",
                    vector(f"{p}output.LayerNorm.weight"),
                    vector(f"{p}output.LayerNorm.bias"),
                    vector(f"{p}output.dense.bias"),
                ],
                [f"x{i + 1}"],
                domain=_MS,
                epsilon=eps,
            ),
        ]
    last = f"x{int(config['num_hidden_layers'])}"
    nodes.append(proto.node("Identity", [last], ["last_hidden_state"]))
    graph = proto.model(
        "bert",
        nodes,
        [proto.external_tensor(n, a.shape, a.nbytes) for n, a in arrays.items()],
        [
            proto.value_info("input_ids", proto.INT32, ["batch", "tokens"]),
            proto.value_info("attention_mask", proto.INT32, ["batch", "tokens"]),
        ],
        [proto.value_info("last_hidden_state", proto.FLOAT, ["batch", "tokens", hidden])],
        opsets={"": 17, _MS: 1},
    )
    return graph, arrays


class OnnxBert:
    """The BERT encoder in an ONNX Runtime session (one intra-op thread per call).

    `session.run` releases the GIL and is thread-safe, so callers spread batches over
    threads themselves, as the numpy path does.
    """

    def __init__(self, weights_file: Path, config: dict[str, Any]) -> None:
        import onnxruntime as ort
        from safetensors.numpy import load_file

        graph, self._arrays = build_bert_graph(load_file(str(weights_file)), config)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        names = list(self._arrays)
        # OrtValues view the numpy arrays; both are kept for the session's lifetime.
        self._values = [ort.OrtValue.ortvalue_from_numpy(self._arrays[n]) for n in names]
        options.add_external_initializers(names, self._values)
        self.session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])

    def __call__(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Last hidden states (batch, tokens, hidden) for token ids and their 0/1 mask."""
        feeds = {
            "input_ids": np.ascontiguousarray(ids, dtype=np.int32),
            "attention_mask": np.ascontiguousarray(mask, dtype=np.int32),
        }
        return np.asarray(self.session.run(None, feeds)[0])
