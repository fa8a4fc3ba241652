"""Models loaded from .xnn files: the one place that knows what a model runs on underneath.

Today an .xnn file holds a chain of binary layers (one float32 NCHW input named "input", one output named
"output"); the model runs it on the device with no host round-trip between layers.
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

from ._xnorcl import InvalidArgument, Runtime, _Network

INPUT_NAME = "input"
OUTPUT_NAME = "output"


class Model:
    """A network loaded from an .xnn file onto a runtime's device (see xnorcl.load)."""

    def __init__(self, path: str, runtime: Optional[Runtime] = None) -> None:
        self._runtime = runtime if runtime is not None else Runtime()
        self._network = _Network(str(path), self._runtime)

    @property
    def runtime(self) -> Runtime:
        return self._runtime

    @property
    def inputs(self) -> List[Tuple[str, Tuple[int, ...]]]:
        """(name, shape) of every input: float32 NCHW."""
        return [(INPUT_NAME, tuple(self._network.input_shape))]

    @property
    def outputs(self) -> List[Tuple[str, Tuple[int, ...]]]:
        """(name, shape) of every output: float32 NCHW, or for packed bits the uint32 words' shape."""
        return [(OUTPUT_NAME, tuple(self._output_array_shape()))]

    def _output_array_shape(self) -> List[int]:
        n, c, h, w = self._network.output_shape
        return [n, h, w, (c + 31) // 32] if self._network.output_packed else [n, c, h, w]

    def run(
        self, x: Union[np.ndarray, Mapping[str, np.ndarray]]
    ) -> Union[np.ndarray, Dict[str, np.ndarray]]:
        """Runs the model on the device.

        run(x) takes the first input as a float32 NCHW array and returns the first output; run({"input": x})
        takes a dict of every input by name and returns a dict of every output by name.
        """
        if isinstance(x, Mapping):
            names = sorted(x.keys())
            if names != [INPUT_NAME]:
                raise InvalidArgument(
                    f"inputs: expected the names ['{INPUT_NAME}'], got {names}"
                )
            return {OUTPUT_NAME: self._network.run(x[INPUT_NAME])}
        return self._network.run(x)

    def reference(self, x: np.ndarray) -> np.ndarray:
        """The host reference of run(x): what every device computes, bitwise."""
        return self._network.reference(x)

    def plan(self) -> dict:
        """What runs where: the device, the variant and the nodes in order."""
        names = self._network.layers
        return {
            "device": self._runtime.device_name,
            "variant": self._runtime.variant,
            "nodes": [f"{i}:{name}" for i, name in enumerate(names)],
            "inputs": self.inputs,
            "outputs": self.outputs,
        }

    def last_node_times(self) -> Dict[str, float]:
        """Device milliseconds per node of the last run ("<index>:<op>"), in order; a node fused into the
        launch of the one before it has no entry of its own. Empty when the queue has no profiling."""
        times: Dict[str, float] = {}
        for stage, ms in self._network.last_stage_times():
            node = stage.split(" ", 1)[0]
            times[node] = times.get(node, 0.0) + ms
        return times

    def last_stage_times(self) -> List[Tuple[str, float]]:
        """(launch, milliseconds) of every kernel launch of the last run."""
        return self._network.last_stage_times()

    def __repr__(self) -> str:
        return f"xnorcl.Model(inputs={self.inputs}, outputs={self.outputs})"


def load(path: str, runtime: Optional[Runtime] = None) -> Model:
    """Loads an .xnn file onto runtime's device (a new Runtime() when None: the environment, then defaults).
    A malformed file is refused with InvalidArgument naming the offset."""
    return Model(path, runtime)
