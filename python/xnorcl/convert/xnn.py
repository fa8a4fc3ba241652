# SPDX-License-Identifier: Apache-2.0
"""The .xnn version 2 writer (docs/graph_format.md), for the converters.

Written in Python rather than bound from C++ `save_graph` so that a converter builds its graph as plain
values (numpy constants, dict attributes) without a C++ `Graph` round trip; the file is checked by the C++
loader (`xnorcl.convert` validates it before the destination appears).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import BinaryIO, Dict, List, Sequence, Tuple, Union

import numpy as np

MAGIC = b"XNORNET1"
VERSION = 2
MAX_NAME = 4096

AttributeValue = Union[int, float, str, bool, Sequence[int], Sequence[float]]


@dataclass
class Node:
    name: str
    op: str
    inputs: List[str]
    outputs: List[str]
    attributes: Dict[str, AttributeValue] = field(default_factory=dict)


@dataclass
class Graph:
    inputs: List[Tuple[str, Tuple[int, ...]]] = field(default_factory=list)
    # name -> ("f32", float32 ndarray) or ("bits", (dims, msb-first packed uint8 bytes))
    constants: Dict[str, Tuple[str, object]] = field(default_factory=dict)
    nodes: List[Node] = field(default_factory=list)
    outputs: List[str] = field(default_factory=list)

    def add_f32(self, name: str, values: np.ndarray) -> str:
        self.constants[name] = ("f32", np.ascontiguousarray(values, dtype=np.float32))
        return name

    def add_bits(self, name: str, dims: Sequence[int], msb_first: np.ndarray) -> str:
        n = int(np.prod(dims))
        data = np.ascontiguousarray(msb_first, dtype=np.uint8)
        if data.size != (n + 7) // 8:
            raise ValueError(f"bits constant {name}: {data.size} bytes for {n} elements")
        self.constants[name] = ("bits", (tuple(int(d) for d in dims), data))
        return name


def _u32(out: BinaryIO, value: int) -> None:
    out.write(struct.pack("<I", value))


def _string(out: BinaryIO, text: str) -> None:
    data = text.encode("utf-8")
    if len(data) > MAX_NAME:
        raise ValueError(f"name of {len(data)} bytes (at most {MAX_NAME}): {text[:60]}...")
    _u32(out, len(data))
    out.write(data)


def _dims(out: BinaryIO, dims: Sequence[int]) -> None:
    if not 1 <= len(dims) <= 5:
        raise ValueError(f"dims {list(dims)}: 1 to 5 axes")
    _u32(out, len(dims))
    out.write(struct.pack(f"<{len(dims)}q", *[int(d) for d in dims]))


def _attribute(out: BinaryIO, key: str, value: AttributeValue) -> None:
    _string(out, key)
    if isinstance(value, bool):  # IR booleans ("true"/"false"), before int: bool is an int
        _u32(out, 2)
        _string(out, "true" if value else "false")
    elif isinstance(value, (int, np.integer)):
        _u32(out, 0)
        out.write(struct.pack("<q", int(value)))
    elif isinstance(value, (float, np.floating)):
        _u32(out, 1)
        out.write(struct.pack("<d", float(value)))
    elif isinstance(value, str):
        _u32(out, 2)
        _string(out, value)
    else:
        items = list(value)
        if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in items):
            _u32(out, 3)
            _u32(out, len(items))
            out.write(struct.pack(f"<{len(items)}q", *[int(v) for v in items]))
        else:
            _u32(out, 4)
            _u32(out, len(items))
            out.write(struct.pack(f"<{len(items)}d", *[float(v) for v in items]))


def write(graph: Graph, out: BinaryIO) -> None:
    out.write(MAGIC)
    _u32(out, VERSION)
    _u32(out, len(graph.inputs))
    for name, dims in graph.inputs:
        _string(out, name)
        _dims(out, dims)
    _u32(out, len(graph.constants))
    for name, (kind, value) in graph.constants.items():
        _string(out, name)
        if kind == "f32":
            array = value  # type: ignore[assignment]
            _u32(out, 0)
            _dims(out, array.shape if array.ndim else (1,))  # type: ignore[union-attr]
            out.write(array.astype("<f4").tobytes())  # type: ignore[union-attr]
        else:
            dims, data = value  # type: ignore[misc]
            _u32(out, 1)
            _dims(out, dims)
            out.write(data.tobytes())
    _u32(out, len(graph.nodes))
    for node in graph.nodes:
        _string(out, node.name)
        _string(out, node.op)
        for names in (node.inputs, node.outputs):
            _u32(out, len(names))
            for n in names:
                _string(out, n)
        _u32(out, len(node.attributes))
        for key in sorted(node.attributes):
            _attribute(out, key, node.attributes[key])
    _u32(out, len(graph.outputs))
    for name in graph.outputs:
        _string(out, name)


def save(graph: Graph, path: str) -> None:
    with open(path, "wb") as f:
        write(graph, f)
