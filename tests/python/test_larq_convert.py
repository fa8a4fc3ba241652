# SPDX-License-Identifier: Apache-2.0
"""Larq Compute Engine TFLite conformance: models written by LCE's own converter from Larq Keras models with
seeded random weights and batch-norm statistics (tests/python/larq_fixtures, made by tools/larq_fixtures.py;
the versions that made them are in MANIFEST.json), converted by xnorcl.convert and run on the device, against
the outputs of LCE's interpreter stored beside each model.

- `test_lce_still_computes_the_stored_outputs` runs LCE's interpreter itself on every fixture and checks that
  it still gives the stored outputs bit for bit (LCE 0.16 needs CPython 3.10-3.12 and numpy < 2, so it lives in
  a virtual environment of its own: XNORCL_LCE_PYTHON names its interpreter; with CI=true it must be set).
- Binary layers feed float outputs here, so a single differing bit shows as an error of 2 * multiplier, far
  above the 1e-4 bound; whole models also keep LCE's top-1.
- Where LCE's default kernel is wrong (SAME zero padding on an input smaller than the kernel: it skips its
  padding correction), xnorcl follows LCE's reference kernel, and the test asserts that the two LCE kernels
  differ there.
- int8 models (int8 bconv outputs, QUANTIZE/DEQUANTIZE, int8 builtin ops, int8 inputs and outputs): xnorcl
  computes in float and rounds to the int8 grid exactly; TFLite's fixed-point kernels may land one step away
  from a value near a rounding tie, and an average of integers meets exact ties. So int8 outputs are checked
  within one step, with few such steps, and the first int8 convolution of QuickNet-Small int8 against the exact
  (double precision) rounding of its integer sums, where LCE's own differences must sit next to a tie (within 0.4% of a step).
- Larq's QuantDense (LceQuantize of a 2-D tensor, LceDequantize, FULLY_CONNECTED with +-1 weights, +-alpha per
  output once LCE folds a batch-norm into them) becomes BinaryFullyConnected on the bits: single layers, binary
  MLPs, convolutions then dense layers, and a binary-kernel Dense after a 4-D sign and a flatten are compared
  with LCE as the other models; a FULLY_CONNECTED whose weights are not binary is computed in float.
- Negative controls: a converter that forgets LCE's bit order, or its padding value, fails the comparison;
  so do int8 rounding to even instead of away from zero, one weight scale for every channel, and dense
  weights packed with LCE's sign convention, in TFLite's flatten order, without the bias or without alpha.
"""

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tflite

import xnorcl

# The package's attribute `convert` is the function; the converter is a module of xnorcl.convert.
lce_converter = importlib.import_module("xnorcl.convert.tflite")

from conftest import convert_damaged, runtime_for

FIXTURES = Path(__file__).parent / "larq_fixtures"
MANIFEST = json.loads((FIXTURES / "MANIFEST.json").read_text())
MODELS = MANIFEST["models"]
REFUSED = {
    "unsupported_cos": ["operator 4 COS", "this op is not supported by xnorcl"],
    "quantdense_3d_unsupported": ["operator 0 LceQuantize", "input [1, 3, 77]", "2-D [N, C]"],
}
# LceQuantize -> LceDequantize on special values (0, -0, subnormals, NaN, infinities): its own test below.
SIGN = "quantize_dequantize_c40"
CONVERTIBLE = [name for name in MODELS if name not in REFUSED]
INT8 = [name for name in CONVERTIBLE if "int8" in name]
INT8_WHOLE = [name for name in INT8 if "quicknet" not in name]  # QuickNet int8: its own test below
COMPARED = [name for name in CONVERTIBLE if name != SIGN and name not in INT8]
REPO = Path(__file__).resolve().parents[2]


def relative_error(got, want):
    return float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))


def lce_truth(name):
    """LCE's outputs for the fixture: its reference kernel's where its default kernel is known wrong."""
    data = np.load(FIXTURES / f"{name}.npz")
    wrong = "default kernel skips its zero-padding correction" in MODELS[name]["covers"]
    return data["inputs"], data["outputs_reference_bconv" if wrong else "outputs"]


