// SPDX-License-Identifier: Apache-2.0
// A small network of every layer kind, shared by the device tests and the Oclgrind runner.
#pragma once

#include <vector>

#include "conv_case.hpp"
#include "xnorcl/xnorcl.hpp"

namespace xnorcl::test {

inline Filter random_network_filter(Rng& rng, const Shape& shape) {
  std::vector<std::uint8_t> bytes(
      static_cast<std::size_t>((shape[0] * shape[1] * shape[2] * shape[3] + 7) / 8));
  for (auto& b : bytes) b = static_cast<std::uint8_t>(rng.next() >> 56);
  return Filter::from_packed(bytes.data(), bytes.size(), shape, BitOrder::MsbFirst);
}

// Every layer kind and both pool kinds; a convolution fed by packed bits (the unpack path); odd channels.
inline NetworkSpec small_network(Rng& rng) {
  NetworkSpec s;
  s.input = {2, 5, 9, 8};
  BinaryConvolution::Attributes c1;
  c1.pads_begin = {1, 1};
  c1.pads_end = {1, 1};
  c1.pad_value = 0.5f;
  c1.input_thresholds = {0.0f, 0.5f, -1.0f, 2.0f, 0.25f};
  s.layers.push_back(ConvolutionLayer{c1, random_network_filter(rng, Shape{37, 5, 3, 3})});
  std::vector<float> scale(37), bias(37);
  for (int c = 0; c < 37; ++c) {
    scale[c] = c % 7 == 0 ? 0.0f : static_cast<float>(rng.uniform(-4, 4)) * 0.5f;
    bias[c] = static_cast<float>(rng.uniform(-6, 6));
  }
  s.layers.push_back(ScaleBiasLayer{scale, bias});
  s.layers.push_back(ThresholdLayer{fold_batch_norm(scale, bias)});
  PoolAttributes p;
  p.kernel = {3, 3};
  p.strides = {2, 2};
  p.rounding_type = RoundingType::Ceil;
  s.layers.push_back(MaxPoolLayer{p});  // 4x4
  BinaryConvolution::Attributes c2;
  c2.auto_pad = AutoPad::SameUpper;
  c2.pad_value = -1.0f;
  s.layers.push_back(ConvolutionLayer{c2, random_network_filter(rng, Shape{33, 37, 3, 3})});
  PoolAttributes fp;
  fp.auto_pad = AutoPad::SameLower;
  s.layers.push_back(MaxPoolLayer{fp});  // float 2x2
  s.layers.push_back(ThresholdLayer{greater_than(std::vector<float>(33, 1.0f))});
  s.layers.push_back(FullyConnectedLayer{random_network_filter(rng, Shape{10, 33, 2, 2})});
  s.layers.push_back(ThresholdLayer{});
  s.layers.push_back(FullyConnectedLayer{random_network_filter(rng, Shape{3, 10, 1, 1})});
  return s;
}

// The input of small_network, [2, 5, 9, 8].
inline std::vector<float> small_network_input(Rng& rng) {
  std::vector<float> x(static_cast<std::size_t>(2 * 5 * 9 * 8));
  for (float& v : x) v = static_cast<float>(rng.uniform(-4, 4)) * 0.5f;
  return x;
}

}  // namespace xnorcl::test
