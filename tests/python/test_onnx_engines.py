# SPDX-License-Identifier: Apache-2.0
"""The ONNX conformance fixtures (tests/python/onnx_fixtures, written by tools/onnx_fixtures.py from real
PyTorch and Brevitas exports) against the engines that computed their stored outputs.

Each NAME.onnx must still have the sha256 its MANIFEST entry records, and the engine must reproduce
NAME.npz's outputs from its inputs (sample s fed alone as inputs[s]): onnxruntime (CPUExecutionProvider,
default session options) for standard-op models, qonnx's executor (`execute_onnx` on a `ModelWrapper`, after
the transforms MANIFEST lists) for the QONNX ones.  Equal, or within RELATIVE_TOLERANCE of the stored
output's largest magnitude (max-norm): the engines' float kernels may sum in another order elsewhere.

Needs onnxruntime and qonnx (pip install onnxruntime qonnx), never torch or Brevitas.  With CI=true a missing
package fails the tests that need it; elsewhere they are skipped.
"""

import hashlib
import importlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

FIXTURES = Path(__file__).parent / "onnx_fixtures"
MANIFEST = json.loads((FIXTURES / "MANIFEST.json").read_text())
MODELS = MANIFEST["models"]
RELATIVE_TOLERANCE = 1e-6


def need(module):
    """Import an engine package: missing, it fails the test under CI=true and skips it elsewhere."""
    try:
        return importlib.import_module(module)
    except ImportError as e:  # pragma: no cover - depends on the environment
        if os.environ.get("CI") == "true":
            pytest.fail(f"{module} is not importable ({e}); CI must install it (pip install onnxruntime qonnx)",
                        pytrace=False)
        pytest.skip(f"{module} is not installed: {e}")


def run_onnxruntime(path, entry, inputs):
    ort = need("onnxruntime")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    runs = [session.run(None, {entry["input"]["name"]: x}) for x in inputs]
    return {name: np.stack([run[i] for run in runs]) for i, name in enumerate(names)}


def run_qonnx(path, entry, inputs):
    need("qonnx")
    from qonnx.core.modelwrapper import ModelWrapper
    from qonnx.core.onnx_exec import execute_onnx

    model = ModelWrapper(str(path))
    for transform in entry["qonnx_transforms"]:  # dotted class names, e.g. qonnx's InferShapes
        module, _, cls = transform.rpartition(".")
        model = model.transform(getattr(importlib.import_module(module), cls)())
    names = [o.name for o in model.graph.output]
    runs = [execute_onnx(model, {entry["input"]["name"]: x}) for x in inputs]
    return {name: np.stack([run[name] for run in runs]) for name in names}


def assert_reproduced(got, want, what):
    assert got.shape == want.shape, f"{what}: shape {got.shape}, stored {want.shape}"
    if np.array_equal(got, want):
        return
    scale = max(float(np.max(np.abs(want))), np.finfo(np.float32).tiny)
    error = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) / scale
    assert error <= RELATIVE_TOLERANCE, f"{what}: relative max-norm error {error:.3g} > {RELATIVE_TOLERANCE}"


def test_manifest_lists_every_fixture():
    onnx_files = {p.stem for p in FIXTURES.glob("*.onnx")}
    npz_files = {p.stem for p in FIXTURES.glob("*.npz")}
    assert onnx_files == set(MODELS) == npz_files


@pytest.mark.parametrize("name", sorted(MODELS))
def test_onnx_bytes_unchanged(name):
    data = (FIXTURES / f"{name}.onnx").read_bytes()
    assert len(data) == MODELS[name]["onnx_bytes"]
    assert hashlib.sha256(data).hexdigest() == MODELS[name]["onnx_sha256"]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_stored_arrays_match_manifest(name):
    entry = MODELS[name]
    stored = np.load(FIXTURES / f"{name}.npz")
    assert stored["inputs"].dtype == np.float32
    assert list(stored["inputs"].shape) == [entry["samples"]] + entry["input"]["shape"]
    assert list(stored["outputs"].shape) == [entry["samples"]] + entry["outputs"][0]["shape"]
    assert entry["engine"] == ("qonnx" if entry["form"] == "qonnx" else "onnxruntime")
    # No binarizer input within rounding of its threshold: 1e-3 (1e-5 where a model has too many values).
    assert entry["min_margin"] >= entry["required_margin"] >= 1e-5
    assert any(v.startswith("onnxruntime=") for v in stored["versions"])


@pytest.mark.parametrize("name", sorted(MODELS))
def test_engine_reproduces_stored_outputs(name):
    entry = MODELS[name]
    stored = np.load(FIXTURES / f"{name}.npz")
    run = run_qonnx if entry["engine"] == "qonnx" else run_onnxruntime
    got = run(FIXTURES / f"{name}.onnx", entry, stored["inputs"])
    names = [o["name"] for o in entry["outputs"]]
    assert list(got) == names
    assert_reproduced(got[names[0]], stored["outputs"], f"{name} output {names[0]}")
    if len(names) > 1:  # every output is stored under its own name too
        for output in names:
            assert_reproduced(got[output], stored[f"outputs_{output}"], f"{name} output {output}")
