// SPDX-License-Identifier: Apache-2.0
// ReduceMean (OpenVINO ReduceMean-1) on Float32 tensors. The axes are the second input, a Float32 constant
// (1-D) holding integer values (OpenVINO's i64 constant; graph constants are Float32 or bits),
// negative ones counting from the end; keep_dims ("true"/"false" or 1/0, default false). xnorcl reduces a
// trailing block of axes (global average pooling: {2, 3} of [N, C, H, W]; {1} of [N, K]; none at all is a
// copy); other axes sets and repeated axes are refused. One work-group per output value (reduce_mean.cl):
// its work-items read the reduced values coalesced, with compensated float sums, then add them in a fixed
// tree, so the result is the same on every run; rows shorter than a work-group take a work-item each.
#include <algorithm>

#include "ops/float_step.hpp"
#include "ops/layer_common.hpp"
#include "xnorcl/error.hpp"

namespace xnorcl::ops {

namespace {

struct Reduction {
  Dims out;
  std::int64_t rows = 1, count = 1;  // output values, and the inputs each averages (contiguous)
};

Reduction reduction(const NodeView& v) {
  const Dims& x = v.activation(0, ElementType::Float32).dims;
  std::vector<std::int64_t> axes;
  for (std::int64_t a : integer_constant(v, 1)) axes.push_back(normalize_axis(v, a, x.size(), "axis"));
  std::sort(axes.begin(), axes.end());
  std::string list;
  for (std::int64_t a : integer_constant(v, 1)) list += (list.empty() ? "" : ", ") + std::to_string(a);
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    throw InvalidArgument(v.where() + ": axes {" + list + "} name an axis twice");
  const auto first = static_cast<std::int64_t>(x.size() - axes.size());
  for (std::size_t k = 0; k < axes.size(); ++k)
    if (axes[k] != first + static_cast<std::int64_t>(k))
      throw InvalidArgument(
          v.where() + ": axes {" + list + "} of " + to_string(x) +
          " are not supported: xnorcl reduces the last axes only (e.g. {2, 3} of [N, C, H, W])");
  const bool keep = boolean_attribute(v, "keep_dims", false);
  Reduction r;
  for (std::size_t k = 0; k < x.size(); ++k) {
    const bool reduced = static_cast<std::int64_t>(k) >= first;
    (reduced ? r.count : r.rows) *= x[k];
    if (!reduced || keep) r.out.push_back(reduced ? 1 : x[k]);
  }
  return r;
}

// Rows per reduce_mean_rows work-item (ROWS_PER_ITEM in cl_kernels/reduce_mean.cl).
constexpr std::int64_t kRowsPerItem = 4;

class ReduceMeanStep final : public LinearStep {
 public:
  ReduceMeanStep(const Runtime& rt, const Reduction& r)
      : LinearStep(rt, "reduce_mean.cl", "-> " + to_string(r.out)),
        r_(r),
        // Rows shorter than a work-group: a work-item per row rather than a mostly idle work-group.
        short_rows_(static_cast<std::size_t>(r.count) < work_group()),
        name_(short_rows_ ? "reduce_mean_rows" : "reduce_mean_f32"),
        kernel_(kernel(name_)) {}

  std::string describe() const override { return std::string(name_) + " " + LinearStep::describe(); }

  cl::Event enqueue(const std::vector<const cl::Buffer*>& in, const std::vector<const cl::Buffer*>& out,
                    const std::vector<cl::Event>& wait) override {
    begin();
    if (short_rows_) {
      detail::set_args(kernel_, name_, *in[0], *out[0], int_arg(r_.count), int_arg(r_.rows));
      return launch(kernel_, name_, static_cast<std::size_t>((r_.rows + kRowsPerItem - 1) / kRowsPerItem),
                    wait);
    }
    detail::set_args(kernel_, name_, *in[0], *out[0], int_arg(r_.count));
    return launch(kernel_, name_, work_group(), wait, static_cast<std::size_t>(r_.rows));
  }

 private:
  Reduction r_;
  bool short_rows_;
  const char* name_;
  cl::Kernel kernel_;
};

class ReduceMeanOp final : public Op {
 public:
  const char* name() const override { return "ReduceMean"; }

  std::vector<TensorInfo> infer(const NodeView& v) const override {
    v.check_attributes({"keep_dims"});
    v.check_input_count(2, 2);
    check_int_elements(v, v.activation(0, ElementType::Float32).dims, "the input");
    return {{reduction(v).out, ElementType::Float32}};
  }

  std::vector<Tensor> reference(const NodeView& v, const std::vector<const Tensor*>& in) const override {
    const Reduction r = reduction(v);
    Tensor out;
    out.dims = r.out;
    for (std::int64_t row = 0; row < r.rows; ++row) {
      double sum = 0;
      for (std::int64_t k = 0; k < r.count; ++k)
        sum += in[0]->values[static_cast<std::size_t>(row * r.count + k)];
      out.values.push_back(static_cast<float>(sum / static_cast<double>(r.count)));
    }
    return {out};
  }

  std::unique_ptr<DeviceStep> plan(const Runtime& rt, const NodeView& v,
                                   const std::vector<NodeView>& /*fused*/) const override {
    return std::make_unique<ReduceMeanStep>(rt, reduction(v));
  }
};

}  // namespace

const Op& reduce_mean_op() {
  static const ReduceMeanOp op;
  return op;
}

}  // namespace xnorcl::ops
