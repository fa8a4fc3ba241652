# SPDX-License-Identifier: Apache-2.0
"""The ONNX converter on models written here with onnx.helper, in the node patterns PyTorch and Brevitas
export (tests/python/test_onnx_fixtures.py takes the real exports), against onnxruntime on the same inputs.

- Random binary convolutions: every binarizer form (Sign, Sign(x - beta_c), Sign(x + c), QONNX BipolarQuant
  with a scale), every pad class (PyTorch's zero padding, Pad of -1, +1 and 0), kernels 1x1 to 7x7, strides,
  dilations, asymmetric and SAME pads, odd channel counts, batch 2, weights +-1 and +-alpha_o, with and
  without bias, on both variants. With +-1 weights and no bias the outputs are integers, compared bit for bit;
  the others within 1e-5 relative (max-norm). onnxruntime has no BipolarQuant: its twin model writes the same
  function with standard ops, Where(x >= 0, s, -s).
- Inputs keep a margin of 1e-2 from every threshold, so that no float lies within rounding of one.
- Special values at a binarization: 0, -0.0, subnormals, NaN and infinities, for Sign and BipolarQuant.
- Dense layers (Gemm, MatMul, a Flatten of binarized maps), training exports (Sign(x) - g + g), weights
  binarized inside the graph, and a small whole network.
- Refusals list every problem at once and write nothing; negative controls (a converter with the other bit
  order, or one that forgets the Pad's value) fail the comparison.
"""

import importlib
import importlib.util
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import xnorcl

from conftest import convert_forgetting_the_pad_value, convert_with_weight_bits_lsb_first, runtime_for

onnx_converter = importlib.import_module("xnorcl.convert.onnx")
with_standard_binarizers = onnx_converter.with_standard_binarizers
QONNX = "qonnx.custom_op.general"
REPO = Path(__file__).resolve().parents[2]
MARGIN = 1e-2


def model_of(nodes, inputs, outputs, initializers, opset=13, domains=()):
    graph = helper.make_graph(
        nodes, "test", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in initializers.items()])
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    return model


def onnxruntime_outputs(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def convert(model, tmp_path, name="model"):
    source, destination = tmp_path / f"{name}.onnx", tmp_path / f"{name}.xnn"
    onnx.save(model, str(source))
    report = xnorcl.convert(str(source), str(destination))
    return destination, report


def relative_error(got, want):
    return float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))


def away_from(threshold, shape, rng):
    """Values at least MARGIN from the threshold (broadcast), on both sides."""
    magnitude = rng.uniform(MARGIN, 2.0, shape).astype(np.float32)
    return (np.where(rng.random(shape) < 0.5, -magnitude, magnitude) + threshold).astype(np.float32)


