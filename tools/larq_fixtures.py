# SPDX-License-Identifier: Apache-2.0
"""Generate the Larq Compute Engine (LCE) fixtures for the LCE converter tests.

One command regenerates everything (about two minutes on two cores):

    TF_USE_LEGACY_KERAS=1 /work/venv-lce/bin/python tools/larq_fixtures.py \
        tests/python/larq_fixtures

The environment it was written for (CPython 3.11):

    python3.11 -m venv /work/venv-lce
    /work/venv-lce/bin/pip install "larq-compute-engine==0.16.*" \
        "tensorflow-cpu==2.16.*" "tf-keras~=2.16.0" "larq==0.14.*" larq-zoo \
        tflite flatbuffers "numpy<2"

(resolved at the time of writing: larq-compute-engine 0.16.0, tensorflow 2.16.2,
tf-keras 2.16.0, larq 0.14.0, larq-zoo 2.4.0, numpy 1.26.4).  TF_USE_LEGACY_KERAS=1
makes `tf.keras` the Keras 2 (tf-keras) that larq needs.

For every case the script writes into the output folder:

* NAME.tflite: `larq_compute_engine.convert_keras_model(model)` with default
  settings (target "arm", float input and output), from a Keras model built with
  larq whose weights are seeded random and whose BatchNormalization layers have
  seeded random gamma, beta, moving_mean and moving_variance (moving statistics
  are drawn around the statistics the layer actually sees on random inputs, so
  the folded multipliers, biases and bit-packed output thresholds are not
  trivial; about a third of the gammas are negative, which makes LCE flip filter
  bits when it writes bit-packed output). A linear Dense layer (the zoo heads)
  is scaled so that the softmax after it is not saturated. A QuantDense layer
  gets a seeded random bias (LCE leaves a zero bias out of the model).
* NAME.npz with
  - `inputs`: float32 [S, H, W, C] ([S, K] or [S, R, K] for the dense cases), S
    seeded random samples (2; 8 for the dense cases).  The .tflite input is
    [1, H, W, C]; every sample is run on its own as a batch of one.
  - `outputs`: LCE's interpreter (`larq_compute_engine.tflite.python.interpreter.
    Interpreter`, num_threads=1, default kernels: on x86 the Ruy "optimized BGEMM"
    LceBconv2d kernel; for the grouped bconv, which that kernel refuses, the
    reference kernel) on those inputs, stacked to [S, ...].
  - `outputs_reference_bconv`: the same with `use_reference_bconv=True` (LCE's
    reference LceBconv2d kernel), absent where LCE's reference kernel refuses the
    model (SAME zero padding with an odd channels_in).
  - `keras_outputs`: the Keras model's own float32 outputs (training=False).
  - `versions`: string array "package=version" for python, tensorflow, tf-keras,
    larq, larq-compute-engine, larq-zoo, numpy.
* MANIFEST.json: every model, what it covers, the ops it contains (builtin and
  custom, with counts), each LceBconv2d's custom options and tensor types, each
  FULLY_CONNECTED's tensors and whether its weights are +-1, +-alpha per output
  or float (`fully_connected`, where the model has one), and the versions.

`--only NAME ...` regenerates those cases alone and keeps the other entries of
MANIFEST.json; each case's seed is its position in CASES, so new cases go at the
end. The dense cases (quantdense_*, quant_mlp_*, quant_conv_dense_*,
sign_flatten_binary_dense) were added that way, leaving the files before them
byte for byte as they were.

tools/lce_check_fixtures.py runs LCE's interpreter on the committed fixtures
again and needs only larq-compute-engine and numpy<2 (no TensorFlow).
birealnet_96 (about 2.2 MB) is written only with --with-birealnet, to keep the
committed folder near 5 MB.
"""

import argparse
import collections
import hashlib
import json
import os
import platform
import sys
from importlib import metadata

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import larq as lq  # noqa: E402
import larq_compute_engine as lce  # noqa: E402
import larq_zoo as lqz  # noqa: E402
import tflite  # noqa: E402
from flatbuffers import flexbuffers  # noqa: E402
from larq_compute_engine.tflite.python.interpreter import Interpreter  # noqa: E402

SAMPLES = 2

# --------------------------------------------------------------------------
# Models


def qconv(filters, kernel, **kw):
    """A binary convolution the way the brief asks: ste_sign on input and kernel."""
    kw.setdefault("use_bias", False)
    return lq.layers.QuantConv2D(
        filters,
        kernel,
        input_quantizer="ste_sign",
        kernel_quantizer="ste_sign",
        kernel_constraint="weight_clip",
        **kw,
    )


def qdense(units, **kw):
    """A binary fully connected layer, as qconv: ste_sign on input and kernel, weight_clip."""
    return lq.layers.QuantDense(
        units,
        input_quantizer="ste_sign",
        kernel_quantizer="ste_sign",
        kernel_constraint="weight_clip",
        **kw,
    )


