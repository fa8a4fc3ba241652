# SPDX-License-Identifier: Apache-2.0
"""ONNX (.onnx) -> .xnn version 2 (docs/onnx.md): binarized networks exported from PyTorch.

The model is read with the `onnx` package: its checker, its shape inference, and its reference evaluator,
which folds subgraphs on constants (weights binarized inside the graph, `Sign(W)` or
`Mul(ReduceMean(Abs(W)), Sign(W))`, and shape arithmetic). Three ways of writing a binarization are taken:

- `Sign(x)`, optionally of `x - beta` (ReActNet's RSign) and followed by a `Pad` of -1 or +1, read by a
  `Conv`, `Gemm` or `MatMul` whose weights are +-alpha per output channel (dabnn, Bolt, Bi-Real, XNOR-Net);
- QONNX `BipolarQuant(x, scale)` (Brevitas `export_qonnx`, FINN), in the domains `qonnx.custom_op.general`
  and `onnx.brevitas`: `x >= 0` is +scale, anything else (NaN included) -scale;
- training exports whose value is the sign, `Sign(x) - g + g` with g the same tensor or the same
  computation (straight-through estimators, Bi-Real's polynomial approximation).

Nodes are mapped in the graph's order. A node that xnorcl cannot map marks its outputs as refused; the
conversion is refused, with every reason at once and before anything is written, only where a mark reaches a
model output. So the arithmetic of a recognized training form, which no output reads any more, refuses
nothing, and nodes left without readers are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Tuple

import numpy as np
import onnx
from onnx import numpy_helper, shape_inference
from onnx.reference import ReferenceEvaluator

from .._xnorcl import InvalidArgument
from . import xnn
from ._common import MAX_FOLDED_ELEMENTS, Report, check_folded_size, finish, refusals_naming, unique_name

# QONNX's binarizer, in its current domain and in the one older Brevitas exports used.
_BIPOLAR_DOMAINS = ("qonnx.custom_op.general", "onnx.brevitas")
_STANDARD_DOMAINS = ("", "ai.onnx")
# Where bits may go: every other reader of a binarized tensor would need its +-1 values as floats.
_BITS_READERS = "Conv, Gemm, MatMul, MaxPool, Pad and Flatten"


class _Refused(Exception):
    """Raised by an op handler: why xnorcl cannot map this node."""


@dataclass
class Bits:
    """A binarized tensor that xnorcl holds as bits (bit 1: +level, bit 0: -level)."""

    name: str  # the graph tensor of bits
    level: float  # the binarized values are +-level
    binarizer: str  # the ONNX node that binarized, for messages
    pads: Optional[Tuple[List[int], List[int], float]] = None  # a Pad of H and W waiting for its Conv
    flat: bool = False  # a Flatten of 4-D bits, read as [N, C*H*W] by a dense layer


def _where(node: Any) -> str:
    domain = f"{node.domain}." if node.domain not in _STANDARD_DOMAINS else ""
    return f"node '{node.name or node.output[0]}' ({domain}{node.op_type})"


def _attributes(node: Any) -> Dict[str, Any]:
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _text(value: Any) -> Any:
    return value.decode() if isinstance(value, bytes) else value


def _row(values: np.ndarray, rank: int) -> np.ndarray:
    """Per-channel values [C] shaped to broadcast over axis 1 of a tensor of `rank` axes."""
    return values.reshape((1, -1) + (1,) * (rank - 2)) if rank >= 2 else values.reshape(-1)


def _same_pads(size: int, kernel: int, stride: int, dilation: int, upper: bool) -> Tuple[int, int]:
    """ONNX's SAME_UPPER / SAME_LOWER padding of one axis: the output has ceil(size / stride) values."""
    total = max((-(-size // stride) - 1) * stride + (kernel - 1) * dilation + 1 - size, 0)
    small = total // 2
    return (small, total - small) if upper else (total - small, small)


class _Converter:
    def __init__(self, model: Any, values: "_Values", shapes: Dict[str, Tuple[int, ...]], folded: List[str]) -> None:
        self.model = model
        self.opset = next((o.version for o in model.opset_import if o.domain in _STANDARD_DOMAINS), 1)
        self.graph = xnn.Graph()
        self.report = Report()
        self.report.folded = folded
        self.values = values
        self.labels: Dict[int, str] = {}  # id(xnn node) -> "ONNX op -> xnorcl op", counted once unused nodes are gone
        g = model.graph
        self.taken = set(values.const) | {name for node in g.node for name in node.output} | {i.name for i in g.input}
        self.node_names: set = set()
        self.producer = values.producer
        self.const = values.const
        self.floats: Dict[str, str] = {}  # ONNX tensor -> the graph tensor holding its f32 values
        self.bits: Dict[str, Bits] = {}
        self.float_pads: Dict[str, Tuple[str, List[int], List[int]]] = {}  # zero Pad waiting for a Conv
        self.refused: Dict[str, FrozenSet[str]] = {}
        self.shapes = shapes

    # ---- names, constants, emission --------------------------------------------------------------------
    def fresh(self, base: str) -> str:
        return unique_name(base, self.taken)

    def f32(self, base: str, value: Any) -> str:
        array = np.asarray(value, np.float32)
        return self.graph.add_f32(self.fresh(base), array.reshape(array.shape if array.ndim else (1,)))

    def emit(self, onnx_node: Any, op: str, inputs: List[str], output: str, attrs: Optional[Dict[str, Any]] = None,
             suffix: str = "") -> str:
        base = (onnx_node.name or f"{onnx_node.op_type}:{onnx_node.output[0]}") + suffix
        node = xnn.Node(unique_name(base, self.node_names), op, inputs, [output], dict(attrs or {}))
        self.graph.nodes.append(node)
        self.labels[id(node)] = f"{onnx_node.op_type} -> {op}"
        return output

    def shape(self, name: str) -> Tuple[int, ...]:
        if name in self.const:
            return tuple(self.const[name].shape)
        if name not in self.shapes:
            raise _Refused(f"the shape of '{name}' is unknown (export with static input shapes)")
        return self.shapes[name]

    def constant(self, name: str, what: str) -> np.ndarray:
        if name not in self.const:
            raise _Refused(f"its {what} '{name}' is computed at run time (xnorcl needs a constant)")
        return self.const[name]

    def float_input(self, name: str) -> str:
        """The graph tensor of an f32 activation or constant input."""
        if name in self.bits:
            raise _Refused(
                f"it reads the binarized output of {self.bits[name].binarizer} as float values; xnorcl holds "
                f"binarized tensors as bits, which only {_BITS_READERS} read. A training form must read "
                "Sign(x) - g + g; else export the inference form (torch.sign(x))"
            )
        if name in self.float_pads:
            raise _Refused(f"it reads the Pad '{name}' (xnorcl folds a zero Pad into the Conv after it only)")
        if name in self.const:
            return self.f32(name, self.const[name])
        return self.floats[name]

    def set_float(self, node: Any, value: str) -> None:
        self.floats[node.output[0]] = value

    # ---- the walk ----------------------------------------------------------------------------------------
    def run(self) -> None:
        g = self.model.graph
        for i in g.input:
            if i.name not in self.const:
                self.graph_input(i)
        for node in g.node:
            if node.op_type == "Add" and node.domain in _STANDARD_DOMAINS and self.straight_through(node):
                continue
            inputs = [name for name in node.input if name]
            marks = frozenset().union(*(self.refused.get(name, frozenset()) for name in inputs))
            if marks:
                self.mark(node, marks)
                continue
            try:
                self.dispatch(node)
            except _Refused as e:
                self.mark(node, frozenset([f"{_where(node)}: {e}"]))
        for o in g.output:
            self.graph_output(o.name)
        self.drop_unread()

    def mark(self, node: Any, reasons: FrozenSet[str]) -> None:
        for out in node.output:
            if out:
                self.refused[out] = reasons

    def dispatch(self, node: Any) -> None:
        if node.domain in _BIPOLAR_DOMAINS and node.op_type == "BipolarQuant":
            self.op_BipolarQuant(node)
            return
        handler = getattr(self, f"op_{node.op_type}", None) if node.domain in _STANDARD_DOMAINS else None
        if handler is None:
            raise _Refused("this op is not supported by xnorcl")
        handler(node)

    def graph_input(self, value_info: Any) -> None:
        t = value_info.type.tensor_type
        dims = self.shapes.get(value_info.name)
        why = None
        if t.elem_type != onnx.TensorProto.FLOAT:
            why = f"is {onnx.TensorProto.DataType.Name(t.elem_type)}; xnorcl's inputs are float32"
        elif dims is None or not 1 <= len(dims) <= 4:
            why = (f"has {'no static shape' if dims is None else f'{len(dims)} axes'} (xnorcl: 1 to 4 axes of "
                   "fixed size; export with a fixed input shape)")
        if why is not None:
            self.refused[value_info.name] = frozenset([f"input '{value_info.name}' {why}"])
            return
        self.graph.inputs.append((value_info.name, dims))
        self.floats[value_info.name] = value_info.name

    def graph_output(self, name: str) -> None:
        if name in self.refused:
            self.report.refused.extend(sorted(self.refused[name] - set(self.report.refused)))
        elif name in self.bits:
            self.report.refused.append(
                f"output '{name}' is a binarized tensor (from {self.bits[name].binarizer}); xnorcl's outputs are "
                "float32"
            )
        elif name in self.const or name not in self.floats:
            self.report.refused.append(f"output '{name}' is a constant (nothing to compute)")
        else:
            source = self.floats[name]
            if source != name:  # an Identity or Dropout in front of the output: the output keeps its name
                shape = self.f32(name + "/shape", np.array(self.shape(name)))
                node = xnn.Node(unique_name(name, self.node_names), "Reshape", [source, shape], [name],
                                {"special_zero": False})
                self.graph.nodes.append(node)
                self.labels[id(node)] = "Identity -> Reshape"
            self.graph.outputs.append(name)

    def drop_unread(self) -> None:
        """Only what the outputs read is kept; the mapped-op counts are taken from what is left."""
        needed = set(self.graph.outputs)
        kept = []
        for node in reversed(self.graph.nodes):
            if any(out in needed for out in node.outputs):
                kept.append(node)
                needed.update(node.inputs)
        dropped = len(self.graph.nodes) - len(kept)
        self.graph.nodes = kept[::-1]
        for name in [c for c in self.graph.constants if c not in needed]:
            del self.graph.constants[name]
        for node in self.graph.nodes:
            self.report.mapped[self.labels[id(node)]] += 1
        if dropped:
            self.report.fused.append(f"{dropped} graph nodes dropped: no model output reads them")

    # ---- binarization ------------------------------------------------------------------------------------
    def straight_through(self, node: Any) -> bool:
        """Add(Sub(s, g), g') with s binarized: a training export whose value is s."""
        s = self.values.straight_through_source(node)
        if s is None or s not in self.bits:
            return False
        self.bits[node.output[0]] = self.bits[s]
        self.report.fused.append(f"{_where(node)}: {self.bits[s].binarizer} - g + g (a straight-through estimator "
                                 "of a training export) -> the binarized tensor itself")
        return True

    def offset_source(self, x: str) -> Tuple[str, np.ndarray]:
        """(y, c) with x = y - c for a constant c of one value or one per channel (x - beta_c of ReActNet's
        RSign); (x, 0) otherwise. x - c > 0 and x - c >= 0 are exactly y > c and y >= c in IEEE arithmetic
        with subnormals, so the comparison moves onto y without rounding."""
        node = self.producer.get(x)
        zero = (x, np.zeros(1, np.float32))
        if node is None or node.op_type not in ("Sub", "Add") or node.domain not in _STANDARD_DOMAINS:
            return zero
        y, c = node.input
        if node.op_type == "Add" and y in self.const:
            y, c = c, y
        if y not in self.floats or c not in self.const:
            return zero
        value = np.asarray(self.const[c], np.float32)
        rank = len(self.shape(y))
        flat = value.reshape(-1)
        if value.ndim > rank:
            return zero
        per_channel = rank >= 2 and flat.size == self.shape(y)[1] and (
            (1,) * (rank - value.ndim) + value.shape == _row(flat, rank).shape)
        if flat.size != 1 and not per_channel:
            return zero
        return y, (flat if node.op_type == "Sub" else -flat)

    def binarize(self, node: Any, x: str, level: float, inclusive: bool) -> None:
        """The bits of x > c (inclusive: x >= c), c a threshold found by offset_source, as a FakeQuantize."""
        out = node.output[0]
        if x in self.bits:  # a binarization of +-level values keeps their signs
            self.bits[out] = Bits(self.bits[x].name, level, _where(node))
            return
        source, c = self.offset_source(x)
        if not np.all(np.isfinite(c)):
            source, c = x, np.zeros(1, np.float32)
        rank = len(self.shape(source))
        if rank not in (2, 4):
            raise _Refused(f"it binarizes a tensor of {rank} axes (xnorcl: [N, C] or [N, C, H, W])")
        t = np.nextafter(c.astype(np.float32), np.float32(-np.inf)) if inclusive else c.astype(np.float32)
        shape = _row(t, rank).shape if t.size > 1 else (1,)
        threshold = self.f32(out + "/threshold", t.reshape(shape))
        low, high = self.f32(out + "/minus_one", [-1.0]), self.f32(out + "/plus_one", [1.0])
        self.emit(node, "FakeQuantize", [self.float_input(source), threshold, threshold, low, high], out,
                  {"levels": 2, "auto_broadcast": "numpy"})
        self.bits[out] = Bits(out, level, _where(node))

    def op_Sign(self, node: Any) -> None:
        self.binarize(node, node.input[0], 1.0, inclusive=False)

    def op_BipolarQuant(self, node: Any) -> None:
        scale = np.asarray(self.constant(node.input[1], "scale"), np.float64).reshape(-1)
        if scale.size != 1 or not np.isfinite(scale[0]) or scale[0] <= 0:
            raise _Refused(f"scale {scale.tolist()} (xnorcl: one positive finite scale per activation tensor)")
        self.binarize(node, node.input[0], float(scale[0]), inclusive=True)

    def binary_weights(self, w: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """Weights [O, ...] that are +-alpha_o per output channel -> (alpha [O], signs t [O, ...] of +-1)."""
        rows = np.abs(np.asarray(w, np.float64)).reshape(w.shape[0], -1)
        alpha = rows.max(axis=1)
        bad = np.nonzero(np.any(rows != alpha[:, None], axis=1) | (alpha == 0) | ~np.isfinite(alpha))[0]
        if bad.size:
            o = int(bad[0])
            values = np.unique(np.asarray(w, np.float32).reshape(w.shape[0], -1)[o])
            shown = ", ".join(f"{v:.4g}" for v in values[:4]) + (", ..." if values.size > 4 else "")
            raise _Refused(
                f"it reads binarized activations but its weights are not +-alpha per output channel (output "
                f"channel {o} holds {values.size} different values: {shown}); binarize them with Sign, "
                "BipolarQuant or alpha * Sign(W)"
            )
        return alpha, np.where(np.asarray(w) > 0, 1.0, -1.0)

    def corrections(self, node: Any, result: str, scale: np.ndarray, shift: np.ndarray, rank: int) -> List[str]:
        """Multiply by scale and Add shift (each left out when it is the identity), from result to the node's
        output."""
        out, final, steps = result, node.output[0], []
        if np.any(scale != 1):
            nxt = self.fresh(final + "/scaled") if np.any(shift != 0) else final
            self.emit(node, "Multiply", [out, self.f32(final + "/scale", _row(scale, rank))], nxt, suffix="/scale")
            out = nxt
            steps.append("Multiply")
        if np.any(shift != 0):
            self.emit(node, "Add", [out, self.f32(final + "/shift", _row(shift, rank))], final, suffix="/shift")
            steps.append("Add")
        return steps

    # ---- convolutions and dense layers -------------------------------------------------------------------
    def geometry(self, node: Any, kernel: Sequence[int], spatial: Sequence[int]) -> Dict[str, Any]:
        attrs = _attributes(node)
        strides = [int(s) for s in attrs.get("strides", [1, 1])]
        dilations = [int(d) for d in attrs.get("dilations", [1, 1])]
        auto_pad = _text(attrs.get("auto_pad", "NOTSET"))
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            pairs = [_same_pads(n, k, s, d, auto_pad == "SAME_UPPER")
                     for n, k, s, d in zip(spatial, kernel, strides, dilations)]
            begin, end = [p[0] for p in pairs], [p[1] for p in pairs]
        elif auto_pad in ("NOTSET", "VALID"):
            pads = [int(p) for p in attrs.get("pads", [0, 0, 0, 0])] if auto_pad == "NOTSET" else [0, 0, 0, 0]
            begin, end = pads[:2], pads[2:]
        else:
            raise _Refused(f"auto_pad {auto_pad!r}")
        return {"strides": strides, "dilations": dilations, "pads_begin": begin, "pads_end": end,
                "auto_pad": "explicit"}

    def op_Conv(self, node: Any) -> None:
        x = node.input[0]
        w = np.asarray(self.constant(node.input[1], "weights"), np.float32)
        if w.ndim != 4:
            raise _Refused(f"weights of {w.ndim} axes (xnorcl: 2-D convolutions)")
        bias = np.asarray(self.constant(node.input[2], "bias"), np.float64).reshape(-1) \
            if len(node.input) > 2 and node.input[2] else np.zeros(w.shape[0])
        dims = self.shape(x)  # a Pad's output: SAME padding is reckoned on the padded size, as ONNX does
        if len(dims) != 4:
            raise _Refused(f"input of {len(dims)} axes")
        geometry = self.geometry(node, w.shape[2:], dims[2:])
        group = int(_attributes(node).get("group", 1))
        if x in self.bits:
            if group != 1:
                raise _Refused(f"group {group} on binarized activations (xnorcl: group 1)")
            self.binary_convolution(node, self.bits[x], w, bias, geometry)
        else:
            self.float_convolution(node, w, bias, geometry, group)

    def binary_convolution(self, node: Any, bits: Bits, w: np.ndarray, bias: np.ndarray,
                           geometry: Dict[str, Any]) -> None:
        """Binarized activations +-level and weights alpha_o * t: BinaryConvolution (pad taps are the Pad's
        value over level, or 0: PyTorch's zero padding adds nothing), Multiply by alpha_o * level, Add bias."""
        pad_value = 0.0
        if bits.pads is not None:
            begin, end, value = bits.pads
            if value != 0 and any(geometry["pads_begin"] + geometry["pads_end"]):
                raise _Refused(f"its own zero padding {geometry['pads_begin'] + geometry['pads_end']} after a Pad "
                               f"of {value:g} (xnorcl: one pad value per convolution)")
            geometry["pads_begin"] = [a + b for a, b in zip(geometry["pads_begin"], begin)]
            geometry["pads_end"] = [a + b for a, b in zip(geometry["pads_end"], end)]
            pad_value = float(value) / bits.level + 0.0
        alpha, t = self.binary_weights(w)
        weights = self.graph.add_bits(self.fresh(node.output[0] + "/weights_u1"), list(w.shape),
                                      np.packbits((t > 0).astype(np.uint8).ravel()))
        scale = alpha * bits.level
        identity = not (np.any(scale != 1) or np.any(bias != 0))
        out = node.output[0] if identity else self.fresh(node.output[0] + "/binary")
        self.emit(node, "BinaryConvolution", [bits.name, weights], out,
                  dict(geometry, mode="xnor-popcount", pad_value=pad_value))
        steps = ["BinaryConvolution"] + self.corrections(node, out, scale, bias, 4)
        self.set_float(node, node.output[0])
        self.report.fused.append(f"{_where(node)}: binarized by {bits.binarizer} -> {' + '.join(steps)} "
                                 f"(pad_value {pad_value:g})")

    def float_convolution(self, node: Any, w: np.ndarray, bias: np.ndarray, geometry: Dict[str, Any],
                          group: int) -> None:
        x = node.input[0]
        if x in self.float_pads:
            x, begin, end = self.float_pads[x]
            geometry["pads_begin"] = [a + b for a, b in zip(geometry["pads_begin"], begin)]
            geometry["pads_end"] = [a + b for a, b in zip(geometry["pads_end"], end)]
        if group == 1:
            op, weights = "Convolution", w
        elif w.shape[0] % group == 0:
            op, weights = "GroupConvolution", w.reshape((group, w.shape[0] // group) + w.shape[1:])
        else:
            raise _Refused(f"group {group} does not divide {w.shape[0]} output channels")
        out = node.output[0] if not np.any(bias != 0) else self.fresh(node.output[0] + "/convolution")
        self.emit(node, op, [self.float_input(x), self.f32(node.output[0] + "/weights", weights)], out, geometry)
        self.corrections(node, out, np.ones(1), bias, 4)
        self.set_float(node, node.output[0])

    def dense(self, node: Any, a: str, w_km: np.ndarray, scale: float, shift: np.ndarray) -> None:
        """a [N, K] times w [K, M], times scale, plus shift [M] (or one value): BinaryFullyConnected on
        binarized a, else MatMul."""
        if a in self.bits:
            bits = self.bits[a]
            dims = self.shape(a)
            if len(dims) != 2:
                raise _Refused(f"binarized activations of shape {list(dims)} (xnorcl: [N, K])")
            alpha, t = self.binary_weights(w_km.T)
            weights = self.graph.add_bits(self.fresh(node.output[0] + "/weights_u1"), list(t.shape),
                                          np.packbits((t > 0).astype(np.uint8).ravel()))
            total_scale = alpha * bits.level * scale
            out = node.output[0] if not (np.any(total_scale != 1) or np.any(shift != 0)) else self.fresh(
                node.output[0] + "/binary")
            self.emit(node, "BinaryFullyConnected", [bits.name, weights], out)
            steps = ["BinaryFullyConnected"] + self.corrections(node, out, total_scale, shift * np.ones_like(alpha), 2)
            self.report.fused.append(f"{_where(node)}: binarized by {bits.binarizer} -> {' + '.join(steps)}")
        else:
            if len(self.shape(a)) != 2:
                raise _Refused(f"input of shape {list(self.shape(a))} (xnorcl: [N, K] times a constant [K, M])")
            has_shift = np.any(shift != 0)
            out = node.output[0] if scale == 1 and not has_shift else self.fresh(node.output[0] + "/product")
            self.emit(node, "MatMul", [self.float_input(a), self.f32(node.output[0] + "/weights", w_km)], out,
                      {"transpose_a": False, "transpose_b": False})
            self.corrections(node, out, np.full(1, scale), shift, 2)
        self.set_float(node, node.output[0])

    def op_Gemm(self, node: Any) -> None:
        attrs = _attributes(node)
        if attrs.get("transA", 0):
            raise _Refused("transA 1")
        w = np.asarray(self.constant(node.input[1], "B"), np.float32)
        if w.ndim != 2:
            raise _Refused(f"B of shape {list(w.shape)}")
        w = w.T if attrs.get("transB", 0) else w
        shift = np.zeros(1)
        if len(node.input) > 2 and node.input[2]:
            c = np.asarray(self.constant(node.input[2], "C"), np.float64)
            if c.size not in (1, w.shape[1]) or (c.ndim == 2 and c.shape[0] != 1):
                raise _Refused(f"C of shape {list(c.shape)} (xnorcl: one value or one per output)")
            shift = float(attrs.get("beta", 1.0)) * c.reshape(-1)
        self.dense(node, node.input[0], w, float(attrs.get("alpha", 1.0)), shift)

    def op_MatMul(self, node: Any) -> None:
        w = np.asarray(self.constant(node.input[1], "second operand"), np.float32)
        if w.ndim != 2:
            raise _Refused(f"a second operand of shape {list(w.shape)} (xnorcl: a constant [K, M])")
        self.dense(node, node.input[0], w, 1.0, np.zeros(1))

    # ---- shapes ------------------------------------------------------------------------------------------
    def reshape(self, node: Any) -> None:
        x, out = node.input[0], node.output[0]
        target = self.shape(out)
        if x in self.bits:
            dims = self.shape(x)
            if len(dims) == 4 and len(target) == 2 and target == (dims[0], int(np.prod(dims[1:]))):
                self.bits[out] = Bits(self.bits[x].name, self.bits[x].level, self.bits[x].binarizer, flat=True)
                return
            if len(dims) == 2 and target == dims:
                self.bits[out] = self.bits[x]
                return
            raise _Refused(f"it reshapes binarized activations {list(dims)} to {list(target)} (xnorcl reads them "
                           "flattened to [N, C*H*W] only)")
        if not 1 <= len(target) <= 4:
            raise _Refused(f"result {list(target)} (xnorcl tensors have 1 to 4 axes)")
        shape = self.f32(out + "/shape", np.array(target))
        self.emit(node, "Reshape", [self.float_input(x), shape], out, {"special_zero": False})
        self.set_float(node, out)

    op_Reshape = op_Flatten = op_Squeeze = op_Unsqueeze = reshape

    def op_Identity(self, node: Any) -> None:
        x, out = node.input[0], node.output[0]
        if x in self.bits:
            self.bits[out] = self.bits[x]
        else:
            self.floats[out] = self.float_input(x)

    op_Dropout = op_Identity

    def op_Pad(self, node: Any) -> None:
        attrs = _attributes(node)
        mode = _text(attrs.get("mode", "constant"))
        if mode != "constant":
            raise _Refused(f"mode {mode!r} (xnorcl: constant)")
        if self.opset < 11:
            pads, value = list(attrs.get("pads", [])), float(attrs.get("value", 0.0))
        else:
            if len(node.input) > 3 and node.input[3]:
                raise _Refused("an axes input (xnorcl pads axes H and W of a 4-D tensor)")
            pads = [int(p) for p in self.constant(node.input[1], "pads").reshape(-1)]
            has_value = len(node.input) > 2 and node.input[2]
            value = float(np.asarray(self.constant(node.input[2], "value")).reshape(-1)[0]) if has_value else 0.0
        x = node.input[0]
        if len(pads) != 8 or any(pads[i] for i in (0, 1, 4, 5)) or min(pads) < 0:
            raise _Refused(f"pads {pads} (xnorcl: non-negative pads of H and W of a 4-D tensor)")
        begin, end = pads[2:4], pads[6:8]
        if x in self.bits:
            bits = self.bits[x]
            if bits.pads is not None:
                raise _Refused("a Pad of a Pad")
            self.bits[node.output[0]] = Bits(bits.name, bits.level, bits.binarizer, (begin, end, value))
        elif value == 0.0:
            self.float_input(x)
            self.float_pads[node.output[0]] = (x, begin, end)
        else:
            raise _Refused(f"value {value:g} on float values (xnorcl folds zero pads into a float Conv)")

    # ---- float ops ---------------------------------------------------------------------------------------
    def elementwise(self, node: Any, op: str) -> None:
        a, b = node.input
        rank = max(len(self.shape(a)), len(self.shape(b)))
        names = []
        for name in (a, b):
            if name in self.const:  # constants get the activation's rank, as the executor fuses [1, C, 1, 1]
                value = np.asarray(self.const[name], np.float32)
                names.append(self.f32(node.output[0] + "/operand", value.reshape((1,) * (rank - value.ndim)
                                                                                  + value.shape)))
            else:
                names.append(self.float_input(name))
        self.emit(node, op, names, node.output[0], {"auto_broadcast": "numpy"})
        self.set_float(node, node.output[0])

    def op_Add(self, node: Any) -> None:
        self.elementwise(node, "Add")

    def op_Sub(self, node: Any) -> None:
        self.elementwise(node, "Subtract")

    def op_Mul(self, node: Any) -> None:
        self.elementwise(node, "Multiply")

    def op_Div(self, node: Any) -> None:
        """x / c for a constant c: a Multiply by 1/c (rounded once more than the division; a batch-norm that
        an exporter writes with Div, as Brevitas does, stays within float rounding of it)."""
        x, c = node.input
        divisor = np.asarray(self.constant(c, "divisor"), np.float64)
        if not np.all(np.isfinite(divisor)) or np.any(divisor == 0):
            raise _Refused(f"divisor {divisor.ravel()[:4].tolist()} (xnorcl: finite, nonzero constants)")
        rank = len(self.shape(x))
        reciprocal = (1.0 / divisor).astype(np.float32)
        reciprocal = reciprocal.reshape((1,) * (rank - reciprocal.ndim) + reciprocal.shape)
        self.emit(node, "Multiply", [self.float_input(x), self.f32(node.output[0] + "/reciprocal", reciprocal)],
                  node.output[0], {"auto_broadcast": "numpy"})
        self.set_float(node, node.output[0])

    def unary(self, node: Any, op: str, attrs: Optional[Dict[str, Any]] = None,
              extra: Sequence[str] = ()) -> None:
        self.emit(node, op, [self.float_input(node.input[0])] + list(extra), node.output[0], attrs)
        self.set_float(node, node.output[0])

    def op_Relu(self, node: Any) -> None:
        self.unary(node, "Relu")

    def op_PRelu(self, node: Any) -> None:
        slope = np.asarray(self.constant(node.input[1], "slope"), np.float32)
        dims = self.shape(node.input[0])
        channels = dims[1] if len(dims) >= 2 else 1
        if slope.size not in (1, channels) or (slope.size > 1 and sorted(slope.shape)[-1] != slope.size):
            raise _Refused(f"slope of shape {list(slope.shape)} for {channels} channels (xnorcl: one per channel)")
        self.unary(node, "PRelu", extra=[self.f32(node.output[0] + "/slope", slope.reshape(-1))])

    def op_LeakyRelu(self, node: Any) -> None:
        alpha = float(_attributes(node).get("alpha", 0.01))
        self.unary(node, "PRelu", extra=[self.f32(node.output[0] + "/slope", [alpha])])

    def op_Clip(self, node: Any) -> None:
        attrs = _attributes(node)
        bounds = [float(attrs.get("min", -np.inf)), float(attrs.get("max", np.inf))]
        for i in (1, 2):
            if len(node.input) > i and node.input[i]:
                bounds[i - 1] = float(np.asarray(self.constant(node.input[i], ("min", "max")[i - 1])).reshape(-1)[0])
        lo, hi = (max(bounds[0], -float(np.finfo(np.float32).max)), min(bounds[1], float(np.finfo(np.float32).max)))
        self.unary(node, "Clamp", {"min": lo, "max": hi})

    def pool_geometry(self, node: Any) -> Dict[str, Any]:
        attrs = _attributes(node)
        if any(int(d) != 1 for d in attrs.get("dilations", [1, 1])):
            raise _Refused(f"dilations {list(attrs['dilations'])} (xnorcl pools: 1)")
        if int(attrs.get("storage_order", 0)) != 0:
            raise _Refused("storage_order 1")
        kernel = [int(k) for k in attrs["kernel_shape"]]
        if len(kernel) != 2:
            raise _Refused(f"kernel_shape {kernel} (xnorcl: 2-D pools)")
        geometry = self.geometry(node, kernel, self.shape(node.input[0])[2:])
        del geometry["dilations"]
        geometry.update({"kernel": kernel, "rounding_type": "ceil" if attrs.get("ceil_mode", 0) else "floor"})
        return geometry

    def op_MaxPool(self, node: Any) -> None:
        if len(node.output) > 1 and node.output[1]:
            raise _Refused("its Indices output is used")
        geometry = self.pool_geometry(node)
        x = node.input[0]
        if x in self.bits:
            # The max of +-level values is +level where any is: xnorcl's MaxPool on bits ORs them; pad taps
            # (-inf in ONNX) never win.
            bits = self.bits[x]
            if bits.pads is not None or bits.flat:
                raise _Refused("it pools a padded or flattened binarized tensor")
            self.emit(node, "MaxPool", [bits.name], node.output[0], geometry)
            self.bits[node.output[0]] = Bits(node.output[0], bits.level, bits.binarizer)
            return
        self.unary(node, "MaxPool", geometry)

    def op_AveragePool(self, node: Any) -> None:
        geometry = self.pool_geometry(node)
        geometry["exclude-pad"] = not _attributes(node).get("count_include_pad", 0)
        self.unary(node, "AvgPool", geometry)

    def op_GlobalAveragePool(self, node: Any) -> None:
        if len(self.shape(node.input[0])) != 4:
            raise _Refused("input not 4-D")
        self.unary(node, "ReduceMean", {"keep_dims": True}, [self.f32(node.output[0] + "/axes", [2, 3])])

    def op_GlobalMaxPool(self, node: Any) -> None:
        dims = self.shape(node.input[0])
        if len(dims) != 4:
            raise _Refused("input not 4-D")
        self.unary(node, "MaxPool", {"kernel": list(dims[2:]), "strides": [1, 1], "pads_begin": [0, 0],
                                     "pads_end": [0, 0], "auto_pad": "explicit", "rounding_type": "floor"})

    def op_ReduceMean(self, node: Any) -> None:
        attrs = _attributes(node)
        rank = len(self.shape(node.input[0]))
        if len(node.input) > 1 and node.input[1]:
            axes = [int(a) for a in self.constant(node.input[1], "axes").reshape(-1)]
        else:
            axes = [int(a) for a in attrs.get("axes", range(rank))]
        axes = sorted(a % rank for a in axes)
        keep = bool(attrs.get("keepdims", 1))
        if rank != 4 or axes != [2, 3]:
            raise _Refused(f"axes {axes} of a tensor of {rank} axes (xnorcl: global pooling, axes 2 and 3)")
        self.unary(node, "ReduceMean", {"keep_dims": keep}, [self.f32(node.output[0] + "/axes", axes)])

    def op_Softmax(self, node: Any) -> None:
        rank = len(self.shape(node.input[0]))
        axis = int(_attributes(node).get("axis", -1 if self.opset >= 13 else 1)) % rank
        if self.opset < 13 and axis != rank - 1:
            raise _Refused(f"axis {axis} before opset 13 (a softmax over the flattened axes {axis}..)")
        self.unary(node, "Softmax", {"axis": axis})

    def op_Concat(self, node: Any) -> None:
        rank = len(self.shape(node.output[0]))
        axis = int(_attributes(node)["axis"]) % rank
        self.emit(node, "Concat", [self.float_input(name) for name in node.input], node.output[0], {"axis": axis})
        self.set_float(node, node.output[0])

    def op_Transpose(self, node: Any) -> None:
        rank = len(self.shape(node.input[0]))
        order = [int(p) for p in _attributes(node).get("perm", list(range(rank))[::-1])]
        self.unary(node, "Transpose", {"order": order})

    def op_BatchNormalization(self, node: Any) -> None:
        attrs = _attributes(node)
        if attrs.get("training_mode", 0) or any(node.output[1:]):
            raise _Refused("training mode (export the model in eval mode)")
        scale, bias, mean, var = (np.asarray(self.constant(n, what), np.float64).reshape(-1)
                                  for n, what in zip(node.input[1:5], ("scale", "B", "mean", "var")))
        multiplier = scale / np.sqrt(var + float(attrs.get("epsilon", 1e-5)))
        rank = len(self.shape(node.input[0]))
        mid = self.fresh(node.output[0] + "/scaled")
        self.emit(node, "Multiply", [self.float_input(node.input[0]),
                                     self.f32(node.output[0] + "/scale", _row(multiplier, rank))], mid)
        self.emit(node, "Add", [mid, self.f32(node.output[0] + "/shift", _row(bias - mean * multiplier, rank))],
                  node.output[0], suffix="/shift")
        self.set_float(node, node.output[0])


class _Values:
    """What is known of a graph's tensors before mapping: which node makes each, the constants, and whether two
    tensors hold the same values by construction."""

    def __init__(self, graph: Any, const: Dict[str, np.ndarray]) -> None:
        self.producer: Dict[str, Any] = {out: node for node in graph.node for out in node.output if out}
        self.const = const
        self.memo: Dict[Tuple[str, str], bool] = {}

    def same(self, a: str, b: str, depth: int = 24) -> bool:
        """The same tensor, equal constants, or the same op with the same attributes on inputs that hold the
        same values (a depth of 24 ops is the most compared)."""
        if a == b:
            return True
        if (a, b) not in self.memo:
            self.memo[(a, b)] = depth > 0 and self._same(a, b, depth)
        return self.memo[(a, b)]

    def _same(self, a: str, b: str, depth: int) -> bool:
        if a in self.const or b in self.const:
            return (a in self.const and b in self.const and self.const[a].shape == self.const[b].shape
                    and np.array_equal(self.const[a], self.const[b]))
        pa, pb = self.producer.get(a), self.producer.get(b)
        if pa is None or pb is None or (pa.op_type, pa.domain) != (pb.op_type, pb.domain):
            return False
        if list(pa.output).index(a) != list(pb.output).index(b) or len(pa.input) != len(pb.input):
            return False
        if sorted(x.SerializeToString() for x in pa.attribute) != sorted(x.SerializeToString() for x in pb.attribute):
            return False
        return all(self.same(x, y, depth - 1) for x, y in zip(pa.input, pb.input))

    def straight_through_source(self, node: Any) -> Optional[str]:
        """s of an Add(Sub(s, g), g') whose g and g' hold the same values, the form of a straight-through
        estimator (`s.detach() - g.detach() + g`): its value is s, which the float arithmetic only rounds."""
        if node.op_type != "Add" or node.domain not in _STANDARD_DOMAINS:
            return None
        a, b = node.input
        for kept, other in ((a, b), (b, a)):
            sub = self.producer.get(kept)
            if sub is not None and sub.op_type == "Sub" and sub.domain in _STANDARD_DOMAINS and self.same(
                    sub.input[1], other):
                return sub.input[0]
        return None


def _folded(node: Any, values: _Values, shapes: Dict[str, Tuple[int, ...]], opsets: Any) -> Optional[List[Any]]:
    """The outputs of a node computable before run time, or None: a node on constants (a straight-through
    form on constants, Bi-Real's weights, exactly its first term), or a Shape of a static shape."""
    inputs = [name for name in node.input if name]
    const = values.const
    if node.op_type == "Shape" and node.domain in _STANDARD_DOMAINS and inputs[0] in shapes:
        attrs = _attributes(node)
        dims = np.array(shapes[inputs[0]], np.int64)
        return [dims[attrs.get("start", 0):attrs.get("end", len(dims))]]
    if not all(name in const for name in inputs) or node.op_type in ("RandomNormal", "RandomUniform"):
        return None
    source = values.straight_through_source(node)
    if source is not None:
        return [const[source]]
    if node.domain in _BIPOLAR_DOMAINS and node.op_type == "BipolarQuant":
        x, scale = (np.asarray(const[n], np.float32) for n in inputs[:2])
        return [np.where(x >= 0, scale, -scale).astype(np.float32)]
    if node.domain in _STANDARD_DOMAINS:
        for name in node.output:
            if name in shapes:
                check_folded_size(node.name or name, shapes[name])
        return [np.asarray(v) for v in _evaluate(node, [const[n] for n in inputs], opsets)]
    return None


def _fold_constants(model: Any) -> Tuple[Any, _Values, Dict[str, Tuple[int, ...]], List[str]]:
    """The model with every node computable before run time replaced by initializers (passes until none is
    left, as a folded shape can make another Shape static), its values, its tensors' static shapes and the
    names of the folded nodes."""
    folded: List[str] = []
    while True:
        shapes = _inferred_shapes(model)
        g = model.graph
        values = _Values(g, {i.name: numpy_helper.to_array(i) for i in g.initializer})
        kept = []
        for node in g.node:
            outputs = _folded(node, values, shapes, model.opset_import)
            if outputs is None:
                kept.append(node)
                continue
            for name, value in zip(node.output, outputs):
                if name:
                    values.const[name] = np.asarray(value)
            folded.append(node.name or node.output[0])
        if len(kept) == len(g.node):
            return model, values, shapes, folded
        read = {name for node in kept for name in node.input} | {o.name for o in g.output}
        model = _with_nodes(model, kept, {n: v for n, v in values.const.items() if n in read}, set(values.const))


def _with_nodes(model: Any, nodes: List[Any], initializers: Dict[str, np.ndarray], constants: set) -> Any:
    """A copy of `model` with these nodes and initializers; graph inputs that are constants are dropped."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    g = out.graph
    del g.node[:]
    g.node.extend(nodes)
    del g.initializer[:]
    g.initializer.extend(numpy_helper.from_array(np.ascontiguousarray(v), n) for n, v in initializers.items())
    real_inputs = [i for i in g.input if i.name not in constants]
    del g.input[:]
    g.input.extend(real_inputs)
    del g.value_info[:]
    return out


def _evaluate(node: Any, values: List[np.ndarray], opset_import: Any) -> List[np.ndarray]:
    """One node on constants, by the onnx package's reference evaluator under the model's opsets."""
    names = [n for n in node.input if n]
    graph = onnx.helper.make_graph(
        [node], "fold",
        [onnx.helper.make_tensor_value_info(n, onnx.helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
         for n, v in zip(names, values)],
        [onnx.helper.make_tensor_value_info(n, onnx.TensorProto.UNDEFINED, None) for n in node.output if n])
    standard = [o for o in opset_import if o.domain in _STANDARD_DOMAINS]
    model = onnx.helper.make_model(graph, opset_imports=standard)
    return ReferenceEvaluator(model).run(None, dict(zip(names, values)))


def _claimed_elements(node: Any, const: Dict[str, np.ndarray], dims: Dict[str, Tuple[int, ...]]) -> int:
    """The elements a node that makes a tensor from a few numbers (ConstantOfShape, Expand, Tile, Range)
    claims for its output, where those numbers are constants; 0 where they are not. onnx's shape inference
    computes such constants itself (data propagation), so they are bounded before it runs."""
    inputs = list(node.input)

    def value(i: int) -> Optional[np.ndarray]:
        return const.get(inputs[i]) if len(inputs) > i and inputs[i] else None

    def shape_of(i: int) -> Tuple[int, ...]:
        v = value(i)
        return tuple(v.shape) if v is not None else dims.get(inputs[i], ())

    t = node.op_type
    if t == "ConstantOfShape" and value(0) is not None:
        return int(np.prod([max(int(d), 0) for d in value(0).ravel()], dtype=object))
    if t in ("Expand", "Tile") and value(1) is not None:
        claimed = int(np.prod([max(int(d), 1) for d in value(1).ravel()], dtype=object))
        return claimed * int(np.prod([max(int(d), 1) for d in shape_of(0)], dtype=object))
    if t == "Range" and all(value(i) is not None and value(i).size == 1 for i in range(3)):
        start, limit, delta = (float(value(i).ravel()[0]) for i in range(3))
        return int(max(np.ceil((limit - start) / delta), 0)) if delta else 0
    return 0


def _check_claims(model: Any) -> None:
    """Refuses a node whose constant inputs claim an output too large to compute at conversion time."""
    g = model.graph
    const = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    dims = {i.name: tuple(d.dim_value for d in i.type.tensor_type.shape.dim) for i in g.input}
    for node in g.node:
        if node.domain in _STANDARD_DOMAINS and node.op_type in ("ConstantOfShape", "Expand", "Tile", "Range"):
            claimed = _claimed_elements(node, const, dims)
            if claimed > MAX_FOLDED_ELEMENTS:
                raise InvalidArgument(
                    f"{node.name or node.output[0]}: its constant result would have {claimed} elements, more than "
                    f"a conversion computes before run time ({MAX_FOLDED_ELEMENTS})"
                )


def _inferred_shapes(model: Any) -> Dict[str, Tuple[int, ...]]:
    """Static shapes of every tensor by onnx's shape inference. BipolarQuant keeps its input's shape: it is
    read as an Identity here, since the onnx package does not know QONNX's ops."""
    _check_claims(model)
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for node in copy.graph.node:
        if node.domain in _BIPOLAR_DOMAINS and node.op_type == "BipolarQuant":
            del node.input[1:]
            node.op_type, node.domain = "Identity", ""
            del node.attribute[:]
    inferred = shape_inference.infer_shapes(copy, data_prop=True)
    shapes: Dict[str, Tuple[int, ...]] = {}
    g = inferred.graph
    for info in list(g.input) + list(g.value_info) + list(g.output):
        t = info.type.tensor_type
        if t.HasField("shape") and all(d.HasField("dim_value") and d.dim_value > 0 for d in t.shape.dim):
            shapes[info.name] = tuple(int(d.dim_value) for d in t.shape.dim)
    return shapes


def with_standard_binarizers(model: Any) -> Any:
    """A copy of `model` whose QONNX BipolarQuant(x, s) nodes are written with standard ops as
    Where(x >= 0, s, -s), the same function, so that onnxruntime (which has no QONNX ops) can run it."""
    twin = onnx.ModelProto()
    twin.CopyFrom(model)
    nodes = []
    for node in twin.graph.node:
        if node.op_type != "BipolarQuant" or node.domain not in _BIPOLAR_DOMAINS:
            nodes.append(node)
            continue
        (x, s), y = node.input, node.output[0]
        zero = numpy_helper.from_array(np.array(0, np.float32))
        nodes += [onnx.helper.make_node("Constant", [], [y + "/zero"], value=zero),
                  onnx.helper.make_node("GreaterOrEqual", [x, y + "/zero"], [y + "/at_least_zero"]),
                  onnx.helper.make_node("Neg", [s], [y + "/minus_scale"]),
                  onnx.helper.make_node("Where", [y + "/at_least_zero", s, y + "/minus_scale"], [y], name=node.name)]
    del twin.graph.node[:]
    twin.graph.node.extend(nodes)
    standard = [o for o in twin.opset_import if o.domain not in _BIPOLAR_DOMAINS]
    del twin.opset_import[:]
    twin.opset_import.extend(standard)
    return twin


def convert_model(model: Any, destination: str) -> Dict[str, Any]:
    """Converts an in-memory onnx.ModelProto into the .xnn file `destination`."""
    model, values, shapes, folded = _fold_constants(model)
    conv = _Converter(model, values, shapes, folded)
    conv.run()
    return finish(conv.graph, conv.report, destination)


def convert(source: str, destination: str) -> Dict[str, Any]:
    """Converts the ONNX model `source` into the .xnn file `destination`."""
    try:
        model = onnx.load(source)
        onnx.checker.check_model(model)
    except Exception as e:  # onnx raises DecodeError, ValidationError, OSError...
        raise InvalidArgument(f"{source}: onnx cannot read it: {type(e).__name__}: {e}") from None
    with refusals_naming(source):
        return convert_model(model, destination)