# ---- random binary convolutions ------------------------------------------------------------------------------
def random_binary_conv(seed):
    """(model, input, exact, description) of one random binarizer + pad + binary Conv."""
    rng = np.random.default_rng(seed)
    n = int(rng.choice([1, 2]))
    c, o = int(rng.choice([1, 3, 5, 17, 33, 40])), int(rng.choice([1, 7, 16, 33]))
    kh, kw = (int(k) for k in rng.choice([1, 2, 3, 5, 7], 2)) if rng.random() < 0.3 else (int(rng.choice([1, 3, 5, 7])),) * 2
    sh, sw = (int(s) for s in rng.choice([1, 2, 3], 2))
    dh, dw = (int(d) for d in rng.choice([1, 1, 2], 2))
    h, w = (int(rng.integers(max(k * d, 3), max(k * d, 3) + 7)) for k, d in ((kh, dh), (kw, dw)))
    binarizer = str(rng.choice(["sign", "rsign", "sign_plus", "bipolar"]))
    pad_class = str(rng.choice(["zeros", "zeros", "minus_one", "plus_one", "pad_zero"]))
    alpha_weights, with_bias = bool(rng.random() < 0.4), bool(rng.random() < 0.4)
    level = float(rng.choice([0.5, 1.0, 3.0])) if binarizer == "bipolar" else 1.0

    inits, nodes, domains = {}, [], ()
    threshold = np.zeros((1, c, 1, 1), np.float32)
    if binarizer == "rsign":
        threshold = rng.normal(0, 0.5, (1, c, 1, 1)).astype(np.float32)
        inits["beta"] = threshold
        nodes.append(helper.make_node("Sub", ["x", "beta"], ["shifted"], name="rsign.shift"))
        nodes.append(helper.make_node("Sign", ["shifted"], ["bits"], name="rsign"))
    elif binarizer == "sign_plus":
        threshold = np.float32(rng.normal(0, 0.5))
        inits["c"] = np.array(-threshold, np.float32)
        nodes.append(helper.make_node("Add", ["x", "c"], ["shifted"], name="shift"))
        nodes.append(helper.make_node("Sign", ["shifted"], ["bits"], name="sign"))
    elif binarizer == "sign":
        nodes.append(helper.make_node("Sign", ["x"], ["bits"], name="sign"))
    else:
        inits["scale"] = np.array(level, np.float32)
        nodes.append(helper.make_node("BipolarQuant", ["x", "scale"], ["bits"], name="quant", domain=QONNX))
        domains = (QONNX,)

    conv_in, attrs = "bits", {"strides": [sh, sw], "dilations": [dh, dw], "kernel_shape": [kh, kw]}
    if pad_class == "zeros":
        if rng.random() < 0.6:
            attrs["auto_pad"] = str(rng.choice(["SAME_UPPER", "SAME_LOWER", "VALID"]))
            if attrs["auto_pad"] != "VALID":  # onnxruntime computes SAME pads without dilation only
                dh = dw = 1
                attrs["dilations"] = [1, 1]
        else:
            attrs["pads"] = [int(p) for p in rng.integers(0, max(kh, kw), 4)]
    else:
        value = {"minus_one": -level, "plus_one": level, "pad_zero": 0.0}[pad_class]
        pads = [int(p) for p in rng.integers(0, 3, 4)]
        inits["pads"] = np.array([0, 0, pads[0], pads[1], 0, 0, pads[2], pads[3]], np.int64)
        inits["pad_value"] = np.array(value, np.float32)
        nodes.append(helper.make_node("Pad", ["bits", "pads", "pad_value"], ["padded"], mode="constant", name="pad"))
        conv_in = "padded"
    weights = np.where(rng.random((o, c, kh, kw)) < 0.5, -1.0, 1.0).astype(np.float32)
    if alpha_weights:
        weights *= rng.uniform(0.1, 2.0, (o, 1, 1, 1)).astype(np.float32) * rng.choice([-1, 1], (o, 1, 1, 1))
    inits["w"] = weights
    conv_inputs = [conv_in, "w"]
    if with_bias:
        inits["b"] = rng.normal(0, 3, o).astype(np.float32)
        conv_inputs.append("b")
    nodes.append(helper.make_node("Conv", conv_inputs, ["y"], name="conv", **attrs))
    model = model_of(nodes, [("x", [n, c, h, w])], [("y", None)], inits, domains=domains)
    # The output's shape, by onnx's inference on the standard twin (onnx knows no BipolarQuant).
    inferred = onnx.shape_inference.infer_shapes(with_standard_binarizers(model))
    model.graph.output[0].CopyFrom(next(v for v in inferred.graph.output if v.name == "y"))
    x = away_from(threshold, (n, c, h, w), rng)
    exact = not alpha_weights and not with_bias and level == 1.0
    what = (f"seed {seed}: {binarizer} {pad_class} N{n} C{c} O{o} k{kh}x{kw} s{sh}x{sw} d{dh}x{dw} {h}x{w} "
            f"{attrs.get('auto_pad', attrs.get('pads', ''))} alpha={alpha_weights} bias={with_bias}")
    return model, x, exact, what


@pytest.mark.parametrize("seed", range(48))
def test_random_binary_convolutions_equal_onnxruntime(seed, tmp_path):
    model, x, exact, what = random_binary_conv(seed)
    destination, report = convert(model, tmp_path)
    assert report["mapped"].get("Conv -> BinaryConvolution") == 1, (what, report)
    assert not any(k.startswith("Sub") or k.startswith("Add ->") for k in report["mapped"]), (what, report)
    want = onnxruntime_outputs(with_standard_binarizers(model), {"x": x})[0]
    for variant in ("local", "global"):
        got = xnorcl.load(str(destination), runtime=runtime_for(variant)).run(x)
        assert got.shape == want.shape, what
        if exact:
            assert np.array_equal(got, want), (variant, what, np.argwhere(got != want)[:5])
        else:
            assert relative_error(got, want) <= 1e-5, (variant, what, relative_error(got, want))