def bn():
    return tf.keras.layers.BatchNormalization(momentum=0.9, epsilon=1e-3)


def single_bconv(hw, c_in, filters, kernel, **kw):
    """float BN (-> MUL, ADD) -> QuantConv2D -> BN: one LceQuantize + LceBconv2d."""
    x = tf.keras.Input((hw, hw, c_in))
    y = bn()(x)  # a float op between the input and the binary conv
    y = qconv(filters, kernel, **kw)(y)
    y = bn()(y)
    return tf.keras.Model(x, y)


def bconv_relu(hw, c_in, filters, kernel, **kw):
    """QuantConv2D -> ReLU with no BN: LCE fuses the ReLU into the bconv."""
    x = tf.keras.Input((hw, hw, c_in))
    y = qconv(filters, kernel, **kw)(bn()(x))
    y = tf.keras.layers.ReLU()(y)
    return tf.keras.Model(x, y)


def two_bconvs(hw, c_in, mid, filters, padding, pad_values):
    """QuantConv2D -> BN -> QuantConv2D -> BN: the first bconv may write bits."""
    x = tf.keras.Input((hw, hw, c_in))
    y = bn()(x)
    y = qconv(mid, 3, padding=padding, pad_values=pad_values)(y)
    y = bn()(y)
    y = qconv(filters, 3, padding=padding, pad_values=pad_values)(y)
    y = bn()(y)
    return tf.keras.Model(x, y)


def bmaxpool(hw, c_in, mid, filters, pool, strides, pool_padding):
    """QuantConv2D -> BN -> MaxPool2D -> QuantConv2D -> BN: LceBMaxPool2d."""
    x = tf.keras.Input((hw, hw, c_in))
    y = bn()(x)
    y = qconv(mid, 3, padding="same", pad_values=1.0)(y)
    y = bn()(y)
    y = tf.keras.layers.MaxPool2D(pool, strides=strides, padding=pool_padding)(y)
    y = qconv(filters, 3, padding="same", pad_values=1.0)(y)
    y = bn()(y)
    return tf.keras.Model(x, y)


def sign_only(c):
    """larq's ste_sign on the input alone: LceQuantize -> LceDequantize."""
    x = tf.keras.Input((1, 1, c))
    return tf.keras.Model(x, lq.quantizers.SteSign()(x))


def bconv_then_cos(hw, c_in, filters):
    """A binary conv followed by tf.math.cos: a builtin COS to refuse."""
    x = tf.keras.Input((hw, hw, c_in))
    y = qconv(filters, 3, padding="same", pad_values=1.0)(bn()(x))
    y = bn()(y)
    y = tf.keras.layers.Lambda(tf.math.cos)(y)
    return tf.keras.Model(x, y)


def grouped_bconv(hw, c_in, filters, groups):
    """QuantConv2D with groups > 1: LCE 0.16 emits a grouped LceBconv2d."""
    x = tf.keras.Input((hw, hw, c_in))
    y = qconv(filters, 3, padding="same", pad_values=1.0, groups=groups)(bn()(x))
    y = bn()(y)
    return tf.keras.Model(x, y)


def fake_quant(x):
    """An int8 quantization point for LCE's converter (range -3..3, as LCE's own int8 tests)."""
    return tf.quantization.fake_quant_with_min_max_vars(x, -3.0, 3.0)


def int8_toy(hw, c_in):
    """LCE's own int8 test model: fake-quantized input -> two bconvs with int8 output -> int8 MEAN."""
    x = tf.keras.Input((hw, hw, c_in))
    y = fake_quant(x)
    y = qconv(12, 3, strides=2)(y)
    y = fake_quant(bn()(y))
    y = qconv(12, 3, strides=2, padding="same", pad_values=1.0)(y)
    y = fake_quant(bn()(y))
    y = tf.keras.layers.GlobalAveragePooling2D()(y)
    return tf.keras.Model(x, fake_quant(y))


def int8_sign(hw, c):
    """larq's ste_sign between two int8 points: QUANTIZE -> LceQuantize -> LceDequantize to int8."""
    x = tf.keras.Input((hw, hw, c))
    return tf.keras.Model(x, fake_quant(lq.quantizers.SteSign()(fake_quant(x))))


def int8_residual(hw, c_in):
    """bconvs with int8 output, an int8 residual ADD read by a bconv, a float bconv output at the end."""
    x = tf.keras.Input((hw, hw, c_in))
    y = qconv(24, 3, padding="same", pad_values=1.0)(bn()(x))
    y = fake_quant(bn()(y))
    z = qconv(24, 3, padding="same", pad_values=0.0)(y)
    z = fake_quant(bn()(z))
    z = fake_quant(tf.keras.layers.Add()([y, z]))
    z = qconv(16, 3, padding="same", pad_values=1.0)(z)
    return tf.keras.Model(x, bn()(z))


