# SPDX-License-Identifier: Apache-2.0
"""Real PyTorch and Brevitas exports (tests/python/onnx_fixtures, made by tools/onnx_fixtures.py; the
versions that made them are in MANIFEST.json) converted by xnorcl.convert and run on the device, against the
outputs of the format's own engine stored beside each model: onnxruntime for standard-op models, the qonnx
package's executor for QONNX ones (test_onnx_engines.py checks that the engines still compute them).

Every binarizer input of the stored samples lies at least 1e-3 from its threshold (MANIFEST's min_margin;
1e-5 relative for docs_example, whose 32x32 maps hold too many values for more), far beyond the two engines'
float rounding, so every bit inside equals the engine's; the final float outputs must agree within 1e-4
relative (max-norm) and [N, K] outputs keep the engine's top-1. Negative controls: a converter that packs the
weights' bits in the other order, or forgets a Pad's value, fails these comparisons.

docs/onnx.md's example is the docs_example fixture: its PyTorch half must still be the code that made it
(MANIFEST records its sha256), and its xnorcl half runs here on that export.
"""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import xnorcl

from conftest import (convert_damaged, convert_forgetting_the_pad_value, convert_with_weight_bits_lsb_first,
                      runtime_for)
FIXTURES = Path(__file__).parent / "onnx_fixtures"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "onnx.md"
MODELS = json.loads((FIXTURES / "MANIFEST.json").read_text())["models"]
# What each form must become: the binary ops the converted graph holds.
BINARY_OPS = {"dense": "BinaryFullyConnected"}


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("onnx_fixtures")
    reports = {}
    for name in MODELS:
        reports[name] = (folder / f"{name}.xnn", xnorcl.convert(str(FIXTURES / f"{name}.onnx"),
                                                               str(folder / f"{name}.xnn")))
    return reports


def relative_error(got, want):
    return float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_export_converts_to_binary_ops(name, converted):
    entry = MODELS[name]
    _, report = converted[name]
    assert entry["min_margin"] >= entry["required_margin"] >= 1e-5, entry["min_margin"]
    binary = [key for key in report["mapped"] if key.endswith(("-> BinaryConvolution", "-> BinaryFullyConnected"))]
    binarizers = sum(count for op, count in entry["ops"].items() if op.endswith(("Sign", "BipolarQuant")))
    assert binary, report
    assert not any(key.startswith(("Sign ->", "BipolarQuant ->")) and not key.endswith("FakeQuantize")
                   for key in report["mapped"]), report
    assert report["refused"] == [] and binarizers > 0
    assert report["inputs"][0][0] == entry["input"]["name"], report
    assert report["outputs"] == [o["name"] for o in entry["outputs"]], report


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_export_equals_its_engine(name, converted, variant):
    path, _ = converted[name]
    stored = np.load(FIXTURES / f"{name}.npz")
    model = xnorcl.load(str(path), runtime=runtime_for(variant))
    input_name = MODELS[name]["input"]["name"]
    output_name = MODELS[name]["outputs"][0]["name"]
    for x, want in zip(stored["inputs"], stored["outputs"]):
        got = model.run({input_name: np.ascontiguousarray(x)})[output_name]
        assert got.shape == want.shape
        assert relative_error(got, want) <= 1e-4, (name, variant, relative_error(got, want))
        if want.ndim == 2:
            assert np.array_equal(got.argmax(axis=1), want.argmax(axis=1))


def matches_engine(path, name, variant="global"):
    stored = np.load(FIXTURES / f"{name}.npz")
    model = xnorcl.load(str(path), runtime=runtime_for(variant))
    entry = MODELS[name]
    got = np.stack([model.run({entry["input"]["name"]: np.ascontiguousarray(x)})[entry["outputs"][0]["name"]]
                    for x in stored["inputs"]])
    return relative_error(got, stored["outputs"]) <= 1e-4


def test_negative_controls_fail_against_the_engines(tmp_path, monkeypatch):
    pad, plain = "sign_conv_pad_minus1", "sign_conv_3x3_s1_p1"
    for name in (pad, plain):
        xnorcl.convert(str(FIXTURES / f"{name}.onnx"), str(tmp_path / f"{name}.xnn"))
        assert matches_engine(tmp_path / f"{name}.xnn", name)
    with monkeypatch.context() as m:
        convert_with_weight_bits_lsb_first(m)
        xnorcl.convert(str(FIXTURES / f"{plain}.onnx"), str(tmp_path / "lsb.xnn"))
    assert not matches_engine(tmp_path / "lsb.xnn", plain)
    with monkeypatch.context() as m:
        convert_forgetting_the_pad_value(m)
        xnorcl.convert(str(FIXTURES / f"{pad}.onnx"), str(tmp_path / "zero_pad.xnn"))
    assert not matches_engine(tmp_path / "zero_pad.xnn", pad)


def docs_example_code():
    block = DOCS.read_text().split("<!-- onnx-example:begin -->")[1].split("<!-- onnx-example:end -->")[0]
    code = block.split("```python\n", 1)[1].rsplit("```", 1)[0]
    split = code.index("\nimport numpy as np")
    return code[:split], code[split + 1:]


def test_the_docs_example_is_the_fixture_and_its_xnorcl_half_runs(tmp_path):
    pytorch_half, xnorcl_half = docs_example_code()
    assert hashlib.sha256(pytorch_half.encode()).hexdigest() == MODELS["docs_example"]["docs_code_sha256"], (
        "docs/onnx.md's PyTorch example changed: regenerate its fixture (tools/onnx_fixtures.py --only "
        "docs_example)")
    (tmp_path / "model.onnx").write_bytes((FIXTURES / "docs_example.onnx").read_bytes())
    (tmp_path / "example.py").write_text(xnorcl_half)
    env = dict(os.environ)
    done = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert "'Conv -> BinaryConvolution': 2" in lines[0] and lines[-1].startswith("class "), done.stdout
    assert (tmp_path / "model.xnn").stat().st_size > 0


@pytest.mark.parametrize("name", ["network_small", "qonnx_tfc"])
def test_damaged_exports_are_converted_or_refused_naming_them(name, tmp_path):
    """Bit flips in a real export, converted in a process whose address space is capped: every copy converts
    or raises InvalidArgument naming it, never a crash, a traceback or an allocation the file merely claims."""
    converted, refused = convert_damaged([FIXTURES / f"{name}.onnx"], tmp_path, seed=23, count=60, most_flips=6,
                                         memory_gib=4)
    assert converted + refused == 60 and refused > 0
