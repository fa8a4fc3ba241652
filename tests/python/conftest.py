# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures of the Python tests: one Runtime per forced variant (programs build once per process).

A missing OpenCL platform fails a device test; only a job that declares XNORCL_EXPECT_NO_DEVICE=1 skips them,
as in the C++ suite.
"""

import importlib
import os
import subprocess
import sys

import numpy as np
import pytest

import xnorcl

VARIANTS = ("local", "global")
_runtimes = {}


def runtime_for(variant, word_bits=None):
    key = (variant, word_bits)
    if key not in _runtimes:
        try:
            _runtimes[key] = xnorcl.Runtime(variant=variant, word_bits=word_bits)
        except xnorcl.DeviceNotFound as e:
            if os.environ.get("XNORCL_EXPECT_NO_DEVICE") == "1":
                pytest.skip(f"no OpenCL device (XNORCL_EXPECT_NO_DEVICE=1): {e}")
            raise
    return _runtimes[key]


@pytest.fixture(params=VARIANTS)
def variant(request):
    return request.param


@pytest.fixture
def runtime(variant):
    rt = runtime_for(variant)
    assert rt.variant == variant
    return rt


@pytest.fixture
def default_runtime():
    return runtime_for(None)


# Converts `count` damaged copies of a model in a child process whose address space is capped (a size the
# file merely claims cannot be had): copy i flips 1 to `most_flips` random bits of one of the model's files
# (files[i % len(files)]: the model, then its companions, such as an IR's .bin), and every conversion must
# succeed or raise InvalidArgument naming the damaged model. Prints the converted and refused counts.
_DAMAGE = """
import os, random, resource, shutil, sys
folder, seed, count, most_flips, gib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
files = sys.argv[6:]
resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))
import xnorcl
rng = random.Random(seed)
refused = converted = 0
for i in range(count):
    which = i % len(files)
    data = bytearray(open(files[which], "rb").read())
    for _ in range(rng.randint(1, most_flips)):
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    copies = [f"{folder}/m{i}{os.path.splitext(f)[1]}" for f in files]
    for f, copy in zip(files, copies):
        shutil.copy(f, copy)
    open(copies[which], "wb").write(data)
    try:
        xnorcl.convert(copies[0], f"{folder}/m{i}.xnn")
        converted += 1
    except xnorcl.InvalidArgument as e:
        assert str(e).startswith(copies[0]), str(e)
        refused += 1
print(converted, refused)
"""


def convert_damaged(files, folder, seed, count, most_flips, memory_gib):
    """(converted, refused) of `count` damaged copies of the model `files[0]` (with its companion files)."""
    args = [str(folder), str(seed), str(count), str(most_flips), str(memory_gib), *map(str, files)]
    result = subprocess.run([sys.executable, "-c", _DAMAGE, *args], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    converted, refused = map(int, result.stdout.split())
    return converted, refused


# Negative controls of the ONNX converter: each makes it convert wrongly in one way that its conformance tests
# must catch. `monkeypatch_context` is a `monkeypatch.context()`.
def convert_with_weight_bits_lsb_first(monkeypatch_context):
    """The weights' bits written in the other order within each byte."""
    from xnorcl.convert import xnn

    original = xnn.Graph.add_bits
    monkeypatch_context.setattr(xnn.Graph, "add_bits", lambda self, name, dims, data: original(
        self, name, dims, np.packbits(np.unpackbits(data), bitorder="little")))


def convert_forgetting_the_pad_value(monkeypatch_context):
    """A Pad's value before a binary convolution dropped (its taps add 0)."""
    onnx_converter = importlib.import_module("xnorcl.convert.onnx")
    original = onnx_converter._Converter.binary_convolution

    def forgets_the_value(self, node, bits, *args):
        padded = onnx_converter.Bits(bits.name, bits.level, bits.binarizer, (bits.pads[0], bits.pads[1], 0.0))
        return original(self, node, padded, *args)

    monkeypatch_context.setattr(onnx_converter._Converter, "binary_convolution", forgets_the_value)
