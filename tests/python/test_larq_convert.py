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
- Negative controls: a converter that forgets LCE's bit order, or its padding value, fails the comparison.
"""

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import xnorcl

# The package's attribute `convert` is the function; the converter is a module of xnorcl.convert.
lce_converter = importlib.import_module("xnorcl.convert.tflite")

from conftest import runtime_for

FIXTURES = Path(__file__).parent / "larq_fixtures"
MANIFEST = json.loads((FIXTURES / "MANIFEST.json").read_text())
MODELS = MANIFEST["models"]
REFUSED = {
    "unsupported_cos": ["operator 4 COS", "this op is not supported by xnorcl"],
}
# LceQuantize -> LceDequantize on special values (0, -0, subnormals, NaN, infinities): its own test below.
SIGN = "quantize_dequantize_c40"
CONVERTIBLE = [name for name in MODELS if name not in REFUSED]
COMPARED = [name for name in CONVERTIBLE if name != SIGN]
REPO = Path(__file__).resolve().parents[2]


def relative_error(got, want):
    return float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))


def lce_truth(name):
    """LCE's outputs for the fixture: its reference kernel's where its default kernel is known wrong."""
    data = np.load(FIXTURES / f"{name}.npz")
    wrong = "default kernel skips its zero-padding correction" in MODELS[name]["covers"]
    return data["inputs"], data["outputs_reference_bconv" if wrong else "outputs"]


def run_converted(path, runtime, inputs):
    model = xnorcl.load(str(path), runtime=runtime)
    ((name, _),) = model.inputs
    ((output, _),) = model.outputs
    return np.concatenate([model.run({name: inputs[k : k + 1]})[output] for k in range(inputs.shape[0])])


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("larq")
    reports = {}
    for name in CONVERTIBLE:
        reports[name] = xnorcl.convert(str(FIXTURES / f"{name}.tflite"), str(folder / f"{name}.xnn"))
    return folder, reports


@pytest.mark.parametrize("name", COMPARED)
def test_converted_model_matches_lce(converted, runtime, name):
    folder, reports = converted
    assert reports[name]["refused"] == []
    inputs, want = lce_truth(name)
    got = run_converted(folder / f"{name}.xnn", runtime, inputs)
    assert got.shape == want.shape
    assert relative_error(got, want) <= 1e-4, name
    if want.ndim == 2:
        assert (got.argmax(axis=1) == want.argmax(axis=1)).all()


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
