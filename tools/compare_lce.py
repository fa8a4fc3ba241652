# SPDX-License-Identifier: Apache-2.0
"""Times Larq models on xnorcl and on Larq Compute Engine's interpreter, on the same machine, in one run.

    build/venv/bin/python tools/compare_lce.py --lce-python build/venv-lce/bin/python MODEL.tflite ...

Each model is converted with xnorcl.convert, checked (xnorcl's output against LCE's on the same input), then
timed: xnorcl's `Model.run` (wall time, input upload and output read included) and the device time of its
steps; LCE's `Interpreter.predict` with 2 threads, once with its default binary kernels and once with its
indirect BGEMM kernels. Medians of --runs runs after warm-up. LCE runs in its own Python (LCE 0.16 wants
CPython 3.10-3.12 and numpy < 2), started once per model. Full-size models come from
`tools/larq_fixtures.py --bench DIR` (needs TensorFlow); the committed fixtures work too.

On x86, LCE runs portable C++ kernels: its optimized kernels are for Arm (aarch64 NEON). The comparison that
matters for a phone or a board is LCE on its Arm CPU against xnorcl on the GPU beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import xnorcl

_LCE_TIMER = r"""
import importlib.util, json, statistics, sys, time, types
import numpy as np
spec = importlib.util.find_spec("larq_compute_engine")
package = types.ModuleType("larq_compute_engine")  # skip the package's __init__, which imports TensorFlow
package.__path__ = list(spec.submodule_search_locations)
sys.modules["larq_compute_engine"] = package
from larq_compute_engine.tflite.python.interpreter import Interpreter
model_path, input_path, runs, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
flatbuffer = open(model_path, "rb").read()
x = np.load(input_path)
result = {}
for kernel, indirect in (("default", False), ("indirect", True)):
    interpreter = Interpreter(flatbuffer, num_threads=threads, use_indirect_bgemm=indirect)
    output = interpreter.predict(x)
    for _ in range(2):
        interpreter.predict(x)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        interpreter.predict(x)
        times.append(time.perf_counter() - start)
    result[kernel] = {"median_ms": 1e3 * statistics.median(times), "output": np.asarray(output).tolist()}
print(json.dumps(result))
"""


def time_xnorcl(path: str, x: np.ndarray, runs: int):
    model = xnorcl.load(path)
    ((name, _),) = model.inputs
    ((output, _),) = model.outputs
    y = model.run({name: x})[output]
    for _ in range(2):
        model.run({name: x})
    wall, device = [], []
    for _ in range(runs):
        start = time.perf_counter()
        model.run({name: x})
        wall.append(time.perf_counter() - start)
        device.append(sum(model.last_node_times().values()))
    return y, 1e3 * statistics.median(wall), statistics.median(device), model.runtime  # device: ms already


def time_lce(lce_python: str, model: str, x: np.ndarray, runs: int, threads: int):
    with tempfile.TemporaryDirectory() as folder:
        input_path = os.path.join(folder, "x.npy")
        np.save(input_path, x)
        done = subprocess.run([lce_python, "-c", _LCE_TIMER, model, input_path, str(runs), str(threads)],
                              capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"LCE's interpreter failed on {model}:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="+", help="LCE .tflite files")
    parser.add_argument("--lce-python", required=True, help="a Python with larq-compute-engine 0.16, numpy < 2")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2, help="LCE's interpreter threads (default 2)")
    args = parser.parse_args()
    rows = []
    for model in args.models:
        with tempfile.TemporaryDirectory() as folder:
            converted = os.path.join(folder, "model.xnn")
            xnorcl.convert(model, converted)
            dims = xnorcl.load(converted).inputs[0][1]
            x = np.random.default_rng(0).standard_normal(dims).astype(np.float32)
            y, wall, device, runtime = time_xnorcl(converted, x, args.runs)
        lce = time_lce(args.lce_python, model, x, args.runs, args.threads)
        want = np.asarray(lce["default"]["output"], np.float32).reshape(y.shape)
        error = float(np.max(np.abs(y - want)) / max(float(np.max(np.abs(want))), 1e-30))
        same_top1 = y.ndim != 2 or bool((y.argmax(1) == want.argmax(1)).all())
        rows.append((os.path.basename(model), wall, device, lce["default"]["median_ms"],
                     lce["indirect"]["median_ms"], error, same_top1))
        print(f"{os.path.basename(model)}: done", file=sys.stderr, flush=True)
    print(f"xnorcl on {runtime.device_name} ({runtime.variant} variant); LCE 0.16 interpreter, {args.threads} "
          f"threads, on this machine's CPU; medians of {args.runs} runs, milliseconds")
    print(f"{'model':28} {'xnorcl wall':>12} {'xnorcl device':>14} {'LCE default':>12} {'LCE indirect':>13}"
          f" {'LCE/xnorcl':>11} {'max rel diff':>13} {'top-1':>6}")
    for name, wall, device, default, indirect, error, top1 in rows:
        ratio = min(default, indirect) / wall
        print(f"{name:28} {wall:12.2f} {device:14.2f} {default:12.2f} {indirect:13.2f} {ratio:11.2f}"
              f" {error:13.1e} {'same' if top1 else 'DIFF':>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
