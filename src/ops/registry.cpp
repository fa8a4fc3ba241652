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

namespace {

const std::vector<const Op*>& all_ops() {
  static const std::vector<const Op*> ops = {
      &binary_convolution_op(),
      &binary_fully_connected_op(),
      &convolution_op(),
      &fake_quantize_op(),
      &group_convolution_op(),
      &mat_mul_op(),
      &max_pool_op(),
  };
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