def quantdense(k, units, batch_norm):
    """[1, K] -> QuantDense (-> BN) for each of `units`: LceQuantize of a 2-D tensor, LceDequantize and a float
    FULLY_CONNECTED with +-1 weights (+-alpha per output where LCE folds the BN into them)."""
    x = tf.keras.Input((k,))
    y = x
    for u in units:
        y = qdense(u)(y)
        if batch_norm:
            y = bn()(y)
    return tf.keras.Model(x, y)


def quant_mlp(k, hidden, classes):
    """A binary MLP: float BN -> (QuantDense -> BN) for each hidden width -> QuantDense -> BN -> softmax."""
    x = tf.keras.Input((k,))
    y = bn()(x)
    for u in list(hidden) + [classes]:
        y = bn()(qdense(u)(y))
    return tf.keras.Model(x, tf.keras.layers.Activation("softmax")(y))


def quant_conv_dense(hw, c_in, classes):
    """Convolutions, then dense layers: BN -> QuantConv2D -> BN -> MaxPool2D -> QuantConv2D -> BN -> Flatten
    -> QuantDense -> BN -> QuantDense -> BN -> float Dense -> softmax."""
    x = tf.keras.Input((hw, hw, c_in))
    y = bn()(x)
    y = bn()(qconv(32, 3, padding="same", pad_values=1.0)(y))
    y = tf.keras.layers.MaxPool2D(2)(y)
    y = bn()(qconv(16, 3, padding="same", pad_values=1.0)(y))
    y = tf.keras.layers.Flatten()(y)
    y = bn()(qdense(48)(y))
    y = bn()(qdense(24)(y))
    y = tf.keras.layers.Dense(classes)(y)
    return tf.keras.Model(x, tf.keras.layers.Activation("softmax")(y))


def sign_flatten_binary_dense(hw, c, units):
    """BN -> ste_sign -> Flatten -> QuantDense with a binary kernel and no input quantizer -> BN: LCE writes
    LceQuantize and LceDequantize of the 4-D tensor, RESHAPE, then FULLY_CONNECTED with +-alpha weights."""
    x = tf.keras.Input((hw, hw, c))
    y = lq.quantizers.SteSign()(bn()(x))
    y = tf.keras.layers.Flatten()(y)
    y = lq.layers.QuantDense(units, kernel_quantizer="ste_sign", kernel_constraint="weight_clip")(y)
    return tf.keras.Model(x, bn()(y))


def quantdense_float_kernel(k, units):
    """QuantDense with ste_sign on its input only: a float FULLY_CONNECTED after a 2-D LceDequantize."""
    x = tf.keras.Input((k,))
    return tf.keras.Model(x, lq.layers.QuantDense(units, input_quantizer="ste_sign")(x))


def quantdense_3d(rows, k, units):
    """QuantDense on a [1, rows, K] input: LceQuantize of a 3-D tensor, FULLY_CONNECTED with keep_num_dims."""
    x = tf.keras.Input((rows, k))
    return tf.keras.Model(x, qdense(units)(x))


def quicknet_small(hw, classes):
    return lqz.sota.QuickNetSmall(
        weights=None, input_shape=(hw, hw, 3), num_classes=classes
    )


def birealnet(hw, classes):
    return lqz.literature.BiRealNet(
        weights=None, input_shape=(hw, hw, 3), num_classes=classes
    )


