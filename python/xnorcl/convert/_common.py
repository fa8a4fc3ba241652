# SPDX-License-Identifier: Apache-2.0
"""What every converter shares: the conversion report, the composition of per-channel affine chains (so the
executor fuses a batch-norm into the op before it), and writing the .xnn file only once the C++ loader has
accepted the whole graph."""

from __future__ import annotations

import os
import stat
import tempfile
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from .. import _xnorcl
from .._xnorcl import InvalidArgument
from . import xnn


@dataclass
class Report:
    mapped: Counter = field(default_factory=Counter)
    fused: List[str] = field(default_factory=list)
    folded: List[str] = field(default_factory=list)
    refused: List[str] = field(default_factory=list)

    def as_dict(self, graph: xnn.Graph) -> Dict[str, Any]:
        return {
            "inputs": [(name, tuple(dims)) for name, dims in graph.inputs],
            "outputs": list(graph.outputs),
            "mapped": dict(sorted(self.mapped.items())),
            "fused": list(self.fused),
            "folded": len(self.folded),
            "refused": list(self.refused),
            "nodes": len(graph.nodes),
            "constants": len(graph.constants),
        }


def unique_name(base: str, taken: set) -> str:
    """`base`, or `base#2`, `base#3`, ... : the first not in `taken`, which it joins."""
    name, k = base, 1
    while name in taken:
        k += 1
        name = f"{base}#{k}"
    taken.add(name)
    return name


