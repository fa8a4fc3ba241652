# SPDX-License-Identifier: Apache-2.0
"""tools/compare_openvino.py writes xnorcl's networks as OpenVINO IRs of the same values: binary convolutions in
FakeQuantize + Convolution form with {0, 1} signs and an affine correction for the pad value. OpenVINO's CPU
plugin runs them through its BinaryConvolution; its outputs must equal xnorcl's host reference."""

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

import xnorcl

try:
    import openvino as ov
except ImportError as e:  # pragma: no cover - CI installs openvino
    if os.environ.get("CI") == "true":
        pytest.fail(f"openvino is not importable ({e}); CI installs it (pip install openvino)", pytrace=False)
    pytest.skip(f"openvino is not installed: {e}", allow_module_level=True)

from xnorcl.convert import xnn

TOOL = Path(__file__).resolve().parents[2] / "tools" / "compare_openvino.py"
spec = importlib.util.spec_from_file_location("compare_openvino", TOOL)
compare_openvino = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare_openvino)


def openvino_output(path: str, inputs):
    ir = compare_openvino.to_openvino(compare_openvino.read_xnn(path))
    compiled = ov.Core().compile_model(ir, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    runtime_ops = {op.get_rt_info()["layerType"].astype(str) for op in compiled.get_runtime_model().get_ordered_ops()}
    return np.asarray(compiled(inputs)[0]), runtime_ops


@pytest.mark.parametrize("pad_value", [0.0, -1.0, 0.5])
@pytest.mark.parametrize("stride", [1, 2])
def test_a_binary_convolution_is_exact_for_every_pad_value(tmp_path, pad_value, stride):
    rng = np.random.default_rng(int(20 + pad_value * 10) + stride)
    g = xnn.Graph()
    # Input channels a multiple of 8: with 19, OpenVINO 2026.4's CPU BinaryConvolution computes other values
    # than its IR states (the IR's own arithmetic, done with a float convolution, equals the reference).
    c, o, h = 24, 9, 11
    g.inputs.append(("input", (2, c, h, h)))
    g.add_f32("t", rng.uniform(-0.3, 0.3, (1, c, 1, 1)).astype(np.float32))
    g.add_f32("lo", np.array([-1.0], np.float32))
    g.add_f32("hi", np.array([1.0], np.float32))
    g.nodes.append(xnn.Node("sign", "FakeQuantize", ["input", "t", "t", "lo", "hi"], ["bits"], {"levels": 2}))
    g.add_bits("w", (o, c, 3, 3), rng.integers(0, 256, (o * c * 9 + 7) // 8, dtype=np.uint8))
    g.nodes.append(
        xnn.Node("conv", "BinaryConvolution", ["bits", "w"], ["y"],
                 {"strides": [stride, stride], "pads_begin": [1, 1], "pads_end": [1, 1], "dilations": [1, 1],
                  "mode": "xnor-popcount", "pad_value": pad_value}))
    g.outputs = ["y"]
    path = str(tmp_path / "conv.xnn")
    xnn.save(g, path)
    x = rng.standard_normal((2, c, h, h)).astype(np.float32)
    want = xnorcl.load(path).reference({"input": x})["y"]
    got, runtime_ops = openvino_output(path, {"input": x})
    assert "BinaryConvolution" in runtime_ops  # OpenVINO's binary kernel ran, not a float convolution
    assert got.tobytes() == want.tobytes()


def test_bireal_net_matches_the_reference(tmp_path):
    path = str(tmp_path / "bireal18.xnn")
    xnorcl.save_model("bireal18", path, batch=2, size=32, width_divisor=8)
    x = np.random.default_rng(3).standard_normal((2, 3, 32, 32)).astype(np.float32)
    want = xnorcl.load(path).reference({"input": x})["logits"]
    got, runtime_ops = openvino_output(path, {"input": x})
    assert "BinaryConvolution" in runtime_ops
    assert np.max(np.abs(got - want)) <= 1e-5 * np.max(np.abs(want))
    assert (np.argmax(got, 1) == np.argmax(want, 1)).all()


def test_engines_take_turns_in_blocks():
    calls = []

    def engine(name, device=None):
        return compare_openvino.Engine(name, lambda: calls.append(name), lambda: {}, device=device)

    a, b = engine("a"), engine("b", device=lambda: 1.5)
    compare_openvino.time_in_turns([a, b], runs=5, block=2)
    # One warm-up run each, then blocks of 2 in turn, the last block shorter.
    assert "".join(calls) == "ab" + "aabb" + "aabb" + "ab"
    assert len(a.walls) == len(b.walls) == 5
    assert a.devices == [] and b.devices == [1.5] * 5
