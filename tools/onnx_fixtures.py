# SPDX-License-Identifier: Apache-2.0
"""Generate the ONNX conformance fixtures: real PyTorch and Brevitas exports of binarized networks, with the
outputs of the format's own engines.

One command regenerates everything (about ten seconds on two cores):

    build/venv-onnx-fixtures/bin/python tools/onnx_fixtures.py tests/python/onnx_fixtures

The environment it was written for (CPython 3.11, pyenv's python3.11):

    python3.11 -m venv build/venv-onnx-fixtures
    P=build/venv-onnx-fixtures/bin/pip
    # torch from PyPI without its CUDA requirements (cuda-toolkit, cuda-bindings, nvidia-*, triton: about
    # 3 GB), then its pure-Python requirements by hand, as listed in torch's METADATA:
    $P install --no-deps torch==2.15.0
    $P install filelock "typing-extensions>=4.13" "setuptools>=77.0.3,<81" "sympy>=1.13.3" \
        "networkx>=2.5.1" jinja2 "fsspec>=0.8.5"
    # The PyPI wheel is a CUDA build: libtorch_cuda.so is linked against the CUDA 13 libraries, so
    # `import torch` needs them even on a machine without a GPU.  This project's machines have the CUDA 13.0
    # toolkit on the loader's path (/usr/local/cuda-13.0/lib: cudart, cuBLAS, cuDNN, cuFFT, cuSPARSE, NVRTC,
    # nvJitLink, CUPTI); the three libraries it lacks and the one it has too old (NCCL) come from these wheels:
    $P install --no-deps "nvidia-cufile==1.17.1.22.*" nvidia-cusparselt-cu13==0.8.1 \
        nvidia-nvshmem-cu13==3.7.2 nvidia-nccl-cu13==2.30.7
    # (without a CUDA 13 toolkit: `pip install torch==2.15.0` with all its requirements instead)
    # Brevitas and unfoldNd require torch: --no-deps keeps pip from pulling torch's CUDA requirements back in.
    $P install --no-deps brevitas==0.13.4 unfoldNd==0.2.3
    $P install "dependencies==2.0.1" packaging qonnx==1.0.0 onnx onnxruntime onnxoptimizer numpy

(resolved at the time of writing: torch 2.15.0+cu132, brevitas 0.13.4, qonnx 1.0.0, onnx 1.23.2,
onnxruntime 1.32.0, onnxoptimizer 0.4.2, onnxscript 0.7.2, numpy 2.4.6, protobuf 7.36.2).  Brevitas' export
needs onnx and onnxoptimizer; qonnx pulls in onnx, onnxruntime and onnxscript.

Every PyTorch model is exported with the classic TorchScript exporter (`torch.onnx.export(..., dynamo=False)`,
opset 13 unless the case says otherwise; torch 2.15 still has it, deprecated, behind dynamo=False); every
Brevitas model with `brevitas.export.export_qonnx(..., dynamo=False)` at Brevitas' default opset.  Weights
are seeded random; every BatchNorm gets seeded random gamma, beta, running mean and variance (the running
statistics are drawn around what the layer sees on random inputs, so the thresholds they imply fall inside
the range of the binary sums; about a third of the gammas are negative); model.eval() before export.

For every case the script writes into the output folder:

* NAME.onnx: the exported model, byte for byte as the exporter wrote it.
* NAME.npz with
  - `inputs`: float32 [S, *input_shape]: S samples, each of the model's input shape (batch 1); sample s is
    run on its own as `inputs[s]` through the model's single input, so the sample axis is an extra one.
  - `outputs`: the engine's first output for each sample, stacked: [S, *output_shape]; a model with several
    outputs also has `outputs_<output name>` for each of them.
  - `versions`: string array "package=version".
* MANIFEST.json: per model what it covers, its form, engine, seed, opset, op counts, input and outputs,
  every binarizer and weight, the smallest margin seen at a binarizer (`min_margin`), the sha256 of the
  .onnx and the versions.

The engines: onnxruntime (CPUExecutionProvider, default session options) for standard-op models; for QONNX
models (BipolarQuant nodes) qonnx's executor, `qonnx.core.onnx_exec.execute_onnx` on a
`qonnx.core.modelwrapper.ModelWrapper` of the file as exported (it runs every standard node through its own
one-node onnxruntime session and BipolarQuant in numpy); MANIFEST's `qonnx_transforms` lists the qonnx
transforms the executor run needed first (qonnx's InferShapes where the export leaves a tensor's shape
unspecified, which the executor refuses; nothing else).  The .onnx files are the exports as written.

Margins: the converter's binary results equal the engine's only where no binarizer input lies within float
rounding of its threshold.  For every binarizer whose input depends on the model input (Sign: threshold 0;
BipolarQuant: threshold 0, where it maps 0 to +1 while ONNX Sign maps 0 to 0; RSign's sign(x - beta) is a
Sign of the Sub's output), every sample is checked with the engine itself (the binarizers' inputs added as
extra graph outputs on a copy of the model, or qonnx's full execution context): a sample whose smallest
|input| is below 1e-3 (or below 1e-3 times the tensor's RMS where that is above 1) is drawn again, and a
model that yields no such sample in MAX_DRAWS draws is rebuilt from the next seed.  This also keeps exact
zeros out of the binarizers.  `min_margin` is the smallest |input| over all binarizers and samples stored.
tests/python/test_onnx_engines.py runs the engines on the committed fixtures again (no torch, no Brevitas).
"""

import argparse
import collections
import copy
import hashlib
import json
import os
import platform
import sys
import tempfile
import warnings
from importlib import metadata

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn as nn
import torch.nn.functional as F

# The TorchScript exporter is deprecated (it says so on every call) and Brevitas warns about optional
# packages it does not need here; neither is news.
warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", category=UserWarning)
warnings.filterwarnings("ignore", category=FutureWarning)

import brevitas.nn as qnn  # noqa: E402
from brevitas.core.function_wrapper import TensorClamp  # noqa: E402
from brevitas.core.scaling import ScalingImplType  # noqa: E402
from brevitas.core.stats import StatsOp  # noqa: E402
from brevitas.export import export_qonnx  # noqa: E402
from brevitas.quant import SignedBinaryActPerTensorConst, SignedBinaryWeightPerTensorConst  # noqa: E402
from brevitas_examples.bnn_pynq.models.FC import FC  # noqa: E402
from brevitas_examples.bnn_pynq.models.tensor_norm import TensorNorm  # noqa: E402
from qonnx.core.modelwrapper import ModelWrapper  # noqa: E402
from qonnx.core.onnx_exec import execute_onnx  # noqa: E402
from qonnx.transformation.infer_shapes import InferShapes  # noqa: E402

SAMPLES = 3
MARGIN = 1e-3
MAX_DRAWS = 400  # candidate samples per model before its seed is given up
MAX_SEEDS = 20
OPSET = 13
QONNX_DOMAIN = "qonnx.custom_op.general"
OLD_BREVITAS_DOMAIN = "onnx.brevitas"
BINARIZERS = {("", "Sign"), (QONNX_DOMAIN, "BipolarQuant"), (OLD_BREVITAS_DOMAIN, "BipolarQuant")}

# --------------------------------------------------------------------------
# Weights


def plus_minus_one(shape):
    """Seeded random +-1 (never 0): what a trained binary layer's sign(W) looks like."""
    return torch.where(torch.randn(shape) >= 0, 1.0, -1.0)


