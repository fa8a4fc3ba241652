// SPDX-License-Identifier: Apache-2.0
// Add, Subtract and Multiply (OpenVINO Add-1, Subtract-1, Multiply-1) on Float32 tensors with numpy
// broadcasting (auto_broadcast "numpy", the default; "none" is accepted when both shapes are equal, "pdpd" is
// refused). Either operand may be an activation or a Float32 constant, so the residual Add of two [N, C, H,
// W] activations and a per-channel [1, C, 1, 1], [C, 1, 1] or scalar constant run alike: one pass, one
// work-item per output element (elementwise.cl). Each result is one IEEE operation on two floats, so the
// device equals the double reference rounded once, bit for bit.
#include <algorithm>

#include "ops/float_step.hpp"
#include "ops/layer_common.hpp"
#include "xnorcl/error.hpp"

namespace xnorcl::ops {

namespace {

enum class Arith : int { Add = 0, Subtract = 1, Multiply = 2 };

const TensorInfo& float_operand(const NodeView& v, std::size_t i) {
  if (v.constants[i]) {
    v.constant(i, ElementType::Float32);
    if (v.constants[i]->dims.size() > 4)
      throw InvalidArgument(v.where() + ": constant input " + std::to_string(i) + " ('" + v.node->inputs[i] +
                            "') " + to_string(v.constants[i]->dims) + " has more than 4 axes");
    return v.inputs[i];
  }
  return v.activation(i, ElementType::Float32);
}

// numpy's rule: shapes aligned on the right, each pair of sizes equal or one of them 1.
Dims broadcast_dims(const NodeView& v, const Dims& a, const Dims& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Dims out(rank);
  for (std::size_t k = 0; k < rank; ++k) {
    const std::int64_t x = k + a.size() >= rank ? a[k + a.size() - rank] : 1;
    const std::int64_t y = k + b.size() >= rank ? b[k + b.size() - rank] : 1;
    if (x != y && x != 1 && y != 1)
      throw InvalidArgument(v.where() + ": input shapes " + to_string(a) + " and " + to_string(b) +
                            " do not broadcast (numpy): axis " + std::to_string(k) + " of the result is " +
                            std::to_string(x) + " against " + std::to_string(y));
    out[k] = x == 1 ? y : x;
  }
  return out;
}

// Element strides of an operand read at the output's 4-D coordinates: 0 along broadcast axes.
std::vector<std::int64_t> broadcast_strides(const Dims& operand, const Dims& out) {
  const std::vector<std::int64_t> d = dims4(operand), o = dims4(out);
  std::vector<std::int64_t> s(4, 0);
  std::int64_t step = 1;
  for (int k = 3; k >= 0; --k) {
    s[static_cast<std::size_t>(k)] =
        d[static_cast<std::size_t>(k)] == o[static_cast<std::size_t>(k)] ? step : 0;
    step *= d[static_cast<std::size_t>(k)];
  }
  return s;
}

// The result's axes with both operands' strides, adjacent axes merged where each operand steps through them
// as through one (contiguous, or broadcast along both) and size-1 axes dropped, padded on the left to 4:
// the innermost axis becomes as long as it can be ([1, C, H, W] * [1, C, 1, 1] walks [C, H*W]).
struct Walk {
  std::vector<std::int64_t> dims, a, b;
};

Walk collapse(const Dims& out, const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
  const std::vector<std::int64_t> o = dims4(out);
  Walk w;
  for (std::size_t k = 0; k < 4; ++k) {
    if (o[k] == 1) continue;
    if (!w.dims.empty() && w.a.back() == a[k] * o[k] && w.b.back() == b[k] * o[k]) {
      w.dims.back() *= o[k];
      w.a.back() = a[k];
      w.b.back() = b[k];
      continue;
    }
    w.dims.push_back(o[k]);
    w.a.push_back(a[k]);
    w.b.push_back(b[k]);
  }
  while (w.dims.size() < 4) {
    w.dims.insert(w.dims.begin(), 1);
    w.a.insert(w.a.begin(), 0);
    w.b.insert(w.b.begin(), 0);
  }
  return w;
}

class ElementwiseStep final : public LinearStep {
 public:
  static std::string description(const NodeView& v, const Dims& out) {
    return std::string(v.node->op) + " " + to_string(v.inputs[0].dims) + ", " + to_string(v.inputs[1].dims) +
           " -> " + to_string(out);
  }

  ElementwiseStep(const Runtime& rt, const NodeView& v, Arith arith, const Dims& out)
      : LinearStep(rt, "elementwise.cl", description(v, out), description(v, out)),
        arith_(arith),
        total_(product(out)) {
    for (std::size_t i = 0; i < 2; ++i)
      if (v.constants[i]) constants_[i] = upload(v.constants[i]->values);
    w_ = collapse(out, broadcast_strides(v.inputs[0].dims, out), broadcast_strides(v.inputs[1].dims, out));
    // Same shapes collapse to one contiguous axis; a long innermost axis runs as rows (no division per
    // element); short ones element by element.
    same_ = w_.dims[0] * w_.dims[1] * w_.dims[2] == 1 && w_.a[3] == 1 && w_.b[3] == 1;
    rows_ = !same_ && static_cast<std::size_t>(w_.dims[3]) * 2 >= work_group();
    name_ = same_ ? "eltwise_same" : rows_ ? "eltwise_rows" : "eltwise_broadcast";
    kernel_ = kernel(name_);
  }

