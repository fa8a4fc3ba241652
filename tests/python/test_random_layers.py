# SPDX-License-Identifier: Apache-2.0
"""Random layers on both variants, bitwise against the host reference: every attribute, packed and unpacked
filters in both bit orders, float32 and uint8 input, and the output choices (scale and bias, packed bits,
max-pooled bits) and packed input."""

import numpy as np
import pytest

import xnorcl

SEEDS = range(40)


def random_layer(rng):
    """A random valid layer: (x_shape, filter_shape, attributes)."""
    n, c, o = int(rng.integers(1, 3)), int(rng.integers(1, 70)), int(rng.integers(1, 40))
    kh, kw = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    dil = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    auto_pad = str(rng.choice(["explicit", "explicit", "same_upper", "same_lower", "valid"]))
    pb = (int(rng.integers(0, 3)), int(rng.integers(0, 3)))
    pe = (int(rng.integers(0, 3)), int(rng.integers(0, 3)))
    h = int(rng.integers((kh - 1) * dil[0] + 1, 20))
    w = int(rng.integers((kw - 1) * dil[1] + 1, 20))
    attributes = dict(
        strides=(int(rng.integers(1, 4)), int(rng.integers(1, 4))),
        pads_begin=pb,
        pads_end=pe,
        dilations=dil,
        pad_value=float(rng.choice([0.0, 1.0, -1.0, 0.5, -2.25])),
        auto_pad=auto_pad,
    )
    if rng.random() < 0.5:
        attributes["input_thresholds"] = rng.normal(size=c).astype(np.float32)
    return (n, c, h, w), (o, c, kh, kw), attributes


def random_input(rng, shape, attributes):
    if rng.random() < 0.5:
        return rng.integers(0, 256, size=shape, dtype=np.uint8)
    if "input_thresholds" in attributes:
        return rng.normal(size=shape).astype(np.float32)
    return rng.integers(0, 2, size=shape).astype(np.float32)