def set_binary(module, alpha=None):
    """Replace a Conv2d's or Linear's weight by +-1 values (times a per-output scale alpha if given)."""
    with torch.no_grad():
        w = plus_minus_one(module.weight.shape)
        if alpha is not None:
            w = w * alpha.view(-1, *([1] * (w.dim() - 1)))
        module.weight.copy_(w)
    return module


def positive_scales(n):
    """Per-output-channel XNOR-Net scales: mean |W| of a float weight, so around 0.02 to 0.1."""
    return torch.rand(n) * 0.08 + 0.02


# --------------------------------------------------------------------------
# Binarizer forms used by PyTorch BNN code


class SignConv(nn.Module):
    """torch.sign(x) -> nn.Conv2d with +-1 weights (an initializer named conv.weight)."""

    def __init__(self, c_in, c_out, k, stride=1, padding=0, dilation=1, bias=False):
        super().__init__()
        self.conv = set_binary(nn.Conv2d(c_in, c_out, k, stride, padding, dilation, bias=bias))

    def forward(self, x):
        return self.conv(torch.sign(x))


class SignFConvConstant(nn.Module):
    """torch.sign(x) -> F.conv2d whose weight is a plain tensor attribute (neither parameter nor buffer):
    the tracer records it as a constant, which the exporter writes as an ONNX Constant node."""

    def __init__(self, c_in, c_out, k, stride=1, padding=0):
        super().__init__()
        self.weight = plus_minus_one((c_out, c_in, k, k))
        self.stride, self.padding = stride, padding

    def forward(self, x):
        return F.conv2d(torch.sign(x), self.weight, stride=self.stride, padding=self.padding)


class SignFConvBuffer(nn.Module):
    """torch.sign(x) -> F.conv2d with a registered buffer: +-1, or alpha_o * sign(W) (XNOR-Net)."""

    def __init__(self, c_in, c_out, k, stride=1, padding=0, xnor=False):
        super().__init__()
        w = plus_minus_one((c_out, c_in, k, k))
        if xnor:
            w = w * positive_scales(c_out).view(-1, 1, 1, 1)
        self.register_buffer("weight", w)
        self.stride, self.padding = stride, padding

    def forward(self, x):
        return F.conv2d(torch.sign(x), self.weight, stride=self.stride, padding=self.padding)


class SignComputedWeightConv(nn.Module):
    """torch.sign(x) -> F.conv2d whose weight is computed in the graph from a float parameter:
    torch.sign(W), or W.abs().mean(dim=(1, 2, 3), keepdim=True) * torch.sign(W) (XNOR-Net)."""

    def __init__(self, c_in, c_out, k, stride=1, padding=0, xnor=False):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(c_out, c_in, k, k) * 0.05)
        self.stride, self.padding, self.xnor = stride, padding, xnor

    def forward(self, x):
        w = torch.sign(self.weight)
        if self.xnor:
            w = self.weight.abs().mean(dim=(1, 2, 3), keepdim=True) * w
        return F.conv2d(torch.sign(x), w, stride=self.stride, padding=self.padding)


class PadSignConv(nn.Module):
    """F.pad(torch.sign(x), (1, 1, 1, 1), value=v) -> nn.Conv2d with padding 0: padding with -1 or +1."""

    def __init__(self, c_in, c_out, value, stride=1):
        super().__init__()
        self.value = value
        self.conv = set_binary(nn.Conv2d(c_in, c_out, 3, stride, 0, bias=False))

    def forward(self, x):
        return self.conv(F.pad(torch.sign(x), (1, 1, 1, 1), value=self.value))


class HardBinaryConv(nn.Module):
    """The binary convolution of Bi-Real Net's and ReActNet's reference code, as written there: flat float
    weights, a detached per-output-channel scale mean |W|, and the weight straight-through estimator
    scale * sign(W) detached - clamp(W) detached + clamp(W).  (The reference initialises the weights with
    torch.rand * 0.001, all positive; a trained model's are of both signs, so these are randn * 0.05.)"""

    def __init__(self, c_in, c_out, k=3, stride=1, padding=1):
        super().__init__()
        self.stride, self.padding = stride, padding
        self.shape = (c_out, c_in, k, k)
        self.weights = nn.Parameter(torch.randn(c_out * c_in * k * k, 1) * 0.05)

    def forward(self, x):
        real_weights = self.weights.view(self.shape)
        scaling_factor = torch.mean(
            torch.mean(torch.mean(abs(real_weights), dim=3, keepdim=True), dim=2, keepdim=True),
            dim=1, keepdim=True)
        scaling_factor = scaling_factor.detach()
        binary_weights_no_grad = scaling_factor * torch.sign(real_weights)
        cliped_weights = torch.clamp(real_weights, -1.0, 1.0)
        binary_weights = binary_weights_no_grad.detach() - cliped_weights.detach() + cliped_weights
        return F.conv2d(x, binary_weights, stride=self.stride, padding=self.padding)


class BiRealBlock(nn.Module):
    """Bi-Real Net's block: sign -> binary 3x3 conv -> BatchNorm -> + the block input.  With stride 2 the
    shortcut is Bi-Real's downsample: AvgPool2d(2) -> 1x1 float conv -> BatchNorm."""

    def __init__(self, c_in, c_out, stride=1):
        super().__init__()
        self.binary_conv = HardBinaryConv(c_in, c_out, 3, stride, 1)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.downsample = None
        if stride != 1 or c_in != c_out:
            self.downsample = nn.Sequential(
                nn.AvgPool2d(kernel_size=2, stride=stride),
                nn.Conv2d(c_in, c_out, 1, bias=False),
                nn.BatchNorm2d(c_out),
            )

    def forward(self, x):
        residual = x if self.downsample is None else self.downsample(x)
        out = self.bn1(self.binary_conv(torch.sign(x)))
        return out + residual


class ReActNetBlock(nn.Module):
    """ReActNet's block: RSign sign(x - beta_c) -> binary 3x3 conv (+-1 weights) -> BatchNorm -> + x ->
    RPReLU PReLU(x - gamma_c) + zeta_c with per-channel slopes."""

    def __init__(self, c):
        super().__init__()
        self.beta = nn.Parameter(torch.randn(1, c, 1, 1) * 0.3)
        self.conv = set_binary(nn.Conv2d(c, c, 3, 1, 1, bias=False))
        self.bn = nn.BatchNorm2d(c)
        self.gamma = nn.Parameter(torch.randn(1, c, 1, 1) * 0.3)
        self.prelu = nn.PReLU(c)
        with torch.no_grad():
            self.prelu.weight.copy_(torch.rand(c) * 0.4 + 0.05)
        self.zeta = nn.Parameter(torch.randn(1, c, 1, 1) * 0.3)

    def forward(self, x):
        out = self.bn(self.conv(torch.sign(x - self.beta)))
        out = out + x
        return self.prelu(out - self.gamma) + self.zeta


class SteSign(nn.Module):
    """The common straight-through sign of PyTorch BNN training code, exported as is."""

    def forward(self, x):
        return torch.sign(x).detach() - torch.clamp(x, -1, 1).detach() + torch.clamp(x, -1, 1)