# name -> (builder, kwargs, what it covers)
CASES = [
    ("bconv_3x3_same_pad0_c17", single_bconv,
     dict(hw=10, c_in=17, filters=16, kernel=3, padding="same", pad_values=0.0),
     "a: 3x3 SAME with zero padding (pad_values=0), C_in=17 (not a multiple of 32), float output"),
    ("bconv_3x3_same_pad1_c40", single_bconv,
     dict(hw=9, c_in=40, filters=24, kernel=3, padding="same", pad_values=1.0),
     "a: 3x3 SAME with one padding (pad_values=1), C_in=40 (two words, second partial)"),
    ("bconv_3x3_valid_c64", single_bconv,
     dict(hw=8, c_in=64, filters=32, kernel=3, padding="valid"),
     "a: 3x3 VALID, C_in=64 (two full words)"),
    ("bconv_3x3_stride2_same_pad0_c64", single_bconv,
     dict(hw=11, c_in=64, filters=20, kernel=3, strides=2, padding="same", pad_values=0.0),
     "a: 3x3 stride 2 SAME zero padding on an odd 11x11 input"),
    ("bconv_3x3_stride2_same_pad1_c3", single_bconv,
     dict(hw=12, c_in=3, filters=16, kernel=3, strides=2, padding="same", pad_values=1.0),
     "a: 3x3 stride 2 SAME one padding, C_in=3"),
    ("bconv_3x3_dilation2_same_pad0_c40", single_bconv,
     dict(hw=12, c_in=40, filters=16, kernel=3, dilation_rate=2, padding="same", pad_values=0.0),
     "a: 3x3 dilation 2 SAME zero padding, C_in=40"),
    ("bconv_3x3_dilation2_valid_c17", single_bconv,
     dict(hw=12, c_in=17, filters=8, kernel=3, dilation_rate=2, padding="valid"),
     "a: 3x3 dilation 2 VALID, C_in=17"),
    ("bconv_1x1_c17", single_bconv,
     dict(hw=8, c_in=17, filters=33, kernel=1, padding="valid"),
     "a: 1x1, C_in=17, 33 output channels"),
    ("bconv_5x5_same_pad1_c33", single_bconv,
     dict(hw=10, c_in=33, filters=8, kernel=5, padding="same", pad_values=1.0),
     "a: 5x5 SAME one padding, C_in=33"),
    ("bconv_7x7_stride2_same_pad0_c3", single_bconv,
     dict(hw=16, c_in=3, filters=16, kernel=7, strides=2, padding="same", pad_values=0.0),
     "a: 7x7 stride 2 SAME zero padding, C_in=3 (a binary stem)"),
    ("bconv_3x3_same_pad0_2x2_c32", single_bconv,
     dict(hw=2, c_in=32, filters=8, kernel=3, padding="same", pad_values=0.0),
     "a: 3x3 SAME zero padding on a 2x2 input (smaller than the kernel): LCE's default kernel "
     "skips its zero-padding correction here and is wrong; outputs_reference_bconv is right"),
    ("bconv_3x3_valid_relu_c17", bconv_relu,
     dict(hw=8, c_in=17, filters=16, kernel=3, padding="valid"),
     "a: QuantConv2D -> ReLU with no BatchNorm: fused_activation_function RELU, multiplier 1, bias 0"),
    ("bconv2_valid_bitpacked", two_bconvs,
     dict(hw=10, c_in=17, mid=40, filters=16, padding="valid", pad_values=0.0),
     "b: two binary convs, VALID: the first writes bit-packed INT32 output (40 channels -> 2 words) with output_threshold"),
    ("bconv2_same_pad1_bitpacked", two_bconvs,
     dict(hw=9, c_in=40, mid=72, filters=24, padding="same", pad_values=1.0),
     "b: two binary convs, SAME pad_values=1: the first writes bit-packed INT32 output (72 channels -> 3 words)"),
    ("bconv2_same_pad0_float", two_bconvs,
     dict(hw=9, c_in=17, mid=32, filters=16, padding="same", pad_values=0.0),
     "b: two binary convs, SAME pad_values=0: LCE does NOT fuse bit-packed output here (float -> LceQuantize)"),
    ("bmaxpool_2x2_valid", bmaxpool,
     dict(hw=12, c_in=17, mid=40, filters=16, pool=2, strides=2, pool_padding="valid"),
     "c: bconv (bit-packed output) -> LceBMaxPool2d 2x2/2 VALID -> bconv"),
    ("bmaxpool_3x3_s2_same", bmaxpool,
     dict(hw=11, c_in=3, mid=64, filters=16, pool=3, strides=2, pool_padding="same"),
     "c: bconv (bit-packed output) -> LceBMaxPool2d 3x3/2 SAME on an odd input -> bconv"),
    ("quantize_dequantize_c40", sign_only, dict(c=40),
     "LceQuantize -> LceDequantize on the model input (larq ste_sign alone); sample 0 holds 0.0, -0.0, denormals, NaN, inf"),
    ("quicknet_small_32", quicknet_small, dict(hw=32, classes=10),
     "d: larq_zoo.sota.QuickNetSmall(weights=None, input_shape=(32, 32, 3), num_classes=10)"),
    ("birealnet_96*", birealnet, dict(hw=96, classes=10),
     "d: larq_zoo.literature.BiRealNet(weights=None, input_shape=(96, 96, 3), num_classes=10); "
     "96 so that the last stage is 3x3: at 32 or 64 it is 1x1 or 2x2 and LCE's default kernel "
     "gets SAME zero padding wrong there"),
    ("unsupported_cos", bconv_then_cos, dict(hw=8, c_in=17, filters=16),
     "e: a binary conv followed by tf.math.cos (builtin COS): for the refusal test"),
    ("grouped_bconv_g2", grouped_bconv, dict(hw=8, c_in=64, filters=64, groups=2),
     "QuantConv2D(groups=2): a grouped LceBconv2d (filter [O,KH,KW,1], channels_in 64)"),
    ("int8_toy", int8_toy, dict(hw=16, c_in=3),
     "int8: QUANTIZE -> LceQuantize of int8 -> LceBconv2d with int8 output (VALID, then SAME one padding) "
     "-> int8 MEAN -> DEQUANTIZE (LCE's own int8 test model)"),
    ("int8_toy_io", int8_toy, dict(hw=16, c_in=3),
     "int8: the same model converted with int8 input and output (inference_input_type/output_type int8)"),
    ("int8_sign", int8_sign, dict(hw=4, c=40),
     "int8: QUANTIZE -> LceQuantize of int8 -> LceDequantize with int8 output (+-1 on a 6/255 grid)"),
    ("int8_residual", int8_residual, dict(hw=10, c_in=17),
     "int8: bconvs with int8 output (SAME one and zero padding), an int8 residual ADD, LceQuantize of int8"),
    ("quicknet_small_32_int8", quicknet_small, dict(hw=32, classes=10),
     "int8: QuickNet-Small converted with experimental_default_int8_range=(-3, 3): int8 CONV_2D, "
     "DEPTHWISE_CONV_2D, MAX_POOL_2D, AVERAGE_POOL_2D, FULLY_CONNECTED, SOFTMAX with QUANTIZE/DEQUANTIZE "
     "around the binary blocks"),
    ("quantdense_77_10", quantdense, dict(k=77, units=[10], batch_norm=False),
     "dense: QuantDense(10) with a random bias on a [1, 77] input: LceQuantize of [1, 77] (INT32 [1, 3]), "
     "LceDequantize, FULLY_CONNECTED with +-1 weights [10, 77] and the bias"),
    ("quantdense_77_10_bn", quantdense, dict(k=77, units=[10], batch_norm=True),
     "dense: QuantDense(10) -> BN: LCE folds the BN into the FULLY_CONNECTED, weights +-alpha per output"),
    ("quantdense_77_40_10_bn", quantdense, dict(k=77, units=[40, 10], batch_norm=True),
     "dense: QuantDense(40) -> BN -> QuantDense(10) -> BN: the first FULLY_CONNECTED's output is binarized "
     "again (LceQuantize of [1, 40])"),
    ("quant_mlp_77_96_64_10", quant_mlp, dict(k=77, hidden=[96, 64], classes=10),
     "dense: a binary MLP, float BN -> three QuantDense (96, 64, 10), each -> BN, -> softmax"),
    ("quant_conv_dense_10x10", quant_conv_dense, dict(hw=10, c_in=3, classes=10),
     "dense: QuantConv2D (bit-packed output) -> LceBMaxPool2d -> QuantConv2D -> BN -> Flatten (RESHAPE of "
     "[1, 5, 5, 16]) -> QuantDense(48) -> BN -> QuantDense(24) -> BN -> float Dense -> softmax"),
    ("sign_flatten_binary_dense", sign_flatten_binary_dense, dict(hw=4, c=5, units=10),
     "dense: ste_sign -> Flatten -> QuantDense with a binary kernel only -> BN: LceDequantize of [1, 4, 4, 5], "
     "RESHAPE to [1, 80], FULLY_CONNECTED with +-alpha weights over the NHWC flatten order"),
    ("quantdense_float_kernel_77_10", quantdense_float_kernel, dict(k=77, units=10),
     "dense: QuantDense with ste_sign on the input only: LceDequantize of [1, 77] read by a float "
     "FULLY_CONNECTED"),
    ("quantdense_3d_unsupported", quantdense_3d, dict(rows=3, k=77, units=10),
     "dense: QuantDense on a [1, 3, 77] input: LceQuantize of a 3-D tensor (for the refusal test)"),
]

