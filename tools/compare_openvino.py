#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""compare_openvino.py MODEL.xml: one run, same machine, medians of whole-network wall time (and per node
where both engines name it):

  OpenVINO CPU on the IR as given (its binary JIT where the IR has BinaryConvolution or FakeQuantize+Conv),
  OpenVINO CPU on the float32 version of the network (every FakeQuantize removed: its input passes through),
  xnorcl on the device (the IR converted to .xnn, run through xnorcl.load).

Needs `pip install "xnorcl[openvino]"`. The float32 version cannot be made for IRs with explicit
BinaryConvolution (their weights are bits); it is left out for those.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from typing import Callable, Dict, List

import numpy as np
import openvino as ov

import xnorcl


def median_ms(run: Callable[[], object], runs: int) -> float:
    run()  # warm-up: kernels built, buffers allocated
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def float_version(path: str):
    """The IR with every FakeQuantize bypassed; None when it holds explicit BinaryConvolution."""
    model = ov.Core().read_model(path)
    ops = model.get_ordered_ops()
    if any(op.get_type_name() == "BinaryConvolution" for op in ops):
        return None
    for op in ops:
        if op.get_type_name() == "FakeQuantize":
            op.output(0).replace(op.input_value(0))
    return model


def openvino_run(model, inputs: Dict[str, np.ndarray], runs: int):
    core = ov.Core()
    compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32", "PERF_COUNT": True})
    request = compiled.create_infer_request()
    wall = median_ms(lambda: request.infer(inputs), runs)
    nodes = {}
    for info in request.get_profiling_info():
        if info.status == ov.ProfilingInfo.Status.EXECUTED:
            nodes[info.node_name] = info.real_time.total_seconds() * 1e3
    return wall, nodes


def main(argv: List[str] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="OpenVINO IR .xml (its .bin beside it)")
    parser.add_argument("--runs", type=int, default=20, help="timed runs per engine (median)")
    parser.add_argument("--variant", default="auto", help="xnorcl variant: auto, local or global")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    args = parser.parse_args(argv)

    ir = ov.Core().read_model(args.model)
    rng = np.random.default_rng(args.seed)
    inputs = {}
    for parameter in ir.inputs:
        inputs[parameter.get_any_name()] = rng.standard_normal([int(d) for d in parameter.get_shape()]).astype(
            np.float32
        )

    rows = [("OpenVINO CPU, IR as given", *openvino_run(ir, inputs, args.runs))]
    floating = float_version(args.model)
    if floating is not None:
        rows.append(("OpenVINO CPU, float32 (FakeQuantize removed)", *openvino_run(floating, inputs, args.runs)))

    with tempfile.TemporaryDirectory() as directory:
        xnn = os.path.join(directory, "model.xnn")
        xnorcl.convert(args.model, xnn)
        model = xnorcl.load(xnn, runtime=xnorcl.Runtime(variant=args.variant))
        wall = median_ms(lambda: model.run(inputs), args.runs)
        nodes = model.last_node_times()
        device = sum(nodes.values())
    rows.append((f"xnorcl ({model.runtime.variant}), device time {device:.3f} ms", wall, nodes))

    print(f"{args.model}: medians of {args.runs} runs, wall time per inference")
    for label, ms, _ in rows:
        print(f"  {ms:10.3f} ms  {label}")
    ours = rows[-1][2]
    theirs = rows[0][2]
    shared = [name for name in ours if name.split("+")[0] in theirs]
    if shared:
        print("per node (xnorcl step, its first node's OpenVINO time on the IR):")
        for name in shared:
            print(f"  {ours[name]:10.3f} ms xnorcl  {theirs[name.split('+')[0]]:10.3f} ms OpenVINO  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