class ApproxSign(nn.Module):
    """Bi-Real Net's BinaryActivation (ApproxSign): sign forward, piecewise polynomial backward."""

    def forward(self, x):
        out_forward = torch.sign(x)
        mask1 = x < -1
        mask2 = x < 0
        mask3 = x < 1
        out1 = (-1) * mask1.type(torch.float32) + (x * x + 2 * x) * (1 - mask1.type(torch.float32))
        out2 = out1 * mask2.type(torch.float32) + (-x * x + 2 * x) * (1 - mask2.type(torch.float32))
        out3 = out2 * mask3.type(torch.float32) + 1 * (1 - mask3.type(torch.float32))
        return out_forward.detach() - out3.detach() + out3


class SteConv(nn.Module):
    """A training-form binarizer followed by a +-1 3x3 conv."""

    def __init__(self, act, c_in, c_out):
        super().__init__()
        self.act = act
        self.conv = set_binary(nn.Conv2d(c_in, c_out, 3, 1, 1, bias=False))

    def forward(self, x):
        return self.conv(self.act(x))


class SignLinear(nn.Module):
    """torch.sign(x) -> nn.Linear with +-1 weights and a float bias (exported as Gemm, transB=1)."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.fc = set_binary(nn.Linear(n_in, n_out, bias=True))

    def forward(self, x):
        return self.fc(torch.sign(x))


class SignMatMul(nn.Module):
    """torch.sign(x) @ W with W [in, out] = sign * alpha_out (a buffer; exported as MatMul)."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.register_buffer("weight", plus_minus_one((n_in, n_out)) * positive_scales(n_out))

    def forward(self, x):
        return torch.sign(x) @ self.weight


class TfcMlp(nn.Module):
    """A FINN-TFC-like MLP in plain PyTorch: Flatten -> 3 x (sign -> +-1 Linear -> BatchNorm1d) -> float
    Linear."""

    def __init__(self, n_in=64, hidden=32, classes=10):
        super().__init__()
        self.flatten = nn.Flatten()
        self.fc = nn.ModuleList()
        self.bn = nn.ModuleList()
        for i in range(3):
            self.fc.append(set_binary(nn.Linear(n_in if i == 0 else hidden, hidden, bias=False)))
            self.bn.append(nn.BatchNorm1d(hidden))
        self.classifier = nn.Linear(hidden, classes)

    def forward(self, x):
        x = self.flatten(x)
        for fc, bn in zip(self.fc, self.bn):
            x = bn(fc(torch.sign(x)))
        return self.classifier(x)


