"""Just enough of the ONNX protobuf wire format to write an inference graph.

ONNX Runtime reads models as serialised `onnx.ModelProto` messages. Writing the handful of
fields a graph of fused operators needs takes a few varints, which spares the main job
the `onnx` package (31 MB) that would only serialise them. Field numbers follow
`onnx/onnx.proto3`; weights are declared as external data and handed to the session from
memory, so no tensor payload is ever encoded here.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence

FLOAT = 1  # TensorProto.DataType
UINT8 = 2
INT8 = 3
INT32 = 6
_EXTERNAL = 1  # TensorProto.DataLocation
_ATTRIBUTE_FLOAT = 1  # AttributeProto.AttributeType
_ATTRIBUTE_INT = 2


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64 as two's complement, as protobuf does
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _message(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _text(field: int, value: str) -> bytes:
    return _message(field, value.encode())


def _float(field: int, value: float) -> bytes:
    return _varint(field << 3 | 5) + struct.pack("<f", value)


def node(
    op_type: str,
    inputs: Sequence[str],
    outputs: Sequence[str],
    *,
    domain: str = "",
    **attributes: int | float,
) -> bytes:
    """A NodeProto; `""` in `inputs` marks an omitted optional input."""
    body = b"".join(_text(1, name) for name in inputs)
    body += b"".join(_text(2, name) for name in outputs)
    body += _text(4, op_type)
    for name, value in attributes.items():
        if isinstance(value, int):
            attribute = _text(1, name) + _int(3, value) + _int(20, _ATTRIBUTE_INT)
        else:
            attribute = _text(1, name) + _float(2, value) + _int(20, _ATTRIBUTE_FLOAT)
        body += _message(5, attribute)
    if domain:
        body += _text(7, domain)
    return body


def external_tensor(
    name: str, dims: Sequence[int], nbytes: int, element_type: int = FLOAT
) -> bytes:
    """A TensorProto (float unless told) whose data the session receives from memory."""
    body = b"".join(_int(1, dim) for dim in dims) + _int(2, element_type) + _text(8, name)
    for key, value in (("location", "memory"), ("offset", "0"), ("length", str(nbytes))):
        body += _message(13, _text(1, key) + _text(2, value))
    return body + _int(14, _EXTERNAL)


def value_info(name: str, element_type: int, dims: Sequence[int | str]) -> bytes:
    """A ValueInfoProto for a tensor; string dimensions are symbolic."""
    shape = b"".join(
        _message(1, _text(2, dim) if isinstance(dim, str) else _int(1, dim)) for dim in dims
    )
    tensor_type = _int(1, element_type) + _message(2, shape)
    return _text(1, name) + _message(2, _message(1, tensor_type))


def model(
    name: str,
    nodes: Iterable[bytes],
    initializers: Iterable[bytes],
    inputs: Iterable[bytes],
    outputs: Iterable[bytes],
    opsets: dict[str, int],
    ir_version: int = 8,
) -> bytes:
    """A serialised ModelProto holding one graph."""
    graph = b"".join(_message(1, n) for n in nodes) + _text(2, name)
    graph += b"".join(_message(5, tensor) for tensor in initializers)
    graph += b"".join(_message(11, info) for info in inputs)
    graph += b"".join(_message(12, info) for info in outputs)
    header = _int(1, ir_version)
    header += b"".join(
        _message(8, (_text(1, domain) if domain else b"") + _int(2, version))
        for domain, version in opsets.items()
    )
    return header + _message(7, graph)