def run_converted(path, runtime, inputs):
    """The model on each sample alone; int8 inputs are given as float32 numbers, as the converted model takes
    them."""
    model = xnorcl.load(str(path), runtime=runtime)
    ((name, _),) = model.inputs
    ((output, _),) = model.outputs
    inputs = inputs.astype(np.float32)
    return np.concatenate([model.run({name: inputs[k : k + 1]})[output] for k in range(inputs.shape[0])])


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("larq")
    reports = {}
    for name in CONVERTIBLE:
        reports[name] = xnorcl.convert(str(FIXTURES / f"{name}.tflite"), str(folder / f"{name}.xnn"))
    return folder, reports


def ours_and_lces(converted, runtime, name):
    """(xnorcl's, LCE's) outputs of a fixture converted with nothing refused, of the same shape."""
    folder, reports = converted
    assert reports[name]["refused"] == []
    inputs, want = lce_truth(name)
    got = run_converted(folder / f"{name}.xnn", runtime, inputs)
    assert got.shape == want.shape
    return got, want


@pytest.mark.parametrize("name", COMPARED)
def test_converted_model_matches_lce(converted, runtime, name):
    got, want = ours_and_lces(converted, runtime, name)
    assert relative_error(got, want) <= 1e-4, name
    if want.ndim == 2:
        assert (got.argmax(axis=1) == want.argmax(axis=1)).all()


@pytest.mark.parametrize("name", INT8_WHOLE)
def test_int8_model_matches_lce_within_one_step(converted, runtime, name):
    got, want = ours_and_lces(converted, runtime, name)
    data = np.load(FIXTURES / f"{name}.npz")
    if "int8_output_step" not in data.files:  # int8 layers inside, a float output computed in float
        assert relative_error(got, want) <= 1e-4
        return
    steps = np.abs(got.astype(np.float64) - want) / float(data["int8_output_step"])
    assert steps.max() <= 1 + 1e-3, name
    assert (steps > 0.5).mean() <= 0.1, name
    assert (got.argmax(axis=1) == want.argmax(axis=1)).all()


def test_int8_rounding_half_to_even_fails(tmp_path, monkeypatch):
    # int8_sign's +-1 on a 6/255 grid is 42.5 steps: LCE rounds it away from zero (43), to even it is 42.
    real = lce_converter._Converter.requantize

    def to_even(self, index):
        return [(op, make, {"mode": "half_to_even"} if op == "Round" else attrs)
                for op, make, attrs in real(self, index)]

    monkeypatch.setattr(lce_converter._Converter, "requantize", to_even)
    name = "int8_sign"
    xnorcl.convert(str(FIXTURES / f"{name}.tflite"), str(tmp_path / "even.xnn"))
    inputs, want = lce_truth(name)
    got = run_converted(tmp_path / "even.xnn", runtime_for("global"), inputs)
    assert (np.abs(got - want) > 0.01).mean() > 0.9


def _with_output(buf, tensor):
    """The TFLite model with its single output redirected to `tensor` (the int32 index patched in place)."""
    g = tflite.Model.GetRootAsModel(buf, 0).Subgraphs(0)
    position = g._tab.Vector(g._tab.Offset(8))  # Subgraph.outputs
    patched = bytearray(buf)
    patched[position : position + 4] = np.int32(tensor).tobytes()
    return bytes(patched)


