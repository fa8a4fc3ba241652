#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""compare_openvino.py MODEL.xml: one run, same machine, medians of whole-network wall time (and each
engine's time per node or step):

  OpenVINO CPU on the IR as given (its binary JIT where the IR has BinaryConvolution or FakeQuantize+Conv),
  OpenVINO CPU on the float32 version of the network (every FakeQuantize removed: its input passes through),
  xnorcl on the device (the IR converted to .xnn, run through xnorcl.load).

`compare_openvino.py --write-resnet-layers DIR` writes the three ResNet 3x3 layers xnorcl-bench times
(64x56x56, 256x14x14, 512x7x7, batch 1) as IRs in the form before OpenVINO's ConvToBinaryConv (a {0, 1}
FakeQuantize with per-channel thresholds on the activations, a {-1, +1} one on the weights of a Convolution),
seeded, to compare per layer.

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
            nodes[f"{info.node_name} ({info.node_type}, {info.exec_type})"] = info.real_time.total_seconds() * 1e3
    return wall, nodes


RESNET_LAYERS = (("resnet_64x56", 64, 56), ("resnet_256x14", 256, 14), ("resnet_512x7", 512, 7))


def write_resnet_layers(folder: str) -> List[str]:
    import openvino.opset13 as ops

    os.makedirs(folder, exist_ok=True)
    paths = []
    for index, (name, channels, size) in enumerate(RESNET_LAYERS):
        rng = np.random.default_rng(index)
        const = lambda v: ops.constant(np.asarray(v, np.float32))  # noqa: E731
        x = ops.parameter([1, channels, size, size], np.float32, name="input")
        t = const(rng.standard_normal((1, channels, 1, 1)) * 0.1)
        # {0, 1} activations with input_low = input_high, as Model Optimizer writes them. The weights' ranges
        # are per output channel: with one scalar range OpenVINO 2026.4's CPU plugin crashes in compile_model.
        a = ops.fake_quantize(x, t, t, const(0.0), const(1.0), 2)
        zero, one = np.zeros((channels, 1, 1, 1)), np.ones((channels, 1, 1, 1))
        w = ops.fake_quantize(const(rng.standard_normal((channels, channels, 3, 3))), const(zero), const(zero),
                              const(-one), const(one), 2)
        y = ops.convolution(a, w, [1, 1], [1, 1], [1, 1], [1, 1])
        y.set_friendly_name(name)
        y.output(0).set_names({"output"})
        path = os.path.join(folder, name + ".xml")
        ov.save_model(ov.Model([y], [x], name), path, compress_to_fp16=False)
        paths.append(path)
    return paths


def main(argv: List[str] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", nargs="?", help="OpenVINO IR .xml (its .bin beside it)")
    parser.add_argument("--write-resnet-layers", metavar="DIR", help="write the ResNet 3x3 layer IRs and exit")
    parser.add_argument("--runs", type=int, default=20, help="timed runs per engine (median)")
    parser.add_argument("--variant", default="auto", help="xnorcl variant: auto, local or global")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    args = parser.parse_args(argv)
    if args.write_resnet_layers:
        for path in write_resnet_layers(args.write_resnet_layers):
            print(f"wrote {path}")
        return 0
    if not args.model:
        parser.error("MODEL.xml is required (or --write-resnet-layers DIR)")

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
    # OpenVINO renames nodes in its transformations (a Convolution becomes "Convolution_3448" of type
    # BinaryConvolution), so the two engines' steps are listed apart rather than matched by name.
    for label, _, nodes in (rows[0], rows[-1]):
        print(f"per node, last run: {label}")
        for name, ms in nodes.items():
            if ms > 0:
                print(f"  {ms:10.3f} ms  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