class SmallBiRealNet(nn.Module):
    """A small whole Bi-Real-like network: float stem (3x3 conv, BatchNorm; like Bi-Real's stem, no ReLU,
    which would feed exact zeros to the first sign) -> MaxPool 3x3/2 pad 1 -> two Bi-Real blocks -> one
    downsampling block -> AdaptiveAvgPool2d(1) -> Flatten -> Linear -> Softmax."""

    def __init__(self, width=16, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = nn.Sequential(BiRealBlock(width, width), BiRealBlock(width, width))
        self.layer2 = BiRealBlock(width, 2 * width, stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(2 * width, classes)

    def forward(self, x):
        x = self.maxpool(self.bn1(self.conv1(x)))
        x = self.layer2(self.layer1(x))
        x = torch.flatten(self.avgpool(x), 1)
        return F.softmax(self.fc(x), dim=1)


# --------------------------------------------------------------------------
# Brevitas models (exported to QONNX)


class BinaryWeightPerChannelStats(SignedBinaryWeightPerTensorConst):
    """Brevitas' signed binary weight quantizer with a per-output-channel scale mean |W| (XNOR-Net style)
    instead of the constant per-tensor 0.1.  Its parent clamps the weight to +-scale in place on every
    forward, which with a scale computed from the weight would shrink the weight (and the scale) at each
    call: this one clamps out of place."""

    tensor_clamp_impl = TensorClamp
    scaling_impl_type = ScalingImplType.STATS
    scaling_stats_op = StatsOp.AVE
    scaling_per_output_channel = True


class QuantSignConv(nn.Module):
    """QuantIdentity(SignedBinaryActPerTensorConst) -> QuantConv2d(SignedBinaryWeightPerTensorConst)."""

    def __init__(self, c_in, c_out, k=3, stride=1, padding=1):
        super().__init__()
        self.act = qnn.QuantIdentity(act_quant=SignedBinaryActPerTensorConst, return_quant_tensor=True)
        self.conv = qnn.QuantConv2d(c_in, c_out, k, stride=stride, padding=padding, bias=False,
                                    weight_quant=SignedBinaryWeightPerTensorConst, weight_bit_width=1)

    def forward(self, x):
        return self.conv(self.act(x))


class QuantResidualBlock(nn.Module):
    """Binary activation -> QuantConv2d with per-channel binary weights -> BatchNorm -> + the float input."""

    def __init__(self, c):
        super().__init__()
        self.act = qnn.QuantIdentity(act_quant=SignedBinaryActPerTensorConst, return_quant_tensor=True)
        self.conv = qnn.QuantConv2d(c, c, 3, padding=1, bias=False,
                                    weight_quant=BinaryWeightPerChannelStats, weight_bit_width=1)
        self.bn = nn.BatchNorm2d(c)

    def forward(self, x):
        return self.bn(self.conv(self.act(x))) + x


def quant_tfc():
    """brevitas_examples' FINN FC (TFC) model with 1-bit weights and activations, here on an 8x8 input with
    three hidden layers of 32: FINN's TFC_1W1A quantizes its input to 8 bits (a Quant node); this one's input
    quantizer is binary too, so every quantizer is a BipolarQuant."""
    return FC(num_classes=10, weight_bit_width=1, act_bit_width=1, in_bit_width=1, in_channels=1,
              out_features=[32, 32, 32], in_features=(8, 8))


# --------------------------------------------------------------------------
# The cases: name, form, builder, input shape, what it covers, export options.
# Export options: "exporter" is "torch" (TorchScript) or "brevitas"; "opset" and "fold"
# (do_constant_folding) for torch; "names": False keeps the exporter's default tensor names.


DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "onnx.md")


def docs_example_code():
    """The PyTorch half of docs/onnx.md's example (everything before `import numpy`): its model code and its
    export call."""
    with open(DOCS) as f:
        text = f.read()
    block = text.split("<!-- onnx-example:begin -->")[1].split("<!-- onnx-example:end -->")[0]
    code = block.split("```python\n", 1)[1].rsplit("```", 1)[0]
    return code[:code.index("\nimport numpy as np")]


def docs_example():
    """The example's model, built by running its code up to the export call (the fixture tool exports it
    with the example's names, after seeding its batch-norms like every other case)."""
    code = docs_example_code()
    namespace = {}
    exec(code[:code.index("torch.onnx.export(")], namespace)  # noqa: S102 - the project's own documentation
    return namespace["model"]


def case(name, form, build, shape, covers, **export):
    return dict(name=name, form=form, build=build, shape=tuple(shape), covers=covers, export=export)


CASES = [
    case("sign_conv_3x3_s1_p1", "sign_conv", lambda: SignConv(16, 16, 3, 1, 1), (1, 16, 10, 10),
         "torch.sign -> nn.Conv2d 3x3 stride 1 padding 1 (zero padding), +-1 weight initializer"),
    case("sign_conv_3x3_s2_c17_constant", "sign_conv", lambda: SignFConvConstant(17, 16, 3, 2, 1),
         (1, 17, 11, 11),
         "torch.sign -> F.conv2d 3x3 stride 2 padding 1 on 17 (odd) input channels, 11x11; the +-1 weight "
         "is a plain tensor attribute, exported as an ONNX Constant node"),
    case("sign_conv_1x1_c17", "sign_conv", lambda: SignFConvBuffer(17, 24, 1), (1, 17, 8, 8),
         "torch.sign -> F.conv2d 1x1, 17 -> 24 channels, +-1 weight from a buffer (initializer)"),
    case("sign_conv_bias_dilation2", "sign_conv", lambda: SignConv(16, 8, 3, 1, 2, dilation=2, bias=True),
         (1, 16, 12, 12),
         "torch.sign -> nn.Conv2d 3x3 dilation 2 padding 2 with a float bias, +-1 weights"),
    case("sign_conv_xnor_alpha", "sign_conv", lambda: SignFConvBuffer(24, 16, 3, 1, 1, xnor=True),
         (1, 24, 9, 9),
         "torch.sign -> F.conv2d 3x3 padding 1 whose constant weight is alpha_o * sign(W) "
         "(per-output-channel positive scales, XNOR-Net), an initializer"),
    case("sign_conv_computed_sign_w", "sign_conv", lambda: SignComputedWeightConv(16, 16, 3, 1, 1),
         (1, 16, 8, 8),
         "torch.sign -> F.conv2d 3x3 padding 1 with weight torch.sign(W) computed in the graph from the "
         "float parameter W (Sign node on an initializer; default constant folding)"),
    case("sign_conv_computed_xnor_w_nofold", "sign_conv",
         lambda: SignComputedWeightConv(16, 16, 3, 1, 1, xnor=True), (1, 16, 8, 8),
         "torch.sign -> F.conv2d 3x3 padding 1 with weight W.abs().mean(dim=(1,2,3), keepdim=True) * "
         "torch.sign(W) computed in the graph (Abs, ReduceMean with axes attribute, Sign, Mul), exported "
         "with do_constant_folding=False", fold=False),
    case("sign_conv_computed_xnor_w_opset18", "sign_conv",
         lambda: SignComputedWeightConv(24, 16, 3, 2, 1, xnor=True), (1, 24, 9, 9),
         "the same computed XNOR weight at opset 18 (ReduceMean takes its axes as an int64 input), "
         "stride 2", opset=18),
    case("sign_conv_pad_minus1", "sign_conv", lambda: PadSignConv(16, 16, -1.0), (1, 16, 8, 8),
         "F.pad(torch.sign(x), (1,1,1,1), value=-1.0) -> nn.Conv2d 3x3 padding 0: an ONNX Pad "
         "(mode constant, value -1) whose pads come from a small constant subgraph"),
    case("sign_conv_pad_plus1_s2", "sign_conv", lambda: PadSignConv(17, 16, 1.0, stride=2), (1, 17, 9, 9),
         "F.pad(torch.sign(x), (1,1,1,1), value=+1.0) -> nn.Conv2d 3x3 stride 2 padding 0 on 17 input "
         "channels"),
    case("birealnet_block", "network", lambda: BiRealBlock(16, 16), (1, 16, 8, 8),
         "Bi-Real Net block: sign -> binary 3x3 conv (the reference HardBinaryConv, weight computed in the "
         "graph) -> BatchNorm -> residual Add with the block input"),
    case("birealnet_down_block", "network", lambda: BiRealBlock(16, 32, stride=2), (1, 16, 8, 8),
         "Bi-Real Net downsampling block: sign -> binary 3x3 stride 2 conv -> BatchNorm on the main path; "
         "AvgPool2d(2) -> 1x1 float conv -> BatchNorm on the shortcut; Add"),
    case("reactnet_block", "network", lambda: ReActNetBlock(16), (1, 16, 8, 8),
         "ReActNet block: RSign sign(x - beta_c) (Sub, Sign) -> +-1 3x3 conv -> BatchNorm -> residual Add "
         "-> RPReLU PReLU(x - gamma_c) + zeta_c with per-channel slopes"),
    case("ste_clamp_conv", "ste", lambda: SteConv(SteSign(), 16, 16), (1, 16, 8, 8),
         "training-form STE sign(x).detach() - clamp(x,-1,1).detach() + clamp(x,-1,1) exported as is, "
         "then a +-1 3x3 conv"),
    case("ste_approxsign_conv", "ste", lambda: SteConv(ApproxSign(), 16, 16), (1, 16, 8, 8),
         "Bi-Real's ApproxSign (sign forward, piecewise polynomial backward) exported as is, then a +-1 "
         "3x3 conv"),
    case("dense_sign_gemm", "dense", lambda: SignLinear(48, 24), (1, 48),
         "torch.sign -> nn.Linear with +-1 weights and a float bias (Gemm transB=1)"),
    case("dense_sign_matmul_alpha", "dense", lambda: SignMatMul(40, 20), (1, 40),
         "torch.sign(x) @ W with W [40, 20] = +-1 * alpha_out (MatMul with an initializer)"),
    case("dense_tfc_mlp", "dense", lambda: TfcMlp(64, 32, 10), (1, 1, 8, 8),
         "FINN-TFC-like MLP in PyTorch: Flatten of [1,1,8,8] -> 3 x (sign -> +-1 Linear without bias -> "
         "BatchNorm1d) -> float Linear"),
    case("network_small", "network", lambda: SmallBiRealNet(16, 10), (1, 3, 16, 16),
         "small Bi-Real-like network at 3x16x16: float 3x3 stem + BatchNorm, MaxPool 3x3/2 pad 1, two "
         "Bi-Real blocks, a downsampling block, GlobalAveragePool, Flatten, Linear, Softmax; the "
         "exporter's default tensor names", names=False),
    case("qonnx_conv", "qonnx", lambda: QuantSignConv(16, 16), (1, 16, 8, 8),
         "Brevitas QuantIdentity(SignedBinaryActPerTensorConst) -> QuantConv2d 3x3 padding 1 with "
         "SignedBinaryWeightPerTensorConst (scale 0.1): BipolarQuant on the input and on the weight",
         exporter="brevitas"),
    case("qonnx_conv_bn_residual", "qonnx", lambda: QuantResidualBlock(16), (1, 16, 8, 8),
         "Brevitas binary activation -> QuantConv2d with per-output-channel binary weights (scale mean |W|, "
         "a [16,1,1,1] BipolarQuant scale) -> BatchNorm -> residual Add with the float input",
         exporter="brevitas"),
    case("qonnx_tfc", "qonnx", quant_tfc, (1, 1, 8, 8),
         "brevitas_examples' FINN TFC (FC) with 1-bit weights and activations, 8x8 input, hidden 32-32-32: "
         "Reshape, 2x-1, BipolarQuant, Transpose+MatMul, BatchNorm, TensorNorm (Sub, Pow, Div, Mul, Add)",
         exporter="brevitas"),
    case("docs_example", "network", docs_example, (1, 3, 32, 32),
         "the PyTorch example of docs/onnx.md: its model code run as written (XNOR-Net-scaled binary convs "
         "computed in the graph, Bi-Real blocks, float stem and classifier), exported with its names; "
         "32x32 maps of 32 channels are too many values for a margin of 1e-3, so its margin is 1e-5",
         names=("image", "logits"), margin=1e-5),
]

# Written from qonnx_conv's exported bytes with the BipolarQuant domain renamed to the older one.
BREVITAS_DOMAIN_COPY = ("qonnx_conv", "qonnx_conv_brevitas_domain")

# What the exports look like, as seen in the files these versions write (MANIFEST's `nodes` has every node).
_PAD = ("Sign -> Pad(mode=constant) -> Conv(pads 0). The Pad's pads come from a Constant -> ConstantOfShape -> "
        "Concat -> Reshape -> Slice(steps -1) -> Transpose -> Reshape -> Cast(int64) subgraph that the exporter "
        "leaves in (its constant folding refuses a Slice with steps != 1) even with do_constant_folding=True; the "
        "pad value is a scalar Constant node. The exporter's shape inference stops at that Pad: the output's "
        "declared shape has symbolic dims.")
_HARD = ("The reference HardBinaryConv: the flat parameter's view() is folded into an [O, I, 3, 3] initializer W; "
         "Abs(W) -> ReduceMean(axes [3]) -> ReduceMean([2]) -> ReduceMean([1]) (keepdims) and Sign(W) -> Mul; "
         "Clip(W, -1, 1); Sub(Mul, Clip) -> Add(Sub, Clip) is the conv weight (the detach() calls leave no "
         "trace). Evaluated in float32, that weight is alpha_o * sign(W) only within rounding: (a - c) + c is "
         "not always a (see weights: max_relative_abs_spread_per_output_channel about 2e-7). The BatchNorm after "
         "it stays a BatchNormalization node: its conv's weight is not an initializer, so the exporter cannot "
         "fold it.")
NOTES = {
    "sign_conv_3x3_s1_p1": "Sign -> Conv(pads 1) with a +-1 initializer.",
    "sign_conv_3x3_s2_c17_constant": "Sign -> Conv whose weight is the output of a Constant node (value "
                                     "attribute, float32 [16, 17, 3, 3]), not an initializer.",
    "sign_conv_1x1_c17": "Sign -> Conv(kernel 1x1, pads 0) with a +-1 initializer (a buffer).",
    "sign_conv_bias_dilation2": "Sign -> Conv(dilations 2, pads 2) with weight and bias initializers.",
    "sign_conv_xnor_alpha": "Sign -> Conv(pads 1) with an alpha_o * +-1 initializer (a buffer).",
    "sign_conv_computed_sign_w": "Sign(W initializer) is the Conv weight: the TorchScript exporter's constant "
                                 "folding does not evaluate Sign, Abs or ReduceMean, so with or without "
                                 "do_constant_folding the graph keeps them.",
    "sign_conv_computed_xnor_w_nofold": "Sign(W), Abs(W) -> ReduceMean(axes=[1, 2, 3] attribute, keepdims 1) "
                                        "-> Mul is the Conv weight.",
    "sign_conv_computed_xnor_w_opset18": "As the opset-13 form, but ReduceMean takes its axes [1, 2, 3] as a "
                                         "second input from a Constant node.",
    "sign_conv_pad_minus1": _PAD,
    "sign_conv_pad_plus1_s2": _PAD,
    "birealnet_block": _HARD + " The residual is an Add of the BatchNormalization and the model input.",
    "birealnet_down_block": _HARD + " Shortcut: AveragePool(kernel 2, stride 2, count_include_pad 1) -> 1x1 "
                            "Conv whose weight and bias initializers have the shortcut's BatchNorm folded in "
                            "by the exporter; Add.",
    "reactnet_block": "Sub(x, beta initializer [1, C, 1, 1]) -> Sign -> Conv with weight AND bias initializers: "
                      "the exporter folded the BatchNorm into the +-1 conv (eval peephole), so each output "
                      "channel's weight is +-|gamma/sqrt(var + eps)| with its signs flipped where gamma < 0, and "
                      "there is no BatchNormalization node. Then Add(conv, x), Sub(.., gamma), PRelu with a "
                      "[C, 1, 1] slope initializer, Add(.., zeta).",
    "ste_clamp_conv": "Sign(x); Clip(x, Constant -1.0, Constant 1.0); Sub(Sign, Clip); Add(Sub, Clip) -> Conv. "
                      "detach() leaves no trace. On the stored samples the Add's output is exactly sign(x) "
                      "(ste_output_max_abs_diff_from_sign).",
    "ste_approxsign_conv": "Sign(x); Less(x, -1), Less(x, 0), Less(x, 1) each Cast to float; x*x + 2x "
                           "(Mul, Mul, Add) and -x*x + 2x (Neg, Mul, Add); three blends a*m + b*(1 - m) "
                           "(Mul, Sub from a Constant 1, Mul, Add); then Sub(Sign, out3) -> Add(.., out3) -> "
                           "Conv; scalar Constant nodes for -1, 0, 1, 2. On the stored samples the final Add's "
                           "output is exactly sign(x).",
    "dense_sign_gemm": "Sign -> Gemm(alpha 1, beta 1, transB 1) with weight [out, in] and bias initializers.",
    "dense_sign_matmul_alpha": "Sign -> MatMul with the [in, out] initializer.",
    "dense_tfc_mlp": "Flatten(axis 1); each nn.Linear without bias exports as MatMul with its weight "
                     "transposed into an [in, out] initializer; BatchNormalization on the [1, C] tensor stays "
                     "(not folded into the MatMul); the final Linear (with bias) is Gemm(transB 1).",
    "network_small": "Conv (the stem BatchNorm folded into its weight and bias by the exporter) -> "
                     "MaxPool(kernel 3, stride 2, pads 1) -> blocks as birealnet_block and birealnet_down_block "
                     "-> GlobalAveragePool -> Flatten(axis 1) -> Gemm(transB 1) -> Softmax(axis 1). "
                     "The exporter's default names: input 'input.1', output '95'. " + _HARD,
    "qonnx_conv": "BipolarQuant(x, scale initializer [1] = 1.0) and BipolarQuant(W initializer, scale "
                  "initializer [1] = 0.1) -> Conv(pads 1); W is the float parameter (Brevitas clamps it to "
                  "[-0.1, 0.1] in place; these are within that already). Opset 20 and "
                  "qonnx.custom_op.general version 2; every initializer is also listed as a graph input.",
    "qonnx_conv_bn_residual": "BipolarQuant(x, [1] = 1.0); BipolarQuant(W, scale initializer [16, 1, 1, 1] = "
                              "mean |W| per output channel) -> Conv -> BatchNormalization(training_mode 0) -> "
                              "Add(.., x). Initializers are graph inputs too.",
    "qonnx_tfc": "Reshape (x.view(N, -1)) -> Mul(2.0) -> Sub(1.0) -> BipolarQuant; each QuantLinear is "
                 "BipolarQuant(W [out, in]) -> Transpose -> MatMul, then BatchNormalization and BipolarQuant; "
                 "all 8 BipolarQuant nodes share one scale initializer [1] = 1.0 named "
                 "'qonnx.custom_op.general::BipolarQuant_34'; TensorNorm exports as Sub(running_mean), "
                 "Pow(var + eps initializer, 0.5), Div, Mul(weight), Add(bias). Initializers are graph inputs "
                 "too; the input is named 'onnx::Reshape_0'.",
}
NOTES["docs_example"] = ("The example's code up to its export call, run as written; exported by this tool with "
                         "the example's names (image, logits). BinaryConv2d's weight is computed in the graph "
                         "(Abs, ReduceMean, Sign, Mul); the stem BatchNorm folds into its Conv.")
NOTES["qonnx_conv_brevitas_domain"] = NOTES["qonnx_conv"] + " Here the domain is onnx.brevitas (opset import too)."

# --------------------------------------------------------------------------
# Random batch-norm statistics and a non-saturated classifier


@torch.no_grad()
def input_of(model, module, calib):
    seen = {}
    handle = module.register_forward_hook(lambda m, inp, out: seen.setdefault("x", inp[0]))
    model(calib)
    handle.remove()
    x = seen["x"]
    return (x.value if hasattr(x, "value") else x).double().numpy()  # a Brevitas QuantTensor's float value


@torch.no_grad()
def randomize(model, rng, calib):
    """Seeded random BN parameters and statistics, drawn around what each BN sees on `calib`; modules are
    visited in the order they run, so each sees the already randomised ones before it."""
    for bn in [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]:
        seen = input_of(model, bn, calib)
        axes = (0,) + tuple(range(2, seen.ndim))
        mean, var = seen.mean(axis=axes), seen.var(axis=axes)
        # A channel that is (nearly) constant on `calib` must not get a tiny variance.
        std = np.sqrt(var + 0.25 * var.mean()) + 1e-3
        c = mean.shape[0]
        gamma = rng.uniform(0.5, 1.5, c) * np.where(rng.random(c) < 1 / 3, -1.0, 1.0)
        bn.weight.copy_(torch.from_numpy(gamma))
        bn.bias.copy_(torch.from_numpy(rng.normal(0.0, 0.3, c)))
        bn.running_mean.copy_(torch.from_numpy(mean + rng.normal(0.0, 0.5, c) * std))
        bn.running_var.copy_(torch.from_numpy(std**2 * rng.uniform(0.5, 2.0, c)))
    for tn in [m for m in model.modules() if isinstance(m, TensorNorm)]:
        # FINN's TensorNorm (one scalar mean and variance): standardise what it sees, output std about 1.5.
        seen = input_of(model, tn, calib)
        tn.running_mean.fill_(float(seen.mean()))
        tn.running_var.fill_(float(seen.var()))
        tn.weight.fill_(1.5)
        tn.bias.fill_(float(rng.normal(0.0, 0.3)))
    # A float classifier at the end (network_small's before the softmax) gets outputs with a standard
    # deviation of about 1.5, so the softmax is not saturated (a one-hot output would test nothing).
    last = getattr(model, "fc", None) if isinstance(model, SmallBiRealNet) else getattr(model, "classifier", None)
    if isinstance(last, nn.Linear):
        seen = input_of(model, last, calib)
        out = seen @ last.weight.double().numpy().T + last.bias.double().numpy()
        scale = 1.5 / (out.std() + 1e-6)
        last.weight.mul_(scale)
        last.bias.mul_(scale)


# --------------------------------------------------------------------------
# Export


def export(model, spec, example):
    opts = spec["export"]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.onnx")
        if opts.get("exporter", "torch") == "brevitas":
            export_qonnx(model, example, export_path=path, dynamo=False)
        else:
            names = opts.get("names", True)
            if names is True:
                names = ("input", "output")
            names = dict(input_names=[names[0]], output_names=[names[1]]) if names else {}
            torch.onnx.export(model, (example,), path, dynamo=False, opset_version=opts.get("opset", OPSET),
                              do_constant_folding=opts.get("fold", True), **names)
        with open(path, "rb") as f:
            return f.read()


def export_description(spec):
    opts = spec["export"]
    if opts.get("exporter", "torch") == "brevitas":
        return "brevitas.export.export_qonnx(model, x, export_path, dynamo=False) (Brevitas' default opset)"
    names = opts.get("names", True)
    names = ("input", "output") if names is True else names
    names = f"input_names=['{names[0]}'], output_names=['{names[1]}']" if names else "default names"
    return (f"torch.onnx.export(model, (x,), path, dynamo=False, opset_version={opts.get('opset', OPSET)}, "
            f"do_constant_folding={opts.get('fold', True)}, {names})")


def rename_domain(buf, old, new):
    """The model with every `old`-domain node and opset import renamed to `new`."""
    m = onnx.load_from_string(buf)
    for n in m.graph.node:
        if n.domain == old:
            n.domain = new
    for o in m.opset_import:
        if o.domain == old:
            o.domain = new
    return m.SerializeToString()


# --------------------------------------------------------------------------
# Graph inspection


def real_inputs(m):
    inits = {i.name for i in m.graph.initializer}
    return [i for i in m.graph.input if i.name not in inits]  # Brevitas lists its initializers as inputs too


def dims(value_info):
    return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in value_info.type.tensor_type.shape.dim]


