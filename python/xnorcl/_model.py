# SPDX-License-Identifier: Apache-2.0
"""Models loaded from .xnn files or their bytes: the one place that knows what a model runs on underneath.

An .xnn file holds a graph (version 2: named inputs and outputs, any ops) or a chain of binary layers (version 1:
one float32 NCHW input named "input", one output named "output"). Both run through xnorcl's one graph
executor (a layer chain loads as the graph that computes it, bit for bit), whole on the device, with no host
round-trip between nodes. A model's bytes in memory (read from an archive, an app's assets or the network)
load exactly as the same bytes in a file.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ._xnorcl import InvalidArgument, Runtime, _Graph, network_file_version

#: What Model and load take: a path to an .xnn file, or the file's bytes.
ModelSource = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview]


@dataclass(frozen=True)
class ImageInput:
    """How a camera frame's bytes become a model's float input, converted on the device.

    The input then takes a uint8 array [N, H, W, 3 or 4] of interleaved pixels instead of float32
    [N, 3, H, W] (or NHWC [N, H, W, 3], as models converted from TensorFlow take): format is the bytes of a pixel ("rgb", "rgba", "bgr", "bgra"; the fourth byte is dropped),
    order the model's channel order ("rgb" or "bgr"), and each value is (byte - mean[c]) * scale[c] per model
    channel, as float32. No resizing: a frame has the model's height and width."""

    format: str = "rgba"
    order: str = "rgb"
    mean: Sequence[float] = (0.0, 0.0, 0.0)
    scale: Sequence[float] = (1.0, 1.0, 1.0)

    def _spec(self, name: str) -> Tuple[str, str, Tuple[float, ...], Tuple[float, ...]]:
        def three(values: Sequence[float], what: str) -> Tuple[float, ...]:
            v = tuple(float(x) for x in values)
            if len(v) != 3:
                raise InvalidArgument(f"image input '{name}': {what} takes 3 values (one per channel), got {len(v)}")
            return v

        return (self.format, self.order, three(self.mean, "mean"), three(self.scale, "scale"))


class Model:
    """A network loaded onto a runtime's device from an .xnn file or its bytes (see xnorcl.load)."""

    def __init__(
        self,
        source: ModelSource,
        runtime: Optional[Runtime] = None,
        images: Optional[Mapping[str, ImageInput]] = None,
    ) -> None:
        specs = _image_specs(images)
        if isinstance(source, (bytes, bytearray, memoryview)):
            data = _checked_bytes(source)
            self._runtime = runtime if runtime is not None else Runtime()
            self._graph = _Graph(data, self._runtime, specs)
            return
        path = _checked_path(source)
        # The file first: a missing or malformed one is refused before a device is started for it.
        network_file_version(path)  # a file that is no .xnn is refused naming the offset
        self._runtime = runtime if runtime is not None else Runtime()
        self._graph = _Graph(path, self._runtime, specs)

    @property
    def runtime(self) -> Runtime:
        return self._runtime

    @property
    def inputs(self) -> List[Tuple[str, Tuple[int, ...]]]:
        """(name, shape) of every input: float32 NCHW, or for an image input uint8 NHWC [N, H, W, 3 or 4]."""
        return [(name, tuple(dims)) for name, dims, _ in self._graph.inputs]

    @property
    def outputs(self) -> List[Tuple[str, Tuple[int, ...]]]:
        """(name, shape) of every output: float32 NCHW, or for packed bits the uint32 words' shape."""
        return [
            (name, tuple(dims) if kind == "f32" else _packed_words_shape(dims))
            for name, dims, kind in self._graph.outputs
        ]

    def run(
        self, x: Union[np.ndarray, Mapping[str, np.ndarray]]
    ) -> Union[np.ndarray, Dict[str, np.ndarray]]:
        """Runs the model on the device.

        run(x) takes the first input as a float32 NCHW array and returns the first output; run({"input": x})
        takes a dict of every input by name and returns a dict of every output by name.
        """
        if isinstance(x, Mapping):
            return self._graph.run(_named(x))
        return self._graph.run({self.inputs[0][0]: x})[self.outputs[0][0]]

    def reference(
        self, x: Union[np.ndarray, Mapping[str, np.ndarray]]
    ) -> Union[np.ndarray, Dict[str, np.ndarray]]:
        """The host reference of run(x): bitwise what every device computes for binary tensors; float
        tensors within 1e-5 relative (the reference computes them in double)."""
        if isinstance(x, Mapping):
            return self._graph.reference(_named(x))
        return self._graph.reference({self.inputs[0][0]: x})[self.outputs[0][0]]

    def plan(self) -> dict:
        """What runs where: the device, the variant, the steps in order (each step's kernels and the nodes fused
        into it), and the device bytes of activations and weights."""
        p = self._graph.plan()
        return {
            "device": self._runtime.device_name,
            "variant": p["variant"],
            "nodes": [step["step"] for step in p["steps"]],
            "steps": p["steps"],
            "activation_bytes": p["activation_bytes"],
            "weight_bytes": p["weight_bytes"],
            "inputs": self.inputs,
            "outputs": self.outputs,
        }

    def last_node_times(self) -> Dict[str, float]:
        """Device milliseconds per step of the last run, in order, named by its nodes ("conv1+bn1+sign2" where
        nodes are fused into one launch; a version-1 chain's nodes are "<index>:<layer>"). Empty when the queue
        has no profiling."""
        times: Dict[str, float] = {}
        for stage, ms in self.last_stage_times():
            node = stage.split(" ", 1)[0]
            times[node] = times.get(node, 0.0) + ms
        return times

    def last_stage_times(self) -> List[Tuple[str, float]]:
        """(launch, milliseconds) of every kernel launch of the last run."""
        return self._graph.last_stage_times()

    def __repr__(self) -> str:
        return f"xnorcl.Model(inputs={self.inputs}, outputs={self.outputs})"


