# SPDX-License-Identifier: Apache-2.0
"""xnorcl: binary (xnor-popcount) convolutions and networks on OpenCL devices, numpy in and out.

Arrays are C-contiguous numpy arrays in NCHW layout: float32 or uint8 inputs (an input value x is the bit
x > threshold, +1 or -1), float32 outputs, and packed activations as uint32 words [N, H, W, ceil(C/32)]
(channel c is bit c % 32, least significant bit first). Anything else is refused with InvalidArgument,
never copied into something it did not mean.
"""

from ._xnorcl import (
    BinaryConvolution,
    BuildError,
    DeviceNotFound,
    Error,
    InvalidArgument,
    OpenCLError,
    Runtime,
    Threshold,
    __version__,
    fold_batch_norm,
    list_devices,
    network_file_version,
    pack_activations,
    reference_binary_convolution,
    save_model,
    save_vehicle_classifier,
    unpack_activations,
)
from ._model import ImageInput, Model, load, tune
from .convert import ConverterUnavailable, convert

__all__ = [
    "BinaryConvolution",
    "BuildError",
    "ConverterUnavailable",
    "DeviceNotFound",
    "Error",
    "ImageInput",
    "InvalidArgument",
    "Model",
    "OpenCLError",
    "Runtime",
    "Threshold",
    "__version__",
    "convert",
    "fold_batch_norm",
    "list_devices",
    "load",
    "network_file_version",
    "pack_activations",
    "reference_binary_convolution",
    "save_model",
    "save_vehicle_classifier",
    "tune",
    "unpack_activations",
]