# Samples per case where SAMPLES is too few: the dense cases are small and cheap to run.
SAMPLES_OF = {name: 8 for name, *_ in CASES if name.startswith(("quantdense", "quant_", "sign_flatten"))}

# int8 models whose first int8 CONV_2D output LCE also writes (NAME.npz `probe_outputs`).
PROBED = {"quicknet_small_32_int8"}
# LCE converter arguments of the int8 cases (the others: defaults).
CONVERT_ARGS = {
    "int8_toy_io": dict(inference_input_type=tf.int8, inference_output_type=tf.int8),
    "quicknet_small_32_int8": dict(experimental_default_int8_range=(-3.0, 3.0)),
}

# --------------------------------------------------------------------------
# Random weights and batch-norm statistics


def randomize(model, rng, calib):
    """Seeded random kernels (glorot, from the Keras seed) and random BN statistics.

    Each BN layer's moving statistics are drawn around the mean and variance of
    what it sees on `calib`, so every threshold falls inside the range of its
    accumulator. Layers are visited in order, so each one sees the already
    randomised layers before it.
    """
    # QuantDense's bias starts at zero, and LCE leaves a zero bias out: a random one puts it in the model.
    for layer in model.layers:
        if isinstance(layer, lq.layers.QuantDense) and layer.use_bias:
            kernel, bias = layer.get_weights()
            layer.set_weights([kernel, rng.normal(0.0, 2.0, bias.shape).astype(np.float32)])
    for layer in model.layers:
        if not isinstance(layer, tf.keras.layers.BatchNormalization):
            continue
        probe = tf.keras.Model(model.inputs, layer.input)
        seen = probe(calib, training=False).numpy()
        axes = tuple(range(seen.ndim - 1))
        mean, var = seen.mean(axis=axes), seen.var(axis=axes)
        # A channel that is (nearly) constant on `calib`, such as a dead ReLU
        # channel, must not get a tiny variance: that would blow up other inputs.
        std = np.sqrt(var + 0.25 * var.mean()) + 1e-3
        c = mean.shape[0]
        gamma = rng.uniform(0.5, 1.5, c) * np.where(rng.random(c) < 0.3, -1.0, 1.0)
        beta = rng.normal(0.0, 0.3, c)
        moving_mean = mean + rng.normal(0.0, 0.5, c) * std
        moving_var = std**2 * rng.uniform(0.5, 2.0, c)
        weights = []
        for w in layer.weights:
            n = w.name.split("/")[-1].split(":")[0]
            weights.append(
                {"gamma": gamma, "beta": beta, "moving_mean": moving_mean,
                 "moving_variance": moving_var}[n].astype(np.float32)
            )
        layer.set_weights(weights)
    # The zoo heads end in Dense -> softmax; scale each linear Dense so its
    # outputs have a standard deviation of about 1.5 and the softmax is not
    # saturated (a one-hot output would test nothing). A QuantDense is left as it is: a BN after it was
    # calibrated on its outputs above.
    for layer in model.layers:
        if (isinstance(layer, tf.keras.layers.Dense) and not isinstance(layer, lq.layers.QuantDense)
                and layer.activation.__name__ == "linear"):
            probe = tf.keras.Model(model.inputs, layer.output)
            scale = 1.5 / (probe(calib, training=False).numpy().std() + 1e-6)
            layer.set_weights([w * np.float32(scale) for w in layer.get_weights()])