def constant_tensors(m):
    """Names of the tensors that do not depend on the graph's real inputs."""
    const = {i.name for i in m.graph.initializer} | {""}
    for n in m.graph.node:  # ONNX graphs are topologically sorted
        if all(i in const for i in n.input):
            const.update(n.output)
    return const


def binarizer_nodes(m):
    """[(node, depends_on_input)] for every Sign and BipolarQuant node."""
    const = constant_tensors(m)
    return [(n, n.input[0] not in const) for n in m.graph.node if (n.domain, n.op_type) in BINARIZERS]


def weight_inputs(m):
    """[(node, tensor name, layout axis of the output channel)] of every Conv, Gemm and MatMul weight."""
    out = []
    const = constant_tensors(m)
    for n in m.graph.node:
        if n.op_type == "Conv":
            out.append((n, n.input[1], 0))
        elif n.op_type == "Gemm":
            trans_b = next((a.i for a in n.attribute if a.name == "transB"), 0)
            out.append((n, n.input[1], 0 if trans_b else 1))
        elif n.op_type == "MatMul" and n.input[1] in const:
            out.append((n, n.input[1], 1))
    return out


def op_counts(m):
    c = collections.Counter((f"{n.domain}::" if n.domain else "") + n.op_type for n in m.graph.node)
    return dict(sorted(c.items()))


