# SPDX-License-Identifier: Apache-2.0
"""OpenVINO IR (.xml and its .bin) -> .xnn version 2 (docs/openvino.md).

The IR is read by OpenVINO's own reader (`openvino.Core().read_model`); nodes are mapped one by one in
OpenVINO's topological order. Subgraphs on constants (Convert, Reshape, a FakeQuantize on weights, ...) are
evaluated with OpenVINO's own `Node.evaluate`, so folded values are OpenVINO's. Every op or attribute that
xnorcl lacks is collected first; the conversion is refused with the whole list before anything is written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import openvino as ov

from .._xnorcl import InvalidArgument
from . import xnn
from ._common import Report, check_companion, check_folded_size, finish, refusals_naming, unique_name

# OpenVINO op -> (xnorcl op, attributes passed on). Binary and pre-transform ops are handled apart.
_FLOAT_OPS: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    "Convolution": ("Convolution", ("strides", "pads_begin", "pads_end", "dilations", "auto_pad")),
    "GroupConvolution": ("GroupConvolution", ("strides", "pads_begin", "pads_end", "dilations", "auto_pad")),
    "MatMul": ("MatMul", ("transpose_a", "transpose_b")),
    "Add": ("Add", ("auto_broadcast",)),
    "Multiply": ("Multiply", ("auto_broadcast",)),
    "Subtract": ("Subtract", ("auto_broadcast",)),
    "Relu": ("Relu", ()),
    "PRelu": ("PRelu", ()),
    "Clamp": ("Clamp", ("min", "max")),
    "AvgPool": ("AvgPool", ("kernel", "strides", "pads_begin", "pads_end", "auto_pad", "rounding_type", "exclude-pad")),
    "ReduceMean": ("ReduceMean", ("keep_dims",)),
    "Softmax": ("Softmax", ("axis",)),
    "Concat": ("Concat", ("axis",)),
    "Transpose": ("Transpose", ()),
}
_POOL = ("kernel", "strides", "pads_begin", "pads_end", "auto_pad", "rounding_type")
# Ops that only change a tensor's shape: one xnorcl Reshape to OpenVINO's inferred output shape.
_SHAPE_OPS = ("Reshape", "Squeeze", "Unsqueeze")
# What an attribute must hold for xnorcl to compute the same function (value or None: anything).
_REQUIRED = {
    ("MaxPool", "dilations"): lambda v: all(int(d) == 1 for d in v),
    ("MaxPool", "axis"): lambda v: True,
    ("MaxPool", "index_element_type"): lambda v: True,
    ("AvgPool", "rounding_type"): lambda v: str(v).lower() in ("floor", "ceil"),
    ("MaxPool", "rounding_type"): lambda v: str(v).lower() in ("floor", "ceil"),
    ("BinaryConvolution", "mode"): lambda v: v == "xnor-popcount",
}


@dataclass
class BitsInfo:
    """A tensor xnorcl holds as bits: OpenVINO's FakeQuantize (levels 2) values, bit = value > 0."""

    producer: str  # the FakeQuantize's name
    low: np.ndarray  # output_low per channel (or one value)
    high: np.ndarray


def _where(node: Any) -> str:
    info = node.get_type_info()
    return f"node '{node.get_friendly_name()}' ({node.get_type_name()}-{info.version_id.replace('opset', '')})"


def _lsb_to_msb(raw: np.ndarray, count: int) -> np.ndarray:
    """u1 weights as the .bin holds them (element i is bit i%8 of byte i/8, as OpenVINO's CPU plugin reads
    them) -> xnorcl's constants (element i is bit 7 - i%8)."""
    bits = np.unpackbits(np.ascontiguousarray(raw, dtype=np.uint8).ravel(), bitorder="little")[:count]
    return np.packbits(bits, bitorder="big")


