# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures of the Python tests: one Runtime per forced variant (programs build once per process).

A missing OpenCL platform fails a device test; only a job that declares XNORCL_EXPECT_NO_DEVICE=1 skips them,
as in the C++ suite.
"""

import os

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
