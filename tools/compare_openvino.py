#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""compare_openvino.py MODEL.xml: one run, same machine, medians of whole-network wall time (and each
engine's time per node or step), the engines taking turns in blocks of --block runs so that all of them meet
the same machine:

  OpenVINO CPU on the IR as given (its binary JIT where the IR has BinaryConvolution or FakeQuantize+Conv),
  OpenVINO CPU on the float32 version of the network (every FakeQuantize removed: its input passes through),
  xnorcl on the device (the IR converted to .xnn, run through xnorcl.load).

`compare_openvino.py --network bireal18|resnet18` does it for xnorcl's own Bi-Real Net-18 or binary ResNet-18
(seeded, 1x3x224x224 unless --size is given): the network is written as an .xnn file and as an OpenVINO IR in
FakeQuantize + Convolution form, which OpenVINO's CPU plugin runs with its binary convolutions; OpenVINO's
output is checked against xnorcl's host reference before anything is timed.

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
import struct
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import openvino as ov

import xnorcl


class Engine:
    """One engine under test: `run` does one inference; `device`, where given, is the last run's device time
    in ms; `nodes` its time per node or step in ms. Collects the wall (and device) times of its timed runs."""

    def __init__(self, label: str, run: Callable[[], object], nodes: Callable[[], Dict[str, float]],
                 device: Optional[Callable[[], float]] = None):
        self.label, self.run, self.nodes, self.device = label, run, nodes, device
        self.walls: List[float] = []
        self.devices: List[float] = []


def time_in_turns(engines: List[Engine], runs: int, block: int) -> None:
    """`runs` timed runs of each engine after one warm-up run each, the engines taking turns in blocks of
    `block` runs: on a shared machine whose speed drifts, every engine then meets the same drift, where timing
    one engine after the other would give the last one another machine. Blocks rather than single runs, so
    that a thread pool that spins after an inference (OpenVINO's) slows at most the first run of the next
    engine's block."""
    for engine in engines:
        engine.run()  # warm-up: kernels built, buffers allocated
    for first in range(0, runs, block):
        for engine in engines:
            for _ in range(min(block, runs - first)):
                start = time.perf_counter()
                engine.run()
                engine.walls.append((time.perf_counter() - start) * 1e3)
                if engine.device is not None:
                    engine.devices.append(engine.device())


def xnorcl_engine(model, inputs: Dict[str, np.ndarray]) -> Engine:
    return Engine(f"xnorcl ({model.runtime.variant})", lambda: model.run(inputs), model.last_node_times,
                  device=lambda: sum(model.last_node_times().values()))


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


def openvino_engine(label: str, model, inputs: Dict[str, np.ndarray]) -> Engine:
    core = ov.Core()
    compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32", "PERF_COUNT": True})
    request = compiled.create_infer_request()

    def nodes() -> Dict[str, float]:
        times = {}
        for info in request.get_profiling_info():
            if info.status == ov.ProfilingInfo.Status.EXECUTED:
                times[f"{info.node_name} ({info.node_type}, {info.exec_type})"] = info.real_time.total_seconds() * 1e3
        return times

    return Engine(label, lambda: request.infer(inputs), nodes)


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


class XnnGraph:
    """An .xnn version-2 graph as read_xnn returns it: inputs [(name, dims)], constants {name: array} (bits as
    +-1 floats), nodes [(name, op, inputs, outputs, attributes)], outputs [names]."""

    def __init__(self) -> None:
        self.inputs: List[Tuple[str, List[int]]] = []
        self.constants: Dict[str, np.ndarray] = {}
        self.nodes: List[Tuple[str, str, List[str], List[str], Dict[str, Any]]] = []
        self.outputs: List[str] = []