# ---- binarizations at special values -------------------------------------------------------------------------
SPECIAL = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-39, -1e-39, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.5], np.float32)


def one_tap_model(binarizer):
    """The binarized value of each input element, through a 1x1 binary convolution of weight +1."""
    nodes, inits, domains = [], {"w": np.ones((1, 1, 1, 1), np.float32)}, ()
    if binarizer == "bipolar":
        inits["scale"] = np.array(1.0, np.float32)
        nodes.append(helper.make_node("BipolarQuant", ["x", "scale"], ["bits"], domain=QONNX))
        domains = (QONNX,)
    else:
        nodes.append(helper.make_node("Sign", ["x"], ["bits"]))
    nodes.append(helper.make_node("Conv", ["bits", "w"], ["y"], kernel_shape=[1, 1]))
    shape = [1, 1, 1, SPECIAL.size]
    return model_of(nodes, [("x", shape)], [("y", shape)], inits, domains=domains)


@pytest.mark.parametrize("variant", ["local", "global"])
def test_bipolar_quant_special_values_follow_qonnx(variant, tmp_path):
    destination, _ = convert(one_tap_model("bipolar"), tmp_path)
    got = xnorcl.load(str(destination), runtime=runtime_for(variant)).run(SPECIAL.reshape(1, 1, 1, -1)).ravel()
    # QONNX: x >= 0 is +1 (0 and -0.0 included), NaN and everything below 0 -1; subnormals keep their sign.
    want = np.where(SPECIAL >= 0, 1.0, -1.0)
    assert got.tolist() == want.tolist()
    twin = onnxruntime_outputs(with_standard_binarizers(one_tap_model("bipolar")), {"x": SPECIAL.reshape(1, 1, 1, -1)})
    assert twin[0].ravel().tolist() == want.tolist()


@pytest.mark.parametrize("variant", ["local", "global"])
def test_sign_special_values_where_a_bit_can_hold_them(variant, tmp_path):
    destination, _ = convert(one_tap_model("sign"), tmp_path)
    x = SPECIAL.reshape(1, 1, 1, -1)
    got = xnorcl.load(str(destination), runtime=runtime_for(variant)).run(x).ravel()
    want = onnxruntime_outputs(one_tap_model("sign"), {"x": x})[0].ravel()
    # ONNX's Sign(0) = 0 (and NaN for NaN) has no bit: xnorcl's bit for them is -1; elsewhere the same signs.
    holds = (SPECIAL != 0) & ~np.isnan(SPECIAL)
    assert got[holds].tolist() == want[holds].tolist()
    assert got[~holds].tolist() == [-1.0] * int((~holds).sum())
    assert want[SPECIAL == 0].tolist() == [0.0, 0.0]


# ---- dense layers --------------------------------------------------------------------------------------------
def dense_model(kind, rng, n=2, k=77, m=10):
    inits = {}
    w = np.where(rng.random((m, k)) < 0.5, -1.0, 1.0).astype(np.float32)
    alpha = rng.uniform(0.2, 2.0, (m, 1)).astype(np.float32)
    if kind == "gemm":
        inits.update(w=w * alpha, b=rng.normal(size=m).astype(np.float32))
        dense = helper.make_node("Gemm", ["bits", "w", "b"], ["y"], transB=1, alpha=0.5, beta=2.0)
        x_shape, flat = [n, k], []
    elif kind == "matmul":
        inits.update(w=(w * alpha).T.copy())
        dense = helper.make_node("MatMul", ["bits", "w"], ["y"])
        x_shape, flat = [n, k], []
    else:  # a Flatten of binarized feature maps, then a Gemm: FINN's and Bolt's classifiers
        c, hw = 5, 3
        w = np.where(rng.random((m, c * hw * hw)) < 0.5, -1.0, 1.0).astype(np.float32)
        inits.update(w=w.T.copy())
        dense = helper.make_node("Gemm", ["flat", "w"], ["y"])
        x_shape, flat = [n, c, hw, hw], [helper.make_node("Flatten", ["bits"], ["flat"], axis=1)]
    nodes = [helper.make_node("Sign", ["x"], ["bits"])] + flat + [dense]
    return model_of(nodes, [("x", x_shape)], [("y", [n, m])], inits), away_from(0, tuple(x_shape), rng)