  std::string describe() const override { return std::string(name_) + " " + LinearStep::describe(); }

  cl::Event enqueue(const std::vector<const cl::Buffer*>& in, const std::vector<const cl::Buffer*>& out,
                    const std::vector<cl::Event>& wait) override {
    begin();
    std::size_t next = 0;
    const cl::Buffer* operand[2];
    for (std::size_t i = 0; i < 2; ++i) operand[i] = constants_[i]() ? &constants_[i] : in[next++];
    if (same_) {
      detail::set_args(kernel_, name_, *operand[0], *operand[1], *out[0], cl_int(arith_), int_arg(total_));
      return launch(kernel_, name_, static_cast<std::size_t>(total_), wait);
    }
    const Walk& w = w_;
    detail::set_args(kernel_, name_, *operand[0], *operand[1], *out[0], cl_int(arith_), int_arg(w.dims[1]),
                     int_arg(w.dims[2]), int_arg(w.dims[3]), int_arg(w.a[0]), int_arg(w.a[1]),
                     int_arg(w.a[2]), int_arg(w.a[3]), int_arg(w.b[0]), int_arg(w.b[1]), int_arg(w.b[2]),
                     int_arg(w.b[3]), int_arg(total_));
    if (rows_)
      return launch(kernel_, name_, static_cast<std::size_t>(w.dims[3]), wait,
                    static_cast<std::size_t>(w.dims[0] * w.dims[1] * w.dims[2]));
    return launch(kernel_, name_, static_cast<std::size_t>(total_), wait);
  }

 private:
  Arith arith_;
  std::int64_t total_;
  Walk w_;
  bool same_ = false, rows_ = false;
  const char* name_ = "";
  cl::Kernel kernel_;
  cl::Buffer constants_[2];
};

class ElementwiseOp final : public Op {
 public:
  ElementwiseOp(const char* name, Arith arith) : name_(name), arith_(arith) {}
  const char* name() const override { return name_; }

  std::vector<TensorInfo> infer(const NodeView& v) const override {
    v.check_attributes({"auto_broadcast"});
    v.check_input_count(2, 2);
    const Dims& a = float_operand(v, 0).dims;
    const Dims& b = float_operand(v, 1).dims;
    const std::string broadcast = v.text("auto_broadcast", "numpy");
    if (broadcast == "none") {
      if (a != b)
        throw InvalidArgument(v.where() + ": auto_broadcast 'none' needs equal shapes, the inputs are " +
                              to_string(a) + " and " + to_string(b));
    } else if (broadcast != "numpy") {
      throw InvalidArgument(v.where() + ": auto_broadcast '" + broadcast +
                            "' is not supported (numpy and none are)");
    }
    const Dims out = broadcast_dims(v, a, b);
    if (out.size() > 4)
      throw InvalidArgument(v.where() + ": the result " + to_string(out) +
                            " has more than 4 axes (activations have at most 4)");
    check_int_elements(v, out, "the result");
    return {{out, ElementType::Float32}};
  }

  std::vector<Tensor> reference(const NodeView& v, const std::vector<const Tensor*>& in) const override {
    Tensor out;
    out.dims = infer(v)[0].dims;
    const std::vector<float>& a = in[0] ? in[0]->values : v.constants[0]->values;
    const std::vector<float>& b = in[1] ? in[1]->values : v.constants[1]->values;
    const std::vector<std::int64_t> o = dims4(out.dims);
    const std::vector<std::int64_t> sa = broadcast_strides(v.inputs[0].dims, out.dims);
    const std::vector<std::int64_t> sb = broadcast_strides(v.inputs[1].dims, out.dims);
    out.values.reserve(static_cast<std::size_t>(product(out.dims)));
    for (std::int64_t i0 = 0; i0 < o[0]; ++i0)
      for (std::int64_t i1 = 0; i1 < o[1]; ++i1)
        for (std::int64_t i2 = 0; i2 < o[2]; ++i2)
          for (std::int64_t i3 = 0; i3 < o[3]; ++i3) {
            const double x = a[static_cast<std::size_t>(i0 * sa[0] + i1 * sa[1] + i2 * sa[2] + i3 * sa[3])];
            const double y = b[static_cast<std::size_t>(i0 * sb[0] + i1 * sb[1] + i2 * sb[2] + i3 * sb[3])];
            const double r = arith_ == Arith::Add ? x + y : arith_ == Arith::Subtract ? x - y : x * y;
            out.values.push_back(static_cast<float>(r));
          }
    return {out};
  }

  std::unique_ptr<DeviceStep> plan(const Runtime& rt, const NodeView& v,
                                   const std::vector<NodeView>& /*fused*/) const override {
    return std::make_unique<ElementwiseStep>(rt, v, arith_, infer(v)[0].dims);
  }

 private:
  const char* name_;
  Arith arith_;
};

}  // namespace

const Op& add_op() {
  static const ElementwiseOp op("Add", Arith::Add);
  return op;
}
const Op& subtract_op() {
  static const ElementwiseOp op("Subtract", Arith::Subtract);
  return op;
}
const Op& multiply_op() {
  static const ElementwiseOp op("Multiply", Arith::Multiply);
  return op;
}

}  // namespace xnorcl::ops