def _exact_first_int8_conv(buf, tensor, inputs):
    """The int8 CONV_2D writing `tensor` (reading the model's QUANTIZE of its input) computed exactly: integer
    sums, the real value in double precision, rounded half away from zero. Returns (int8 numbers, the real
    value before rounding)."""
    m = tflite.Model.GetRootAsModel(buf, 0)
    g = m.Subgraphs(0)
    op = next(g.Operators(k) for k in range(g.OperatorsLength()) if int(g.Operators(k).Outputs(0)) == tensor)
    x_index, w_index, b_index = (int(i) for i in op.InputsAsNumpy())

    def data(index, dtype):
        t = g.Tensors(index)
        return np.frombuffer(m.Buffers(t.Buffer()).DataAsNumpy().tobytes(), dtype).reshape(t.ShapeAsNumpy())

    def grid(index):
        q = g.Tensors(index).Quantization()
        return q.ScaleAsNumpy().astype(np.float64), q.ZeroPointAsNumpy().astype(np.int64)

    (s_x, z_x), (s_w, _), (s_y, z_y) = grid(x_index), grid(w_index), grid(tensor)
    o = tflite.Conv2DOptions()
    o.Init(op.BuiltinOptions().Bytes, op.BuiltinOptions().Pos)
    assert o.Padding() == tflite.Padding.SAME and o.DilationHFactor() == o.DilationWFactor() == 1
    w, b = data(w_index, np.int8).astype(np.int64), data(b_index, np.int32).astype(np.int64)
    ratio = inputs.astype(np.float64) / s_x[0]
    q = np.clip(np.where(ratio >= 0, np.floor(ratio + 0.5), np.ceil(ratio - 0.5)) + z_x[0], -128, 127)
    n, h, width, _ = q.shape
    k, stride = w.shape[1], o.StrideH()
    out_h, out_w = -(-h // stride), -(-width // stride)
    pad_h, pad_w = max((out_h - 1) * stride + k - h, 0), max((out_w - 1) * stride + k - width, 0)
    padded = np.zeros((n, h + pad_h, width + pad_w, q.shape[3]), np.int64)  # padding is the real value 0
    padded[:, pad_h // 2 : pad_h // 2 + h, pad_w // 2 : pad_w // 2 + width] = q - z_x[0]
    sums = np.zeros((n, out_h, out_w, w.shape[0]), np.int64)
    for i in range(out_h):
        for j in range(out_w):
            window = padded[:, i * stride : i * stride + k, j * stride : j * stride + k]
            sums[:, i, j] = np.einsum("nhwc,ohwc->no", window, w) + b
    real = sums * (s_x[0] * s_w) / s_y[0] + z_y[0]
    rounded = np.where(real >= 0, np.floor(real + 0.5), np.ceil(real - 0.5))
    low = z_y[0] if o.FusedActivationFunction() == 1 else -128  # RELU or none, as the fixture has
    assert o.FusedActivationFunction() in (0, 1)
    return np.clip(rounded, low, 127), real


def test_int8_quicknet_converts_whole_and_its_first_int8_convolution_rounds_exactly(converted, runtime,
                                                                                     tmp_path):
    name = "quicknet_small_32_int8"
    folder, reports = converted
    assert reports[name]["refused"] == []
    int8_ops = {"QUANTIZE", "DEQUANTIZE", "CONV_2D", "DEPTHWISE_CONV_2D", "MAX_POOL_2D", "AVERAGE_POOL_2D",
                "FULLY_CONNECTED", "SOFTMAX", "ADD"}
    assert int8_ops <= set(reports[name]["mapped"])
    data = np.load(FIXTURES / f"{name}.npz")
    inputs = data["inputs"]
    # The whole model runs: its int8 SOFTMAX rows hold probabilities on the 1/256 grid.
    probabilities = run_converted(folder / f"{name}.xnn", runtime, inputs)
    assert probabilities.shape == data["outputs"].shape
    assert np.allclose(probabilities.sum(axis=1), 1, atol=0.05)
    assert np.array_equal(probabilities * 256, np.round(probabilities * 256))
    # Its first int8 convolution as a model output: xnorcl's int8 numbers are the exact rounding at every
    # value; LCE's fixed-point kernel is within one step, and only next to a tie.
    got, exact, real, want = _first_int8_conv_of_quicknet(tmp_path, runtime)
    assert got.shape == want.shape == exact.shape
    assert np.array_equal(got, exact)
    differ = got != want
    assert np.abs(got - want).max() <= 1 and differ.mean() <= 0.01
    # Measured: LCE differs at 5 of 4096 values, each within 0.0013 of a step from a tie.
    assert (np.abs(np.abs(real - np.trunc(real)) - 0.5)[differ] < 4e-3).all()


def _first_int8_conv_of_quicknet(tmp_path, runtime):
    """(xnorcl's, the exact, the real value before rounding, LCE's) int8 numbers of QuickNet-Small int8's first
    int8 CONV_2D, made the model's output."""
    name = "quicknet_small_32_int8"
    data = np.load(FIXTURES / f"{name}.npz")
    buf = (FIXTURES / f"{name}.tflite").read_bytes()
    probe = int(data["probe_tensor"])
    (tmp_path / "probe.tflite").write_bytes(_with_output(buf, probe))
    report = xnorcl.convert(str(tmp_path / "probe.tflite"), str(tmp_path / "probe.xnn"))
    assert report["refused"] == []
    got = run_converted(tmp_path / "probe.xnn", runtime, data["inputs"])
    exact, real = _exact_first_int8_conv(buf, probe, data["inputs"])
    return got, exact, real, data["probe_outputs"].astype(np.float64)


def test_int8_weights_with_one_scale_for_every_channel_fail(tmp_path, monkeypatch):
    # The int8 convolutions' weights have one scale per output channel: a converter that reads only the
    # first fails the exact comparison.
    real = lce_converter._Converter.quantization

    def first_scale_only(self, index):
        q = real(self, index)
        return q if q is None else (q[0][:1], q[1][:1], q[2])

    monkeypatch.setattr(lce_converter._Converter, "quantization", first_scale_only)
    got, exact, _, _ = _first_int8_conv_of_quicknet(tmp_path, runtime_for("global"))
    assert (got != exact).mean() > 0.1


def test_sign_and_dequantize_match_lce_but_for_nan_and_negative_subnormals(converted, runtime):
    # LCE's sign is x < 0 -> -1 on x86 with subnormals flushed to zero; xnorcl compares exactly and gives NaN
    # the low level, as OpenVINO's FakeQuantize. Everything else, -0 and 0 included, is bit for bit LCE's.
    folder, reports = converted
    assert reports[SIGN]["mapped"] == {"LceQuantize": 1, "LceDequantize": 1}
    inputs, want = lce_truth(SIGN)
    got = run_converted(folder / f"{SIGN}.xnn", runtime, inputs)
    special = np.isnan(inputs) | ((inputs < 0) & (inputs > -np.finfo(np.float32).tiny))
    assert special.sum() == 4 and (inputs == 0).sum() >= 2  # the fixture holds 0, -0, NaNs, subnormals
    assert np.array_equal(got[~special], want[~special])
    assert (got[special] == -1).all() and (want[special] == 1).all()


def test_names_and_nhwc_layout_are_the_models(converted):
    folder, reports = converted
    report = reports["bconv_3x3_same_pad1_c40"]
    info = MODELS["bconv_3x3_same_pad1_c40"]
    ((name, dims),) = report["inputs"]
    assert list(dims) == info["input_shape"]  # NHWC, as TFLite's interpreter takes it
    model = xnorcl.load(str(folder / "bconv_3x3_same_pad1_c40.xnn"))
    assert [n for n, _ in model.inputs] == [name] and [n for n, _ in model.outputs] == report["outputs"]
    assert list(model.outputs[0][1]) == info["output_shape"][1:] or model.outputs[0][1][1:] == tuple(
        info["output_shape"][1:])  # NHWC out
    assert "LceBconv2d" in report["mapped"] and "LceQuantize" in report["mapped"]


def test_bit_packed_outputs_and_binary_max_pool_are_fused_into_the_convolution(converted):
    _, reports = converted
    for name in ("bconv2_valid_bitpacked", "bmaxpool_3x3_s2_same"):
        assert [b["output"]["type"] for b in MODELS[name]["bconv2d"]].count("INT32") == 1, name
        assert reports[name]["mapped"].get("LceBconv2d") == 2


def test_lce_default_kernel_differs_where_xnorcl_follows_its_reference():
    data = np.load(FIXTURES / "bconv_3x3_same_pad0_2x2_c32.npz")
    assert relative_error(data["outputs"], data["outputs_reference_bconv"]) > 1e-2


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_unsupported_models_are_refused_with_the_list(tmp_path, name):
    destination = tmp_path / "out.xnn"
    with pytest.raises(xnorcl.InvalidArgument) as info:
        xnorcl.convert(str(FIXTURES / f"{name}.tflite"), str(destination))
    message = str(info.value)
    assert "nothing was written" in message
    for part in REFUSED[name]:
        assert part in message
    assert not destination.exists() and list(tmp_path.iterdir()) == []


def test_a_file_that_is_not_a_flatbuffer_is_refused(tmp_path):
    bad = tmp_path / "model.tflite"
    bad.write_bytes(b"\x00" * 3)
    with pytest.raises(xnorcl.InvalidArgument, match="model.tflite"):
        xnorcl.convert(str(bad), str(tmp_path / "out.xnn"))
    assert not (tmp_path / "out.xnn").exists()


@pytest.mark.parametrize("name", ["bconv_1x1_c17", "quantize_dequantize_c40", "quantdense_77_40_10_bn"])
def test_damaged_models_are_refused_as_invalid_argument(tmp_path, name):
    """Bit flips in an LCE model, as the C++ loaders are fuzzed: each damaged file converts or is refused with
    InvalidArgument naming it (never another exception), in a process whose memory is capped at 4 GiB."""
    source = FIXTURES / f"{name}.tflite"
    if not source.exists():
        pytest.skip(f"{source.name} is not among the fixtures")
    converted, refused = convert_damaged([source], tmp_path, seed=7, count=150, most_flips=4, memory_gib=4)
    assert converted + refused == 150 and refused > 0


def test_dequantize_weights_are_built_packed_and_sized_first():
    for channels in (1, 3, 7, 8, 17, 33):
        ones, diagonal = lce_converter._dequantize_weights(channels)
        assert ones.tobytes() == np.packbits(np.ones(channels * channels, np.uint8)).tobytes()
        assert diagonal.tobytes() == np.packbits(np.eye(channels, dtype=np.uint8).ravel()).tobytes()
    # A damaged file's channel count is refused before anything is allocated (was C x C bytes, then two
    # C x C / 8 weights: 580 MB at C = 16000).
    import tracemalloc

    tracemalloc.start()
    with pytest.raises(lce_converter._Refused, match="LceDequantize of 16000 channels"):
        lce_converter._dequantize_weights(16000)
    assert tracemalloc.get_traced_memory()[1] < 1 << 20
    tracemalloc.stop()


# ---- negative controls: the comparison catches a converter that gets LCE's conventions wrong -------------
def test_a_converter_that_ignores_lce_bit_order_fails(tmp_path, monkeypatch):
    monkeypatch.setattr(lce_converter, "_unpack_lce_bits", lambda words, c: ~_real_unpack(words, c))
    name = "bconv_3x3_valid_c64"
    xnorcl.convert(str(FIXTURES / f"{name}.tflite"), str(tmp_path / "wrong.xnn"))
    inputs, want = lce_truth(name)
    assert relative_error(run_converted(tmp_path / "wrong.xnn", runtime_for("global"), inputs), want) > 0.1


def test_a_converter_that_swaps_pad_values_fails(tmp_path, monkeypatch):
    real = lce_converter._Converter.lce_options

    def swapped(self, op):
        options = real(self, op)
        if "pad_values" in options:
            options["pad_values"] = 1 - int(options["pad_values"])
        return options

    monkeypatch.setattr(lce_converter._Converter, "lce_options", swapped)
    name = "bconv_3x3_same_pad0_c17"
    xnorcl.convert(str(FIXTURES / f"{name}.tflite"), str(tmp_path / "wrong.xnn"))
    inputs, want = lce_truth(name)
    assert relative_error(run_converted(tmp_path / "wrong.xnn", runtime_for("global"), inputs), want) > 1e-3


_real_unpack = lce_converter._unpack_lce_bits


# ---- LCE's own interpreter ------------------------------------------------------------------------------------
def test_lce_still_computes_the_stored_outputs():
    python = os.environ.get("XNORCL_LCE_PYTHON")
    if not python:
        if os.environ.get("CI") == "true":
            pytest.fail("XNORCL_LCE_PYTHON is not set: CI runs LCE's interpreter (tools/quickstart.sh test)",
                        pytrace=False)
        pytest.skip("XNORCL_LCE_PYTHON (a Python with larq-compute-engine 0.16 and numpy < 2) is not set")
    result = subprocess.run([python, str(REPO / "tools" / "lce_check_fixtures.py"), str(FIXTURES)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "DIFFERENT" not in result.stdout
    assert result.stdout.count(": same") >= len(MODELS)


def test_a_grouped_convolution_without_its_cancelling_half_fails(tmp_path, monkeypatch):
    # The grouped fixture passes only because each group's two convolutions cancel the other channels.
    real = lce_converter._Converter.grouped_binary_convolution

    def one_half(self, source, weights, groups, geometry, base):
        op, inputs, attrs = real(self, source, weights, groups, geometry, base)
        for node in self.graph.nodes:
            if node.op == "Add" and "/group" in node.outputs[0]:
                node.inputs = [node.inputs[0], node.inputs[0]]  # twice the all-(+1) half
        return op, inputs, attrs

    monkeypatch.setattr(lce_converter._Converter, "grouped_binary_convolution", one_half)
    name = "grouped_bconv_g2"
    xnorcl.convert(str(FIXTURES / f"{name}.tflite"), str(tmp_path / "wrong.xnn"))
    inputs, want = lce_truth(name)
    assert relative_error(run_converted(tmp_path / "wrong.xnn", runtime_for("global"), inputs), want) > 1e-2


def test_node_names_are_the_layers_a_user_recognizes():
    assert lce_converter._readable("sequential/quant_conv2d_3/Conv2D;sequential/batch_normalization_2/x") == \
        "quant_conv2d_3/Conv2D"
    assert lce_converter._readable("quant_conv2d/Conv2D") == "quant_conv2d/Conv2D"
    assert lce_converter._readable("input_1") == "input_1"


# ---- Larq's QuantDense -----------------------------------------------------------------------------------------
# Fixtures whose FULLY_CONNECTEDs all read a binarized tensor or a float one written by a float op.
DENSE = [name for name in CONVERTIBLE if "fully_connected" in MODELS[name] and "quicknet" not in name]


def _graph_of(path):
    """The converted graph (nodes and constants), as the converter builds it before writing."""
    data = Path(path).read_bytes()
    conv = lce_converter._Converter(tflite.Model.GetRootAsModel(data, 0), data)
    conv.run()
    assert conv.report.refused == []
    lce_converter.compose_affine_chains(conv.graph, conv.report)
    return conv.graph, conv.report


@pytest.mark.parametrize("name", DENSE)
def test_binary_dense_layers_become_binary_fully_connected(name):
    fcs = MODELS[name]["fully_connected"]
    binary = sum(fc["weights"] in ("+-1", "+-alpha per output") for fc in fcs)
    graph, report = _graph_of(FIXTURES / f"{name}.tflite")
    ops = [node.op for node in graph.nodes]
    assert len(report.fused) == binary and all("BinaryFullyConnected" in f for f in report.fused)
    assert ops.count("MatMul") == len(fcs) - binary
    if name.startswith("quantdense_float_kernel"):
        # LceDequantize read by a float FULLY_CONNECTED: the +-1 values from two binary products.
        assert binary == 0 and ops.count("BinaryFullyConnected") == 2
    else:
        # The bits feed the binary products; no float +-1 tensor is made for them.
        assert binary > 0 and ops.count("BinaryFullyConnected") == binary
        assert not any("/all_plus" in c for c in graph.constants)


def _fc_weight_position(buf, fc_index=0):
    """(byte offset, [O, K]) of the float weights of the model's fc_index-th FULLY_CONNECTED."""
    m = tflite.Model.GetRootAsModel(buf, 0)
    g = m.Subgraphs(0)
    fcs = [g.Operators(k) for k in range(g.OperatorsLength())
           if m.OperatorCodes(g.Operators(k).OpcodeIndex()).BuiltinCode() == tflite.BuiltinOperator.FULLY_CONNECTED]
    t = g.Tensors(int(fcs[fc_index].Inputs(1)))
    b = m.Buffers(t.Buffer())
    return b._tab.Vector(b._tab.Offset(4)), tuple(t.ShapeAsNumpy())  # Buffer.data


def test_dense_weights_that_are_not_binary_are_computed_in_float(tmp_path, runtime):
    # One weight of QuantDense's +-1 kernel set to 0.5: the op is no binary product any more, and its float
    # form (the dequantized +-1 values times the weights) gives LCE's outputs moved by (0.5 - w) * sign(x).
    name = "quantdense_77_10"
    buf = bytearray((FIXTURES / f"{name}.tflite").read_bytes())
    position, (outputs, k) = _fc_weight_position(bytes(buf))
    row, column = 3, 41
    at = position + 4 * (row * k + column)
    old = float(np.frombuffer(bytes(buf[at : at + 4]), "<f4")[0])
    assert abs(old) == 1
    buf[at : at + 4] = np.float32(0.5).tobytes()
    (tmp_path / "half.tflite").write_bytes(bytes(buf))
    graph, report = _graph_of(tmp_path / "half.tflite")
    assert report.fused == [] and [n.op for n in graph.nodes].count("MatMul") == 1
    assert xnorcl.convert(str(tmp_path / "half.tflite"), str(tmp_path / "half.xnn"))["refused"] == []
    inputs, want = lce_truth(name)
    want = want.astype(np.float64)
    want[:, row] += (0.5 - old) * np.where(inputs[:, column] < 0, -1.0, 1.0)
    got = run_converted(tmp_path / "half.xnn", runtime, inputs)
    assert relative_error(got, want) <= 1e-4


def test_binary_rows_accept_plus_minus_alpha_per_row_only():
    w = np.array([[1, -1, 1], [-0.25, -0.25, 0.25], [0, -0.0, 0]], np.float32)
    alpha, plus = lce_converter._binary_rows(w)
    assert alpha.tolist() == [1, 0.25, 0] and plus.tolist() == [[1, 0, 1], [0, 0, 1], [0, 0, 0]]
    for bad in ([[1, -1, 0.5]], [[1, np.nan, 1]], [[np.inf, -np.inf, np.inf]]):
        assert lce_converter._binary_rows(np.array(bad, np.float32)) is None


_real_binary_rows = lce_converter._binary_rows


def _lce_sign_convention(w):
    alpha, plus = _real_binary_rows(w)
    return alpha, ~plus  # a set bit for -1, as in LCE's own bit-packed tensors


def _no_alpha(w):
    alpha, plus = _real_binary_rows(w)
    return np.ones_like(alpha), plus


@pytest.mark.parametrize("name, target, wrong", [
    ("quantdense_77_10", "_binary_rows", _lce_sign_convention),
    ("quantdense_77_10_bn", "_binary_rows", _no_alpha),
    ("sign_flatten_binary_dense", "_nchw_rows", lambda plus, h, w, c: plus.reshape(-1, c, h, w)),
    ("quantdense_77_10", "fc_bias", lambda self, inputs, base: []),
])
def test_a_dense_converter_that_gets_a_convention_wrong_fails(tmp_path, monkeypatch, name, target, wrong):
    # Each wrong form converts and runs, and the comparison catches it: the bit of +1 (xnorcl's) against -1
    # (LCE's packed tensors), the batch-norm's multiplier folded into the weights, TFLite's NHWC flatten order
    # against the bits' [C, H, W], the bias.
    monkeypatch.setattr(lce_converter._Converter if target == "fc_bias" else lce_converter, target, wrong)
    xnorcl.convert(str(FIXTURES / f"{name}.tflite"), str(tmp_path / "wrong.xnn"))
    inputs, want = lce_truth(name)
    assert relative_error(run_converted(tmp_path / "wrong.xnn", runtime_for("global"), inputs), want) > 1e-2


def test_a_grouped_filter_that_would_expand_past_the_limit_is_refused_first():
    # 16384 groups of 32 channels: 64 KB of LCE filter words, but 2 * 16384 convolutions over all 524288
    # channels would make 1.7e10 weight bits. Refused before anything is allocated (no converter state is
    # needed to get there).
    converter = lce_converter._Converter.__new__(lce_converter._Converter)
    weights = np.ones((16384, 32, 1, 1), bool)
    with pytest.raises(lce_converter._Refused, match="16384 groups would expand into 17179869184 weight bits"):
        converter.grouped_binary_convolution("x", weights, 16384, {}, "b")
