// SPDX-License-Identifier: Apache-2.0
// Max-pooling windows (OpenVINO MaxPool-1): the attributes, their validation and the resolved geometry,
// shared by the pooling layers (xnorcl/layers.hpp) and BinaryConvolution's fused max-pool
// (BinaryConvolution::Options::max_pool).
#pragma once

#include <array>
#include <string>

#include "xnorcl/shape.hpp"

namespace xnorcl {

enum class RoundingType { Floor, Ceil };
std::string to_string(RoundingType r);  // "floor", "ceil"

struct PoolAttributes {
  std::array<int, 2> kernel{2, 2};
  std::array<int, 2> strides{2, 2};
  std::array<int, 2> pads_begin{0, 0};
  std::array<int, 2> pads_end{0, 0};
  AutoPad auto_pad = AutoPad::Explicit;
  RoundingType rounding_type = RoundingType::Floor;  // used with auto_pad Explicit only
};

struct PoolGeometry {
  Shape input{};
  Shape output{};
  std::array<int, 2> pads_begin{};
  std::array<int, 2> pads_end{};
};

// Output size per axis (D the input size, k the kernel, s the stride):
//   explicit, floor: floor((D + pb + pe - k) / s) + 1;  explicit, ceil: ceil((D + pb + pe - k) / s) + 1
//   valid: pads 0, floor((D - k) / s) + 1
//   same_upper / same_lower: ceil(D / s), total pad max(0, (out-1)*s + k - D), the smaller half at the
//   beginning (same_upper) or at the end (same_lower); pads_begin/pads_end are ignored.
// Pad positions never win (they are not taps). With ceil rounding a window may hold no input position: its
// binary output is 0 (-1), its float output -FLT_MAX (std::numeric_limits<float>::lowest(), the initial value
// of OpenVINO's reference). Throws InvalidArgument naming the values for a kernel or stride below 1, negative
// pads, a kernel larger than the padded input, or a bad shape.
PoolGeometry validate_pool(const PoolAttributes& attributes, const Shape& input);

}  // namespace xnorcl
