"""Type stubs of xnorcl's extension module (re-exported by the package xnorcl).

Layouts: data tensors are C-contiguous numpy arrays in NCHW order; filters are [C_OUT, C_IN, KH, KW].
Packed activations are uint32 words [N, H, W, ceil(C/32)]: channel c is bit c % 32 (least significant bit
first) of word c // 32, bit 1 is +1, unused tail bits 0. Packed filter bytes hold element
i = ((o*C_IN + c)*KH + ky)*KW + kx in bit 7 - i % 8 ("msb") or bit i % 8 ("lsb") of byte i // 8.
"""

from typing import Any, Callable, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

_Pair = Tuple[int, int]
_Shape4 = Tuple[int, int, int, int]
_FloatArray = npt.NDArray[np.float32]
_Floats = Union[Sequence[float], npt.NDArray[np.float32]]
_BitOrder = Literal["msb", "lsb", "msb_first", "lsb_first"]
_AutoPad = Literal["explicit", "same_upper", "same_lower", "valid"]

class Error(RuntimeError):
    """Every failure xnorcl reports; messages are those of the C++ library."""

class InvalidArgument(Error, ValueError):
    """Attributes, shapes, filters or arrays refused before any device work; names the expected and given values."""

class DeviceNotFound(Error):
    """No OpenCL platform, or no device matching the request (the message lists what exists)."""

class OpenCLError(Error):
    """An OpenCL call failed."""

    call: str  # the OpenCL function, e.g. "clEnqueueNDRangeKernel"
    code: int  # the OpenCL error code, e.g. -54 (CL_INVALID_WORK_GROUP_SIZE)

class BuildError(Error):
    """Building a kernel program failed."""

    build_log: str

class Runtime:
    """The OpenCL device, its queue and xnorcl's compiled programs; copies share them. Thread-safe."""

    def __init__(
        self,
        device: Optional[str] = None,
        variant: Optional[Literal["auto", "local", "global"]] = None,
        cache_dir: Optional[str] = None,
        *,
        word_bits: Optional[int] = None,
        max_work_group_size: Optional[int] = None,
        tuning: Optional[Literal["use", "tune", "ignore"]] = None,
        tuning_file: Optional[str] = None,
        native_popcount: Optional[bool] = None,
    ) -> None:
        """None takes the environment (XNORCL_DEVICE, XNORCL_VARIANT, XNORCL_CACHE_DIR, XNORCL_WORD_BITS,
        XNORCL_MAX_WORK_GROUP_SIZE, XNORCL_TUNING, XNORCL_TUNING_FILE, XNORCL_NATIVE_POPCOUNT), then the
        defaults. device: "P:D" or a
        case-insensitive substring of "<platform> / <device>" (default: the first GPU, else accelerator, else
        CPU). cache_dir "off" disables the program-binary cache. word_bits: packed word size 32 or 64 (a test
        and tuning hook). tuning: "use" (default) runs the tuning file's configurations, "tune" also tunes a
        model's untuned steps when it is loaded, "ignore" runs the default rules. tuning_file: its path
        (default: beside the program cache). native_popcount: False runs the portable bit counting where the
        device has a vector popcount instruction the kernels would use (device_info["native_popcount"]);
        True on a device without one is refused."""
    @property
    def tuning_file(self) -> str:
        """The tuning file this runtime reads and xnorcl.tune writes; "" when there is none."""
    @property
    def device_name(self) -> str:
        """ "<platform> / <device>" """
    @property
    def variant(self) -> Literal["local", "global"]:
        """The variant in use (never "auto")."""
    @property
    def variant_reason(self) -> str:
        """Why that variant was chosen."""
    @property
    def native_popcount(self) -> bool:
        """Whether the kernels count bits with the CPU's vector popcount instruction."""
    @property
    def profiling_enabled(self) -> bool:
        """Whether device times (last_stage_times, last_node_times) are available."""
    @property
    def device_info(self) -> Dict[str, Any]:
        """The device's properties: name, type, local memory type and size (bytes), limits, auto variant."""