class _Converter:
    def __init__(self, model: Any) -> None:
        self.model = model
        self.graph = xnn.Graph()
        self.report = Report()
        self.names: Dict[Tuple[str, int], str] = {}  # (node, output index) -> tensor name
        self.taken: set = set()
        self.values: Dict[Tuple[str, int], np.ndarray] = {}  # constant outputs (folded)
        self.raw_u1: Dict[Tuple[str, int], np.ndarray] = {}
        self.bits: Dict[Tuple[str, int], BitsInfo] = {}

    # ---- names and constants -------------------------------------------------------------------------
    def _key(self, output: Any) -> Tuple[str, int]:
        # get_name() is OpenVINO's unique internal node name (Python wrappers are not stable identities).
        return (output.get_node().get_name(), output.get_index())

    def name_of(self, output: Any) -> str:
        key = self._key(output)
        if key not in self.names:
            names = output.get_names()
            # The name OpenVINO itself reports first (CompiledModel outputs, Model.inputs), so a user feeds
            # and reads the tensors by the names they used with OpenVINO.
            base = output.get_any_name() if names else output.get_node().get_friendly_name()
            if not names and output.get_node().get_output_size() > 1:
                base += f":{output.get_index()}"
            self.names[key] = unique_name(base, self.taken)
        return self.names[key]

    def fresh(self, base: str) -> str:
        return unique_name(base, self.taken)

    def constant(self, output: Any) -> Optional[np.ndarray]:
        return self.values.get(self._key(output))

    def f32_constant(self, output: Any) -> str:
        """The graph's name for a constant input (added once)."""
        name = self.name_of(output)
        if name not in self.graph.constants:
            value = self.values[self._key(output)]
            self.graph.add_f32(name, value.astype(np.float32).reshape(value.shape if value.ndim else (1,)))
        return name

    def fold(self, node: Any) -> bool:
        """Evaluates a node whose inputs are all constants with OpenVINO itself; False when it cannot."""
        t = node.get_type_name()
        if t == "Constant":
            out = node.output(0)
            if node.get_element_type() == ov.Type.u1:
                self.raw_u1[self._key(out)] = np.array(node.data, dtype=np.uint8).ravel()
                self.values[self._key(out)] = np.zeros(0)
            else:
                self.values[self._key(out)] = np.array(node.data)
            return True
        if t in ("Parameter", "Result") or node.get_input_size() == 0:
            return False
        inputs = [iv for iv in node.input_values()]
        if any(self._key(iv) not in self.values or self._key(iv) in self.raw_u1 for iv in inputs):
            return False
        if any(not node.get_output_partial_shape(i).is_static for i in range(node.get_output_size())):
            return False
        in_tensors = [ov.Tensor(np.ascontiguousarray(self.values[self._key(iv)])) for iv in inputs]
        out_tensors = [
            ov.Tensor(node.get_output_element_type(i), ov.Shape(list(node.get_output_shape(i))))
            for i in range(node.get_output_size())
        ]
        try:
            if not node.evaluate(out_tensors, in_tensors):
                return False
        except Exception:  # an op without a host evaluation: not a constant subgraph xnorcl can fold
            return False
        for i, tensor in enumerate(out_tensors):
            self.values[self._key(node.output(i))] = np.array(tensor.data)
        self.report.folded.append(node.get_friendly_name())
        return True

    # ---- checks -------------------------------------------------------------------------------------
    def refuse(self, node: Any, why: str) -> None:
        self.report.refused.append(f"{_where(node)}: {why}")

    def attributes(self, node: Any, passed: Tuple[str, ...]) -> Optional[Dict[str, Any]]:
        """The node's attributes xnorcl takes; an attribute it lacks (or a value it cannot compute) refuses."""
        attrs = node.get_attributes()
        t = node.get_type_name()
        out: Dict[str, Any] = {}
        ok = True
        for key, value in attrs.items():
            check = _REQUIRED.get((t, key))
            if check is not None and not check(value):
                self.refuse(node, f"attribute {key} = {value!r} is not supported")
                ok = False
            elif key in passed:
                out[key] = _attribute_value(value)
            elif check is None:
                self.refuse(node, f"attribute {key} = {value!r} is not supported")
                ok = False
        return out if ok else None

    def float_inputs(self, node: Any, count: int) -> Optional[List[str]]:
        """Names of the node's inputs, each a float activation or constant; bits refuse."""
        names = []
        ok = True
        for iv in node.input_values()[:count]:
            key = self._key(iv)
            if key in self.bits:
                fq = self.bits[key].producer
                self.refuse(
                    node,
                    f"reads the binarized output of FakeQuantize '{fq}' (levels 2) as float values; xnorcl's "
                    "FakeQuantize produces bits, which only BinaryConvolution, Convolution with binarized "
                    "weights and MaxPool read",
                )
                ok = False
            elif key in self.raw_u1:
                self.refuse(node, "reads a u1 constant as float values")
                ok = False
            elif key in self.values:
                names.append(self.f32_constant(iv))
            else:
                names.append(self.name_of(iv))
        return names if ok else None

    def static_output(self, node: Any) -> bool:
        for i in range(node.get_output_size()):
            if i > 0 and not node.output(i).get_target_inputs():
                continue  # an unused extra output (MaxPool-8's indices)
            if not node.get_output_partial_shape(i).is_static:
                self.refuse(node, f"output {i} has a dynamic shape {node.get_output_partial_shape(i)}")
                return False
            if node.get_output_element_type(i) != ov.Type.f32:
                self.refuse(node, f"output {i} is {node.get_output_element_type(i)}; xnorcl computes f32")
                return False
        return True

    def emit(self, node: Any, op: str, inputs: List[str], attrs: Dict[str, Any], output: Optional[str] = None) -> str:
        out = output if output is not None else self.name_of(node.output(0))
        self.graph.nodes.append(xnn.Node(node.get_friendly_name(), op, inputs, [out], attrs))
        self.report.mapped[f"{node.get_type_name()} -> {op}"] += 1
        return out

    # ---- ops ----------------------------------------------------------------------------------------
    def run(self) -> None:
        for node in self.model.get_ordered_ops():
            t = node.get_type_name()
            if self.fold(node):
                continue
            handler = getattr(self, f"op_{t}", None)
            if t in _FLOAT_OPS and handler is None:
                handler = self.op_float
            if t in _SHAPE_OPS:
                handler = self.op_shape
            if handler is None:
                self.refuse(node, "this op is not supported by xnorcl")
                continue
            if t not in ("Result", "Parameter") and not self.static_output(node):
                continue
            handler(node)

    def op_Parameter(self, node: Any) -> None:
        shape = node.get_output_partial_shape(0)
        if not shape.is_static:
            self.refuse(node, f"input shape {shape} is dynamic; reshape the model to a static shape first")
            return
        if node.get_element_type() != ov.Type.f32:
            self.refuse(node, f"input element type {node.get_element_type()}; xnorcl's inputs are f32")
            return
        dims = tuple(int(d) for d in node.get_output_shape(0))
        if not 1 <= len(dims) <= 4:
            self.refuse(node, f"input of {len(dims)} axes (xnorcl: 1 to 4)")
            return
        self.graph.inputs.append((self.name_of(node.output(0)), dims))

    def op_Result(self, node: Any) -> None:
        source = node.input_value(0)
        key = self._key(source)
        if key in self.bits:
            self.refuse(node, "a model output is a binarized FakeQuantize value (xnorcl would output bits)")
            return
        if key in self.values:
            self.refuse(node, "a model output is a constant")
            return
        self.graph.outputs.append(self.name_of(source))

    def op_float(self, node: Any) -> None:
        t = node.get_type_name()
        op, passed = _FLOAT_OPS[t]
        attrs = self.attributes(node, passed)
        inputs = self.float_inputs(node, node.get_input_size())
        if attrs is not None and inputs is not None:
            self.emit(node, op, inputs, attrs)

    def op_shape(self, node: Any) -> None:
        inputs = self.float_inputs(node, 1)
        if inputs is None:
            return
        if any(self._key(iv) not in self.values for iv in node.input_values()[1:]):
            self.refuse(node, "its target shape is computed at run time (xnorcl needs a constant)")
            return
        target = [int(d) for d in node.get_output_shape(0)]
        name = self.graph.add_f32(self.fresh(node.get_friendly_name() + "/shape"), np.array(target, np.float32))
        self.emit(node, "Reshape", inputs + [name], {"special_zero": False})

    def op_MaxPool(self, node: Any) -> None:
        if node.get_output_size() > 1 and len(node.output(1).get_target_inputs()) > 0:
            self.refuse(node, "its indices output is used")
            return
        attrs = self.attributes(node, _POOL)
        source = node.input_value(0)
        if attrs is None:
            return
        if self._key(source) in self.bits:
            # The max of FakeQuantize values is the value of the OR of their bits (bit = value > 0).
            self.bits[self._key(node.output(0))] = self.bits[self._key(source)]
            self.emit(node, "MaxPool", [self.name_of(source)], attrs)
            return
        inputs = self.float_inputs(node, 1)
        if inputs is not None:
            self.emit(node, "MaxPool", inputs, attrs)

    def op_FakeQuantize(self, node: Any) -> None:
        attrs = node.get_attributes()
        if int(attrs.get("levels", 0)) != 2:
            self.refuse(node, f"levels {attrs.get('levels')} (xnorcl binarizes: levels 2)")
            return
        if attrs.get("auto_broadcast", "numpy") != "numpy":
            self.refuse(node, f"auto_broadcast {attrs.get('auto_broadcast')!r} (numpy is supported)")
            return
        ranges = [self.constant(iv) for iv in node.input_values()[1:]]
        if any(r is None for r in ranges):
            self.refuse(node, "its ranges are computed at run time (xnorcl needs constants)")
            return
        inputs = self.float_inputs(node, 5)
        if inputs is None:
            return
        low, high = (np.asarray(r, np.float32).ravel() for r in ranges[2:])
        self.bits[self._key(node.output(0))] = BitsInfo(node.get_friendly_name(), low, high)
        self.emit(node, "FakeQuantize", inputs, {"levels": 2, "auto_broadcast": "numpy"})

    def op_BinaryConvolution(self, node: Any) -> None:
        attrs = self.attributes(
            node, ("strides", "pads_begin", "pads_end", "dilations", "mode", "pad_value", "auto_pad")
        )
        weights = node.input_value(1)
        if self._key(weights) not in self.raw_u1:
            self.refuse(node, "its weights are not a u1 constant")
            return
        source = node.input_value(0)
        data = self.name_of(source) if self._key(source) in self.bits else None
        if data is None:
            inputs = self.float_inputs(node, 1)
            if inputs is None:
                return
            data = inputs[0]
        if attrs is None:
            return
        attrs["pad_value"] = float(attrs["pad_value"])
        dims = [int(d) for d in weights.get_shape()]
        name = self.name_of(weights)
        if name not in self.graph.constants:
            self.graph.add_bits(name, dims, _lsb_to_msb(self.raw_u1[self._key(weights)], int(np.prod(dims))))
        self.emit(node, "BinaryConvolution", [data, name], attrs)

    def op_Convolution(self, node: Any) -> None:
        if self._key(node.input_value(0)) not in self.bits:
            self.op_float(node)
            return
        self.binarized_convolution(node)

    def op_MatMul(self, node: Any) -> None:
        if self._key(node.input_value(0)) not in self.bits:
            self.op_float(node)
            return
        self.binarized_matmul(node)

    def activation_levels(self, node: Any, info: BitsInfo) -> Optional[Tuple[float, float]]:
        """(m, d) of a binarized activation a = m + d*s, or None (refused)."""
        low, high = np.unique(info.low), np.unique(info.high)
        if low.size != 1 or high.size != 1:
            self.refuse(
                node,
                f"reads FakeQuantize '{info.producer}' whose output ranges differ per channel "
                "(a binary convolution needs one output range per tensor)",
            )
            return None
        ol, oh = float(low[0]), float(high[0])
        if not ol <= 0.0 < oh:
            self.refuse(
                node,
                f"reads FakeQuantize '{info.producer}' with output range [{ol}, {oh}]: its bit (value > 0) "
                "must pick the level, so output_low <= 0 < output_high",
            )
            return None
        return (oh + ol) / 2.0, (oh - ol) / 2.0

    def binary_weights(self, node: Any, w: np.ndarray) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        """Weights [O, ...] that are +-alpha_o per output channel -> (alpha [O], signs t [O, ...] of +-1)."""
        alpha = np.abs(w).reshape(w.shape[0], -1).max(axis=1)
        if not np.all(np.abs(w) == alpha.reshape((-1,) + (1,) * (w.ndim - 1))):
            self.refuse(
                node,
                "reads binarized activations but its weights are not +-alpha per output channel (binarize "
                "them with a FakeQuantize of levels 2 and a symmetric output range)",
            )
            return None
        return alpha, np.where(w > 0, 1.0, -1.0)

    def corrections(self, node: Any, op_out: str, final: str, scale: np.ndarray, shift: np.ndarray,
                    shape: Tuple[int, ...]) -> List[str]:
        """Multiply by scale and Add shift (each left out when the identity) from op_out to final."""
        base = node.get_friendly_name()
        steps = []
        out = op_out
        if np.any(scale != 1):
            nxt = self.fresh(final + "/scaled") if np.any(shift != 0) else final
            c = self.graph.add_f32(self.fresh(base + "/scale"), scale.reshape(shape))
            self.graph.nodes.append(xnn.Node(self.fresh(base + "/scale"), "Multiply", [out, c], [nxt], {}))
            out = nxt
            steps.append("Multiply")
        if np.any(shift != 0):
            c = self.graph.add_f32(self.fresh(base + "/shift"), shift.reshape(shape))
            self.graph.nodes.append(xnn.Node(self.fresh(base + "/shift"), "Add", [out, c], [final], {}))
            steps.append("Add")
        return steps

    def binarized_matmul(self, node: Any) -> None:
        """The classifier form: binarized [N, K] activations times +-alpha_m weights is
        alpha_m*d*(2P - K) + alpha_m*m*T_m: BinaryFullyConnected, a per-output Multiply and Add."""
        source, weights = node.input_values()
        info = self.bits[self._key(source)]
        attrs = node.get_attributes()
        w = self.constant(weights)
        if w is None or self._key(weights) in self.raw_u1 or w.ndim != 2:
            self.refuse(node, "reads binarized activations but its weights are not a 2-D constant")
            return
        if attrs.get("transpose_a"):
            self.refuse(node, "transpose_a true on binarized activations")
            return
        if len(source.get_shape()) != 2:
            self.refuse(node, f"binarized activations of shape {source.get_shape()} (xnorcl: [N, K])")
            return
        levels = self.activation_levels(node, info)
        w = np.asarray(w, np.float64)
        if not attrs.get("transpose_b"):
            w = w.T  # [M, K]: one row per output
        signs = self.binary_weights(node, w)
        if levels is None or signs is None:
            return
        (m, d), (alpha, t) = levels, signs
        bits = self.graph.add_bits(
            self.fresh(node.get_friendly_name() + "/weights_u1"), list(w.shape),
            np.packbits((t > 0).astype(np.uint8).ravel()),
        )
        final = self.name_of(node.output(0))
        scale, shift = alpha * d, alpha * m * t.sum(axis=1)
        identity = not (np.any(scale != 1) or np.any(shift != 0))
        out = final if identity else self.fresh(final + "/binary")
        self.emit(node, "BinaryFullyConnected", [self.name_of(source), bits], {}, out)
        steps = ["BinaryFullyConnected"] + self.corrections(node, out, final, scale, shift, (1, w.shape[0]))
        self.report.fused.append(
            f"{node.get_friendly_name()}: FakeQuantize({info.producer}) + binarized weights + MatMul -> "
            f"{' + '.join(steps)}"
        )

    def binarized_convolution(self, node: Any) -> None:
        """FakeQuantize(levels 2) activations a = m + d*s (s = +-1, the bit) under a Convolution whose
        weights are +-alpha_o per output channel (w = alpha_o*t): the convolution, zero-padded in a, is
        alpha_o*d*(sum_inbounds t*s + (-m/d)*sum_pad t) + alpha_o*m*T_o (T_o: sum of t over the filter), that
        is BinaryConvolution with pad_value -m/d, a per-channel Multiply and a per-channel Add."""
        source, weights = node.input_values()
        info = self.bits[self._key(source)]
        attrs = self.attributes(node, _FLOAT_OPS["Convolution"][1])
        w = self.constant(weights)
        if w is None or self._key(weights) in self.raw_u1:
            self.refuse(node, "reads binarized activations but its weights are not a constant")
            return
        if attrs is None:
            return
        levels = self.activation_levels(node, info)
        w = np.asarray(w, np.float64)
        signs = self.binary_weights(node, w)
        if levels is None or signs is None:
            return
        (m, d), (alpha, t) = levels, signs
        ol, oh = m - d, m + d
        total = t.reshape(w.shape[0], -1).sum(axis=1)
        scale, shift = alpha * d, alpha * m * total
        base = node.get_friendly_name()
        bits_name = self.graph.add_bits(
            self.fresh(base + "/weights_u1"), list(w.shape), np.packbits((t > 0).astype(np.uint8).ravel())
        )
        pad_value = float(-m / d) + 0.0  # + 0.0: no -0 in the file or the report
        attrs.update({"mode": "xnor-popcount", "pad_value": pad_value})
        final = self.name_of(node.output(0))
        identity = not (np.any(scale != 1) or np.any(shift != 0))
        out = final if identity else self.fresh(final + "/binary")
        self.emit(node, "BinaryConvolution", [self.name_of(source), bits_name], attrs, out)
        steps = ["BinaryConvolution"] + self.corrections(node, out, final, scale, shift, (1, w.shape[0], 1, 1))
        self.report.fused.append(
            f"{base}: FakeQuantize({info.producer}, output [{ol:g}, {oh:g}]) + binarized weights + Convolution "
            f"-> {' + '.join(steps)} (pad_value {pad_value:g})"
        )