# --------------------------------------------------------------------------
# Flatbuffer inspection

TYPE_NAMES = {v: k for k, v in vars(tflite.TensorType).items() if not k.startswith("_")}
BUILTIN_NAMES = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}


def _tensor_info(g, i):
    if i < 0:
        return None
    t = g.Tensors(i)
    return {"type": TYPE_NAMES[t.Type()], "shape": t.ShapeAsNumpy().tolist() if t.ShapeLength() else []}


def _fc_weights(m, g, i):
    """What a FULLY_CONNECTED's float weights are: "+-1", "+-alpha per output" or "float"."""
    t = g.Tensors(i)
    raw = m.Buffers(t.Buffer()).DataAsNumpy()
    if t.Type() != tflite.TensorType.FLOAT32 or isinstance(raw, int):
        return TYPE_NAMES[t.Type()]
    w = np.frombuffer(raw.tobytes(), "<f4").reshape(t.ShapeAsNumpy())
    alpha = np.abs(w).max(axis=1, keepdims=True)
    if (np.abs(w) == 1).all():
        return "+-1"
    return "+-alpha per output" if (np.abs(w) == alpha).all() else "float"


def inspect_flatbuffer(buf):
    m = tflite.Model.GetRootAsModel(buf, 0)
    counts = collections.Counter()
    bconvs, bmaxpools, tensor_types = [], [], collections.Counter()
    fcs = []
    for s in range(m.SubgraphsLength()):
        g = m.Subgraphs(s)
        for t in range(g.TensorsLength()):
            tensor_types[TYPE_NAMES[g.Tensors(t).Type()]] += 1
        for k in range(g.OperatorsLength()):
            op = g.Operators(k)
            oc = m.OperatorCodes(op.OpcodeIndex())
            code = max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())
            name = oc.CustomCode().decode() if code == tflite.BuiltinOperator.CUSTOM else BUILTIN_NAMES[code]
            counts[name] += 1
            ins = [_tensor_info(g, op.Inputs(j)) for j in range(op.InputsLength())]
            outs = [_tensor_info(g, op.Outputs(j)) for j in range(op.OutputsLength())]
            if name in ("LceBconv2d", "LceBMaxPool2d"):
                opts = flexbuffers.Loads(op.CustomOptionsAsNumpy().tobytes())
                entry = {"options": dict(sorted(opts.items())), "inputs": ins, "output": outs[0]}
                (bconvs if name == "LceBconv2d" else bmaxpools).append(entry)
            if name == "FULLY_CONNECTED":
                fcs.append({"inputs": ins, "weights": _fc_weights(m, g, op.Inputs(1)), "output": outs[0]})
    return {
        "ops": dict(sorted(counts.items())),
        "tensor_types": dict(sorted(tensor_types.items())),
        "bconv2d": bconvs,
        "bmaxpool2d": bmaxpools,
        **({"fully_connected": fcs} if fcs else {}),
    }


