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

from collections.abc import Sequence
from typing import Any

import numpy as np

from prefrag.index import onnx_proto as proto

_MS = "com.microsoft"


QUANTISABLE = ("qkv", "attended", "up", "down")  # the four weight products of a layer


def quantise_columns(weight: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric per-column int8 of an (in, out) weight: (values, scale of each column).

    `bits` 7 keeps every value within [-63, 63]: AVX2 without VNNI multiplies uint8
    activations by int8 weights in pairs summed into int16 (`vpmaddubsw`), which saturates
    with full 8-bit weights (255 * 127 * 2 > 32767) and leaves 7-bit ones exact.
    """
    limit = 2 ** (bits - 1) - 1
    scale = np.abs(weight).max(axis=0) / limit
    scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
    values = np.clip(np.rint(weight / scale), -limit, limit).astype(np.int8)
    return values, scale


def build_bert_graph(
    weights: dict[str, np.ndarray],
    config: dict[str, Any],
    *,
    int8: Sequence[str] = (),
    weight_bits: int = 7,
) -> tuple[bytes, dict[str, np.ndarray]]:
    """(serialised graph, its initializers) of the BERT encoder with these weights.

    `int8` names the weight products (of `QUANTISABLE`) computed in int8: weights quantised
    per column here, activations quantised per call by ONNX Runtime
    (`DynamicQuantizeMatMul`; `QAttention` for the query/key/value projection).
    """
    raw = {name.removeprefix("bert."): value for name, value in weights.items()}
    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    eps = float(config["layer_norm_eps"])
    arrays: dict[str, np.ndarray] = {}
    nodes: list[bytes] = []

    def weight(name: str, value: np.ndarray) -> str:
        arrays[name] = np.ascontiguousarray(value, dtype=np.float32)
        return name

    def vector(name: str) -> str:
        return weight(name, raw[name])

    def quantised(name: str, value: np.ndarray) -> tuple[str, str]:
        values, scale = quantise_columns(np.asarray(value, dtype=np.float32), weight_bits)
        arrays[f"{name}.int8"] = np.ascontiguousarray(values)
        arrays[f"{name}.scale"] = scale
        return f"{name}.int8", f"{name}.scale"

    def product(part: str, x: str, name: str, out: str) -> bytes:
        """`x @ W` of a dense layer (weight stored (out, in)), in int8 when asked."""
        transposed = raw[f"{name}.weight"].T
        if part in int8:
            values, scale = quantised(name, transposed)
            return proto.node("DynamicQuantizeMatMul", [x, values, scale], [out], domain=_MS)
        return proto.node("MatMul", [x, weight(f"{name}.weight.t", transposed)], [out])

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
        qkv_weight = np.concatenate([raw[f"{attention}{n}.weight"].T for n in qkv], axis=1)
        qkv_bias = weight(
            f"{attention}qkv.bias", np.concatenate([raw[f"{attention}{n}.bias"] for n in qkv])
        )
        if "qkv" in int8:
            values, scale = quantised(f"{attention}qkv", qkv_weight)
            nodes += [
                proto.node("DynamicQuantizeLinear", [x], [f"{x}.q", f"{x}.scale", f"{x}.zero"]),
                proto.node(
                    "QAttention",
                    [
                        f"{x}.q",
                        values,
                        qkv_bias,
                        f"{x}.scale",
                        scale,
                        "attention_mask",
                        f"{x}.zero",
                    ],
                    [f"{p}context"],
                    domain=_MS,
                    num_heads=heads,
                ),
            ]
        else:
            nodes.append(
                proto.node(
                    "Attention",
                    [
                        x,
                        weight(f"{attention}qkv.weight", qkv_weight),
                        qkv_bias,
                        "attention_mask",
                    ],
                    [f"{p}context"],
                    domain=_MS,
                    num_heads=heads,
                )
            )
        nodes += [
            product("attended", f"{p}context", f"{p}attention.output.dense", f"{p}attended"),
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
            product("up", f"{p}x1", f"{p}intermediate.dense", f"{p}up"),
            proto.node(
                "BiasGelu",
                [f"{p}up", vector(f"{p}intermediate.dense.bias")],
                [f"{p}inner"],
                domain=_MS,
            ),
            product("down", f"{p}inner", f"{p}output.dense", f"{p}down"),
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
        [
            proto.external_tensor(n, a.shape, a.nbytes, _ELEMENT_TYPES[a.dtype.name])
            for n, a in arrays.items()
        ],
        [
            proto.value_info("input_ids", proto.INT32, ["batch", "tokens"]),
            proto.value_info("attention_mask", proto.INT32, ["batch", "tokens"]),
        ],
        [proto.value_info("last_hidden_state", proto.FLOAT, ["batch", "tokens", hidden])],
        opsets={"": 17, _MS: 1},
    )
    return graph, arrays


_ELEMENT_TYPES = {"float32": proto.FLOAT, "int8": proto.INT8, "uint8": proto.UINT8}


class OnnxBert:
    """The BERT encoder in an ONNX Runtime session (one intra-op thread per call).

    `session.run` releases the GIL and is thread-safe, so callers spread batches over
    threads themselves, as the numpy path does.
    """

    def __init__(
        self, weights: dict[str, np.ndarray], config: dict[str, Any], *, int8: Sequence[str] = ()
    ) -> None:
        import onnxruntime as ort

        graph, self._arrays = build_bert_graph(weights, config, int8=int8)
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
