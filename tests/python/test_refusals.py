# SPDX-License-Identifier: Apache-2.0
"""Every refusal class: arrays of the wrong dtype, shape or layout, bad attributes and filters, bad devices,
and the translation of every C++ error type (same class, same message)."""

import numpy as np
import pytest

import xnorcl

X_SHAPE, F_SHAPE = (1, 3, 6, 6), (4, 3, 3, 3)
FILTER = np.arange(14, dtype=np.uint8)  # ceil(4*3*3*3 / 8) = 14 bytes


@pytest.fixture
def conv(runtime):
    return xnorcl.BinaryConvolution(runtime, X_SHAPE, FILTER, F_SHAPE)


def good_input():
    return np.ones(X_SHAPE, dtype=np.float32)


@pytest.mark.parametrize(
    "x, message",
    [
        (np.ones(X_SHAPE, dtype=np.float64), "x: expected dtype float32 or uint8, got float64"),
        (np.ones(X_SHAPE, dtype=np.int32), "x: expected dtype float32 or uint8, got int32"),
        (np.ones(X_SHAPE, dtype=bool), "x: expected dtype float32 or uint8, got bool"),
        (np.ones((1, 3, 6, 7), dtype=np.float32), "x: expected shape (1, 3, 6, 6), got (1, 3, 6, 7)"),
        (np.ones((3, 6, 6), dtype=np.float32), "x: expected shape (1, 3, 6, 6), got (3, 6, 6)"),
        (np.ones((1, 3, 6, 12), dtype=np.float32)[:, :, :, ::2], "got a non-contiguous array of shape (1, 3, 6, 6)"),
        (np.asfortranarray(np.ones((1, 3, 6, 6), dtype=np.float32).transpose(0, 1, 3, 2)),
         "got a non-contiguous array"),
        (np.ones(X_SHAPE, dtype=np.float32).tolist(), "x: expected a C-contiguous numpy.ndarray of float32 or uint8, got list"),
        (None, "got NoneType"),
    ],
    ids=["float64", "int32", "bool", "wrong_w", "3d", "strided", "fortran", "list", "none"],
)
def test_bad_input_arrays(conv, x, message):
    with pytest.raises(xnorcl.InvalidArgument, match=None) as info:
        conv.run(x)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)  # InvalidArgument is also a ValueError
    assert conv.run(good_input()).shape == (1, 4, 4, 4)  # the layer still works


def test_non_native_byte_order_is_refused(conv):
    with pytest.raises(xnorcl.InvalidArgument, match=">f4"):
        conv.run(np.ones(X_SHAPE, dtype=">f4"))


def test_packed_input_takes_only_uint32_words(runtime):
    conv = xnorcl.BinaryConvolution(runtime, X_SHAPE, FILTER, F_SHAPE, input_packed=True)
    with pytest.raises(xnorcl.InvalidArgument, match="expected dtype uint32, got float32"):
        conv.run(good_input())
    with pytest.raises(xnorcl.InvalidArgument, match=r"expected shape \(1, 6, 6, 1\), got \(1, 6, 6, 2\)"):
        conv.run(np.zeros((1, 6, 6, 2), dtype=np.uint32))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(strides=(0, 1)), "strides must be at least 1, got 0,1"),
        (dict(strides=(1, 1, 1)), "strides: expected 2 integers, got (1, 1, 1)"),
        (dict(strides="11"), "strides: expected 2 integers"),
        (dict(dilations=(1, 2**40)), "does not fit in 32 bits"),
        (dict(pads_begin=(-1, 0)), "pads_begin"),
        (dict(pad_value=float("nan")), "pad_value is NaN"),
        (dict(pad_value=float("inf")), "pad_value"),
        (dict(auto_pad="same"), "auto_pad: 'same' is not one of"),
        (dict(mode="xor"), 'unknown mode "xor"'),
        (dict(input_thresholds=[0.0, 1.0]), "input_thresholds holds 2 values"),
        (dict(input_thresholds=[0.0, float("nan"), 1.0]), "NaN"),
        (dict(input_thresholds=np.zeros(3, dtype=np.float64)), "input_thresholds: expected dtype float32, got float64"),
        (dict(bit_order="big"), "bit_order: 'big' is not 'msb' or 'lsb'"),
        (dict(output="int8"), "output: 'int8' is not 'float32', 'scale_bias' or 'packed'"),
        (dict(output="scale_bias"), "scale and bias"),
        (dict(output="scale_bias", scale=[1.0] * 4, bias=[0.0] * 3), "bias"),
        (dict(output="packed"), "thresholds: given with output='packed'"),
        (dict(output="packed", thresholds=[0.0] * 5), "5"),
        (dict(max_pool={"kernel": (2, 2)}), "max_pool: needs output='packed'"),
        (dict(output="packed", thresholds=[0.0] * 4, max_pool={"size": 2}), "max_pool: unknown key 'size'"),
        (dict(output="packed", thresholds=[0.0] * 4, max_pool={"kernel": (9, 9)}), "kernel"),
    ],
)
def test_bad_attributes(runtime, kwargs, message):
    with pytest.raises(xnorcl.InvalidArgument) as info:
        xnorcl.BinaryConvolution(runtime, X_SHAPE, FILTER, F_SHAPE, **kwargs)
    assert message in str(info.value)


