# SPDX-License-Identifier: Apache-2.0
"""Larq Compute Engine TFLite (.tflite) -> .xnn version 2 (docs/larq.md).

The flatbuffer is read with the `tflite` package's generated accessors and LCE's custom-op options with
`flatbuffers.flexbuffers`. Operators are mapped one by one in the model's execution order. TFLite computes in
NHWC and xnorcl in NCHW: each tensor is held in the layout its readers need, and Transpose nodes convert where
a tensor is needed in the other one, so the converted model keeps the model's own NHWC inputs and outputs.

LCE's binary conventions are translated here, never assumed equal to xnorcl's:
- a bit-packed LCE tensor is [N, H, W, ceil(C/32)] int32 words, channel c in bit c % 32 of word c / 32, and a
  set bit is -1; an xnorcl bits tensor is logical [N, C, H, W] with a set bit for +1;
- LceQuantize gives -1 to x < 0 and +1 to everything else (0 and -0 included); xnorcl's FakeQuantize is
  given the threshold just below 0 (the largest negative float), which reproduces that exactly;
- Larq's QuantDense becomes LceQuantize of a 2-D tensor, LceDequantize and a float FULLY_CONNECTED whose
  weights are +-1 (+-alpha per output once a batch-norm is folded into them): xnorcl's BinaryFullyConnected
  on the bits, then a Multiply by alpha and the bias. The same holds for a FULLY_CONNECTED reading the
  flatten (RESHAPE) of a 4-D LceDequantize, with its weights reordered from TFLite's [H, W, C] flatten order
  to the bits tensor's [C, H, W];
- LCE's pad_values 0 pads with the value 0 (a padded tap adds nothing), pad_values 1 with +1: xnorcl's
  BinaryConvolution pad_value 0 and 1.
int8-quantized tensors (scale s, zero point z) are emulated in float: the graph holds each one as the real
value s * (q - z) that TFLite's DEQUANTIZE gives, every op that writes one computes in float and rounds to the
int8 grid (Multiply by 1/s, Round half away from zero as TFLite's rounding, Clamp to [-128 - z, 127 - z],
Multiply by s), and int8 weights and int32 biases are dequantized once. An int8 model input or output is a
float32 tensor holding the int8 numbers. Ops that differ: TFLite's integer kernels round with fixed-point
multipliers, so a value within float rounding of a rounding tie (a .5 of the int8 grid) may land one step
away; an average of integers (AVERAGE_POOL_2D, MEAN) meets exact ties and TFLite's int8 SOFTMAX is a table
approximation, so those outputs may differ by one step too (docs/larq.md).
Every op or attribute that xnorcl lacks is collected first; the conversion is refused with the whole list
before anything is written.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import tflite
from flatbuffers import flexbuffers

from .._xnorcl import InvalidArgument
from . import xnn
from ._common import Report, compose_affine_chains, refuse_all, unique_name, write_checked

_T = tflite.TensorType
_FLOAT32, _INT32, _INT8 = _T.FLOAT32, _T.INT32, _T.INT8
_NUMPY = {_T.FLOAT32: np.float32, _T.FLOAT16: np.float16, _T.INT32: np.int32, _T.INT8: np.int8,
          _T.INT64: np.int64, _T.UINT8: np.uint8}
# The generated enum's names, lower case: "float32", "int8", ...
_TYPE_NAMES = {value: name.lower() for name, value in vars(_T).items() if not name.startswith("_")}

# NHWC axis -> NCHW axis
_TO_NCHW_AXIS = {0: 0, 1: 2, 2: 3, 3: 1}
# TFLite's Padding enum; LCE's options use the same values.
_SAME, _VALID = tflite.Padding.SAME, tflite.Padding.VALID
# The largest float below 0: `x > it` is `x >= 0` for every float, -0 included, as LCE's `x < 0` test.
_BELOW_ZERO = -np.finfo(np.float32).smallest_subnormal


class _Refused(Exception):
    """One op that cannot be converted; the converter records it and goes on with the next op."""


class _Skipped(Exception):
    """An op that reads a tensor of an op already refused: nothing more to say about it."""


@dataclass
class _Held:
    """How the graph holds one TFLite tensor: a 4-D tensor as NCHW (`nchw`) and/or in TFLite's NHWC
    (`nhwc`); other ranks in TFLite's layout (`nhwc`). `bits` > 0: an LCE bit-packed tensor of that many
    channels, held as xnorcl bits [N, C, H, W], or [N, C] for a 2-D one (`nchw`)."""

    nchw: Optional[str] = None
    nhwc: Optional[str] = None
    bits: int = 0


def _same_pads(size: int, kernel: int, stride: int, dilation: int) -> Tuple[int, int]:
    """TFLite's SAME padding of one spatial axis: (begin, end), the extra pixel at the end."""
    out = -(-size // stride)
    effective = (kernel - 1) * dilation + 1
    total = max((out - 1) * stride + effective - size, 0)
    return total // 2, total - total // 2


# LceDequantize becomes two C x C binary 1x1 convolutions (binary fully connected products for a 2-D
# tensor): 2 * C * C / 8 bytes of weights. A real model dequantizes at most a few thousand channels; a
# damaged one may claim any count, so the weights are sized before they are made.
MAX_DEQUANTIZE_CHANNELS = 8192
# The most weight bits a grouped binary convolution may expand into (numpy holds each as a byte before they
# are packed: 128 MiB).
MAX_GROUP_EXPANSION_BITS = 1 << 27


def _dequantize_weights(channels: int) -> Tuple[np.ndarray, np.ndarray]:
    """The packed (MSB first) C x C filters of LceDequantize: all +1, and +1 on the diagonal only. Built
    packed (C * C / 8 bytes each), never as C * C bytes."""
    if not 1 <= channels <= MAX_DEQUANTIZE_CHANNELS:
        raise _Refused(
            f"LceDequantize of {channels} channels: xnorcl maps it to two {channels}x{channels} binary "
            f"convolutions ({2 * channels * channels // 8} bytes of weights) and takes at most "
            f"{MAX_DEQUANTIZE_CHANNELS} channels"
        )
    bits = channels * channels
    ones = np.full((bits + 7) // 8, 0xFF, np.uint8)
    if bits % 8:
        ones[-1] = (0xFF << (8 - bits % 8)) & 0xFF
    diagonal = np.zeros((bits + 7) // 8, np.uint8)
    at = np.arange(channels, dtype=np.int64) * (channels + 1)
    np.bitwise_or.at(diagonal, at // 8, (0x80 >> (at % 8)).astype(np.uint8))
    return ones, diagonal


def _readable(name: str) -> str:
    """A node name a user recognizes from a TFLite tensor name: its first alias (TFLite joins the names of
    fused ops with ';') without the model's outer scope, "sequential/quant_conv2d_3/Conv2D;..." ->
    "quant_conv2d_3/Conv2D". Tensor names, the model's inputs and outputs among them, stay as they are."""
    parts = [p for p in name.split(";", 1)[0].split("/") if p]
    if len(parts) > 2:
        parts = parts[1:]
    return "/".join(parts) or name


def _binary_rows(w: np.ndarray) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """Weights [O, K] whose row o is +-alpha_o -> (alpha [O], True where the weight is +alpha_o), None for
    anything else. LCE writes a QuantDense's binarized kernel as +-1 floats and folds a batch-norm's
    multiplier into them, so every weight of a row has the same magnitude, exactly."""
    if w.ndim != 2 or not np.isfinite(w).all():
        return None
    alpha = np.abs(w).max(axis=1) if w.shape[1] else np.zeros(w.shape[0], w.dtype)
    if not (np.abs(w) == alpha[:, None]).all():
        return None
    return alpha, w > 0


def _nchw_rows(plus: np.ndarray, height: int, width: int, channels: int) -> np.ndarray:
    """Rows over TFLite's flatten of an NHWC tensor (index (h * W + w) * C + c) -> [O, C, H, W], the order of
    the xnorcl bits tensor [N, C, H, W] that BinaryFullyConnected reads."""
    return np.ascontiguousarray(np.transpose(plus.reshape(-1, height, width, channels), (0, 3, 1, 2)))


def _unpack_lce_bits(words: np.ndarray, channels: int) -> np.ndarray:
    """LCE's bit-packed int32 words [..., ceil(C/32)] -> bool [..., C], True where the value is -1."""
    as_bytes = np.ascontiguousarray(words.astype("<i4")).view(np.uint8)
    bits = np.unpackbits(as_bytes.reshape(words.shape + (4,)), axis=-1, bitorder="little")
    return bits.reshape(words.shape[:-1] + (words.shape[-1] * 32,))[..., :channels].astype(bool)


class _Converter:
    def __init__(self, model: Any, data: bytes) -> None:
        self.model = model
        self.data = data
        self.sg = model.Subgraphs(0)
        self.graph = xnn.Graph()
        self.report = Report()
        self.held: Dict[int, _Held] = {}
        self.values: Dict[int, np.ndarray] = {}  # folded constants (DEQUANTIZE of float16 weights)
        self.pending_pad: Dict[int, Tuple[int, Tuple[int, int, int, int]]] = {}  # PAD output -> (input, pads)
        # Float tensors that hold exactly the +-1 of a bits tensor (an LceDequantize's output, the flatten of
        # one) -> that bits tensor: a FULLY_CONNECTED with binary weights reads the bits instead.
        self.signs: Dict[int, int] = {}
        # Tensors whose nodes are made only when something reads them as floats (an LceDequantize read only
        # by binary FULLY_CONNECTEDs needs none): tensor -> the function that makes them.
        self.lazy: Dict[int, Callable[[], None]] = {}
        self.taken: set = set()
        self.node_names: set = set()
        self.model_outputs = [int(i) for i in self.sg.OutputsAsNumpy()]
        self.where = ""

    # ---- tensors ----------------------------------------------------------------------------------------
    def tensor_name(self, index: int) -> str:
        return self.sg.Tensors(index).Name().decode("utf-8")

    def shape(self, index: int) -> Tuple[int, ...]:
        shape = self.sg.Tensors(index).ShapeAsNumpy()
        return tuple(int(d) for d in shape) if not isinstance(shape, int) else ()

    def type_of(self, index: int) -> int:
        return int(self.sg.Tensors(index).Type())

    def constant(self, index: int) -> Optional[np.ndarray]:
        """The tensor's value if it is a constant (a buffer with data, or folded), else None."""
        if index in self.values:
            return self.values[index]
        tensor = self.sg.Tensors(index)
        buffer = self.model.Buffers(tensor.Buffer())
        if buffer is None:
            return None
        if buffer.Offset() > 1:  # data stored after the flatbuffer (models over 2 GB)
            raw = np.frombuffer(self.data, np.uint8, int(buffer.Size()), int(buffer.Offset()))
        else:
            raw = buffer.DataAsNumpy()
            if isinstance(raw, int) or raw.size == 0:
                return None
        dtype = _NUMPY.get(self.type_of(index))
        if dtype is None:
            raise _Refused(f"constant '{self.tensor_name(index)}' of type {self._type_name(index)}")
        return np.frombuffer(raw.tobytes(), dtype=np.dtype(dtype).newbyteorder("<")).reshape(self.shape(index))

    def _type_name(self, index: int) -> str:
        return _TYPE_NAMES.get(self.type_of(index), f"type {self.type_of(index)}")

    def float_constant(self, index: int, what: str) -> np.ndarray:
        """A constant's real values: float32 as stored, quantized integers (int8 weights, int32 biases)
        dequantized with their per-tensor or per-axis scale and zero point."""
        value = self.constant(index)
        if value is None:
            raise _Refused(f"its {what} '{self.tensor_name(index)}' is computed at run time (xnorcl needs a "
                           "constant)")
        if value.dtype == np.float32:
            return value
        if value.dtype in (np.int8, np.int32) and self.quantization(index) is not None:
            return self.dequantized(index, value)
        raise _Refused(f"its {what} '{self.tensor_name(index)}' is {self._type_name(index)} without "
                       "quantization parameters")

    def quantization(self, index: int) -> Optional[Tuple[np.ndarray, np.ndarray, int]]:
        """(scales, zero points, quantized axis) of a quantized tensor, None for a float one."""
        q = self.sg.Tensors(index).Quantization()
        if q is None or q.ScaleLength() == 0:
            return None
        return (q.ScaleAsNumpy().astype(np.float64), q.ZeroPointAsNumpy().astype(np.float64),
                int(q.QuantizedDimension()))

    def dequantized(self, index: int, value: np.ndarray) -> np.ndarray:
        scale, zero, axis = self.quantization(index)  # type: ignore[misc]
        shape = [1] * value.ndim
        if scale.size > 1:
            shape[axis] = scale.size
        real = (value.astype(np.float64) - zero.reshape(shape)) * scale.reshape(shape)
        return real.astype(np.float32)

    def int8_grid(self, index: int) -> Optional[Tuple[float, int]]:
        """(scale, zero point) of an int8 activation, None for a float one; per-channel activation
        quantization is refused."""
        if self.type_of(index) != _INT8:
            return None
        q = self.quantization(index)
        if q is None or q[0].size != 1 or q[0][0] <= 0:
            raise _Refused(f"int8 tensor '{self.tensor_name(index)}' without one positive scale (per-tensor "
                           "quantization is supported for activations)")
        return float(q[0][0]), int(q[1][0]) if q[1].size else 0

    def requantize(self, index: int) -> List[Tuple[str, Callable[[str], List[str]], Dict[str, Any]]]:
        """The nodes that round a float tensor to the int8 grid of tensor `index` and hold the result as
        its real value s * (q - z): Multiply by 1/s, Round half away from zero, Clamp to [-128 - z,
        127 - z], Multiply by s. Empty for a float tensor."""
        grid = self.int8_grid(index)
        if grid is None:
            return []
        scale, zero = grid
        base = self.tensor_name(index)
        inverse = self.f32(base + "/inverse_scale", np.array([1.0 / np.float32(scale)], np.float32))
        step = self.f32(base + "/scale", np.array([scale], np.float32))
        return [("Multiply", lambda x: [x, inverse], {}),
                ("Round", lambda x: [x], {"mode": "half_away_from_zero"}),
                ("Clamp", lambda x: [x], {"min": float(-128 - zero), "max": float(127 - zero)}),
                ("Multiply", lambda x: [x, step], {})]

    def same_grid(self, inputs: List[int], output: int) -> bool:
        """Whether every input holds values on the output's grid already (float, or int8 with the same
        scale and zero point): ops that only move or select values need no rounding then."""
        out = self.int8_grid(output)
        return all(self.int8_grid(i) == out for i in inputs)

    def fresh(self, base: str) -> str:
        return unique_name(base, self.taken)

    def held_of(self, index: int) -> _Held:
        if index in self.pending_pad:
            raise _Refused(f"it reads the output of a PAD ('{self.tensor_name(index)}'); xnorcl folds a PAD "
                           "only into the CONV_2D or DEPTHWISE_CONV_2D that reads it")
        if index in self.lazy:
            self.lazy.pop(index)()
        if index not in self.held:
            raise _Skipped()
        return self.held[index]

    def nchw(self, index: int) -> str:
        """The graph tensor of a 4-D float activation in NCHW (a Transpose the first time it is needed)."""
        held = self.held_of(index)
        if held.bits:
            raise _Refused(f"it reads the bit-packed tensor '{self.tensor_name(index)}' as float values (LCE "
                           "reads bits as floats only through an LceDequantize)")
        if held.nchw is None:
            if len(self.shape(index)) != 4:
                raise _Refused(f"tensor '{self.tensor_name(index)}' {list(self.shape(index))} is needed as "
                               "a 4-D image")
            held.nchw = self.transpose(held.nhwc, (0, 3, 1, 2), self.tensor_name(index) + "/nchw")
        return held.nchw

    def nhwc(self, index: int) -> str:
        """The graph tensor of a float activation in TFLite's own layout."""
        held = self.held_of(index)
        if held.bits:
            raise _Refused(f"it reads the bit-packed tensor '{self.tensor_name(index)}' as float values")
        if held.nhwc is None:
            held.nhwc = self.transpose(held.nchw, (0, 2, 3, 1), self.tensor_name(index) + "/nhwc")
        return held.nhwc

    def bits(self, index: int) -> str:
        held = self.held_of(index)
        if not held.bits:
            raise _Refused(f"it reads the float tensor '{self.tensor_name(index)}' where LCE has bits")
        return held.nchw  # type: ignore[return-value]

    def is_nchw(self, index: int) -> bool:
        held = self.held_of(index)
        return held.nchw is not None and len(self.shape(index)) == 4

    def transpose(self, source: Optional[str], order: Sequence[int], base: str) -> str:
        out = self.fresh(base)
        self.node(out, "Transpose", [source], out, {"order": list(order)})  # type: ignore[list-item]
        return out

    # ---- outputs of an op ---------------------------------------------------------------------------------
    def result(self, index: int, layout: str, bits: int = 0) -> str:
        """The graph name for TFLite tensor `index`, produced in `layout` ("nchw" or "nhwc")."""
        base = self.tensor_name(index)
        if index in self.model_outputs and self.type_of(index) != _INT8:  # an int8 output: its numbers later
            name = self.fresh(base + "/nchw") if layout == "nchw" and len(self.shape(index)) == 4 else base
        else:
            name = self.fresh(base)
        held = self.held.setdefault(index, _Held(bits=bits))
        setattr(held, layout, name)
        return name

    def node(self, name: str, op: str, inputs: List[str], output: str, attrs: Optional[Dict[str, Any]] = None
             ) -> str:
        node_name = unique_name(_readable(name), self.node_names)
        self.graph.nodes.append(xnn.Node(node_name, op, inputs, [output], dict(attrs or {})))
        return output

    def f32(self, base: str, value: np.ndarray) -> str:
        return self.graph.add_f32(self.fresh(base), np.asarray(value, np.float32))

    def steps(self, out_index: int, layout: str, first: Tuple[str, List[str], Dict[str, Any]],
              then: List[Tuple[str, Callable[[str], List[str]], Dict[str, Any]]], bits: int = 0,
              rounds: bool = True) -> None:
        """An op's nodes in a chain (the op, then its bias, scale or activation, then the rounding to the
        int8 grid where the TFLite tensor is int8 and `rounds`); the last one writes the TFLite tensor's
        graph name."""
        chain = [first] + [(op, make, attrs) for op, make, attrs in then]
        if rounds and not bits:
            chain += self.requantize(out_index)
        base = self.tensor_name(out_index)
        current = ""
        for k, (op, inputs, attrs) in enumerate(chain):
            last = k == len(chain) - 1
            out = self.result(out_index, layout, bits) if last else self.fresh(f"{base}/{op.lower()}")
            args = inputs(current) if callable(inputs) else inputs
            self.node(base if k == 0 else f"{base}/{op.lower()}", op, args, out, attrs)
            current = out

    def activation(self, code: int) -> List[Tuple[str, Callable[[str], List[str]], Dict[str, Any]]]:
        """TFLite's fused activation as graph nodes after the op."""
        if code == 0:
            return []
        if code == 1:
            return [("Relu", lambda x: [x], {})]
        if code == 2:
            return [("Clamp", lambda x: [x], {"min": -1.0, "max": 1.0})]
        if code == 3:
            return [("Clamp", lambda x: [x], {"min": 0.0, "max": 6.0})]
        names = {4: "TANH", 5: "SIGN_BIT"}
        raise _Refused(f"fused activation {names.get(code, code)} is not supported (NONE, RELU, RELU6, "
                       "RELU_N1_TO_1 are)")

    def channel_constant(self, base: str, values: np.ndarray, channels: int) -> str:
        """Per-channel values as the [1, C, 1, 1] constant an NCHW Multiply/Add reads (one value broadcast)."""
        v = np.asarray(values, np.float32).reshape(-1)
        if v.size == 1:
            v = np.repeat(v, channels)
        if v.size != channels:
            raise _Refused(f"{base}: {v.size} values for {channels} channels")
        return self.f32(base, v.reshape(1, channels, 1, 1))

    # ---- the run --------------------------------------------------------------------------------------------
    def op_name(self, op: Any) -> str:
        code = self.model.OperatorCodes(op.OpcodeIndex())
        builtin = max(int(code.BuiltinCode()), int(code.DeprecatedBuiltinCode()))
        if builtin == tflite.BuiltinOperator.CUSTOM:
            return code.CustomCode().decode("utf-8")
        return tflite.opcode2name(builtin)

    def run(self) -> None:
        if self.model.SubgraphsLength() != 1:
            self.report.refused.append(f"the model has {self.model.SubgraphsLength()} subgraphs (xnorcl "
                                       "converts models of one)")
        # An int8 output's name is its numbers' (model_output); its real values take another name.
        self.taken.update(self.tensor_name(i) for i in self.model_outputs if self.type_of(i) == _INT8)
        for index in self.sg.InputsAsNumpy():
            self.model_input(int(index))
        for k in range(self.sg.OperatorsLength()):
            op = self.sg.Operators(k)
            name = self.op_name(op)
            outputs = [int(i) for i in op.OutputsAsNumpy()] if not op.OutputsIsNone() else []
            self.where = f"operator {k} {name} (output '{self.tensor_name(outputs[0])}')" if outputs else \
                f"operator {k} {name}"
            handler = getattr(self, "op_" + name, None)
            try:
                if handler is None:
                    raise _Refused("this op is not supported by xnorcl")
                handler(op, [int(i) for i in op.InputsAsNumpy()], outputs)
                self.report.mapped[name] += 1
            except _Refused as e:
                self.report.refused.append(f"{self.where}: {e}")
            except _Skipped:
                pass
        for index in self.model_outputs:
            self.model_output(index)

    def model_input(self, index: int) -> None:
        dims = self.shape(index)
        name = self.tensor_name(index)
        if self.type_of(index) not in (_FLOAT32, _INT8):
            self.report.refused.append(f"input '{name}' is {self._type_name(index)}; xnorcl's inputs are "
                                       "float32 (or int8 numbers given as float32)")
            return
        if not 1 <= len(dims) <= 4 or any(d <= 0 for d in dims):
            self.report.refused.append(f"input '{name}' has shape {list(dims)} (xnorcl: 1 to 4 axes, static)")
            return
        self.taken.add(name)
        self.graph.inputs.append((name, dims))
        self.held[index] = _Held(nhwc=name)
        try:
            grid = self.int8_grid(index)
        except _Refused as e:
            self.report.refused.append(f"input '{name}': {e}")
            return
        if grid is not None:  # the int8 numbers q, given as float32 -> s * (q - z)
            zero = self.f32(name + "/zero_point", np.array([-grid[1]], np.float32))
            self.held[index] = _Held()
            self.steps(index, "nhwc", ("Add", [name, zero], {}),
                       [("Multiply", lambda x: [x, self.f32(name + "/scale", np.array([grid[0]], np.float32))],
                         {})], rounds=False)

    def model_output(self, index: int) -> None:
        name = self.tensor_name(index)
        if index in self.lazy:
            try:
                self.lazy.pop(index)()
            except _Refused as e:
                self.report.refused.append(f"output '{name}': {e}")
                return
        held = self.held.get(index)
        if held is None:
            return  # its producer was refused
        if held.bits:
            self.report.refused.append(f"output '{name}' is bit-packed (xnorcl's outputs are float32)")
            return
        if self.type_of(index) == _INT8:
            held = self.int8_numbers(index, held)
        if held.nhwc is None:
            self.transpose_into(held.nchw, name)
            held.nhwc = name
        elif held.nhwc != name:  # an input read back as an output, or a renamed tensor
            self.node(name, "Reshape", [held.nhwc, self.f32(name + "/shape", np.array(self.shape(index)))],
                      name, {"special_zero": False})
        self.graph.outputs.append(name)

    def int8_numbers(self, index: int, held: _Held) -> _Held:
        """An int8 model output as its int8 numbers q = round(x / s) + z, float32, in the layout it is held
        in (x is on the grid already: the rounding only undoes the float error of x / s)."""
        scale, zero = self.int8_grid(index)  # type: ignore[misc]
        base = self.tensor_name(index)
        layout = "nhwc" if held.nhwc is not None else "nchw"
        final = base if layout == "nhwc" else self.fresh(base + "/nchw")
        inverse = self.f32(base + "/inverse_scale", np.array([1.0 / np.float32(scale)], np.float32))
        unscaled = self.node(base + "/unscale", "Multiply", [getattr(held, layout), inverse],
                             self.fresh(base + "/unscaled"))
        rounded = self.node(base + "/round", "Round", [unscaled], self.fresh(base + "/rounded") if zero else final,
                            {"mode": "half_away_from_zero"})
        if zero:
            shift = self.f32(base + "/zero_point", np.array([zero], np.float32))
            rounded = self.node(base + "/zero_point", "Add", [rounded, shift], final)
        numbers = _Held()
        setattr(numbers, layout, rounded)
        return numbers

    def transpose_into(self, source: Optional[str], name: str) -> None:
        self.node(name, "Transpose", [source], name, {"order": [0, 2, 3, 1]})  # type: ignore[list-item]

    # ---- float ops ------------------------------------------------------------------------------------------
    def conv_geometry(self, x: int, kernel: Tuple[int, int], strides: Tuple[int, int],
                      dilations: Tuple[int, int], padding: int) -> Dict[str, Any]:
        """Explicit pads for TFLite's SAME or VALID, plus a PAD before the op that it absorbs."""
        source, extra = self.pending_pad.get(x, (x, (0, 0, 0, 0)))
        _, h, w, _ = self.shape(source)
        h += extra[0] + extra[1]
        w += extra[2] + extra[3]
        if padding == _SAME:
            top, bottom = _same_pads(h, kernel[0], strides[0], dilations[0])
            left, right = _same_pads(w, kernel[1], strides[1], dilations[1])
        elif padding == _VALID:
            top = bottom = left = right = 0
        else:
            raise _Refused(f"padding {padding} (SAME or VALID)")
        return {"strides": list(strides), "dilations": list(dilations), "auto_pad": "explicit",
                "pads_begin": [top + extra[0], left + extra[2]], "pads_end": [bottom + extra[1], right + extra[3]]}

    def padded_input(self, x: int) -> str:
        source = self.pending_pad.get(x, (x,))[0]
        return self.nchw(source)

    def op_CONV_2D(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        o = tflite.Conv2DOptions()
        o.Init(op.BuiltinOptions().Bytes, op.BuiltinOptions().Pos)
        w = self.float_constant(inputs[1], "filter")  # [O, KH, KW, I]
        c_in = self.shape(self.pending_pad.get(inputs[0], (inputs[0],))[0])[3]
        groups = c_in // w.shape[3] if w.shape[3] and c_in % w.shape[3] == 0 else 0
        if groups == 0:
            raise _Refused(f"filter {list(w.shape)} for {c_in} input channels")
        geometry = self.conv_geometry(inputs[0], w.shape[1:3], (o.StrideH(), o.StrideW()),
                                      (o.DilationHFactor(), o.DilationWFactor()), o.Padding())
        base = self.tensor_name(outputs[0])
        oihw = np.transpose(w, (0, 3, 1, 2))
        if groups == 1:
            op_type, weights = "Convolution", oihw
        else:
            op_type, weights = "GroupConvolution", oihw.reshape(groups, w.shape[0] // groups, *oihw.shape[1:])
        first = (op_type, [self.padded_input(inputs[0]), self.f32(base + "/weights", weights)], geometry)
        self.steps(outputs[0], "nchw", first, self.bias(inputs, 2, base, w.shape[0])
                   + self.activation(o.FusedActivationFunction()))

    def bias(self, inputs: List[int], position: int, base: str, channels: int) -> List[Tuple[str, Any, Dict]]:
        if len(inputs) <= position or inputs[position] < 0:
            return []
        b = self.float_constant(inputs[position], "bias")
        name = self.channel_constant(base + "/bias", b, channels)
        return [("Add", lambda x: [x, name], {})]

    def op_DEPTHWISE_CONV_2D(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        o = tflite.DepthwiseConv2DOptions()
        o.Init(op.BuiltinOptions().Bytes, op.BuiltinOptions().Pos)
        w = self.float_constant(inputs[1], "filter")  # [1, KH, KW, C * M]
        c_in = self.shape(self.pending_pad.get(inputs[0], (inputs[0],))[0])[3]
        if w.shape[3] % c_in != 0:
            raise _Refused(f"filter {list(w.shape)} for {c_in} input channels")
        multiplier = w.shape[3] // c_in
        geometry = self.conv_geometry(inputs[0], w.shape[1:3], (o.StrideH(), o.StrideW()),
                                      (o.DilationHFactor(), o.DilationWFactor()), o.Padding())
        base = self.tensor_name(outputs[0])
        # [1, KH, KW, C*M] -> [G = C, M, 1, KH, KW]
        weights = np.transpose(w[0].reshape(w.shape[1], w.shape[2], c_in, multiplier), (2, 3, 0, 1))
        weights = weights.reshape(c_in, multiplier, 1, w.shape[1], w.shape[2])
        first = ("GroupConvolution", [self.padded_input(inputs[0]), self.f32(base + "/weights", weights)],
                 geometry)
        self.steps(outputs[0], "nchw", first, self.bias(inputs, 2, base, w.shape[3])
                   + self.activation(o.FusedActivationFunction()))

    def op_FULLY_CONNECTED(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        o = tflite.FullyConnectedOptions()
        o.Init(op.BuiltinOptions().Bytes, op.BuiltinOptions().Pos)
        if o.WeightsFormat() != 0:
            raise _Refused(f"weights format {o.WeightsFormat()} (DEFAULT is supported)")
        w = self.float_constant(inputs[1], "weights")  # [M, K]
        if self.binary_fully_connected(o, w, inputs, outputs):
            return
        x = self.nhwc(inputs[0])
        base = self.tensor_name(outputs[0])
        if len(self.shape(inputs[0])) != 2 or len(self.shape(outputs[0])) != 2:
            rows = int(np.prod(self.shape(inputs[0]))) // w.shape[1]
            flat = self.fresh(base + "/rows")
            self.node(flat, "Reshape", [x, self.f32(base + "/rows_shape", np.array([rows, w.shape[1]]))], flat,
                      {"special_zero": False})
            x = flat
            if len(self.shape(outputs[0])) != 2:
                raise _Refused(f"output {list(self.shape(outputs[0]))} (keep_num_dims is not supported)")
        then = self.fc_bias(inputs, base)
        first = ("MatMul", [x, self.f32(base + "/weights", w)], {"transpose_a": False, "transpose_b": True})
        self.steps(outputs[0], "nhwc", first, then + self.activation(o.FusedActivationFunction()))

    def fc_bias(self, inputs: List[int], base: str) -> List[Tuple[str, Any, Dict]]:
        """A FULLY_CONNECTED's bias as an Add of a [1, M] constant (none where the op has no bias)."""
        if len(inputs) <= 2 or inputs[2] < 0:
            return []
        name = self.f32(base + "/bias", self.float_constant(inputs[2], "bias").reshape(1, -1))
        return [("Add", lambda y: [y, name], {})]

    def binary_fully_connected(self, o: Any, w: np.ndarray, inputs: List[int], outputs: List[int]) -> bool:
        """A FULLY_CONNECTED reading the +-1 of a bits tensor with weights +-alpha_o per output (Larq's
        QuantDense as LCE writes it: LceQuantize, LceDequantize, then this op, a batch-norm after it folded
        into the weights and the bias) -> BinaryFullyConnected on the bits, whose 2P - K is the exact +-1 dot
        product, a Multiply by alpha and the bias: no float +-1 tensor is made. False where the op is
        anything else (its float form computes it then, from the dequantized values)."""
        source = self.signs.get(inputs[0])
        if source is None or self.type_of(outputs[0]) != _FLOAT32 or len(self.shape(outputs[0])) != 2:
            return False
        rows = _binary_rows(w)
        held = self.held.get(source)
        if rows is None or held is None or not held.bits:
            return False
        alpha, plus = rows
        lce_dims = self.shape(source)  # LCE's packed [N, C words] or [N, H, W, C words]
        if len(lce_dims) == 4:  # the flatten of a 4-D tensor: TFLite's [H, W, C] order -> [C, H, W]
            height, width = lce_dims[1:3]
            if w.shape[1] != height * width * held.bits:
                return False
            plus = _nchw_rows(plus, height, width, held.bits)
        elif w.shape[1] != held.bits:
            return False
        base = self.tensor_name(outputs[0])
        weights = self.graph.add_bits(self.fresh(base + "/weights"), list(plus.shape),
                                      np.packbits(plus.astype(np.uint8).ravel()))
        then: List[Tuple[str, Any, Dict]] = []
        if (alpha != 1).any():
            scale = self.f32(base + "/alpha", alpha.reshape(1, -1))
            then.append(("Multiply", lambda y: [y, scale], {}))
        then += self.fc_bias(inputs, base) + self.activation(o.FusedActivationFunction())
        self.steps(outputs[0], "nhwc", ("BinaryFullyConnected", [held.nchw, weights], {}), then)
        self.report.fused.append(
            f"{_readable(base)}: LceDequantize + FULLY_CONNECTED with +-alpha weights -> "
            f"{' + '.join(['BinaryFullyConnected'] + [step[0] for step in then])}")
        return True

    def elementwise(self, op_type: str, inputs: List[int], outputs: List[int], activation: int) -> None:
        out_rank = len(self.shape(outputs[0]))
        activations = [i for i in inputs if self.constant(i) is None]
        if not activations:
            raise _Refused("both operands are constants")
        in_nchw = out_rank == 4 and any(self.is_nchw(i) for i in activations)
        names = []
        for i in inputs:
            value = self.constant(i)
            if value is None:
                if in_nchw and len(self.shape(i)) != 4:
                    raise _Refused(f"operand '{self.tensor_name(i)}' {list(self.shape(i))} broadcast against "
                                   "a 4-D tensor")
                names.append(self.nchw(i) if in_nchw else self.nhwc(i))
                continue
            value = self.float_constant(i, "operand")
            if in_nchw:
                value = np.transpose(value.reshape((1,) * (4 - value.ndim) + value.shape), (0, 3, 1, 2))
            names.append(self.f32(self.tensor_name(outputs[0]) + "/operand", value))
        self.steps(outputs[0], "nchw" if in_nchw else "nhwc", (op_type, names, {}), self.activation(activation))

    def op_ADD(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        o = tflite.AddOptions()
        o.Init(op.BuiltinOptions().Bytes, op.BuiltinOptions().Pos)
        self.elementwise("Add", inputs, outputs, o.FusedActivationFunction())

    def op_MUL(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        o = tflite.MulOptions()
        o.Init(op.BuiltinOptions().Bytes, op.BuiltinOptions().Pos)
        self.elementwise("Multiply", inputs, outputs, o.FusedActivationFunction())

    def op_SUB(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        o = tflite.SubOptions()
        o.Init(op.BuiltinOptions().Bytes, op.BuiltinOptions().Pos)
        self.elementwise("Subtract", inputs, outputs, o.FusedActivationFunction())

    def pool(self, op: Any, inputs: List[int], outputs: List[int], op_type: str) -> None:
        o = tflite.Pool2DOptions()
        o.Init(op.BuiltinOptions().Bytes, op.BuiltinOptions().Pos)
        if inputs[0] in self.pending_pad:
            raise _Refused("it reads a PAD (zeros in a pool's window are not its SAME padding)")
        geometry = self.conv_geometry(inputs[0], (o.FilterHeight(), o.FilterWidth()), (o.StrideH(), o.StrideW()),
                                      (1, 1), o.Padding())
        del geometry["dilations"]
        geometry.update({"kernel": [o.FilterHeight(), o.FilterWidth()], "rounding_type": "floor"})
        if op_type == "AvgPool":
            geometry["exclude-pad"] = True  # TFLite averages the in-bounds taps only
        self.steps(outputs[0], "nchw", (op_type, [self.nchw(inputs[0])], geometry),
                   self.activation(o.FusedActivationFunction()),
                   rounds=op_type != "MaxPool" or not self.same_grid(inputs[:1], outputs[0]))

    def op_AVERAGE_POOL_2D(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        self.pool(op, inputs, outputs, "AvgPool")

    def op_MAX_POOL_2D(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        self.pool(op, inputs, outputs, "MaxPool")

    def op_MEAN(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        o = tflite.ReducerOptions()
        o.Init(op.BuiltinOptions().Bytes, op.BuiltinOptions().Pos)
        axes = self.constant(inputs[1])
        if axes is None:
            raise _Refused("its axes are computed at run time")
        rank = len(self.shape(inputs[0]))
        axes = [int(a) % rank for a in np.ravel(axes)]
        base = self.tensor_name(outputs[0])
        keep = bool(o.KeepDims())
        if rank == 4 and (self.is_nchw(inputs[0]) or sorted(axes) == [1, 2]):
            source, mapped = self.nchw(inputs[0]), sorted(_TO_NCHW_AXIS[a] for a in axes)
            layout = "nchw" if keep else "nhwc"
            if not keep and mapped != [2, 3]:
                raise _Refused(f"axes {axes} without keep_dims (xnorcl reduces the spatial axes)")
        else:
            source, mapped, layout = self.nhwc(inputs[0]), sorted(axes), "nhwc"
        first = ("ReduceMean", [source, self.f32(base + "/axes", np.array(mapped))], {"keep_dims": keep})
        self.steps(outputs[0], layout, first, [])

    def reshape(self, inputs: List[int], outputs: List[int]) -> None:
        target = self.shape(outputs[0])
        if not 1 <= len(target) <= 4:
            raise _Refused(f"result {list(target)} (xnorcl tensors have 1 to 4 axes)")
        base = self.tensor_name(outputs[0])
        first = ("Reshape", [self.nhwc(inputs[0]), self.f32(base + "/shape", np.array(target))],
                 {"special_zero": False})
        self.steps(outputs[0], "nhwc", first, [], rounds=not self.same_grid(inputs[:1], outputs[0]))

    def op_RESHAPE(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        source = self.signs.get(inputs[0])
        if source is not None and len(self.shape(source)) == 4 and len(self.shape(outputs[0])) == 2 \
                and self.shape(outputs[0]) == (self.shape(source)[0], int(np.prod(self.shape(inputs[0])[1:]))) \
                and self.type_of(outputs[0]) == _FLOAT32:
            # A flatten of the +-1 of 4-D bits: a binary FULLY_CONNECTED after it reads the bits; the float
            # reshape is made only for a reader that needs the values.
            self.signs[outputs[0]] = source
            self.lazy[outputs[0]] = lambda: self.reshape(inputs, outputs)
            return
        self.reshape(inputs, outputs)

    def op_SQUEEZE(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        self.reshape(inputs, outputs)

    def op_SOFTMAX(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        o = tflite.SoftmaxOptions()
        o.Init(op.BuiltinOptions().Bytes, op.BuiltinOptions().Pos)
        if o.Beta() != 1.0:
            raise _Refused(f"beta {o.Beta()} (1 is supported)")
        nchw = self.is_nchw(inputs[0])
        source = self.nchw(inputs[0]) if nchw else self.nhwc(inputs[0])
        axis = 1 if nchw else len(self.shape(inputs[0])) - 1
        self.steps(outputs[0], "nchw" if nchw else "nhwc", ("Softmax", [source], {"axis": axis}), [])

    def op_CONCATENATION(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        o = tflite.ConcatenationOptions()
        o.Init(op.BuiltinOptions().Bytes, op.BuiltinOptions().Pos)
        rank = len(self.shape(outputs[0]))
        if any(self.constant(i) is not None for i in inputs):
            raise _Refused("a constant operand")
        axis = o.Axis() % rank
        nchw = rank == 4
        names = [self.nchw(i) if nchw else self.nhwc(i) for i in inputs]
        first = ("Concat", names, {"axis": _TO_NCHW_AXIS[axis] if nchw else axis})
        self.steps(outputs[0], "nchw" if nchw else "nhwc", first, self.activation(o.FusedActivationFunction()),
                   rounds=not self.same_grid(inputs, outputs[0]))

    def op_PAD(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        pads = self.constant(inputs[1])
        if pads is None or len(self.shape(inputs[0])) != 4:
            raise _Refused("paddings computed at run time or a tensor that is not 4-D")
        pads = np.asarray(pads).reshape(4, 2)
        if pads[0].any() or pads[3].any() or (pads < 0).any():
            raise _Refused(f"paddings {pads.tolist()} (xnorcl folds zero padding of H and W only)")
        self.held_of(inputs[0])
        self.pending_pad[outputs[0]] = (inputs[0], (int(pads[1, 0]), int(pads[1, 1]), int(pads[2, 0]),
                                                    int(pads[2, 1])))

    def unary(self, inputs: List[int], outputs: List[int], op_type: str, attrs: Dict[str, Any]) -> None:
        nchw = self.is_nchw(inputs[0])
        source = self.nchw(inputs[0]) if nchw else self.nhwc(inputs[0])
        self.steps(outputs[0], "nchw" if nchw else "nhwc", (op_type, [source], attrs), [])

    def op_RELU(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        self.unary(inputs, outputs, "Relu", {})

    def op_RELU6(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        self.unary(inputs, outputs, "Clamp", {"min": 0.0, "max": 6.0})

    def op_RELU_N1_TO_1(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        self.unary(inputs, outputs, "Clamp", {"min": -1.0, "max": 1.0})

    def op_PRELU(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        alpha = self.float_constant(inputs[1], "alpha")
        channels = self.shape(inputs[0])[-1]
        per_channel = alpha.reshape(-1, alpha.shape[-1] if alpha.ndim else 1)
        if not (per_channel == per_channel[:1]).all():
            raise _Refused(f"alpha {list(alpha.shape)} varies along other axes than the channels")
        slope = per_channel[0]
        if slope.size not in (1, channels):
            raise _Refused(f"alpha {list(alpha.shape)} for {channels} channels")
        nchw = self.is_nchw(inputs[0])
        source = self.nchw(inputs[0]) if nchw else self.nhwc(inputs[0])
        slope_name = self.f32(self.tensor_name(outputs[0]) + "/slope", slope)
        self.steps(outputs[0], "nchw" if nchw else "nhwc", ("PRelu", [source, slope_name], {}), [])

    def op_DEQUANTIZE(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        value = self.constant(inputs[0])
        if value is None:  # an int8 activation: the graph holds its real values already
            if self.int8_grid(inputs[0]) is None:
                raise _Refused(f"it dequantizes '{self.tensor_name(inputs[0])}' of type "
                               f"{self._type_name(inputs[0])} (int8 is supported)")
            self.held[outputs[0]] = self.held_of(inputs[0])
            return
        if value.dtype == np.float16:
            self.values[outputs[0]] = value.astype(np.float32)
            return
        if self.quantization(inputs[0]) is None:
            raise _Refused(f"constant of type {self._type_name(inputs[0])} without quantization parameters")
        self.values[outputs[0]] = self.dequantized(inputs[0], value)

    def op_QUANTIZE(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        if self.int8_grid(outputs[0]) is None:
            raise _Refused(f"it quantizes to {self._type_name(outputs[0])} (int8 is supported)")
        if self.same_grid(inputs, outputs[0]):
            self.held[outputs[0]] = self.held_of(inputs[0])
            return
        nchw = self.is_nchw(inputs[0])
        source = self.nchw(inputs[0]) if nchw else self.nhwc(inputs[0])
        rounding = self.requantize(outputs[0])
        first = (rounding[0][0], rounding[0][1](source), rounding[0][2])
        self.steps(outputs[0], "nchw" if nchw else "nhwc", first, rounding[1:], rounds=False)

    # ---- Larq Compute Engine's ops --------------------------------------------------------------------------
    def lce_options(self, op: Any) -> Dict[str, Any]:
        raw = op.CustomOptionsAsNumpy()
        if isinstance(raw, int) or raw.size == 0:
            return {}
        return dict(flexbuffers.Loads(raw.tobytes()))

    def op_LceQuantize(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        dims = self.shape(inputs[0])
        if len(dims) not in (2, 4):
            raise _Refused(f"input {list(dims)} (xnorcl binarizes 4-D NHWC tensors and 2-D [N, C] ones)")
        # A 2-D tensor (QuantDense's input) has one layout: xnorcl's bits [N, C] are TFLite's own order.
        source = self.nchw(inputs[0]) if len(dims) == 4 else self.nhwc(inputs[0])
        base = self.tensor_name(outputs[0])
        t = self.f32(base + "/zero", np.array([_BELOW_ZERO], np.float32))
        low, high = self.f32(base + "/minus_one", np.array([-1.0])), self.f32(base + "/plus_one", np.array([1.0]))
        first = ("FakeQuantize", [source, t, t, low, high], {"levels": 2})
        self.steps(outputs[0], "nchw", first, [], bits=dims[-1])

    def op_LceBMaxPool2d(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        o = self.lce_options(op)
        self.check_options(o, {"padding", "stride_width", "stride_height", "filter_width", "filter_height"})
        kernel, strides = (int(o["filter_height"]), int(o["filter_width"])), (int(o["stride_height"]),
                                                                              int(o["stride_width"]))
        geometry = self.conv_geometry(inputs[0], kernel, strides, (1, 1), int(o["padding"]))
        del geometry["dilations"]
        geometry.update({"kernel": list(kernel), "rounding_type": "floor"})
        channels = self.held_of(inputs[0]).bits
        # The max of ±1 values is +1 where any is +1: xnorcl's MaxPool on bits (a set bit is +1).
        self.steps(outputs[0], "nchw", ("MaxPool", [self.bits(inputs[0])], geometry), [], bits=channels)

    def op_LceDequantize(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        """Bits -> float +-1, made when something reads the floats (a binary FULLY_CONNECTED reads the bits
        themselves)."""
        self.bits(inputs[0])
        if self.type_of(outputs[0]) == _FLOAT32:
            self.signs[outputs[0]] = inputs[0]
        where = self.where

        def make() -> None:
            try:
                self.dequantize(inputs[0], outputs[0])
            except _Refused as e:
                raise _Refused(f"{e} (needed as floats; from {where})") from None

        self.lazy[outputs[0]] = make

    def dequantize(self, index: int, out_index: int) -> None:
        """Two binary products over all C channels: weights all +1 give s = sum_i x_i, weights +1 on the
        diagonal and -1 elsewhere give d = x_o - sum_(i != o) x_i, and (s + d) / 2 = x_o exactly (small
        integers). 1x1 BinaryConvolutions for a 4-D tensor, BinaryFullyConnected for a 2-D one."""
        channels = self.held_of(index).bits
        source = self.bits(index)
        base = self.tensor_name(out_index)
        if len(self.shape(index)) == 4:
            op_type, layout, dims = "BinaryConvolution", "nchw", [channels, channels, 1, 1]
            attrs = {"strides": [1, 1], "dilations": [1, 1], "pads_begin": [0, 0], "pads_end": [0, 0],
                     "auto_pad": "explicit", "mode": "xnor-popcount", "pad_value": 1.0}
        else:
            op_type, layout, dims, attrs = "BinaryFullyConnected", "nhwc", [channels, channels], {}
        ones, diagonal = _dequantize_weights(channels)
        total = self.fresh(base + "/sum")
        self.node(total, op_type, [source, self.graph.add_bits(self.fresh(base + "/all_plus"), dims, ones)],
                  total, attrs)
        first = (op_type, [source, self.graph.add_bits(self.fresh(base + "/diagonal"), dims, diagonal)], attrs)
        half = self.f32(base + "/half", np.array([0.5]))
        self.steps(out_index, layout, first, [("Add", lambda d: [d, total], {}),
                                             ("Multiply", lambda t: [t, half], {})])

    def check_options(self, options: Dict[str, Any], known: set) -> None:
        missing = sorted(k for k in known if k not in options)
        if missing:
            raise _Refused(f"custom options lack {', '.join(missing)}")

    def op_LceBconv2d(self, op: Any, inputs: List[int], outputs: List[int]) -> None:
        o = self.lce_options(op)
        self.check_options(o, {"channels_in", "stride_height", "stride_width", "padding"})
        channels = int(o["channels_in"])
        if self.held_of(inputs[0]).bits != channels:
            raise _Refused(f"channels_in {channels} for an input of {self.held_of(inputs[0]).bits} channels")
        weights, groups = self.lce_filter(inputs[1], channels)  # [O, I/G, KH, KW], True for +1
        out_channels = weights.shape[0]
        strides = (int(o["stride_height"]), int(o["stride_width"]))
        dilations = (int(o.get("dilation_height_factor", 1)), int(o.get("dilation_width_factor", 1)))
        pad_values = int(o.get("pad_values", 0))
        if pad_values not in (0, 1):
            raise _Refused(f"pad_values {pad_values} (0 or 1)")
        geometry = self.conv_geometry(inputs[0], weights.shape[2:], strides, dilations, int(o["padding"]))
        geometry.update({"mode": "xnor-popcount", "pad_value": float(pad_values)})
        base = self.tensor_name(outputs[0])
        if groups == 1:
            w_name = self.graph.add_bits(self.fresh(base + "/weights"), list(weights.shape),
                                         np.packbits(weights.astype(np.uint8).ravel()))
            first = ("BinaryConvolution", [self.bits(inputs[0]), w_name], geometry)
        else:
            first = self.grouped_binary_convolution(self.bits(inputs[0]), weights, groups, geometry, base)
        out_type = self.type_of(outputs[0])
        if out_type in (_FLOAT32, _INT8):  # int8: the float result rounded to the grid (steps)
            # LCE clamps the convolution's sum (its fused activation) before the multiplier and the bias.
            then = self.activation(int(o.get("fused_activation_function", 0))) + self.post_activation(
                inputs, base, out_channels)
            self.steps(outputs[0], "nchw", first, then)
        elif out_type == _INT32:
            if pad_values == 0 and any(geometry["pads_begin"] + geometry["pads_end"]):
                raise _Refused("bit-packed output with zero padding (LCE writes it with pad_values 1 or VALID)")
            taps = int(np.prod(weights.shape[1:]))
            self.steps(outputs[0], "nchw", first, self.output_threshold(inputs, base, out_channels, taps),
                       bits=out_channels)
        else:
            raise _Refused(f"output type {self._type_name(outputs[0])} (float32, int8 or bit-packed int32)")

    def lce_filter(self, index: int, channels: int) -> Tuple[np.ndarray, int]:
        """The binary filter as xnorcl's [O, I/G, KH, KW] signs (True for +1) and the group count G, from
        LCE's bit-packed int32 [O, KH, KW, ceil(I/G/32)] words (a grouped filter has fewer words than
        channels_in needs; LCE's groups hold multiples of 32 channels)."""
        value = self.constant(index)
        if value is None:
            raise _Refused("its filter is computed at run time")
        if value.dtype != np.int32 or value.ndim != 4:
            raise _Refused(f"filter {list(value.shape)} of type {self._type_name(index)} (LCE's converter "
                           "writes bit-packed int32 filters)")
        words = -(-channels // 32)
        groups = words // value.shape[3] if value.shape[3] and words % value.shape[3] == 0 else 0
        if groups == 0 or (groups > 1 and (channels % (32 * groups) or value.shape[0] % groups)):
            raise _Refused(f"filter {list(value.shape)} for {channels} input channels")
        plus = ~_unpack_lce_bits(value, channels // groups)
        return np.ascontiguousarray(np.transpose(plus, (0, 3, 1, 2))), groups

    def grouped_binary_convolution(self, source: str, weights: np.ndarray, groups: int,
                                   geometry: Dict[str, Any], base: str) -> Tuple[str, List[str], Dict]:
        """A grouped binary convolution from ungrouped ones: for group g, two convolutions over all channels
        whose weights are the group's on its channels and +1, then -1, on every other channel; the other
        channels (their padded taps included) cancel in the sum, so half of it is the group's own sum. The
        groups' sums are concatenated; the returned step halves them."""
        out_channels, per_group = weights.shape[0], weights.shape[1]
        # Each of the 2G convolutions carries weights over all G groups' channels: 2G times the grouped
        # filter, so a few kilobytes of grouped filter could ask for gigabytes.
        expanded = 2 * out_channels * per_group * groups * int(np.prod(weights.shape[2:]))
        if expanded > MAX_GROUP_EXPANSION_BITS:
            raise _Refused(f"{groups} groups would expand into {expanded} weight bits, more than a conversion "
                           f"makes ({MAX_GROUP_EXPANSION_BITS})")
        rows = out_channels // groups
        sums = []
        for g in range(groups):
            halves = []
            for other in (True, False):
                w = np.full((rows, per_group * groups) + weights.shape[2:], other)
                w[:, g * per_group:(g + 1) * per_group] = weights[g * rows:(g + 1) * rows]
                name = self.graph.add_bits(self.fresh(f"{base}/group{g}/weights"), list(w.shape),
                                           np.packbits(w.astype(np.uint8).ravel()))
                out = self.fresh(f"{base}/group{g}/conv")
                halves.append(self.node(out, "BinaryConvolution", [source, name], out, geometry))
            total = self.fresh(f"{base}/group{g}/sum")
            sums.append(self.node(total, "Add", halves, total))
        joined = self.fresh(base + "/groups")
        self.node(joined, "Concat", sums, joined, {"axis": 1})
        return ("Multiply", [joined, self.f32(base + "/half", np.array([0.5]))], {})

    def post_activation(self, inputs: List[int], base: str, channels: int) -> List[Tuple[str, Any, Dict]]:
        then: List[Tuple[str, Any, Dict]] = []
        for position, op_type, what in ((2, "Multiply", "multiplier"), (3, "Add", "bias")):
            if len(inputs) > position and inputs[position] >= 0:
                value = self.float_constant(inputs[position], f"post-activation {what}")
                name = self.channel_constant(f"{base}/{what}", value, channels)
                then.append((op_type, lambda y, n=name: [y, n], {}))
        return then

    def output_threshold(self, inputs: List[int], base: str, channels: int, taps: int
                         ) -> List[Tuple[str, Any, Dict]]:
        """LCE's bit-packed output sets a channel's bit (-1) where the count of differing bits over the
        window, p, is above the channel's threshold t. xnorcl's BinaryConvolution gives y = K - 2p (K taps,
        pad_value +1 or no padding: the only forms LCE writes with bit-packed output), so the bit is +1 where
        y >= K - 2t, that is y > K - 2t - 1: a FakeQuantize with that input threshold."""
        if len(inputs) <= 4 or inputs[4] < 0:
            raise _Refused("bit-packed output without output thresholds")
        thresholds = self.constant(inputs[4])
        if thresholds is None or thresholds.size != channels:
            raise _Refused("output thresholds are not a per-channel constant")
        level = taps - 2.0 * thresholds.astype(np.float64) - 1.0
        t = self.channel_constant(base + "/threshold", level, channels)
        low, high = self.f32(base + "/minus_one", np.array([-1.0])), self.f32(base + "/plus_one", np.array([1.0]))
        return [("FakeQuantize", lambda y: [y, t, t, low, high], {"levels": 2})]


def convert(source: str, destination: str) -> Dict[str, Any]:
    """Converts the LCE TFLite model `source` into the .xnn file `destination`."""
    try:
        with open(source, "rb") as f:
            data = f.read()
    except OSError as e:
        raise InvalidArgument(f"{source}: cannot read it: {e.strerror}") from None
    try:
        model = tflite.Model.GetRootAsModel(data, 0)
        model.SubgraphsLength()
    except Exception as e:  # the generated accessors raise whatever a truncated buffer gives
        raise InvalidArgument(f"{source}: not a TFLite flatbuffer: {e}") from None
    try:
        conv = _Converter(model, data)
        conv.run()
        refuse_all(conv.report.refused)
        compose_affine_chains(conv.graph, conv.report)
    except InvalidArgument as e:
        raise InvalidArgument(f"{source}: {e}") from None
    except _DAMAGE as e:
        # The generated accessors read whatever offsets a damaged file holds.
        raise InvalidArgument(f"{source}: not a valid TFLite model ({type(e).__name__}: {e})") from None
    try:
        write_checked(conv.graph, destination)
    except InvalidArgument as e:
        raise InvalidArgument(f"{source}: {e}") from None
    return conv.report.as_dict(conv.graph)


# What reading a damaged flatbuffer raises (struct.error for offsets past the end, UnicodeDecodeError for
# names, IndexError, KeyError and TypeError for tables of another shape, MemoryError for a count that claims
# too much, ...): every one is a refusal of the file.
_DAMAGE = (struct.error, ValueError, TypeError, AttributeError, KeyError, IndexError, ZeroDivisionError,
           OverflowError, MemoryError, RecursionError)
