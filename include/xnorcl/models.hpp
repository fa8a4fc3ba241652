// SPDX-License-Identifier: Apache-2.0
// Real binarized architectures built in code, with seeded weights and batch-norm statistics (for tests,
// benchmarks and examples; trained weights come in through the converters).
//
// Both start with a float 7x7/2 convolution (3 -> 64) with batch-norm and a 3x3/2 max-pool, run four stages
// of binary 3x3 convolutions (64, 128, 256, 512 channels; the first convolution of stages 2-4 has stride 2),
// and end with global average pooling (ReduceMean), Reshape and a float classifier (MatMul + bias). Every
// binary convolution reads sign(x) (FakeQuantize levels 2, outputs -1/+1, per-channel thresholds) and is
// followed by a folded batch-norm (Multiply, Add).
//   bireal18:        Bi-Real Net-18 (Liu et al., ECCV 2018): a real-valued shortcut around every binary
//                    convolution; downsampling shortcuts are AvgPool 2x2/2 + float 1x1 convolution +
//                    batch-norm. Binary convolutions pad with 0 (pad_value 0, as sign(0) = 0 in training
//                    frameworks).
//   resnet18_binary: a binary ResNet-18: a shortcut around every pair of binary convolutions; downsampling
//                    shortcuts are a float 1x1 stride-2 convolution + batch-norm. Binary convolutions pad
//                    with -1 (pad_value -1, OpenVINO's binary models).
// The thresholds of every sign are calibrated on the host reference: each channel's median over a seeded
// calibration image, so that each packed tensor holds about half ones (Tensor::ones_fraction reports it).
#pragma once

#include <cstdint>

#include "xnorcl/graph.hpp"

namespace xnorcl {

struct ModelOptions {
  std::int64_t batch = 1;
  std::int64_t height = 224, width = 224;  // the input is [batch, 3, height, width], float32
  std::int64_t classes = 1000;
  int width_divisor = 1;  // channels 64/d, 128/d, 256/d, 512/d: smaller networks for quick tests
  std::uint64_t seed = 1;
  std::int64_t calibration_size = 64;  // height and width of the calibration image (the thresholds' input)
};

// Inputs "input", output "logits" [batch, classes].
Graph bireal18(const ModelOptions& options = {});
Graph resnet18_binary(const ModelOptions& options = {});

}  // namespace xnorcl