def attribute_text(a):
    v = onnx.helper.get_attribute_value(a)
    if isinstance(v, onnx.TensorProto):
        arr = onnx.numpy_helper.to_array(v)
        if arr.size <= 8:
            return f"{a.name}={arr.tolist()}"
        return f"{a.name}=<{onnx.helper.tensor_dtype_to_np_dtype(v.data_type).name} {list(arr.shape)}>"
    if isinstance(v, bytes):
        v = v.decode()
    return f"{a.name}={v}"


def node_lines(m):
    """One line per node: op type, attributes, and where each input comes from (model input,
    initializer with shape, or the node that computes it)."""
    inits = {i.name: list(i.dims) for i in m.graph.initializer}
    producer = {}
    for n in m.graph.node:
        for o in n.output:
            producer[o] = n
    lines = []
    for n in m.graph.node:
        ins = []
        for i in n.input:
            if i == "":
                ins.append("<none>")
            elif i in inits:
                ins.append(f"init {i} {inits[i]}")
            elif i in producer:
                ins.append(f"{producer[i].op_type}({producer[i].name or producer[i].output[0]})")
            else:
                ins.append(f"input {i}")
        op = (f"{n.domain}::" if n.domain else "") + n.op_type
        attrs = " ".join(attribute_text(a) for a in n.attribute)
        lines.append(f"{op}[{attrs}] <- " + ", ".join(ins) + f" -> {', '.join(n.output)}")
    return lines


