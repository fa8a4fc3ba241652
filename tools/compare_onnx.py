# SPDX-License-Identifier: Apache-2.0
"""Times ONNX models on xnorcl and on onnxruntime, on the same machine, in one run.

    build/venv/bin/python tools/compare_onnx.py --network bireal18          # a seeded Bi-Real Net-18, 224x224
    build/venv/bin/python tools/compare_onnx.py MODEL.onnx ...               # your own exports

Each model is converted with xnorcl.convert, checked (xnorcl's output against onnxruntime's on the same input:
max-norm relative difference and top-1, and how many binarized values lie within rounding of their threshold
there), then timed: xnorcl's `Model.run` (wall time, input upload and output
read included) and the device time of its steps, and onnxruntime's `InferenceSession.run` on its CPU
execution provider with --threads threads (default 2). Medians of --runs runs after warm-up, batch 1.
onnxruntime has no QONNX ops: a model with BipolarQuant runs there as its standard-op twin, Where(x >= 0, s, -s).

`--network bireal18` writes Bi-Real Net-18 as PyTorch exports it (seeded weights, batch-norm statistics
calibrated on random images so that every sign sees values on both sides of 0): a float 7x7/2 stem and
batch-norm, a 3x3/2
max-pool, 16 blocks of Sign -> binary 3x3 Conv (+-alpha_o weights) -> BatchNormalization -> residual Add,
AveragePool + 1x1 Conv + BatchNormalization shortcuts where a stage halves the size, global average pooling
and a float classifier. onnxruntime computes every convolution in float; xnorcl binarizes. On a CPU through
PoCL both run on the same cores: this is the comparison of one binary network against the float engine most
PyTorch users deploy with.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from typing import Dict, List, Tuple

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import xnorcl
from xnorcl.convert.onnx import with_standard_binarizers


class _Builder:
    """Nodes and initializers of a model in the node form torch.onnx.export writes."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: List[onnx.NodeProto] = []
        self.inits: Dict[str, np.ndarray] = {}

    def param(self, name: str, value: np.ndarray) -> str:
        self.inits[name] = np.asarray(value, np.float32)
        return name

    def node(self, op: str, inputs: List[str], output: str, **attrs) -> str:
        self.nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    def conv(self, x: str, name: str, c_in: int, c_out: int, k: int, stride: int, binary: bool) -> str:
        if binary:  # alpha_o * sign(W): XNOR-Net's and Bi-Real's scaled binary weights
            w = np.where(self.rng.random((c_out, c_in, k, k)) < 0.5, -1.0, 1.0)
            w = w * self.rng.uniform(0.5, 1.5, (c_out, 1, 1, 1)) / np.sqrt(c_in * k * k)
            x = self.node("Sign", [x], name + ".sign")
        else:
            w = self.rng.normal(0, 1 / np.sqrt(c_in * k * k), (c_out, c_in, k, k))
        return self.node("Conv", [x, self.param(name + ".weight", w)], name, kernel_shape=[k, k],
                         strides=[stride, stride], pads=[k // 2] * 4)

    def batch_norm(self, x: str, name: str, c: int) -> str:
        # Placeholder statistics; calibrate() sets mean and variance from what the layer sees.
        inputs = [x, self.param(name + ".gamma", self.rng.uniform(0.5, 1.5, c) * self.rng.choice([-1, 1, 1], c)),
                  self.param(name + ".beta", self.rng.normal(0, 0.1, c)),
                  self.param(name + ".mean", np.zeros(c)), self.param(name + ".var", np.ones(c))]
        return self.node("BatchNormalization", inputs, name, epsilon=1e-5)


def bireal18(resolution: int = 224, classes: int = 1000, seed: int = 0) -> onnx.ModelProto:
    b = _Builder(seed)
    x = b.conv("input", "stem.conv", 3, 64, 7, 2, binary=False)
    x = b.batch_norm(x, "stem.bn", 64)  # no Relu: the first sign would see exact zeros
    x = b.node("MaxPool", [x], "stem.pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c_in = 64
    for stage, c in enumerate((64, 128, 256, 512), start=1):
        for block in range(1, 5):
            name = f"stage{stage}.conv{block}"
            stride = 2 if stage > 1 and block == 1 else 1
            shortcut = x
            if stride != 1 or c_in != c:
                pooled = b.node("AveragePool", [x], name + ".down.pool", kernel_shape=[2, 2], strides=[2, 2])
                shortcut = b.batch_norm(b.conv(pooled, name + ".down.conv", c_in, c, 1, 1, binary=False),
                                        name + ".down.bn", c)
            y = b.batch_norm(b.conv(x, name, c_in, c, 3, stride, binary=True), name + ".bn", c)
            x = b.node("Add", [y, shortcut], name + ".add")
            c_in = c
    x = b.node("GlobalAveragePool", [x], "head.pool")
    x = b.node("Flatten", [x], "head.flatten", axis=1)
    w = b.rng.normal(0, 1 / np.sqrt(512), (classes, 512))
    x = b.node("Gemm", [x, b.param("head.fc.weight", w), b.param("head.fc.bias", np.zeros(classes))], "logits",
               transB=1)
    graph = helper.make_graph(
        b.nodes, "bireal18", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, resolution, resolution])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, classes])],
        [numpy_helper.from_array(v, k) for k, v in b.inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return calibrate(model, b.rng)


def calibrate(model: onnx.ModelProto, rng: np.random.Generator) -> onnx.ModelProto:
    """Sets each BatchNormalization's mean and variance to those of its input on a random image, in graph
    order, so that its output is centred: every following sign sees both signs."""
    dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = rng.standard_normal(dims).astype(np.float32)
    inits = {i.name: i for i in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type != "BatchNormalization":
            continue
        probe = onnx.ModelProto()
        probe.CopyFrom(model)
        del probe.graph.output[:]
        probe.graph.output.append(helper.make_tensor_value_info(node.input[0], TensorProto.FLOAT, None))
        (value,) = onnxruntime_session(probe, 2).run(None, {model.graph.input[0].name: x})
        for name, stat in ((node.input[3], value.mean(axis=(0, 2, 3))), (node.input[4], value.var(axis=(0, 2, 3)))):
            inits[name].CopyFrom(numpy_helper.from_array(stat.astype(np.float32), name))
    return model


def onnxruntime_session(model: onnx.ModelProto, threads: int) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(with_standard_binarizers(model).SerializeToString(), options,
                                providers=["CPUExecutionProvider"])


def near_thresholds(model: onnx.ModelProto, feeds: Dict[str, np.ndarray], threads: int) -> int:
    """How many inputs of Sign and BipolarQuant nodes lie within 1e-6 (relative to their tensor's largest
    value) of 0, on onnxruntime: where two engines round a float differently, such a value's sign can differ,
    and later layers carry the difference on."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    names = sorted({n.input[0] for n in model.graph.node if n.op_type in ("Sign", "BipolarQuant")})
    probe.graph.output.extend(helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in names)
    values = onnxruntime_session(probe, threads).run(names, feeds)
    return sum(int(np.sum(np.abs(v) <= 1e-6 * np.max(np.abs(v)))) for v in values)


def median_ms(run, runs: int) -> float:
    for _ in range(2):
        run()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def compare(name: str, model: onnx.ModelProto, runs: int, threads: int) -> Tuple:
    with tempfile.TemporaryDirectory() as folder:
        source, converted = os.path.join(folder, "model.onnx"), os.path.join(folder, "model.xnn")
        onnx.save(model, source)
        xnorcl.convert(source, converted)
        m = xnorcl.load(converted)
    ((input_name, dims),) = m.inputs
    output_name = m.outputs[0][0]
    session = onnxruntime_session(model, threads)
    # The check's input: the first of 10 seeded images with no binarized value within rounding of its
    # threshold, where the two engines must agree to float rounding (else the last one tried).
    for seed in range(1, 11):
        x = np.random.default_rng(seed).standard_normal(dims).astype(np.float32)
        near = near_thresholds(model, {input_name: x}, threads)
        if near == 0:
            break
    want = session.run([output_name], {input_name: x})[0]
    got = m.run({input_name: x})[output_name]
    error = float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))
    top1 = got.ndim != 2 or bool((got.argmax(1) == want.argmax(1)).all())
    xnorcl_wall = median_ms(lambda: m.run({input_name: x}), runs)
    device = []
    for _ in range(runs):
        m.run({input_name: x})
        device.append(sum(m.last_node_times().values()))
    onnxruntime_wall = median_ms(lambda: session.run(None, {input_name: x}), runs)
    return name, xnorcl_wall, statistics.median(device), onnxruntime_wall, error, top1, near, m.runtime


def main(argv: List[str] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="*", help=".onnx files")
    parser.add_argument("--network", choices=["bireal18"], action="append", default=[],
                        help="a seeded network written by this tool (repeatable)")
    parser.add_argument("--resolution", type=int, default=224, help="--network's input size (default 224)")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2, help="onnxruntime's intra-op threads (default 2)")
    args = parser.parse_args(argv)
    if not args.models and not args.network:
        parser.error("name .onnx files or --network bireal18")
    rows = []
    for network in args.network:
        print(f"{network}: writing and calibrating it", file=sys.stderr, flush=True)
        rows.append(compare(f"{network} {args.resolution}", bireal18(args.resolution), args.runs, args.threads))
        print(f"{network}: timed", file=sys.stderr, flush=True)
    for path in args.models:
        rows.append(compare(os.path.basename(path), onnx.load(path), args.runs, args.threads))
    runtime = rows[0][-1]
    print(f"xnorcl {xnorcl.__version__} on {runtime.device_name} ({runtime.variant} variant); onnxruntime "
          f"{ort.__version__}, CPU execution provider, {args.threads} threads; batch 1, medians of {args.runs} runs, "
          "milliseconds")
    print(f"{'model':24} {'xnorcl wall':>12} {'xnorcl device':>14} {'onnxruntime':>12} {'ort/xnorcl':>11}"
          f" {'max rel diff':>13} {'top-1':>6} {'near 0':>7}")
    for name, wall, device, other, error, top1, near, _ in rows:
        print(f"{name:24} {wall:12.2f} {device:14.2f} {other:12.2f} {other / wall:11.2f} {error:13.1e}"
              f" {'same' if top1 else 'DIFF':>6} {near:7d}")
    print("near 0: inputs of Sign/BipolarQuant within 1e-6 of 0 (relative to their tensor) on onnxruntime; where "
          "there are any, bits there may differ between the engines and later layers carry the difference on. "
          "A model whose outputs differ with none there is wrong.")
    return 0 if all(row[5] or row[6] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