def random_filter(rng, filter_shape):
    """(filter_bits, bit_order) as packed bytes in a random order, or as values."""
    n = int(np.prod(filter_shape))
    form = rng.integers(0, 3)
    if form == 0:
        return rng.integers(0, 256, size=(n + 7) // 8, dtype=np.uint8), str(rng.choice(["msb", "lsb"]))
    if form == 1:
        return rng.integers(0, 2, size=filter_shape, dtype=np.uint8), "msb"
    return rng.normal(size=filter_shape).astype(np.float32), "lsb"


@pytest.mark.parametrize("seed", SEEDS)
def test_random_layer_is_bitwise_the_reference(runtime, seed):
    rng = np.random.default_rng(seed)
    x_shape, f_shape, attrs = random_layer(rng)
    bits, order = random_filter(rng, f_shape)
    x = random_input(rng, x_shape, attrs)
    conv = xnorcl.BinaryConvolution(runtime, x_shape, bits, f_shape, bit_order=order, **attrs)
    y = conv.run(x)
    reference = xnorcl.reference_binary_convolution(x, bits, f_shape, bit_order=order, **attrs)
    assert y.shape == reference.shape == tuple(conv.output_shape)
    assert y.tobytes() == reference.tobytes()
    # The pads in use are those of the output shape (auto_pad resolved).
    assert len(conv.pads_begin) == len(conv.pads_end) == 2


def test_the_bit_orders_differ_and_agree(runtime):
    # One filter as MSB-first bytes and as the byte-reversed LSB-first bytes is the same layer; read in the
    # wrong order it is another one.
    rng = np.random.default_rng(7)
    x = rng.integers(0, 2, size=(1, 8, 6, 6)).astype(np.float32)
    msb = rng.integers(0, 256, size=16 * 8 * 9 // 8, dtype=np.uint8)
    lsb = np.array([int(f"{b:08b}"[::-1], 2) for b in msb], dtype=np.uint8)
    shape = (16, 8, 3, 3)
    a = xnorcl.BinaryConvolution(runtime, x.shape, msb, shape, bit_order="msb").run(x)
    b = xnorcl.BinaryConvolution(runtime, x.shape, lsb, shape, bit_order="lsb").run(x)
    c = xnorcl.BinaryConvolution(runtime, x.shape, msb, shape, bit_order="lsb").run(x)
    assert a.tobytes() == b.tobytes()
    assert a.tobytes() != c.tobytes()


def layer_with_outputs(runtime, rng, **options):
    x_shape, f_shape = (2, 5, 9, 8), (37, 5, 3, 3)
    bits = rng.integers(0, 256, size=(37 * 5 * 9 + 7) // 8, dtype=np.uint8)
    attrs = dict(pads_begin=(1, 1), pads_end=(1, 1), pad_value=-1.0)
    x = rng.integers(0, 2, size=x_shape).astype(np.float32)
    conv = xnorcl.BinaryConvolution(runtime, x_shape, bits, f_shape, **attrs, **options)
    reference = xnorcl.reference_binary_convolution(x, bits, f_shape, **attrs)
    return conv, x, reference


def test_scale_and_bias_output(runtime):
    rng = np.random.default_rng(1)
    # Powers of two and small integers: scale * y + bias is exact, so it equals the one-rounding fmaf.
    scale = (2.0 ** rng.integers(-3, 4, size=37) * rng.choice([-1, 1], size=37)).astype(np.float32)
    bias = rng.integers(-20, 20, size=37).astype(np.float32)
    conv, x, reference = layer_with_outputs(runtime, rng, output="scale_bias", scale=scale, bias=bias)
    assert conv.output == "scale_bias"
    y = conv.run(x)
    expected = (reference * scale[None, :, None, None] + bias[None, :, None, None]).astype(np.float32)
    assert y.tobytes() == expected.tobytes()


def test_packed_output_with_thresholds_and_folded_batch_norm(runtime):
    rng = np.random.default_rng(2)
    thresholds = rng.integers(-6, 6, size=37).astype(np.float32) + 0.5
    conv, x, reference = layer_with_outputs(runtime, rng, output="packed", thresholds=thresholds)
    words = conv.run(x)
    assert words.dtype == np.uint32 and words.shape == (2, 9, 8, 2)
    assert words.tobytes() == xnorcl.pack_activations(reference, thresholds).tobytes()

    rules = xnorcl.fold_batch_norm(rng.normal(size=37).astype(np.float32), rng.normal(size=37).astype(np.float32))
    assert {r.mode for r in rules} <= {"greater", "less", "always_zero", "always_one"}
    conv, x, reference = layer_with_outputs(runtime, rng, output="packed", thresholds=rules)
    assert conv.run(x).tobytes() == xnorcl.pack_activations(reference, rules).tobytes()


def test_packed_output_max_pooled(runtime):
    rng = np.random.default_rng(3)
    conv, x, reference = layer_with_outputs(
        runtime, rng, output="packed", thresholds=np.zeros(37, np.float32), max_pool={"kernel": (2, 2), "strides": (2, 2)}
    )
    assert tuple(conv.output_shape) == (2, 37, 4, 4)
    bits = (reference > 0)[:, :, :8, :8]
    pooled = bits.reshape(2, 37, 4, 2, 4, 2).max(axis=(3, 5)).astype(np.float32)
    assert conv.run(x).tobytes() == xnorcl.pack_activations(pooled).tobytes()


def test_packed_input(runtime):
    rng = np.random.default_rng(4)
    x_shape, f_shape = (1, 45, 7, 6), (12, 45, 3, 3)
    bits = rng.integers(0, 256, size=(12 * 45 * 9 + 7) // 8, dtype=np.uint8)
    values = rng.integers(0, 2, size=x_shape).astype(np.float32)
    words = xnorcl.pack_activations(values)  # bit = value > 0
    assert words.shape == (1, 7, 6, 2)
    assert xnorcl.unpack_activations(words, x_shape).tobytes() == values.tobytes()
    conv = xnorcl.BinaryConvolution(runtime, x_shape, bits, f_shape, pads_begin=(1, 1), pads_end=(1, 1),
                                    input_packed=True)
    assert conv.input_packed
    reference = xnorcl.reference_binary_convolution(values, bits, f_shape, pads_begin=(1, 1), pads_end=(1, 1))
    assert conv.run(words).tobytes() == reference.tobytes()


def test_plan_and_stage_times(runtime):
    rng = np.random.default_rng(5)
    conv, x, _ = layer_with_outputs(runtime, rng)
    plan = conv.plan()
    assert plan["variant"] == runtime.variant
    assert plan["launches"] and all(launch["kernel"] for launch in plan["launches"])
    assert plan["text"]
    conv.run(x)
    times = conv.last_stage_times()
    if runtime.profiling_enabled:
        assert [k for k, _ in times] == [launch["kernel"] for launch in plan["launches"]]
        assert all(ms >= 0 for _, ms in times)


def test_results_are_owned_by_python(runtime):
    rng = np.random.default_rng(6)
    conv, x, reference = layer_with_outputs(runtime, rng)
    first = conv.run(x)
    second = conv.run(x)
    assert first.flags.owndata or first.base is not None
    assert first.flags.c_contiguous and first.flags.writeable
    first[...] = 0  # a result is the caller's: writing it changes no other result
    assert second.tobytes() == reference.tobytes()
    del conv
    assert second.tobytes() == reference.tobytes()
