# SPDX-License-Identifier: Apache-2.0
"""Model converters: a model from the format it was trained or exported in becomes an .xnn file.

Conversion happens offline, on a desktop; a device only loads .xnn files. Each format is read by its own
maintained reader package, installed through the package's extras (`pip install "xnorcl[openvino]"`,
`"xnorcl[tflite]"`, `"xnorcl[onnx]"` or `"xnorcl[all]"`). The registry below lists every format by file
suffix; a format whose converter is not in this version says so.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from .._xnorcl import Error, InvalidArgument, __version__


@dataclass(frozen=True)
class Format:
    name: str
    suffixes: Tuple[str, ...]
    extra: str  # the pip extra that installs the readers
    readers: Tuple[str, ...]  # importable modules the converter needs
    module: Optional[str]  # xnorcl.convert submodule with convert(source, destination); None: not yet


FORMATS: Tuple[Format, ...] = (
    Format("OpenVINO IR", (".xml",), "openvino", ("openvino",), "xnorcl.convert.openvino"),
    Format("Larq Compute Engine TFLite", (".tflite",), "tflite", ("tflite", "flatbuffers"), "xnorcl.convert.tflite"),
    Format("ONNX (PyTorch, QONNX)", (".onnx",), "onnx", ("onnx",), "xnorcl.convert.onnx"),
)


class ConverterUnavailable(Error):
    """The model's format is known, but its converter or its reader is not installed."""


def format_for(path: str) -> Format:
    """The format of a model file, by its suffix."""
    suffix = os.path.splitext(str(path))[1].lower()
    for f in FORMATS:
        if suffix in f.suffixes:
            return f
    known = ", ".join(f"{s} ({f.name})" for f in FORMATS for s in f.suffixes)
    raise InvalidArgument(f"{path}: no converter reads '{suffix}' files; the formats are {known}")


def formats_text() -> str:
    """One line per format: its suffixes, the extra to install and whether this version converts it."""
    lines = []
    for f in FORMATS:
        state = "available" if f.module else f"not in xnorcl {__version__}"
        lines.append(f"  {', '.join(f.suffixes):<10} {f.name:<28} pip extra [{f.extra}]  ({state})")
    return "\n".join(lines)


def convert(source: str, destination: str) -> Dict[str, Any]:
    """Converts the model file `source` (its format by suffix) into the .xnn file `destination`.

    Returns what was mapped, fused and refused. Nothing is written when the conversion fails: an unsupported
    op or attribute is refused (InvalidArgument) with the list of what the model needs that xnorcl lacks.
    """
    fmt = format_for(source)
    if fmt.module is None:
        installed = [f.name for f in FORMATS if f.module]
        raise ConverterUnavailable(
            f"{source}: xnorcl {__version__} has no {fmt.name} converter yet. Formats that will be "
            f"supported:\n{formats_text()}\nConverters installed in this version: "
            f"{', '.join(installed) if installed else 'none'}."
        )
    missing = [r for r in fmt.readers if importlib.util.find_spec(r) is None]
    if missing:
        raise ConverterUnavailable(
            f"{source}: converting {fmt.name} needs {', '.join(missing)}: "
            f'pip install "xnorcl[{fmt.extra}]"'
        )
    from ._common import check_paths

    check_paths(os.fspath(source), os.fspath(destination))
    return importlib.import_module(fmt.module).convert(os.fspath(source), os.fspath(destination))


__all__ = ["FORMATS", "ConverterUnavailable", "Format", "convert", "format_for", "formats_text"]
