// SPDX-License-Identifier: Apache-2.0
// Every op the graph knows, by name. One line per op unit: each defines `const Op& <name>_op()` in its
// own file of src/ops/ (an explicit list, because self-registering statics vanish from static libraries).
#include <algorithm>

#include "ops/op.hpp"

namespace xnorcl::ops {

const Op& binary_convolution_op();
const Op& binary_fully_connected_op();
const Op& convolution_op();
const Op& fake_quantize_op();
const Op& group_convolution_op();
const Op& mat_mul_op();
const Op& max_pool_op();
const Op& add_op();
const Op& subtract_op();
const Op& multiply_op();
const Op& relu_op();
const Op& clamp_op();
const Op& round_op();
const Op& prelu_op();
const Op& avg_pool_op();
const Op& reduce_mean_op();
const Op& softmax_op();
const Op& concat_op();
const Op& reshape_op();
const Op& transpose_op();
const Op& image_to_tensor_op();

namespace {

const std::vector<const Op*>& all_ops() {
  // One op per line, so that adding an op is a one-line change.
  // clang-format off
  static const std::vector<const Op*> ops = {
      &binary_convolution_op(),
      &binary_fully_connected_op(),
      &convolution_op(),
      &fake_quantize_op(),
      &group_convolution_op(),
      &mat_mul_op(),
      &max_pool_op(),
      &add_op(),
      &subtract_op(),
      &multiply_op(),
      &relu_op(),
      &clamp_op(),
      &round_op(),
      &prelu_op(),
      &avg_pool_op(),
      &reduce_mean_op(),
      &softmax_op(),
      &concat_op(),
      &reshape_op(),
      &transpose_op(),
      &image_to_tensor_op(),
  };
  // clang-format on
  return ops;
}

}  // namespace

const Op* find_op(const std::string& name) {
  for (const Op* op : all_ops())
    if (name == op->name()) return op;
  return nullptr;
}

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (const Op* op : all_ops()) names.emplace_back(op->name());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace xnorcl::ops