@pytest.mark.parametrize("kind", ["gemm", "matmul", "flatten"])
def test_binary_dense_layers_equal_onnxruntime(kind, tmp_path):
    model, x = dense_model(kind, np.random.default_rng(len(kind)))
    destination, report = convert(model, tmp_path)
    assert any(key.endswith("-> BinaryFullyConnected") for key in report["mapped"]), report
    want = onnxruntime_outputs(model, {"x": x})[0]
    for variant in ("local", "global"):
        got = xnorcl.load(str(destination), runtime=runtime_for(variant)).run(x)
        if kind == "flatten":  # +-1 weights, no scale: integer sums
            assert np.array_equal(got, want)
        else:
            assert relative_error(got, want) <= 1e-5


# ---- training exports and weights binarized in the graph -----------------------------------------------------
def bireal_approx_sign(x, out):
    """The nodes torch.onnx.export writes for Bi-Real's ApproxSign (sign(x) - p(x) + p(x), p piecewise)."""
    def const(name, value):
        return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(value, np.float32)))

    n = []
    n += [helper.make_node("Sign", [x], [out + "/sign"]), const(out + "/m1", -1.0), const(out + "/zero", 0.0),
          const(out + "/one", 1.0), const(out + "/two", 2.0)]
    for i, edge in enumerate(("/m1", "/zero", "/one")):
        n += [helper.make_node("Less", [x, out + edge], [out + f"/mask{i}"]),
              helper.make_node("Cast", [out + f"/mask{i}"], [out + f"/maskf{i}"], to=TensorProto.FLOAT),
              helper.make_node("Sub", [out + "/one", out + f"/maskf{i}"], [out + f"/inv{i}"])]
    n += [helper.make_node("Mul", [x, x], [out + "/sq"]), helper.make_node("Mul", [out + "/two", x], [out + "/2x"]),
          helper.make_node("Add", [out + "/sq", out + "/2x"], [out + "/up"]),
          helper.make_node("Neg", [out + "/sq"], [out + "/nsq"]),
          helper.make_node("Add", [out + "/nsq", out + "/2x"], [out + "/down"]),
          helper.make_node("Mul", [out + "/m1", out + "/maskf0"], [out + "/a0"]),
          helper.make_node("Mul", [out + "/up", out + "/inv0"], [out + "/b0"]),
          helper.make_node("Add", [out + "/a0", out + "/b0"], [out + "/o1"]),
          helper.make_node("Mul", [out + "/o1", out + "/maskf1"], [out + "/a1"]),
          helper.make_node("Mul", [out + "/down", out + "/inv1"], [out + "/b1"]),
          helper.make_node("Add", [out + "/a1", out + "/b1"], [out + "/o2"]),
          helper.make_node("Mul", [out + "/o2", out + "/maskf2"], [out + "/a2"]),
          helper.make_node("Mul", [out + "/one", out + "/inv2"], [out + "/b2"]),
          helper.make_node("Add", [out + "/a2", out + "/b2"], [out + "/o3"]),
          helper.make_node("Sub", [out + "/sign", out + "/o3"], [out + "/diff"]),
          helper.make_node("Add", [out + "/diff", out + "/o3"], [out])]
    return n


def clipped_ste(x, out):
    """sign(x).detach() - clamp(x, -1, 1).detach() + clamp(x, -1, 1): two Clip nodes of the same input."""
    lo, hi = out + "/lo", out + "/hi"
    return [helper.make_node("Constant", [], [lo], value=numpy_helper.from_array(np.array(-1, np.float32))),
            helper.make_node("Constant", [], [hi], value=numpy_helper.from_array(np.array(1, np.float32))),
            helper.make_node("Sign", [x], [out + "/sign"]),
            helper.make_node("Clip", [x, lo, hi], [out + "/clip_a"]),
            helper.make_node("Sub", [out + "/sign", out + "/clip_a"], [out + "/diff"]),
            helper.make_node("Clip", [x, lo, hi], [out + "/clip_b"]),
            helper.make_node("Add", [out + "/diff", out + "/clip_b"], [out])]