def read_xnn(path: str) -> XnnGraph:
    """Reads a graph file that xnorcl itself just wrote (docs/graph_format.md); no checks for damaged files,
    which xnorcl's own loader refuses."""
    data = open(path, "rb").read()
    at = 12  # magic and version

    def take(fmt: str) -> Tuple[Any, ...]:
        nonlocal at
        values = struct.unpack_from("<" + fmt, data, at)
        at += struct.calcsize("<" + fmt)
        return values

    def text() -> str:
        nonlocal at
        (length,) = take("I")
        at += length
        return data[at - length : at].decode("utf-8")

    def dims() -> List[int]:
        (rank,) = take("I")
        return list(take(f"{rank}q"))

    graph = XnnGraph()
    graph.inputs = [(text(), dims()) for _ in range(take("I")[0])]
    for _ in range(take("I")[0]):
        name, kind, shape = text(), take("I")[0], dims()
        count = int(np.prod(shape))
        if kind == 0:
            graph.constants[name] = np.frombuffer(data, "<f4", count, at).reshape(shape).astype(np.float32)
            at += 4 * count
        else:
            bits = np.unpackbits(np.frombuffer(data, np.uint8, (count + 7) // 8, at))[:count]
            graph.constants[name] = (bits.astype(np.float32) * 2 - 1).reshape(shape)
            at += (count + 7) // 8
    readers = {0: lambda: take("q")[0], 1: lambda: take("d")[0], 2: text}
    for _ in range(take("I")[0]):
        name, op = text(), text()
        inputs = [text() for _ in range(take("I")[0])]
        outputs = [text() for _ in range(take("I")[0])]
        attributes = {}
        for _ in range(take("I")[0]):
            key, kind = text(), take("I")[0]
            if kind in readers:
                attributes[key] = readers[kind]()
            else:
                (count,) = take("I")
                attributes[key] = list(take(f"{count}{'q' if kind == 3 else 'd'}"))
        graph.nodes.append((name, op, inputs, outputs, attributes))
    graph.outputs = [text() for _ in range(take("I")[0])]
    return graph


def to_openvino(graph: XnnGraph):
    """The graph as an OpenVINO model of the same values, binary convolutions in FakeQuantize + Convolution
    form, the form OpenVINO's CPU plugin turns into its BinaryConvolution: the sign before each one written
    again for it with outputs {0, 1} (the form Model Optimizer writes; with {-1, +1} outputs OpenVINO 2026's
    CPU plugin computed other values than the IR states), the weights +-1 behind a FakeQuantize with
    per-channel ranges, and the affine correction from {0, 1} to +-1 values and the pad value as constants."""
    import openvino.opset13 as ops

    def const(v) -> Any:
        return ops.constant(np.asarray(v, np.float32))

    values: Dict[str, Any] = {}
    for name, shape in graph.inputs:
        values[name] = ops.parameter(shape, np.float32, name=name).output(0)
    params = [values[name].get_node() for name, _ in graph.inputs]
    signs: Dict[str, List[str]] = {}  # a FakeQuantize's output -> its inputs

    def value(name: str) -> Any:
        return values[name] if name in values else const(graph.constants[name])

    def ints(a: Dict[str, Any], key: str, default: List[int]) -> List[int]:
        return [int(v) for v in a.get(key, default)]

    def binary_conv(inputs: List[str], a: Dict[str, Any]) -> Any:
        x, t_low, t_high = signs[inputs[0]][:3]
        w = graph.constants[inputs[1]]
        o = w.shape[0]
        zero, one = np.zeros((o, 1, 1, 1)), np.ones((o, 1, 1, 1))
        weights = ops.fake_quantize(const(w), const(zero), const(zero), const(-one), const(one), 2)
        sign = ops.fake_quantize(value(x), value(t_low), value(t_high), const(0.0), const(1.0), 2)
        strides, dilations = ints(a, "strides", [1, 1]), ints(a, "dilations", [1, 1])
        pads = ints(a, "pads_begin", [0, 0])
        y = ops.convolution(sign, weights, strides, pads, ints(a, "pads_end", [0, 0]), dilations)
        # With a = 2 * a01 - 1 and pad taps of value p: y = 2 * conv(a01) - (1 + p) * V + p * S, where V sums
        # the weights of the taps inside the input at each output position and S all of them.
        p = float(a.get("pad_value", 0.0))
        height, width = list(sign.get_output_shape(0))[2:]
        out_h, out_w = list(y.get_output_shape(0))[2:]
        inside = np.zeros((o, out_h, out_w))
        w_taps = w.sum(axis=1)
        for ky in range(w.shape[2]):
            rows = np.arange(out_h) * strides[0] - pads[0] + ky * dilations[0]
            for kx in range(w.shape[3]):
                cols = np.arange(out_w) * strides[1] - pads[1] + kx * dilations[1]
                mask = ((rows >= 0) & (rows < height))[:, None] & ((cols >= 0) & (cols < width))[None, :]
                inside += w_taps[:, ky, kx][:, None, None] * mask
        correction = -(1 + p) * inside + p * w.sum(axis=(1, 2, 3))[:, None, None]
        return ops.add(ops.multiply(y, const(2.0)), const(correction[None]))

    for name, op, inputs, outputs, a in graph.nodes:
        if op == "FakeQuantize":
            signs[outputs[0]] = inputs
            x = [value(i) for i in inputs]
            node = ops.fake_quantize(*x, int(a["levels"]))
        elif op == "BinaryConvolution":
            node = binary_conv(inputs, a)
        elif op == "Convolution":
            node = ops.convolution(value(inputs[0]), value(inputs[1]), ints(a, "strides", [1, 1]),
                                   ints(a, "pads_begin", [0, 0]), ints(a, "pads_end", [0, 0]),
                                   ints(a, "dilations", [1, 1]))
        elif op in ("Add", "Multiply"):
            node = (ops.add if op == "Add" else ops.multiply)(value(inputs[0]), value(inputs[1]))
        elif op in ("MaxPool", "AvgPool"):
            common = (ints(a, "strides", [1, 1]), ints(a, "pads_begin", [0, 0]), ints(a, "pads_end", [0, 0]),
                      ints(a, "kernel", [1, 1]))
            rounding = a.get("rounding_type", "floor")
            if op == "MaxPool":
                node = ops.max_pool(value(inputs[0]), common[0], [1, 1], *common[1:], rounding)
            else:
                node = ops.avg_pool(value(inputs[0]), *common, bool(a.get("exclude-pad", 0)), rounding)
        elif op == "ReduceMean":
            axes = ops.constant(graph.constants[inputs[1]].astype(np.int64))
            node = ops.reduce_mean(value(inputs[0]), axes, bool(a.get("keep_dims", 0)))
        elif op == "Reshape":
            shape = ops.constant(graph.constants[inputs[1]].astype(np.int64))
            node = ops.reshape(value(inputs[0]), shape, bool(a.get("special_zero", 0)))
        elif op == "MatMul":
            node = ops.matmul(value(inputs[0]), value(inputs[1]), bool(a.get("transpose_a", 0)),
                              bool(a.get("transpose_b", 0)))
        else:
            raise ValueError(f"node '{name}': {op} has no OpenVINO form here")
        values[outputs[0]] = node.output(0)  # MaxPool's output 1 is the indices
    results = []
    for name in graph.outputs:
        values[name].get_node().set_friendly_name(name)
        values[name].set_names({name})
        results.append(values[name])
    return ov.Model(results, params, "xnorcl")


def network_files(name: str, size: int, folder: str) -> Tuple[str, str]:
    """xnorcl's built-in network as an .xnn file and as an OpenVINO IR of the same values."""
    xnn = os.path.join(folder, name + ".xnn")
    xnorcl.save_model(name, xnn, size=size)
    ir = os.path.join(folder, name + ".xml")
    ov.save_model(to_openvino(read_xnn(xnn)), ir, compress_to_fp16=False)
    return xnn, ir


def main(argv: List[str] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", nargs="?", help="OpenVINO IR .xml (its .bin beside it)")
    parser.add_argument("--network", choices=("bireal18", "resnet18"), help="xnorcl's own network instead of MODEL")
    parser.add_argument("--size", type=int, default=224, help="--network: input height and width (default 224)")
    parser.add_argument("--write-resnet-layers", metavar="DIR", help="write the ResNet 3x3 layer IRs and exit")
    parser.add_argument("--runs", type=int, default=20, help="timed runs per engine (median)")
    parser.add_argument("--block", type=int, default=5, help="runs per engine in each turn (default 5)")
    parser.add_argument("--variant", default="auto", help="xnorcl variant: auto, local or global")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    args = parser.parse_args(argv)
    if args.write_resnet_layers:
        for path in write_resnet_layers(args.write_resnet_layers):
            print(f"wrote {path}")
        return 0
    if args.runs < 1 or args.block < 1:
        parser.error(f"--runs and --block take 1 or more (given {args.runs} and {args.block})")
    if bool(args.model) == bool(args.network):
        parser.error("give MODEL.xml or --network NAME (or --write-resnet-layers DIR)")
    with tempfile.TemporaryDirectory() as directory:
        if args.network:
            xnn, ir = network_files(args.network, args.size, directory)
            return compare(ir, xnn, args)
        xnn = os.path.join(directory, "model.xnn")
        xnorcl.convert(args.model, xnn)
        return compare(args.model, xnn, args)


def check_same_values(ir, model, inputs: Dict[str, np.ndarray]) -> str:
    """OpenVINO's output of the IR against xnorcl's host reference: max-norm error relative to the largest
    value, and whether the top-1 classes agree."""
    got = ov.Core().compile_model(ir, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})(inputs)
    want = model.reference(inputs)
    name = next(iter(want))
    y, r = np.asarray(got[0]), want[name]
    error = float(np.max(np.abs(y - r)) / max(np.max(np.abs(r)), 1e-30))
    same = bool((np.argmax(y.reshape(len(y), -1), 1) == np.argmax(r.reshape(len(r), -1), 1)).all())
    return f"OpenVINO's output within {error:.2g} of xnorcl's host reference, top-1 {'the same' if same else 'DIFFERS'}"


def compare(ir_path: str, xnn: str, args) -> int:
    ir = ov.Core().read_model(ir_path)
    rng = np.random.default_rng(args.seed)
    inputs = {}
    for parameter in ir.inputs:
        inputs[parameter.get_any_name()] = rng.standard_normal([int(d) for d in parameter.get_shape()]).astype(
            np.float32
        )

    model = xnorcl.load(xnn, runtime=xnorcl.Runtime(variant=args.variant))
    check = check_same_values(ir, model, inputs) if args.network else ""
    engines = [openvino_engine("OpenVINO CPU, IR as given", ir, inputs)]
    floating = float_version(ir_path)
    if floating is not None:
        engines.append(openvino_engine("OpenVINO CPU, float32 (FakeQuantize removed)", floating, inputs))
    ours = xnorcl_engine(model, inputs)
    engines.append(ours)
    time_in_turns(engines, args.runs, args.block)

    print(f"{args.network or args.model}: medians of {args.runs} runs, wall time per inference "
          f"(the engines in turns of {args.block} runs)")
    if check:
        print(check)
    for engine in engines:
        device = f", device time {statistics.median(engine.devices):.3f} ms (median)" if engine.devices else ""
        print(f"  {statistics.median(engine.walls):10.3f} ms  {engine.label}{device}")
    for engine in engines[:-1]:
        ratio = statistics.median(engine.walls) / statistics.median(ours.walls)
        faster = f"{ratio:.2f}x faster" if ratio >= 1 else f"{1 / ratio:.2f}x slower"
        print(f"xnorcl against {engine.label}: {faster} (wall)")
    # OpenVINO renames nodes in its transformations (a Convolution becomes "Convolution_3448" of type
    # BinaryConvolution), so the two engines' steps are listed apart rather than matched by name.
    for engine in (engines[0], ours):
        print(f"per node, last run: {engine.label}")
        for name, ms in engine.nodes().items():
            if ms > 0:
                print(f"  {ms:10.3f} ms  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