# --------------------------------------------------------------------------


def int8_output_step(buf):
    """The int8 grid step of the model's output: 1 for an int8 output (its numbers), the scale of the int8
    tensor a final DEQUANTIZE reads, None for a float output computed in float."""
    m = tflite.Model.GetRootAsModel(buf, 0)
    g = m.Subgraphs(0)
    out = int(g.Outputs(0))
    if g.Tensors(out).Type() == tflite.TensorType.INT8:
        return 1.0
    for k in range(g.OperatorsLength()):
        op = g.Operators(k)
        code = m.OperatorCodes(op.OpcodeIndex())
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        if int(op.Outputs(0)) == out and builtin == tflite.BuiltinOperator.DEQUANTIZE:
            return float(g.Tensors(int(op.Inputs(0))).Quantization().Scale(0))
    return None


def with_output(buf, tensor):
    """The model with its (single) output redirected to `tensor`: LCE's interpreter then returns that
    intermediate tensor (the int32 index is patched in place; nothing else changes)."""
    g = tflite.Model.GetRootAsModel(buf, 0).Subgraphs(0)
    position = g._tab.Vector(g._tab.Offset(8))  # Subgraph.outputs, vtable slot 2
    patched = bytearray(buf)
    patched[position:position + 4] = np.int32(tensor).tobytes()
    return bytes(patched)


def first_int8_conv_output(buf):
    """The output tensor of the model's first CONV_2D whose output is int8, or None."""
    m = tflite.Model.GetRootAsModel(buf, 0)
    g = m.Subgraphs(0)
    for k in range(g.OperatorsLength()):
        op = g.Operators(k)
        code = m.OperatorCodes(op.OpcodeIndex())
        if (max(code.BuiltinCode(), code.DeprecatedBuiltinCode()) == tflite.BuiltinOperator.CONV_2D
                and g.Tensors(int(op.Outputs(0))).Type() == tflite.TensorType.INT8):
            return int(op.Outputs(0))
    return None


def versions():
    def v(p):
        try:
            return metadata.version(p)
        except metadata.PackageNotFoundError:
            return "absent"

    return {
        "python": platform.python_version(),
        "tensorflow": tf.__version__,
        "tf-keras": v("tf-keras"),
        "larq": v("larq"),
        "larq-compute-engine": v("larq-compute-engine"),
        "larq-zoo": v("larq-zoo"),
        "numpy": np.__version__,
    }


def make_inputs(rng, shape, name):
    samples = SAMPLES_OF.get(name, SAMPLES)
    if name.endswith("_io"):  # int8 input: the int8 numbers
        return rng.integers(-128, 128, (samples,) + tuple(shape)).astype(np.int8)
    x = rng.normal(0.0, 1.0, (samples,) + tuple(shape)).astype(np.float32)
    if name.startswith("quantize_dequantize"):
        special = np.array(
            [0.0, -0.0, -1e-45, 1e-45, -1e-38, 1e-38, -1.1754944e-38, 1.1754944e-38,
             -1.0, 1.0, np.nan, -np.nan, np.inf, -np.inf, -1e-30, 1e-30],
            dtype=np.float32,
        )
        x[0, 0, 0, : special.size] = special
        x[0, 0, 0, special.size:] = np.where(np.arange(x.shape[-1] - special.size) % 2, -0.5, 0.5)
    return x