def test_the_library_message_is_kept(runtime):
    # The C++ message, word for word (the example of a kernel larger than the padded input).
    with pytest.raises(xnorcl.InvalidArgument) as info:
        xnorcl.BinaryConvolution(runtime, (1, 1, 5, 5), np.zeros(7, np.uint8), (1, 1, 7, 7))
    assert "Kernel after dilation has size (dim: 7) larger than the data shape after padding (dim: 5) at axis 0" in str(
        info.value
    )


@pytest.mark.parametrize(
    "bits, shape, message",
    [
        (np.zeros(13, np.uint8), F_SHAPE, "expected a 1-D uint8 array of 14 packed bytes"),
        (np.zeros(15, np.uint8), F_SHAPE, "got uint8 of shape (15,)"),
        (np.zeros(14, np.float32), F_SHAPE, "got float32 of shape (14,)"),
        (np.zeros((4, 3, 3, 2), np.float32), F_SHAPE, "float32/uint8 array of shape (4, 3, 3, 3)"),
        (np.zeros(14, np.int64), F_SHAPE, "filter_bits: expected dtype uint8 or float32, got int64"),
        (np.zeros(14, np.uint8), (4, 3, 3), "filter_shape: expected 4 integers"),
        (np.zeros(14, np.uint8), (4, 0, 3, 3), "filter"),
        (np.zeros(14, np.uint8), (2**40, 2**40, 3, 3), "filter"),
    ],
)
def test_bad_filters(runtime, bits, shape, message):
    with pytest.raises(xnorcl.InvalidArgument) as info:
        xnorcl.BinaryConvolution(runtime, X_SHAPE, bits, shape)
    assert message in str(info.value)
    with pytest.raises(xnorcl.InvalidArgument):
        xnorcl.reference_binary_convolution(good_input(), bits, shape)


def test_bad_shapes(runtime):
    with pytest.raises(xnorcl.InvalidArgument, match="x_shape: expected 4 integers"):
        xnorcl.BinaryConvolution(runtime, (1, 3, 6), FILTER, F_SHAPE)
    with pytest.raises(xnorcl.InvalidArgument, match="C_IN"):
        xnorcl.BinaryConvolution(runtime, (1, 2, 6, 6), FILTER, F_SHAPE)
    with pytest.raises(xnorcl.InvalidArgument, match=r"x: expected a 4-D NCHW array, got shape \(3, 6, 6\)"):
        xnorcl.reference_binary_convolution(np.ones((3, 6, 6), np.float32), FILTER, F_SHAPE)


def test_bad_runtime_arguments():
    with pytest.raises(xnorcl.InvalidArgument, match="variant: 'fast' is not a variant"):
        xnorcl.Runtime(variant="fast")
    with pytest.raises(xnorcl.DeviceNotFound, match="matches no") as info:
        xnorcl.Runtime(device="no such device anywhere")
    assert "available" in str(info.value)
    with pytest.raises(xnorcl.DeviceNotFound):
        xnorcl.Runtime(device="99:0")


def test_environment_fallbacks(monkeypatch):
    monkeypatch.setenv("XNORCL_VARIANT", "sideways")
    with pytest.raises(xnorcl.Error, match="XNORCL_VARIANT = 'sideways' is not valid; it takes one of auto, local, global"):
        xnorcl.Runtime()
    # An argument the caller gives wins over the environment.
    assert xnorcl.Runtime(variant="global").variant == "global"
    monkeypatch.setenv("XNORCL_VARIANT", "global")
    monkeypatch.setenv("XNORCL_DEVICE", "no such device anywhere")
    with pytest.raises(xnorcl.DeviceNotFound):
        xnorcl.Runtime()


def test_a_bad_model_file_is_refused_before_a_device_is_started(monkeypatch, tmp_path):
    # With no device to be found, what is wrong with the file must still be the error.
    monkeypatch.setenv("XNORCL_DEVICE", "no such device anywhere")
    (tmp_path / "junk.xnn").write_bytes(b"not a model")
    with pytest.raises(xnorcl.InvalidArgument, match="junk.xnn"):
        xnorcl.load(str(tmp_path / "junk.xnn"))


def test_error_hierarchy():
    assert issubclass(xnorcl.Error, RuntimeError)
    for cls in (xnorcl.InvalidArgument, xnorcl.DeviceNotFound, xnorcl.OpenCLError, xnorcl.BuildError):
        assert issubclass(cls, xnorcl.Error)
    assert issubclass(xnorcl.InvalidArgument, ValueError)
    assert not issubclass(xnorcl.DeviceNotFound, xnorcl.InvalidArgument)


@pytest.mark.parametrize("kind", ["Error", "InvalidArgument", "DeviceNotFound", "OpenCLError", "BuildError"])
def test_every_cpp_error_becomes_its_python_class(kind):
    from xnorcl import _xnorcl

    with pytest.raises(getattr(xnorcl, kind)) as info:
        _xnorcl._raise_error(kind, "what happened")
    assert type(info.value) is getattr(xnorcl, kind)
    if kind == "OpenCLError":
        assert str(info.value) == "clEnqueueNDRangeKernel failed: CL_INVALID_WORK_GROUP_SIZE (-54) while what happened"
        assert info.value.code == -54 and info.value.call == "clEnqueueNDRangeKernel"
    elif kind == "BuildError":
        assert str(info.value).startswith("what happened\n--- build log ---\n")
        assert info.value.build_log == "<kernel>:1:1: error: test log"
    else:
        assert str(info.value) == "what happened"