def _attribute_value(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [int(v) if float(v).is_integer() and not isinstance(v, float) else float(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _check_constant_sizes(model: Any) -> None:
    """Refuses a model where a node computed from constants alone (what constant folding evaluates) has a
    static output larger than a conversion computes, before anything is evaluated."""
    constant = set()
    for node in model.get_ordered_ops():
        t = node.get_type_name()
        # A ShapeOf of a static shape is a constant to the folding as well.
        if t == "Constant" or (t == "ShapeOf" and node.get_input_partial_shape(0).is_static):
            constant.add(node.get_name())
            continue
        if t in ("Parameter", "Result") or node.get_input_size() == 0:
            continue
        if not all(iv.get_node().get_name() in constant for iv in node.input_values()):
            continue
        constant.add(node.get_name())
        for i in range(node.get_output_size()):
            shape = node.get_output_partial_shape(i)
            if shape.is_static:
                check_folded_size(node.get_friendly_name(), list(node.get_output_shape(i)))


def _fold_constants(model: Any) -> None:
    from openvino.passes import ConstantFolding, Manager

    _check_constant_sizes(model)
    manager = Manager()
    manager.register_pass(ConstantFolding())
    manager.run_passes(model)


def convert_model(model: Any, destination: str) -> Dict[str, Any]:
    """Converts an in-memory ov.Model (the IR's reader output) into the .xnn file `destination`."""
    _fold_constants(model)
    conv = _Converter(model)
    conv.run()
    return finish(conv.graph, conv.report, destination)


def convert(source: str, destination: str) -> Dict[str, Any]:
    """Converts the OpenVINO IR `source` (.xml, its .bin beside it) into the .xnn file `destination`."""
    check_companion(os.path.splitext(source)[0] + ".bin", destination, "the model's weights file")
    try:
        model = ov.Core().read_model(source)
    except Exception as e:  # OpenVINO's reader raises its own RuntimeError types
        raise InvalidArgument(f"{source}: OpenVINO cannot read it: {e}") from None
    with refusals_naming(source):
        return convert_model(model, destination)
