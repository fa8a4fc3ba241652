// SPDX-License-Identifier: Apache-2.0
// Softmax (OpenVINO Softmax-1) on Float32 tensors of 1 to 4 axes along `axis` (default 1, negative counts
// from the end): out = exp(x - max) / sum(exp(x - max)) per line along the axis. One work-group per line
// (softmax.cl): the maximum, then the sum of exponentials (compensated float sums added in a fixed tree),
// then the quotients; exp in float on the device, the reference in double.
#include <cmath>

#include "ops/float_step.hpp"
#include "ops/layer_common.hpp"
#include "xnorcl/error.hpp"

namespace xnorcl::ops {

namespace {

struct Lines {
  std::int64_t outer = 1, length = 1, inner = 1;  // the tensor as [outer, length, inner], softmax on axis 1
};

Lines lines(const NodeView& v) {
  const Dims& x = v.activation(0, ElementType::Float32).dims;
  if (x.empty()) throw InvalidArgument(v.where() + ": the input must have at least one axis, it is []");
  const auto axis = static_cast<std::size_t>(normalize_axis(v, v.integer("axis", 1), x.size(), "axis"));
  Lines l;
  for (std::size_t k = 0; k < x.size(); ++k) (k < axis ? l.outer : k == axis ? l.length : l.inner) *= x[k];
  return l;
}

class SoftmaxStep final : public LinearStep {
 public:
  SoftmaxStep(const Runtime& rt, const NodeView& v, const Lines& l)
      : LinearStep(rt, "softmax.cl", "softmax_f32 " + to_string(v.inputs[0].dims)),
        l_(l),
        kernel_(kernel("softmax_f32")) {}

  cl::Event enqueue(const std::vector<const cl::Buffer*>& in, const std::vector<const cl::Buffer*>& out,
                    const std::vector<cl::Event>& wait) override {
    begin();
    detail::set_args(kernel_, "softmax_f32", *in[0], *out[0], int_arg(l_.length), int_arg(l_.inner));
    return launch(kernel_, "softmax_f32", work_group(), wait, static_cast<std::size_t>(l_.outer * l_.inner));
  }

 private:
  Lines l_;
  cl::Kernel kernel_;
};

class SoftmaxOp final : public Op {
 public:
  const char* name() const override { return "Softmax"; }

  std::vector<TensorInfo> infer(const NodeView& v) const override {
    v.check_attributes({"axis"});
    v.check_input_count(1, 1);
    const TensorInfo& x = v.activation(0, ElementType::Float32);
    check_int_elements(v, x.dims, "the input");
    lines(v);
    return {x};
  }

  std::vector<Tensor> reference(const NodeView& v, const std::vector<const Tensor*>& in) const override {
    const Lines l = lines(v);
    Tensor out = *in[0];
    const std::vector<float>& x = in[0]->values;
    std::vector<double> e(static_cast<std::size_t>(l.length));
    for (std::int64_t o = 0; o < l.outer; ++o)
      for (std::int64_t i = 0; i < l.inner; ++i) {
        const auto at = [&](std::int64_t k) {
          return static_cast<std::size_t>((o * l.length + k) * l.inner + i);
        };
        double high = x[at(0)];
        for (std::int64_t k = 1; k < l.length; ++k) high = std::max(high, static_cast<double>(x[at(k)]));
        double sum = 0;
        for (std::int64_t k = 0; k < l.length; ++k)
          sum += e[static_cast<std::size_t>(k)] = std::exp(x[at(k)] - high);
        for (std::int64_t k = 0; k < l.length; ++k)
          out.values[at(k)] = static_cast<float>(e[static_cast<std::size_t>(k)] / sum);
      }
    return {out};
  }

  std::unique_ptr<DeviceStep> plan(const Runtime& rt, const NodeView& v,
                                   const std::vector<NodeView>& /*fused*/) const override {
    return std::make_unique<SoftmaxStep>(rt, v, lines(v));
  }
};

}  // namespace

const Op& softmax_op() {
  static const SoftmaxOp op;
  return op;
}

}  // namespace xnorcl::ops