class Threshold:
    """How one channel turns a float y into a bit: "greater" (y > value), "less" (y < value), "always_zero"
    or "always_one". Exact IEEE comparisons; y == value gives 0; NaN gives 0 under every rule."""

    def __init__(
        self, value: float, mode: Literal["greater", "less", "always_zero", "always_one"] = "greater"
    ) -> None: ...
    @property
    def value(self) -> float: ...
    @value.setter
    def value(self, value: float) -> None: ...
    @property
    def mode(self) -> str: ...
    @mode.setter
    def mode(self, mode: str) -> None: ...

_Thresholds = Union[Sequence[Threshold], _Floats]

class BinaryConvolution:
    """OpenVINO BinaryConvolution-1 (xnor-popcount) on the runtime's device.

    Input bit: x > input_thresholds[c] is +1, else -1 (thresholds 0 when None; NaN is -1). Filter bit 1 is +1.
    Taps in the padding take the real value pad_value. Each output is computed from integer counts with one
    rounding, bitwise equal to reference_binary_convolution on every device. Calls from several threads are
    safe (one layer takes turns; different layers run concurrently); the GIL is released while it runs.
    """

    def __init__(
        self,
        runtime: Runtime,
        x_shape: _Shape4,
        filter_bits: npt.NDArray[Union[np.uint8, np.float32]],
        filter_shape: _Shape4,
        bit_order: _BitOrder = "msb",
        strides: _Pair = (1, 1),
        pads_begin: _Pair = (0, 0),
        pads_end: _Pair = (0, 0),
        dilations: _Pair = (1, 1),
        pad_value: float = 0.0,
        auto_pad: _AutoPad = "explicit",
        input_thresholds: Optional[_Floats] = None,
        mode: str = "xnor-popcount",
        *,
        output: Literal["float32", "scale_bias", "packed"] = "float32",
        scale: Optional[_Floats] = None,
        bias: Optional[_Floats] = None,
        thresholds: Optional[_Thresholds] = None,
        max_pool: Optional[Mapping[str, Any]] = None,
        input_packed: bool = False,
    ) -> None:
        """x_shape: [N, C_IN, H, W]. filter_bits: a 1-D uint8 array of exactly ceil(n/8) packed bytes in
        bit_order, or an array of filter_shape (float32 or uint8) whose elements > 0 are +1 (bit_order is then
        ignored). output: "float32" (Y), "scale_bias" (fmaf(scale[o], Y, bias[o]), C_OUT values each) or
        "packed" (bits of Y under thresholds, one rule or number t (y > t) per output channel, as uint32 words);
        max_pool (with "packed"): a dict of kernel, strides, pads_begin, pads_end, auto_pad, rounding_type
        ("floor" or "ceil") that ORs each window's bits in the same launch. input_packed: the input is uint32
        words [N, H, W, ceil(C_IN/32)] (input_thresholds must then be None)."""
    def run(
        self, x: npt.NDArray[Union[np.float32, np.uint8, np.uint32]]
    ) -> npt.NDArray[Union[np.float32, np.uint32]]:
        """x: float32 or uint8 NCHW of x_shape (uint32 packed words with input_packed). Returns a new float32
        NCHW array of output_shape, or uint32 words [N, OH, OW, ceil(C_OUT/32)] with output="packed"."""
    @property
    def input_shape(self) -> List[int]: ...
    @property
    def output_shape(self) -> List[int]:
        """[N, C_OUT, OH, OW] (pooled with max_pool)."""
    @property
    def pads_begin(self) -> _Pair:
        """The padding in use, after auto_pad."""
    @property
    def pads_end(self) -> _Pair: ...
    @property
    def output(self) -> Literal["float32", "scale_bias", "packed"]: ...
    @property
    def input_packed(self) -> bool: ...
    def plan(self) -> Dict[str, Any]:
        """variant, launches (kernel, global and local work sizes), tiles, word_bits, scratch_bytes, text."""
    def last_stage_times(self) -> List[Tuple[str, float]]:
        """(kernel, milliseconds of device time) per launch of the last run; empty without profiling."""