def tune(
    model: Union[Model, ModelSource],
    runtime: Optional[Runtime] = None,
    *,
    mode: str = "fast",
    repetitions: int = 0,
    progress: Optional[Callable[[int, int, str], None]] = None,
    store: bool = True,
) -> dict:
    """Tunes a model's kernel configurations on its runtime's device and returns what was measured.

    For each distinct step of the model (its shape class) the candidate configurations of `mode` ("fast",
    "normal" or "exhaustive") are timed inside whole runs, `repetitions` times each (0: 5, 9 or 15 by mode; at
    most 1000); the fastest is kept, the default unless another beats it beyond noise. Every candidate computes
    the same bits.
    With store=True the results go to the runtime's tuning file (Runtime.tuning_file), which later runtimes on
    this device read. A Model given is rebuilt to run the kept configurations; a path or a model's bytes is
    loaded on `runtime` (default: Runtime()). progress(done, total, what) is called after each round. Ctrl-C
    stops between rounds: what was measured is kept and stored, then KeyboardInterrupt is raised.

    The report: "classes" (per shape class: "shape_class", "steps", "default_config", "best_config",
    "default_ms", "best_ms", "candidates"), "stopped", "file" (the tuning file written, or ""), "seconds",
    "default_ms" and "tuned_ms" (the whole model's median device time per run).
    """
    if not isinstance(model, Model):
        model = Model(model, runtime)
    elif runtime is not None and runtime is not model.runtime:
        raise InvalidArgument("tune: runtime is given, but the model already runs on a runtime of its own")
    if isinstance(repetitions, bool) or not isinstance(repetitions, int):
        raise InvalidArgument(f"tune: repetitions must be an int, not {type(repetitions).__name__}")
    if progress is not None and not callable(progress):
        raise InvalidArgument(f"tune: progress must be callable, not {type(progress).__name__}")
    return model._graph.tune(mode, repetitions, progress, bool(store))


def _checked_bytes(data: Union[bytes, bytearray, memoryview]) -> Union[bytes, bytearray, memoryview]:
    """A model's bytes as they are (parsed in place, never copied), refused before any device work when a
    memoryview does not hold them in one piece."""
    if isinstance(data, memoryview) and not data.c_contiguous:
        raise InvalidArgument(
            "model bytes: the memoryview is not C-contiguous; pass bytes(view) or a contiguous view"
        )
    return data


def _checked_path(path: Union[str, "os.PathLike[str]"]) -> str:
    """The path as a str, refused before any device work when it cannot name a model file."""
    try:
        text = os.fspath(path)
    except TypeError:
        raise TypeError(
            "a model is a path (str or os.PathLike) or its bytes (bytes, bytearray or memoryview), "
            f"not {type(path).__name__}"
        ) from None
    if isinstance(text, bytes):
        raise TypeError(f"a model path must be a str, not bytes (from {type(path).__name__}.__fspath__)")
    if "\0" in text:
        raise InvalidArgument(
            f"the model path {text.split(chr(0))[0]!r}... holds a NUL character at offset {text.index(chr(0))}"
        )
    if not os.path.exists(text):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), text)
    if os.path.isdir(text):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), text)
    return text


def _named(inputs: Mapping) -> Dict[str, np.ndarray]:
    """Inputs by name; a name that is not a str is refused naming it."""
    for name in inputs:
        if not isinstance(name, str):
            raise InvalidArgument(
                f"inputs: every name must be a str; {name!r} is a {type(name).__name__}"
            )
    return dict(inputs)


def _image_specs(images: Optional[Mapping[str, ImageInput]]) -> Dict[str, Tuple]:
    if images is None:
        return {}
    if not isinstance(images, Mapping):
        raise TypeError(f"images: a dict of input name -> xnorcl.ImageInput, not {type(images).__name__}")
    specs = {}
    for name, image in images.items():
        if not isinstance(name, str) or not isinstance(image, ImageInput):
            raise TypeError(f"images: {name!r} -> {image!r}; expected a str name -> xnorcl.ImageInput")
        specs[name] = image._spec(name)
    return specs


def _packed_words_shape(dims: Tuple[int, ...]) -> Tuple[int, ...]:
    n, c, h, w = (list(dims) + [1, 1, 1])[:4]
    return (n, h, w, (c + 31) // 32)


def load(
    source: ModelSource,
    runtime: Optional[Runtime] = None,
    images: Optional[Mapping[str, ImageInput]] = None,
) -> Model:
    """Loads an .xnn model onto runtime's device (a new Runtime() when None: the environment, then defaults).

    source is a path (str or os.PathLike) or the model's bytes (bytes, bytearray or a C-contiguous
    memoryview), such as a file read from an archive or an app's assets: the bytes load exactly as the same
    file would, read in place. A missing file raises FileNotFoundError; malformed contents InvalidArgument
    naming the offset (after the path, or after "model bytes"); any other type TypeError.

    images takes inputs as camera frames: {"input": xnorcl.ImageInput("rgba", mean=..., scale=...)} makes the
    float32 input "input" [N, 3, H, W] (or [N, H, W, 3]) take uint8 pixels [N, H, W, 4], converted on the
    device."""
    return Model(source, runtime, images)