def refuse_all(refused: List[str]) -> None:
    """Raises the refusal that lists everything the model needs that xnorcl lacks (nothing is written)."""
    if not refused:
        return
    count = len(refused)
    lines = "\n  ".join(refused)
    raise InvalidArgument(
        f"xnorcl cannot convert this model ({count} unsupported op{'s' if count > 1 else ''} or "
        f"attribute{'s' if count > 1 else ''}); nothing was written:\n  {lines}"
    )


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _check_readable(path: str, missing_ok: bool) -> bool:
    """Whether a file is there to read; refuses anything but a regular file (a FIFO would block its reader
    forever), and a missing file unless missing_ok."""
    try:
        st = os.stat(path)
    except FileNotFoundError as e:
        if missing_ok:
            return False
        raise InvalidArgument(f"{path}: cannot read it: {e.strerror}") from None
    except OSError as e:
        raise InvalidArgument(f"{path}: cannot read it: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise InvalidArgument(f"{path}: cannot read it: it is {_kind(st.st_mode)}, not a regular file")
    return True


def check_paths(source: str, destination: str) -> None:
    """Refuses, before any reading, a source that is no regular file (a FIFO would block the reader forever)
    and a destination that is anything but a new or existing regular file other than the source in an
    existing folder: a converter never replaces a device, a FIFO, a directory or the model it reads."""
    for name, path in (("model", source), ("output", destination)):
        if not isinstance(path, str) or not path or "\0" in path:
            raise InvalidArgument(f"the {name} path {path!r} is not a file name")
    _check_readable(source, missing_ok=False)
    folder = os.path.dirname(os.path.abspath(destination))
    if not os.path.isdir(folder):
        raise InvalidArgument(f"{destination}: cannot write it: the folder {folder} does not exist")
    if destination.endswith(os.sep):
        raise InvalidArgument(f"{destination}: cannot write it: the output is a file name, not a folder")
    try:
        out = os.stat(destination)
    except FileNotFoundError:
        return
    except OSError as e:
        raise InvalidArgument(f"{destination}: cannot write it: {e.strerror}") from None
    if not stat.S_ISREG(out.st_mode):
        raise InvalidArgument(
            f"{destination}: cannot write it: it is {_kind(out.st_mode)}; xnorcl-convert writes only regular files"
        )
    if os.path.samefile(source, destination):
        raise InvalidArgument(f"{destination}: cannot write it: it is the model being converted")


# The most elements a converter computes for one constant before run time (512 MiB of float32): a model whose
# few bytes claim more (a ConstantOfShape or a broadcast of a scalar to 16384 x 16384 ...) is refused rather
# than folded into gigabytes.
MAX_FOLDED_ELEMENTS = 1 << 27


def check_folded_size(node: str, shape: Sequence[int]) -> None:
    """Refuses to compute a constant of `shape` for `node` at conversion time where it is too large."""
    count = 1
    for d in shape:
        count *= int(d)
    if count > MAX_FOLDED_ELEMENTS:
        dims = "x".join(str(int(d)) for d in shape)
        raise InvalidArgument(
            f"{node}: its constant result {dims} would have {count} elements, more than a conversion computes "
            f"before run time ({MAX_FOLDED_ELEMENTS})"
        )


def check_companion(path: str, destination: str, what: str) -> None:
    """A file the model's reader opens beside it (an OpenVINO IR's .bin): a regular file where it exists (a
    FIFO would block the reader forever), and never the file the conversion writes."""
    if not _check_readable(path, missing_ok=True):
        return
    if os.path.exists(destination) and os.path.samefile(path, destination):
        raise InvalidArgument(f"{destination}: cannot write it: it is {what} {path}")


def write_checked(graph: xnn.Graph, destination: str) -> None:
    """Writes `graph` to `destination` only if the C++ loader accepts it (shapes, types, attributes): a
    temporary file beside the destination, validated, then renamed over it, with the mode a new file gets
    (0666 less the umask, as save_graph)."""
    directory = os.path.dirname(os.path.abspath(destination))
    fd, temporary = tempfile.mkstemp(suffix=".xnn", dir=directory)
    try:
        umask = os.umask(0o022)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as f:
            xnn.write(graph, f)
        try:
            _xnorcl._check_graph_file(temporary)
        except InvalidArgument as e:
            # The temporary file's name means nothing to the caller.
            message = str(e)
            if message.startswith(temporary + ": "):
                message = message[len(temporary) + 2:]
            raise InvalidArgument(f"xnorcl refuses the converted graph, nothing was written: {message}") from None
        os.replace(temporary, destination)
    except BaseException:
        os.unlink(temporary)
        raise


def affine_operand(graph: xnn.Graph, node: xnn.Node) -> Optional[Tuple[str, np.ndarray]]:
    """(activation input, constant as [1, C, 1, 1], [1, C] or [1]) of a Multiply/Add by a per-channel or scalar
    constant (a scalar keeps one axis, so composing it never adds axes to a tensor of lower rank); None for
    anything else."""
    if node.op not in ("Multiply", "Add") or len(node.inputs) != 2 or node.attributes.get("auto_broadcast",
                                                                                           "numpy") != "numpy":
        return None
    consts = [name in graph.constants for name in node.inputs]
    if consts.count(True) != 1:
        return None
    kind, value = graph.constants[node.inputs[consts.index(True)]]
    if kind != "f32":
        return None
    array = np.asarray(value, np.float64)
    if array.size == 1:
        return node.inputs[consts.index(False)], array.reshape(1)
    if array.ndim == 4 and array.shape[0] == array.shape[2] == array.shape[3] == 1:
        return node.inputs[consts.index(False)], array
    if array.ndim == 2 and array.shape[0] == 1:  # [1, C]: a dense layer's outputs
        return node.inputs[consts.index(False)], array
    return None


def compose_affine_chains(graph: xnn.Graph, report: Report) -> None:
    """Chains of Multiply/Add by per-channel constants (the converter's corrections, then a model's
    batch-norm) become one Multiply and one Add, which the executor fuses into the op before them."""
    readers: Counter = Counter(name for node in graph.nodes for name in node.inputs)
    by_input: Dict[str, List[xnn.Node]] = {}
    for node in graph.nodes:
        for name in node.inputs:
            by_input.setdefault(name, []).append(node)
    producer = {out: node for node in graph.nodes for out in node.outputs}
    outputs = set(graph.outputs)

    def link(node: xnn.Node) -> Optional[xnn.Node]:
        out = node.outputs[0]
        if readers[out] != 1 or out in outputs:
            return None
        nxt = by_input[out][0]
        operand = affine_operand(graph, nxt)
        return nxt if operand is not None and operand[0] == out else None

    removed = set()
    added: List[xnn.Node] = []
    for head in list(graph.nodes):
        first = affine_operand(graph, head)
        if first is None or id(head) in removed:
            continue
        before = producer.get(first[0])
        if before is not None and affine_operand(graph, before) is not None and link(before) is head:
            continue  # not the chain's head
        chain = [head]
        while link(chain[-1]) is not None:
            chain.append(link(chain[-1]))  # type: ignore[arg-type]
        if len(chain) < 2 or [n.op for n in chain] == ["Multiply", "Add"]:
            continue
        scale, shift = np.ones((1,)), np.zeros((1,))  # broadcast to the operands' shapes, no more axes
        for node in chain:
            value = affine_operand(graph, node)[1]  # type: ignore[index]
            if node.op == "Multiply":
                scale, shift = scale * value, shift * value
            else:
                shift = shift + value
        scale, shift = scale * np.ones_like(shift), shift * np.ones_like(scale)
        final = chain[-1].outputs[0]
        middle = final + "/scaled"
        while middle in producer or middle in graph.constants:
            middle += "'"
        scale_name, shift_name = chain[0].name + "/composed_scale", chain[-1].name + "/composed_shift"
        graph.add_f32(scale_name, scale)
        graph.add_f32(shift_name, shift)
        added.append(xnn.Node(chain[0].name, "Multiply", [first[0], scale_name], [middle], {}))
        added.append(xnn.Node(chain[-1].name, "Add", [middle, shift_name], [final], {}))
        removed.update(id(n) for n in chain)
        report.fused.append(f"{' + '.join(n.name for n in chain)} -> one Multiply and one Add (per channel)")
    graph.nodes = [n for n in graph.nodes if id(n) not in removed] + added
    used = {name for node in graph.nodes for name in node.inputs}
    for name in [c for c in graph.constants if c not in used]:
        del graph.constants[name]


def finish(graph: xnn.Graph, report: Report, destination: str) -> Dict[str, Any]:
    """The end of every conversion: refuse with the whole list, or compose the affine chains, write the file
    once the C++ loader accepts it and return the report."""
    refuse_all(report.refused)
    compose_affine_chains(graph, report)
    write_checked(graph, destination)
    return report.as_dict(graph)


@contextmanager
def refusals_naming(source: str) -> Iterator[None]:
    """Every failure of a conversion as an InvalidArgument that starts with the model's path: a model its
    reader accepted but whose values the mapping cannot take (a shape that claims terabytes, a damaged
    attribute) is refused, never a traceback."""
    try:
        yield
    except InvalidArgument as e:
        raise InvalidArgument(f"{source}: {e}") from None
    except (RuntimeError, ValueError, TypeError, KeyError, IndexError, OverflowError, MemoryError) as e:
        raise InvalidArgument(f"{source}: cannot convert it ({type(e).__name__}: {e})") from None