def reference_binary_convolution(
    x: npt.NDArray[Union[np.float32, np.uint8]],
    filter_bits: npt.NDArray[Union[np.uint8, np.float32]],
    filter_shape: _Shape4,
    bit_order: _BitOrder = "msb",
    strides: _Pair = (1, 1),
    pads_begin: _Pair = (0, 0),
    pads_end: _Pair = (0, 0),
    dilations: _Pair = (1, 1),
    pad_value: float = 0.0,
    auto_pad: _AutoPad = "explicit",
    input_thresholds: Optional[_Floats] = None,
    mode: str = "xnor-popcount",
) -> _FloatArray:
    """The host reference: float32 NCHW, bitwise what every device computes for the same layer."""

def fold_batch_norm(scale: _Floats, bias: _Floats) -> List[Threshold]:
    """One rule per channel for bit = scale*y + bias > 0 (a folded batch-norm followed by sign)."""

def pack_activations(y: _FloatArray, thresholds: Optional[_Thresholds] = None) -> npt.NDArray[np.uint32]:
    """float32 NCHW -> uint32 words [N, H, W, ceil(C/32)]; thresholds None means y > 0 for every channel."""

def unpack_activations(words: npt.NDArray[np.uint32], shape: _Shape4) -> _FloatArray:
    """uint32 words of the logical NCHW shape -> float32 NCHW of 0.0 (bit 0) and 1.0 (bit 1)."""

def list_devices() -> List[Dict[str, Any]]:
    """Every OpenCL device of every platform. Raises DeviceNotFound with no platform."""

def save_vehicle_classifier(path: str, seed: int = 1, batch: int = 1) -> None:
    """Writes the paper's vehicle classifier (input [batch, 3, 96, 96] float32 pixels 0..255, output 4 float
    logits [batch, 4, 1, 1]) with weights drawn from seed, as an .xnn file."""

def network_file_version(path: str) -> int:
    """The format version of an .xnn file: 1 (a chain of binary layers) or 2 (a graph)."""

def save_model(
    name: str, path: str, batch: int = 1, size: int = 224, width_divisor: int = 1, seed: int = 1
) -> None:
    """Writes a model built in code with seeded weights as an .xnn graph file: "bireal18" (Bi-Real Net-18)
    or "resnet18" (a binary ResNet-18); input "input" [batch, 3, size, size] float32, output "logits"
    [batch, 1000]; width_divisor divides every channel count (smaller networks for quick tests)."""

def _check_graph_file(path: str) -> Dict[str, Tuple[List[int], str]]:
    """Loads and validates a graph file without a device: every tensor's (dims, "f32" or "bits")."""

class _Graph:
    def __init__(
        self,
        source: Union[str, bytes, bytearray, memoryview],
        runtime: Runtime,
        images: Dict[str, Tuple[str, str, Tuple[float, float, float], Tuple[float, float, float]]],
    ) -> None:
        """An .xnn model on a runtime: a str is a path; a C-contiguous buffer is the model's bytes, parsed in
        place. Any other type raises TypeError."""
    @property
    def inputs(self) -> List[Tuple[str, Tuple[int, ...], str]]: ...
    @property
    def outputs(self) -> List[Tuple[str, Tuple[int, ...], str]]: ...
    def run(self, inputs: Dict[str, _FloatArray]) -> Dict[str, npt.NDArray[Any]]: ...
    def reference(self, inputs: Dict[str, _FloatArray]) -> Dict[str, npt.NDArray[Any]]: ...
    def plan(self) -> Dict[str, Any]: ...
    def last_stage_times(self) -> List[Tuple[str, float]]: ...
    def tune(
        self,
        mode: str,
        repetitions: int,
        progress: Optional[Callable[[int, int, str], None]],
        store: bool,
    ) -> Dict[str, Any]: ...

