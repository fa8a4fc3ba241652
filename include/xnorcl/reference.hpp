// SPDX-License-Identifier: Apache-2.0
// The host reference: the operation's semantics (the README's "Semantics in short"), computed the way every
// device computes them.
#pragma once

#include <cstdint>
#include <vector>

#include "xnorcl/binary_convolution.hpp"
#include "xnorcl/filter.hpp"
#include "xnorcl/shape.hpp"

namespace xnorcl {

// Counts P (in-bounds taps whose bits agree), B (in-bounds taps) and S (sum of w over pad taps) as integers
// and returns fmaf(v, S, 2P - B) per output. Validates like BinaryConvolution (throws InvalidArgument).
std::vector<float> reference_binary_convolution(const float* x, const Shape& x_shape, const Filter& f,
                                                const BinaryConvolution::Attributes& a);
std::vector<float> reference_binary_convolution(const std::uint8_t* x, const Shape& x_shape, const Filter& f,
                                                const BinaryConvolution::Attributes& a);

// BinaryConvolution::Options::clamp_low/high as the layer applies it to Y before its output choice: each
// value y < low ? low : (y > high ? high : y) (OpenVINO Clamp; NaN stays NaN). Throws InvalidArgument for a
// NaN bound or low > high. reference_scale_bias and pack_activations of the result give the layer's other
// outputs.
std::vector<float> reference_clamp(const std::vector<float>& y, float low, float high);

// The input bit rule: x > t, exact IEEE comparison (subnormals count as themselves), NaN is false.
bool input_bit(float x, float threshold) noexcept;

}  // namespace xnorcl
