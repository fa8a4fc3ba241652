# SPDX-License-Identifier: Apache-2.0
"""Camera frames in: xnorcl.load(..., images={name: xnorcl.ImageInput(...)}) takes a float input as uint8
pixels converted on the device. The outputs equal the float model's run on the same frame converted by numpy
(float32 arithmetic, rounded after the subtraction and after the product), bit for bit; bad images and
specifications are refused before any device work."""

from pathlib import Path

import numpy as np
import pytest

import xnorcl
from conftest import runtime_for

MEAN = (123.675, 116.28, 103.53)
SCALE = (1 / 58.395, 1 / 57.12, 1 / 57.375)


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("image") / "bireal18.xnn"
    xnorcl.save_model("bireal18", str(path), batch=2, size=32, width_divisor=8, seed=7)
    return str(path)


def converted(frame, fmt, order):
    """The model's float input from the frame, by the documented formula, in numpy's float32."""
    colours = [0, 1, 2] if order == "rgb" else [2, 1, 0]  # model channel -> colour (0 red, 2 blue)
    at = [c if fmt.startswith("rgb") else 2 - c for c in colours]  # colour -> byte of the pixel
    x = frame[..., at].astype(np.float32)
    x = (x - np.array(MEAN, dtype=np.float32)) * np.array(SCALE, dtype=np.float32)
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


@pytest.mark.parametrize("fmt", ["rgb", "rgba", "bgr", "bgra"])
@pytest.mark.parametrize("order", ["rgb", "bgr"])
def test_a_frame_runs_as_its_converted_floats(model_path, variant, fmt, order):
    rt = runtime_for(variant)
    image = xnorcl.ImageInput(fmt, order, mean=MEAN, scale=SCALE)
    model = xnorcl.load(model_path, runtime=rt, images={"input": image})
    k = len(fmt)
    assert model.inputs == [("input", (2, 32, 32, k))]
    frame = np.random.default_rng(8).integers(0, 256, size=(2, 32, 32, k), dtype=np.uint8)
    floats = xnorcl.load(model_path, runtime=rt)
    want = floats.run(converted(frame, fmt, order))
    got = model.run(frame)
    assert got.dtype == want.dtype and np.array_equal(got.view(np.uint32), want.view(np.uint32))
    # Negative control: the other channel order changes the outputs.
    other = "bgr" if order == "rgb" else "rgb"
    assert not np.array_equal(floats.run(converted(frame, fmt, other)), want)


def test_model_bytes_take_images_too(model_path):
    with open(model_path, "rb") as f:
        data = f.read()
    model = xnorcl.Model(data, images={"input": xnorcl.ImageInput("rgb")})
    frame = np.zeros((2, 32, 32, 3), dtype=np.uint8)
    assert model.run({"input": frame})[model.outputs[0][0]].shape == model.outputs[0][1]


def test_bad_images_are_refused(model_path):
    rt = runtime_for("global")
    model = xnorcl.load(model_path, runtime=rt, images={"input": xnorcl.ImageInput("rgba")})
    with pytest.raises(xnorcl.InvalidArgument, match="uint8"):
        model.run(np.zeros((2, 32, 32, 4), dtype=np.float32))
    with pytest.raises(xnorcl.InvalidArgument, match=r"\(2, 32, 32, 4\)|\[2, 32, 32, 4\]"):
        model.run(np.zeros((2, 32, 32, 3), dtype=np.uint8))
    with pytest.raises(xnorcl.InvalidArgument, match="format 'yuv'"):
        xnorcl.load(model_path, runtime=rt, images={"input": xnorcl.ImageInput("yuv")})
    with pytest.raises(xnorcl.InvalidArgument, match="order 'grb'"):
        xnorcl.load(model_path, runtime=rt, images={"input": xnorcl.ImageInput(order="grb")})
    with pytest.raises(xnorcl.InvalidArgument, match="mean takes 3 values"):
        xnorcl.load(model_path, runtime=rt, images={"input": xnorcl.ImageInput(mean=(1, 2))})
    with pytest.raises(xnorcl.InvalidArgument, match="'frame' is no graph input"):
        xnorcl.load(model_path, runtime=rt, images={"frame": xnorcl.ImageInput()})
    with pytest.raises(TypeError, match="xnorcl.ImageInput"):
        xnorcl.load(model_path, runtime=rt, images={"input": "rgba"})


def test_a_converted_larq_model_takes_frames_into_its_nhwc_input(tmp_path):
    """A model converted from LCE keeps TensorFlow's NHWC input [1, 32, 32, 3]: frames convert to NHWC."""
    xnn = tmp_path / "quicknet.xnn"
    fixture = Path(__file__).parent / "larq_fixtures" / "quicknet_small_32.tflite"
    xnorcl.convert(str(fixture), str(xnn))
    rt = runtime_for("global")
    floats = xnorcl.load(str(xnn), runtime=rt)
    name, shape = floats.inputs[0]
    assert shape == (1, 32, 32, 3)
    image = xnorcl.ImageInput("rgba", mean=MEAN, scale=SCALE)
    model = xnorcl.load(str(xnn), runtime=rt, images={name: image})
    assert model.inputs == [(name, (1, 32, 32, 4))]
    frame = np.random.default_rng(9).integers(0, 256, size=(1, 32, 32, 4), dtype=np.uint8)
    x = np.ascontiguousarray(converted(frame, "rgba", "rgb").transpose(0, 2, 3, 1))
    want = floats.run(x)
    got = model.run(frame)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