@pytest.mark.parametrize("form", ["bireal", "clipped"])
def test_straight_through_training_exports_are_their_sign(form, tmp_path):
    rng = np.random.default_rng(3)
    c, o, hw = 6, 8, 7
    nodes = (bireal_approx_sign if form == "bireal" else clipped_ste)("x", "bits")
    nodes.append(helper.make_node("Conv", ["bits", "w"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    w = np.where(rng.random((o, c, 3, 3)) < 0.5, -1.0, 1.0).astype(np.float32)
    model = model_of(nodes, [("x", [1, c, hw, hw])], [("y", [1, o, hw, hw])], {"w": w})
    destination, report = convert(model, tmp_path)
    assert any("straight-through" in line for line in report["fused"]), report
    assert set(report["mapped"]) == {"Sign -> FakeQuantize", "Conv -> BinaryConvolution"}, report
    x = away_from(0, (1, c, hw, hw), rng)
    want = onnxruntime_outputs(model, {"x": x})[0]
    got = xnorcl.load(str(destination), runtime=runtime_for("global")).run(x)
    # onnxruntime adds and subtracts g in float: within rounding of the +-1 the bits stand for.
    assert relative_error(got, want) <= 1e-5


def test_a_training_form_with_another_g_is_refused_naming_the_node(tmp_path):
    nodes = clipped_ste("x", "bits")
    nodes[5] = helper.make_node("Clip", ["x", "bits/lo"], ["bits/clip_b"])  # clamp(x, -1) is not clamp(x, -1, 1)
    nodes.append(helper.make_node("Conv", ["bits", "w"], ["y"], kernel_shape=[1, 1]))
    model = model_of(nodes, [("x", [1, 2, 3, 3])], [("y", [1, 2, 3, 3])], {"w": np.ones((2, 2, 1, 1), np.float32)})
    with pytest.raises(xnorcl.InvalidArgument) as info:
        convert(model, tmp_path)
    message = str(info.value)
    assert "node 'bits/diff' (Sub): it reads the binarized output of node 'bits/sign' (Sign)" in message
    assert "export the inference form (torch.sign(x))" in message
    assert not (tmp_path / "model.xnn").exists()


def test_weights_binarized_inside_the_graph_are_folded(tmp_path):
    """XNOR-Net's alpha_o * Sign(W), written as Mul(ReduceMean(Abs(W)), Sign(W)) on a float parameter."""
    rng = np.random.default_rng(5)
    c, o, hw = 9, 12, 6
    real = rng.normal(size=(o, c, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Abs", ["W"], ["absw"]),
             helper.make_node("ReduceMean", ["absw"], ["alpha"], axes=[1, 2, 3], keepdims=1),
             helper.make_node("Sign", ["W"], ["signw"]),
             helper.make_node("Mul", ["alpha", "signw"], ["wb"]),
             helper.make_node("Sign", ["x"], ["bits"]),
             helper.make_node("Conv", ["bits", "wb"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])]
    model = model_of(nodes, [("x", [2, c, hw, hw])], [("y", [2, o, 3, 3])], {"W": real})
    destination, report = convert(model, tmp_path)
    assert report["folded"] == 4 and report["mapped"]["Conv -> BinaryConvolution"] == 1, report
    x = away_from(0, (2, c, hw, hw), rng)
    want = onnxruntime_outputs(model, {"x": x})[0]
    for variant in ("local", "global"):
        assert relative_error(xnorcl.load(str(destination), runtime=runtime_for(variant)).run(x), want) <= 1e-5


# ---- a small whole network -----------------------------------------------------------------------------------
def small_network(rng):
    """Float stem, max-pool, two Bi-Real blocks (RSign, binary conv, batch-norm, residual, RPReLU), an
    average-pool + 1x1 downsampling block, global pooling, a classifier and a softmax: NCHW [1, 3, 16, 16]."""
    inits, nodes = {}, []

    def param(name, value):
        inits[name] = np.asarray(value, np.float32)
        return name

    def batch_norm(x, out, c):
        nodes.append(helper.make_node(
            "BatchNormalization",
            [x, param(out + ".g", rng.uniform(0.5, 1.5, c) * rng.choice([-1, 1, 1], c)),
             param(out + ".b", rng.normal(0, 0.2, c)), param(out + ".m", rng.normal(0, 0.2, c)),
             param(out + ".v", rng.uniform(0.5, 2, c))], [out], epsilon=1e-5))

    def binary_block(x, out, c_in, c_out, stride):
        nodes.append(helper.make_node("Sub", [x, param(out + ".beta", rng.normal(0, 0.1, (1, c_in, 1, 1)))],
                                      [out + ".shifted"]))
        nodes.append(helper.make_node("Sign", [out + ".shifted"], [out + ".bits"]))
        w = np.where(rng.random((c_out, c_in, 3, 3)) < 0.5, -1.0, 1.0) * rng.uniform(0.01, 0.05, (c_out, 1, 1, 1))
        nodes.append(helper.make_node("Conv", [out + ".bits", param(out + ".w", w)], [out + ".conv"],
                                      kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[stride, stride]))
        batch_norm(out + ".conv", out + ".bn", c_out)
        shortcut = x
        if stride != 1 or c_in != c_out:
            nodes.append(helper.make_node("AveragePool", [x], [out + ".pool"], kernel_shape=[2, 2], strides=[2, 2]))
            nodes.append(helper.make_node("Conv", [out + ".pool", param(out + ".down", rng.normal(0, 0.3, (c_out, c_in, 1, 1)))],
                                          [out + ".down_conv"], kernel_shape=[1, 1]))
            batch_norm(out + ".down_conv", out + ".down_bn", c_out)
            shortcut = out + ".down_bn"
        nodes.append(helper.make_node("Add", [out + ".bn", shortcut], [out + ".sum"]))
        # RPReLU: PReLU(x - gamma_c) + zeta_c
        nodes.append(helper.make_node("Sub", [out + ".sum", param(out + ".gamma", rng.normal(0, 0.1, (1, c_out, 1, 1)))],
                                      [out + ".moved"]))
        nodes.append(helper.make_node("PRelu", [out + ".moved", param(out + ".slope", rng.uniform(0.1, 0.3, (c_out, 1, 1)))],
                                      [out + ".prelu"]))
        nodes.append(helper.make_node("Add", [out + ".prelu", param(out + ".zeta", rng.normal(0, 0.1, (1, c_out, 1, 1)))],
                                      [out]))

    nodes.append(helper.make_node("Conv", ["image", param("stem.w", rng.normal(0, 0.3, (16, 3, 3, 3))),
                                           param("stem.bias", rng.normal(0, 0.1, 16))],
                                  ["stem"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    batch_norm("stem", "stem.bn", 16)
    nodes.append(helper.make_node("Relu", ["stem.bn"], ["stem.relu"]))
    nodes.append(helper.make_node("MaxPool", ["stem.relu"], ["stem.pool"], kernel_shape=[3, 3], strides=[2, 2],
                                  pads=[1, 1, 1, 1]))
    binary_block("stem.pool", "block1", 16, 16, 1)
    binary_block("block1", "block2", 16, 32, 2)
    nodes.append(helper.make_node("GlobalAveragePool", ["block2"], ["gap"]))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], axis=1))
    nodes.append(helper.make_node("Gemm", ["flat", param("fc.w", rng.normal(0, 0.5, (10, 32))),
                                           param("fc.b", rng.normal(0, 0.1, 10))], ["logits"], transB=1))
    nodes.append(helper.make_node("Softmax", ["logits"], ["probabilities"], axis=1))
    return model_of(nodes, [("image", [1, 3, 16, 16])], [("probabilities", [1, 10])], inits)


def margin_at_binarizations(model, x):
    """The smallest |input - threshold| of every Sign in the model, by onnxruntime."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    signs = [node for node in probe.graph.node if node.op_type == "Sign"]
    probe.graph.output.extend(helper.make_tensor_value_info(s.input[0], TensorProto.FLOAT, None) for s in signs)
    values = onnxruntime_outputs(probe, {"image": x})[1:]
    return min(float(np.min(np.abs(v))) for v in values)


def test_a_small_bireal_network_equals_onnxruntime(tmp_path):
    rng = np.random.default_rng(11)
    model = small_network(rng)
    destination, report = convert(model, tmp_path)
    assert report["mapped"]["Conv -> BinaryConvolution"] == 2 and report["outputs"] == ["probabilities"]
    assert report["inputs"] == [("image", (1, 3, 16, 16))]
    checked = 0
    for _ in range(20):
        x = rng.normal(size=(1, 3, 16, 16)).astype(np.float32)
        if margin_at_binarizations(model, x) < 1e-4:
            continue  # a value within rounding of a threshold: its bit may differ on any other engine
        want = onnxruntime_outputs(model, {"image": x})[0]
        for variant in ("local", "global"):
            got = xnorcl.load(str(destination), runtime=runtime_for(variant)).run({"image": x})["probabilities"]
            assert relative_error(got, want) <= 1e-4
            assert np.argmax(got) == np.argmax(want)
        checked += 1
    assert checked >= 10


# ---- refusals and negative controls --------------------------------------------------------------------------
def test_refusals_list_every_problem_and_write_nothing(tmp_path):
    rng = np.random.default_rng(2)
    nodes = [helper.make_node("Sign", ["x"], ["bits"], name="sign"),
             helper.make_node("Mul", ["bits", "k"], ["scaled"], name="scale_the_sign"),
             helper.make_node("Conv", ["bits", "wf"], ["conv"], kernel_shape=[1, 1], name="float_weights"),
             helper.make_node("Cos", ["x"], ["cos"], name="cosine"),
             helper.make_node("Add", ["scaled", "conv"], ["sum"], name="sum"),
             helper.make_node("Add", ["sum", "cos"], ["y"], name="out")]
    inits = {"k": np.float32(0.5), "wf": rng.normal(size=(2, 2, 1, 1)).astype(np.float32)}
    model = model_of(nodes, [("x", [1, 2, 3, 3])], [("y", [1, 2, 3, 3]), ("bits", [1, 2, 3, 3])], inits)
    with pytest.raises(xnorcl.InvalidArgument) as info:
        convert(model, tmp_path)
    message = str(info.value)
    assert "cannot convert this model (4 unsupported ops or attributes); nothing was written" in message
    assert "node 'scale_the_sign' (Mul): it reads the binarized output of node 'sign' (Sign) as float" in message
    assert "node 'float_weights' (Conv): it reads binarized activations but its weights are not +-alpha" in message
    assert "node 'cosine' (Cos): this op is not supported by xnorcl" in message
    assert "output 'bits' is a binarized tensor" in message
    assert list(tmp_path.glob("*.xnn")) == [] and list(tmp_path.glob("*.xnn*")) == []


def test_unused_unsupported_nodes_refuse_nothing(tmp_path):
    nodes = [helper.make_node("Cos", ["x"], ["unused"]), helper.make_node("Relu", ["x"], ["y"])]
    destination, report = convert(model_of(nodes, [("x", [1, 4])], [("y", [1, 4])], {}), tmp_path)
    assert report["mapped"] == {"Relu -> Relu": 1} and report["refused"] == [], report
    x = np.array([[-1.5, 0.0, 2.0, -0.25]], np.float32)
    assert xnorcl.load(str(destination), runtime=runtime_for("global")).run(x).tolist() == [[0.0, 0.0, 2.0, 0.0]]


def test_damaged_and_foreign_files_are_refused_naming_them(tmp_path):
    path = tmp_path / "broken.onnx"
    path.write_bytes(b"\x08\x07garbage that is not a protobuf of a model")
    with pytest.raises(xnorcl.InvalidArgument, match=r"broken\.onnx: onnx cannot read it"):
        xnorcl.convert(str(path), str(tmp_path / "out.xnn"))
    dynamic = model_of([helper.make_node("Relu", ["x"], ["y"])], [("x", ["batch", 4])], [("y", ["batch", 4])], {})
    with pytest.raises(xnorcl.InvalidArgument, match=r"input 'x' has no static shape .*export with a fixed input"):
        convert(dynamic, tmp_path, "dynamic")


@pytest.mark.parametrize("form", ["ConstantOfShape", "Expand", "Tile", "Range"])
def test_a_constant_claiming_gigabytes_is_refused_not_folded(tmp_path, form):
    """A few hundred bytes can ask for a 2^28-element constant (then reduced to one number): the converter
    refuses it, naming the node and the size, before onnx's shape inference or the folding computes it."""
    n = 16384 * 16384
    scalar = [numpy_helper.from_array(np.ones((1, 1, 1, 1), np.float32), "one")]
    if form == "ConstantOfShape":
        big = helper.make_node("ConstantOfShape", ["shape"], ["big"],
                               value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]))
        initializers = [numpy_helper.from_array(np.array([16384, 16384, 1, 1], np.int64), "shape")]
    elif form == "Expand":
        big = helper.make_node("Expand", ["one", "shape"], ["big"])
        initializers = scalar + [numpy_helper.from_array(np.array([16384, 16384, 1, 1], np.int64), "shape")]
    elif form == "Tile":
        big = helper.make_node("Tile", ["one", "repeats"], ["big"])
        initializers = scalar + [numpy_helper.from_array(np.array([16384, 16384, 1, 1], np.int64), "repeats")]
    else:
        big = helper.make_node("Range", ["start", "limit", "delta"], ["big"])
        initializers = [numpy_helper.from_array(np.array(v, np.float32), name)
                        for v, name in ((0.0, "start"), (float(n), "limit"), (1.0, "delta"))]
    axes = [0] if form == "Range" else [0, 1, 2, 3]
    graph = helper.make_graph(
        [big, helper.make_node("ReduceMean", ["big"], ["mean"], axes=axes, keepdims=0),
         helper.make_node("Add", ["x", "mean"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 8, 8])], initializers)
    model = tmp_path / "claim.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(model))
    # The bound comes before shape inference, whose data propagation would compute the constant itself.
    with pytest.raises(xnorcl.InvalidArgument, match=rf"big: its constant result would have {n} elements"):
        xnorcl.convert(str(model), str(tmp_path / "claim.xnn"))
    assert not (tmp_path / "claim.xnn").exists()


def test_negative_controls_bite(tmp_path, monkeypatch):
    """A converter that writes the weights' bits in the other order within each byte, or forgets the Pad's
    value, must fail the comparison with onnxruntime that the tests above make."""
    rng = np.random.default_rng(9)
    c, o, hw = 8, 4, 5
    nodes = [helper.make_node("Sign", ["x"], ["bits"]),
             helper.make_node("Pad", ["bits", "pads", "v"], ["padded"], mode="constant"),
             helper.make_node("Conv", ["padded", "w"], ["y"], kernel_shape=[3, 3])]
    inits = {"pads": np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "v": np.float32(-1.0),
             "w": np.where(rng.random((o, c, 3, 3)) < 0.5, -1.0, 1.0).astype(np.float32)}
    model = model_of(nodes, [("x", [1, c, hw, hw])], [("y", [1, o, hw, hw])], inits)
    x = away_from(0, (1, c, hw, hw), rng)
    want = onnxruntime_outputs(model, {"x": x})[0]

    def run(name):
        destination, _ = convert(model, tmp_path, name)
        return xnorcl.load(str(destination), runtime=runtime_for("global")).run(x)

    assert np.array_equal(run("right"), want)
    with monkeypatch.context() as m:
        convert_with_weight_bits_lsb_first(m)
        assert not np.array_equal(run("lsb_first"), want)
    with monkeypatch.context() as m:
        convert_forgetting_the_pad_value(m)
        assert not np.array_equal(run("zero_pad"), want)


def test_the_comparison_tool_converts_its_bireal18_and_agrees_with_onnxruntime(capsys):
    """tools/compare_onnx.py at a small size: the whole Bi-Real Net-18 in PyTorch's export form converts, and
    xnorcl and onnxruntime agree on it (exit 0 only when top-1 agrees or a value sits at a threshold)."""
    spec = importlib.util.spec_from_file_location("compare_onnx", REPO / "tools" / "compare_onnx.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.main(["--network", "bireal18", "--resolution", "48", "--runs", "2"]) == 0
    row = capsys.readouterr().out.splitlines()[2].split()
    assert row[:2] == ["bireal18", "48"] and row[7] == "same", row
    assert float(row[6]) <= 1e-4 or int(row[8]) > 0, row