def write_bench_models(out_dir):
    cases = (("quicknet_small_224", quicknet_small, {}), ("birealnet_224", birealnet, {}),
             ("quicknet_small_224_int8", quicknet_small, CONVERT_ARGS["quicknet_small_32_int8"]))
    for index, (name, builder, convert_args) in enumerate(cases):
        tf.keras.backend.clear_session()
        tf.keras.utils.set_random_seed(2000 + index % 2)
        rng = np.random.default_rng(2000 + index % 2)
        model = builder(hw=224, classes=1000)
        calib = rng.normal(0.0, 1.0, (2, 224, 224, 3)).astype(np.float32)
        randomize(model, rng, calib)
        path = os.path.join(out_dir, name + ".tflite")
        with open(path, "wb") as f:
            f.write(lce.convert_keras_model(model, **convert_args))
        print(f"wrote {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--only", nargs="*", help="case names to regenerate (default: all)")
    ap.add_argument("--with-birealnet", action="store_true",
                    help="also write birealnet_96 (about 2.2 MB, so not committed by default)")
    ap.add_argument("--bench", action="store_true",
                    help="write only the full-size models that tools/compare_lce.py times (QuickNet-Small "
                         "and Bi-Real Net at 224x224, 1000 classes, random batch-norm statistics, and "
                         "QuickNet-Small with a default int8 range; no outputs)")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    if args.bench:
        write_bench_models(args.out_dir)
        return
    vers = versions()
    vers_arr = np.array([f"{k}={v}" for k, v in vers.items()])
    manifest_path = os.path.join(args.out_dir, "MANIFEST.json")
    manifest = {"models": {}}
    if args.only and os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)

    for index, (name, builder, kwargs, covers) in enumerate(CASES):
        if name.endswith("*"):  # opt-in: too large to commit with the others
            name = name[:-1]
            if not args.with_birealnet and not (args.only and name in args.only):
                continue
        if args.only and name not in args.only:
            continue
        seed = 1000 + index
        # Fresh layer-name counters, so a case's bytes do not depend on which
        # cases ran before it in this process (--only gives the same files).
        tf.keras.backend.clear_session()
        tf.keras.utils.set_random_seed(seed)
        rng = np.random.default_rng(seed)
        model = builder(**kwargs)
        in_shape = model.input_shape[1:]
        calib = rng.normal(0.0, 1.0, (8,) + tuple(in_shape)).astype(np.float32)
        randomize(model, rng, calib)
        buf = lce.convert_keras_model(model, **CONVERT_ARGS.get(name, {}))
        x = make_inputs(rng, in_shape, name)
        try:
            outputs = Interpreter(buf, num_threads=1).predict(x)
            out_kernel = "default (Ruy optimized BGEMM)"
        except RuntimeError:
            # LCE's default kernel refuses grouped bconvs; its reference kernel runs them.
            outputs = Interpreter(buf, num_threads=1, use_reference_bconv=True).predict(x)
            out_kernel = "reference (the default kernel refused the model)"
        try:
            outputs_ref = Interpreter(buf, num_threads=1, use_reference_bconv=True).predict(x)
            ref_note = "ran"
        except RuntimeError:
            # LCE's reference kernel refuses SAME zero padding with an odd channels_in.
            outputs_ref, ref_note = None, "refused by LCE (AllocateTensors failed)"
        keras_out = model(x.astype(np.float32), training=False).numpy()
        with open(os.path.join(args.out_dir, name + ".tflite"), "wb") as f:
            f.write(buf)
        arrays = dict(inputs=x, outputs=outputs, keras_outputs=keras_out, versions=vers_arr)
        if outputs_ref is not None:
            arrays["outputs_reference_bconv"] = outputs_ref
        step = int8_output_step(buf)
        if step is not None:
            arrays["int8_output_step"] = np.float64(step)
        probe = first_int8_conv_output(buf) if name in PROBED else None
        if probe is not None:  # LCE's int8 numbers of the first int8 CONV_2D, for a per-layer check
            arrays["probe_tensor"] = np.int32(probe)
            arrays["probe_outputs"] = Interpreter(with_output(buf, probe), num_threads=1).predict(x)
        np.savez_compressed(os.path.join(args.out_dir, name + ".npz"), **arrays)
        info = inspect_flatbuffer(buf)
        diff_ref = None if outputs_ref is None else float(np.nanmax(np.abs(outputs - outputs_ref)))
        finite = np.isfinite(outputs) & np.isfinite(keras_out)
        diff = np.abs(outputs.astype(np.float64) - keras_out)[finite]  # int8 outputs: the numbers vs reals
        diff_keras = float(np.max(diff)) if finite.any() else 0.0
        manifest["models"][name] = {
            "covers": covers,
            "builder": builder.__name__,
            "arguments": kwargs,
            "seed": seed,
            "tflite_bytes": len(buf),
            "tflite_sha256": hashlib.sha256(buf).hexdigest(),
            "input_shape": [1] + list(in_shape),
            "samples": int(x.shape[0]),
            "output_shape": list(outputs.shape),
            "outputs_kernel": out_kernel,
            "reference_bconv_kernel": ref_note,
            "max_abs_diff_outputs_vs_reference_bconv": diff_ref,
            "max_abs_diff_outputs_vs_keras": diff_keras,
            **info,
        }
        print(f"{name}: {len(buf)} bytes, ops {info['ops']}, |opt-ref| {diff_ref}, "
              f"|lce-keras| {diff_keras:.3g}", flush=True)

    manifest["versions"] = vers
    manifest["command"] = ("TF_USE_LEGACY_KERAS=1 /work/venv-lce/bin/python tools/larq_fixtures.py "
                           "tests/python/larq_fixtures")
    manifest["notes"] = (
        "inputs are [S,H,W,C]; each sample is run alone as a batch of one. outputs come from "
        "LCE's interpreter with num_threads=1 and its default kernels; outputs_reference_bconv "
        "with use_reference_bconv=True. Regenerate with the command above."
    )
    manifest["models"] = dict(sorted(manifest["models"].items()))
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=False)
        f.write("\n")


if __name__ == "__main__":
    sys.exit(main())