def with_outputs(m, names):
    """A copy of the model with `names` added to its graph outputs (the probe of the margins)."""
    p = copy.deepcopy(m)
    have = {o.name for o in p.graph.output}
    for name in names:
        if name not in have:
            p.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
            have.add(name)
    return p


# --------------------------------------------------------------------------
# Engines


class Engine:
    """Runs one exported model on one sample: onnxruntime (standard ops) or qonnx's executor (BipolarQuant);
    `probe` also returns the tensors named in `extra`."""

    def __init__(self, buf, kind, extra=()):
        self.kind = kind
        self.model = onnx.load_from_string(buf)
        self.input = real_inputs(self.model)[0].name
        self.outputs = [o.name for o in self.model.graph.output]
        self.extra = list(extra)
        if kind == "onnxruntime":
            self.session = ort.InferenceSession(buf, providers=["CPUExecutionProvider"])
            probe = with_outputs(self.model, self.extra)
            self.probe_session = ort.InferenceSession(probe.SerializeToString(),
                                                      providers=["CPUExecutionProvider"])
            self.probe_names = [o.name for o in probe.graph.output]
        else:
            # The file as exported where the executor takes it; it refuses a graph with a tensor of unknown
            # shape ("Found unspecified tensor shapes, try infer_shapes"), and then gets qonnx's own shape
            # inference first, nothing else.
            self.wrapper = ModelWrapper(self.model)
            self.transforms = []
            if not self.wrapper.check_all_tensor_shapes_specified():
                self.wrapper = self.wrapper.transform(InferShapes())
                self.transforms.append("qonnx.transformation.infer_shapes.InferShapes")

    def run(self, x):
        if self.kind == "onnxruntime":
            return dict(zip(self.outputs, self.session.run(None, {self.input: x})))
        out = execute_onnx(self.wrapper, {self.input: x})
        return {k: out[k] for k in self.outputs}

    def probe(self, x):
        if self.kind == "onnxruntime":
            values = dict(zip(self.probe_names, self.probe_session.run(None, {self.input: x})))
        else:
            values = execute_onnx(self.wrapper, {self.input: x}, return_full_exec_context=True)
        return {k: np.asarray(values[k]) for k in self.extra}


def margin_ok(v, margin=MARGIN):
    """No element within `margin` of the threshold 0 (relative to the tensor's RMS where that exceeds 1)."""
    scale = max(1.0, float(np.sqrt(np.mean(np.square(v.astype(np.float64))))))
    return float(np.min(np.abs(v))) >= margin * scale


def draw_sample(name, shape, rng):
    if name == "qonnx_tfc":  # FINN's TFC takes pixels in [0, 1] and binarizes 2x - 1
        return rng.uniform(0.0, 1.0, shape).astype(np.float32)
    return rng.normal(0.0, 1.0, shape).astype(np.float32)


class NoSamples(Exception):
    pass


def build(spec, seed):
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = spec["build"]().eval()
    calib = torch.from_numpy(rng.normal(0.0, 1.0, (8,) + spec["shape"][1:]).astype(np.float32))
    if spec["name"] == "qonnx_tfc":
        calib = torch.from_numpy(rng.uniform(0.0, 1.0, (8,) + spec["shape"][1:]).astype(np.float32))
    randomize(model, rng, calib)
    example = torch.from_numpy(draw_sample(spec["name"], spec["shape"], rng))
    buf = export(model, spec, example)
    return model, buf, rng


def make_case(spec, index):
    """Export the case from the first seed that gives SAMPLES samples with every margin >= MARGIN."""
    base = 5000 + 100 * index
    for attempt in range(MAX_SEEDS):
        seed = base + attempt
        model, buf, rng = build(spec, seed)
        m = onnx.load_from_string(buf)
        binarizers = binarizer_nodes(m)
        weights = weight_inputs(m)
        const = constant_tensors(m)
        kind = "qonnx" if spec["form"] == "qonnx" else "onnxruntime"
        extra = [n.input[0] for n, _ in binarizers]
        extra += [w for _, w, _ in weights if w in const and w not in {i.name for i in m.graph.initializer}]
        if spec["form"] == "ste":  # what the STE hands the conv
            extra += [n.input[0] for n in m.graph.node if n.op_type == "Conv"]
        engine = Engine(buf, kind, extra)
        active = [n.input[0] for n, live in binarizers if live]
        samples, draws = [], 0
        while len(samples) < SAMPLES and draws < MAX_DRAWS:
            draws += 1
            x = draw_sample(spec["name"], spec["shape"], rng)
            values = engine.probe(x)
            if all(margin_ok(values[t], spec["export"].get("margin", MARGIN)) for t in active):
                samples.append(x)
        if len(samples) == SAMPLES:
            return dict(seed=seed, seeds_tried=attempt + 1, draws=draws, buf=buf, torch_model=model, engine=engine,
                        samples=np.stack(samples), binarizers=binarizers, weights=weights)
        print(f"  {spec['name']}: seed {seed} gave {len(samples)} samples in {draws} draws; next seed",
              flush=True)
    raise NoSamples(spec["name"])


def run_all(engine, samples):
    runs = [engine.run(x) for x in samples]
    return {k: np.stack([r[k] for r in runs]) for k in engine.outputs}


def weight_info(m, engine, samples, weights):
    """How each Conv/Gemm/MatMul weight is written and whether its values are +-alpha per output channel."""
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in m.graph.initializer}
    producer = {o: n for n in m.graph.node for o in n.output}
    probe = engine.probe(samples[0])
    info = []
    for node, name, axis in weights:
        if name in inits:
            w, source = inits[name], "initializer"
        elif name in producer and producer[name].op_type == "Constant":
            w, source = probe[name], "Constant node"
        elif name in probe:
            w, source = probe[name], f"computed in the graph (by {producer[name].op_type})"
        else:
            continue  # a MatMul whose second operand is not constant
        a = np.moveaxis(np.abs(w.astype(np.float64)), axis, 0).reshape(w.shape[axis], -1)
        spread = float(np.max((a.max(axis=1) - a.min(axis=1)) / a.max(axis=1)))
        entry = {"node": node.name or node.output[0], "op": node.op_type, "tensor": name, "source": source,
                 "shape": list(w.shape), "dtype": str(w.dtype), "output_channel_axis": axis,
                 "binary": bool(spread == 0.0 and np.all(w != 0)),
                 "max_relative_abs_spread_per_output_channel": spread}
        if entry["binary"]:
            alpha = a[:, 0]
            if np.all(alpha == alpha[0]):
                entry["alpha"] = f"{alpha[0]:.9g} for every output channel"
            else:
                entry["alpha"] = f"per output channel, {alpha.min():.6g}..{alpha.max():.6g}"
        info.append(entry)
    return info


def binarizer_info(binarizers, engine, samples):
    info, margins, relative = [], [], []
    probes = [engine.probe(x) for x in samples]
    for node, live in binarizers:
        t = node.input[0]
        v = np.stack([p[t] for p in probes]).astype(np.float64)
        op = (f"{node.domain}::" if node.domain else "") + node.op_type
        entry = {"node": node.name or node.output[0], "op": op, "input": t, "threshold": 0.0,
                 "on_model_input_path": live,
                 "min_abs_input": float(np.min(np.abs(v)))}
        if len(node.input) > 1:
            entry["scale_input"] = node.input[1]
        if live:
            rms = float(np.sqrt(np.mean(np.square(v))))
            entry["input_rms"] = rms
            margins.append(entry["min_abs_input"])
            relative.append(entry["min_abs_input"] / rms)
        info.append(entry)
    return info, (min(margins) if margins else None), (min(relative) if relative else None)


