# SPDX-License-Identifier: Apache-2.0
"""xnorcl.Runtime: the device and variant it reports, its program cache directory, the device listing."""

import gc

import numpy as np
import pytest

import xnorcl
from conftest import runtime_for


def test_forced_variants_say_so(variant):
    rt = runtime_for(variant)
    assert rt.variant == variant
    assert rt.variant_reason.startswith(f"forced {variant}")
    assert rt.device_name in repr(rt)


def test_default_runtime_describes_its_device(default_runtime):
    info = default_runtime.device_info
    assert info["name"] == default_runtime.device_name
    assert default_runtime.variant in ("local", "global")
    assert info["auto_variant"] in ("local", "global")
    devices = xnorcl.list_devices()
    assert info["name"] in [d["name"] for d in devices]


def test_native_popcount_follows_the_device(monkeypatch):
    """The vector popcount is used wherever the device has one; False turns it off; True without it is refused."""
    monkeypatch.delenv("XNORCL_NATIVE_POPCOUNT", raising=False)
    rt = xnorcl.Runtime(variant="global")
    has_it = rt.device_info["native_popcount"]
    assert rt.native_popcount == has_it
    assert not xnorcl.Runtime(variant="global", native_popcount=False).native_popcount
    if has_it:
        assert xnorcl.Runtime(variant="global", native_popcount=True).native_popcount
    else:
        with pytest.raises(xnorcl.InvalidArgument, match="vector popcount instruction"):
            xnorcl.Runtime(variant="global", native_popcount=True)


def test_cache_dir_holds_the_program_binaries(tmp_path):
    cache = tmp_path / "programs"
    rt = xnorcl.Runtime(variant="global", cache_dir=str(cache))
    x = np.ones((1, 2, 4, 4), np.float32)
    f = np.full(5, 0xFF, np.uint8)  # 2*2*3*3 = 36 bits of +1
    y = xnorcl.BinaryConvolution(rt, x.shape, f, (2, 2, 3, 3)).run(x)
    assert y.tolist() == np.full((1, 2, 2, 2), 18.0).tolist()  # every tap agrees: 2*3*3 = 18
    # Some drivers (PoCL) finish a binary at its first launch, so it is stored when the runtime goes.
    del rt
    gc.collect()
    assert cache.is_dir() and any(cache.iterdir())


def test_cache_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    xnorcl.Runtime(variant="global", cache_dir="off")
    assert not (tmp_path / ".cache").exists()


def test_environment_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("XNORCL_CACHE_DIR", str(tmp_path / "from_env"))
    xnorcl.Runtime(variant="global")
    gc.collect()
    assert any((tmp_path / "from_env").iterdir())
