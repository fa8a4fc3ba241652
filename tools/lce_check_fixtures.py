# SPDX-License-Identifier: Apache-2.0
"""Run Larq Compute Engine's interpreter on the committed LCE fixtures, without TensorFlow.

    python -m venv venv && venv/bin/pip install "larq-compute-engine==0.16.0" "numpy<2"
    venv/bin/python tools/lce_check_fixtures.py tests/python/larq_fixtures

larq-compute-engine 0.16.0 declares only flatbuffers and tqdm as dependencies
(tensorflow is an extra); its interpreter also needs numpy < 2 (with numpy 2 its
predict() fails with "Expected N bytes but got 0"). Wheels exist for CPython
3.10 to 3.12 only. `import larq_compute_engine` imports TensorFlow (through the
converter), so this script registers an empty parent package and imports the
interpreter module directly.

Checks that every NAME.tflite run on NAME.npz's `inputs` gives exactly (bit for bit)
`outputs`, and `outputs_reference_bconv` with LCE's reference bconv kernel where
the fixture has it. Exit status 1 on any difference.
"""

import importlib.util
import json
import os
import sys
import types

import numpy as np


def lce_interpreter():
    spec = importlib.util.find_spec("larq_compute_engine")
    if spec is None:
        raise SystemExit("larq-compute-engine is not installed")
    if "larq_compute_engine" not in sys.modules:
        pkg = types.ModuleType("larq_compute_engine")
        pkg.__path__ = list(spec.submodule_search_locations)
        sys.modules["larq_compute_engine"] = pkg
    from larq_compute_engine.tflite.python.interpreter import Interpreter

    return Interpreter


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "tests/python/larq_fixtures"
    Interpreter = lce_interpreter()
    with open(os.path.join(folder, "MANIFEST.json")) as f:
        manifest = json.load(f)
    bad = 0
    for name, entry in manifest["models"].items():
        with open(os.path.join(folder, name + ".tflite"), "rb") as f:
            buf = f.read()
        data = np.load(os.path.join(folder, name + ".npz"))
        runs = [("outputs", entry["outputs_kernel"].startswith("reference"))]
        if "outputs_reference_bconv" in data.files:
            runs.append(("outputs_reference_bconv", True))
        for key, reference in runs:
            got = Interpreter(buf, num_threads=1, use_reference_bconv=reference).predict(data["inputs"])
            want = data[key]
            same = got.shape == want.shape and got.dtype == want.dtype and got.tobytes() == want.tobytes()
            bad += not same
            print(f"{name} {key}: {'same' if same else 'DIFFERENT'}")
    print(f"tensorflow imported: {'tensorflow' in sys.modules}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