def versions():
    def v(p):
        try:
            return metadata.version(p)
        except metadata.PackageNotFoundError:
            return "absent"

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "brevitas": v("brevitas"),
        "onnx": onnx.__version__,
        "onnxruntime": ort.__version__,
        "qonnx": v("qonnx"),
        "onnxoptimizer": v("onnxoptimizer"),
        "onnxscript": v("onnxscript"),
        "protobuf": v("protobuf"),
        "numpy": np.__version__,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--only", nargs="*", help="case names to regenerate (default: all)")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    torch.set_num_threads(1)  # PyTorch only checks the exports here; no need to contend for the cores
    vers = versions()
    vers_arr = np.array([f"{k}={v}" for k, v in vers.items()])
    manifest_path = os.path.join(args.out_dir, "MANIFEST.json")
    manifest = {"models": {}}
    if args.only and os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)

    def write(name, spec, made, buf, outputs, engine_kind, extra_notes=None):
        m = onnx.load_from_string(buf)
        with open(os.path.join(args.out_dir, name + ".onnx"), "wb") as f:
            f.write(buf)
        arrays = dict(inputs=made["samples"], outputs=outputs[m.graph.output[0].name], versions=vers_arr)
        if len(m.graph.output) > 1:
            for k, v in outputs.items():
                arrays[f"outputs_{k}"] = v
        np.savez_compressed(os.path.join(args.out_dir, name + ".npz"), **arrays)
        engine = Engine(buf, engine_kind, made["engine"].extra)
        binz, margin, rel = binarizer_info(binarizer_nodes(m), engine, made["samples"])
        inp = real_inputs(m)[0]
        entry = {
            "covers": spec["covers"],
            "form": spec["form"],
            "engine": engine_kind,
            "seed": made["seed"],
            "seeds_tried": made["seeds_tried"],
            "input_draws": made["draws"],
            "samples": SAMPLES,
            "opset": next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx")),
            "opset_imports": {o.domain or "ai.onnx": o.version for o in m.opset_import},
            "ir_version": m.ir_version,
            "export": export_description(spec),
            "ops": op_counts(m),
            "input": {"name": inp.name, "shape": dims(inp)},
            "graph_inputs": [i.name for i in m.graph.input],
            # shape: what the engine returns for one sample; declared_shape: what the graph says (the
            # exporter cannot infer shapes through a Pad whose pads are computed: symbolic dims there).
            "outputs": [{"name": o.name, "shape": list(outputs[o.name].shape[1:]), "declared_shape": dims(o)}
                        for o in m.graph.output],
            "required_margin": spec["export"].get("margin", MARGIN),
            "min_margin": margin,
            "min_margin_over_rms": rel,
            "binarizers": binz,
            "weights": weight_info(m, engine, made["samples"], weight_inputs(m)),
            "graph_notes": NOTES[name],
            "nodes": node_lines(m),
            "onnx_bytes": len(buf),
            "onnx_sha256": hashlib.sha256(buf).hexdigest(),
            "versions": vers,
        }
        if engine_kind == "qonnx":
            entry["qonnx_transforms"] = engine.transforms
        # A check of the export, not used by the tests: the PyTorch (Brevitas) model's own float32 outputs.
        with torch.no_grad():
            own = np.stack([made["torch_model"](torch.from_numpy(x)).numpy() for x in made["samples"]])
        first = arrays["outputs"]
        entry["max_abs_diff_vs_pytorch"] = float(np.max(np.abs(own - first)))
        entry["max_abs_output"] = float(np.max(np.abs(first)))
        if spec["form"] == "ste":
            conv_in = next(n.input[0] for n in m.graph.node if n.op_type == "Conv")
            dev = max(float(np.max(np.abs(engine.probe(x)[conv_in] - np.sign(x)))) for x in made["samples"])
            entry["ste_output_max_abs_diff_from_sign"] = dev
        if spec["build"] is docs_example:  # the test suite checks that the documentation still says this
            entry["docs_code_sha256"] = hashlib.sha256(docs_example_code().encode()).hexdigest()
        if extra_notes:
            entry.update(extra_notes)
        manifest["models"][name] = entry
        print(f"{name}: {len(buf)} bytes, {engine_kind}, seed {made['seed']}, {made['draws']} draws, "
              f"min_margin {margin:.4g}, ops {entry['ops']}", flush=True)

    for index, spec in enumerate(CASES):
        name = spec["name"]
        wanted = not args.only or name in args.only
        copy_wanted = name == BREVITAS_DOMAIN_COPY[0] and (not args.only or BREVITAS_DOMAIN_COPY[1] in args.only)
        if not (wanted or copy_wanted):
            continue
        made = make_case(spec, index)
        kind = "qonnx" if spec["form"] == "qonnx" else "onnxruntime"
        outputs = run_all(made["engine"], made["samples"])
        if wanted:
            write(name, spec, made, made["buf"], outputs, kind)
        if copy_wanted:
            # The same bytes with the BipolarQuant domain renamed to Brevitas' older onnx.brevitas, which
            # qonnx's registry maps to qonnx.custom_op.general: its executor must run it alike.
            copy_name = BREVITAS_DOMAIN_COPY[1]
            buf = rename_domain(made["buf"], QONNX_DOMAIN, OLD_BREVITAS_DOMAIN)
            copy_outputs = run_all(Engine(buf, "qonnx"), made["samples"])
            same = all(np.array_equal(copy_outputs[k], outputs[k]) for k in outputs)
            assert same, "qonnx's executor gives the onnx.brevitas copy other outputs than the original"
            copy_spec = dict(spec, covers=f"{name} with its BipolarQuant nodes (and the opset import) in the "
                                          f"older domain onnx.brevitas; bytes otherwise as exported")
            write(copy_name, copy_spec, made, buf, copy_outputs, "qonnx",
                  {"derived_from": name, "outputs_equal_original": same})

    manifest["versions"] = vers
    manifest["command"] = "build/venv-onnx-fixtures/bin/python tools/onnx_fixtures.py tests/python/onnx_fixtures"
    manifest["notes"] = (
        "inputs are [S, *input_shape]: sample s is fed as inputs[s] (batch 1) through the model's one real "
        "input; outputs are [S, *output_shape]. engine 'onnxruntime': InferenceSession with "
        "CPUExecutionProvider and default session options; engine 'qonnx': qonnx.core.onnx_exec.execute_onnx "
        "on ModelWrapper(the .onnx as exported) after the transforms in qonnx_transforms. min_margin: the "
        "smallest |input| of a binarizer on the model-input path (Sign, BipolarQuant; threshold 0) over the "
        "stored samples, computed by the same engine with those inputs added as graph outputs. "
        "graph_inputs lists every graph input: Brevitas exports list initializers there too. "
        "Regenerate with the command above (see the tool's docstring for the environment)."
    )
    manifest["models"] = dict(sorted(manifest["models"].items()))
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    sys.exit(main())
