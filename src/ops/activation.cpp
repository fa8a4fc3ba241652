// SPDX-License-Identifier: Apache-2.0
// Relu, Clamp, PRelu and Round (OpenVINO Relu-1, Clamp-1, PRelu-1, Round-5) on Float32 tensors: one work-item
// per element (activation.cl), bit for bit the reference (comparisons, at most one multiply, or a rounding).
//   Relu: x > 0 ? x : 0 (so -0 and NaN give +0, as OpenVINO's reference).
//   Clamp: x < min ? min : x > max ? max : x, min and max rounded to float; min <= max, neither NaN.
//   PRelu: x < 0 ? x * slope : x, the slope a Float32 constant holding one value ([1]) or one per
//   channel ([C], C the input's axis 1, or axis 0 of a 1-D input).
//   Round: to the nearest integer, ties by `mode`: "half_to_even" (the default, as OpenVINO) or
//   "half_away_from_zero" (TFLite's rounding, which the int8 emulation of converted models needs).
// A Round step also runs the Clamp and the Multiply by one value that follow it (Round, Clamp, Multiply is
// how converters round to an int8 grid): one pass instead of three, the same bits (two comparisons and
// one multiply, as the separate nodes).
#include <cmath>
#include <limits>
#include <optional>

#include "ops/float_step.hpp"
#include "ops/layer_common.hpp"
#include "xnorcl/error.hpp"

namespace xnorcl::ops {

namespace {

// The kernel's kinds (activation.cl); Round is the op, whose mode picks RoundEven or RoundAway per node.
enum class Kind : int { Relu = 0, Clamp = 1, PRelu = 2, RoundEven = 3, RoundAway = 4, Round = 5 };

struct Params {
  float lo = 0, hi = 0;
  float scale = 1;                 // a Round's fused Multiply
  std::vector<float> slope{0.0f};  // one value or one per channel
  std::int64_t channels = 1, inner = 1;
};

std::pair<float, float> clamp_range(const NodeView& v) {
  const double lo = v.real("min"), hi = v.real("max");
  if (std::isnan(lo) || std::isnan(hi) || lo > hi)
    throw InvalidArgument(v.where() + ": min " + std::to_string(lo) + " and max " + std::to_string(hi) +
                          " must be numbers with min <= max");
  return {static_cast<float>(lo), static_cast<float>(hi)};
}

// A Round node's kernel kind, from its mode.
Kind round_kind(const NodeView& v) {
  const std::string mode = v.text("mode", "half_to_even");
  if (mode == "half_to_even") return Kind::RoundEven;
  if (mode == "half_away_from_zero") return Kind::RoundAway;
  throw InvalidArgument(v.where() + ": mode '" + mode + "' (half_to_even or half_away_from_zero)");
}

Params params_of(const NodeView& v, Kind kind) {
  Params p;
  if (kind == Kind::Clamp) std::tie(p.lo, p.hi) = clamp_range(v);
  if (kind != Kind::PRelu) return p;
  const Dims& x = v.inputs[0].dims;
  const Constant& s = v.constant(1, ElementType::Float32);
  const std::size_t axis = x.size() == 1 ? 0 : 1;
  const std::int64_t channels = x.empty() ? 1 : x[axis];
  const std::int64_t n = product(s.dims);
  if (s.dims.size() > 1 || (n != 1 && n != channels))
    throw InvalidArgument(v.where() + ": the slope " + to_string(s.dims) +
                          " must hold one value or one per channel (" + std::to_string(channels) + ") of " +
                          to_string(x));
  p.slope = s.values;
  if (n != 1) {
    p.channels = channels;
    for (std::size_t k = axis + 1; k < x.size(); ++k) p.inner *= x[k];
  }
  return p;
}

// The one value of a Multiply's constant second input, where multiplying by it keeps the first input's
// shape; nullopt for any other Multiply.
std::optional<float> scalar_factor(const NodeView& v) {
  if (v.node->op != "Multiply" || v.inputs.size() != 2 || v.constants[0] != nullptr ||
      v.constants[1] == nullptr)
    return std::nullopt;
  const Constant& c = *v.constants[1];
  if (c.type != ElementType::Float32 || c.values.size() != 1 || c.dims.size() > v.inputs[0].dims.size())
    return std::nullopt;
  return c.values[0];
}

// A Round's parameters with the Clamp and Multiply fused after it (no clamp: +-inf; no multiply: 1).
Params round_params(const std::vector<NodeView>& fused) {
  Params p;
  p.lo = -std::numeric_limits<float>::infinity();
  p.hi = std::numeric_limits<float>::infinity();
  for (const NodeView& f : fused) {
    if (f.node->op == "Clamp") std::tie(p.lo, p.hi) = clamp_range(f);
    if (const std::optional<float> factor = scalar_factor(f)) p.scale = *factor;
  }
  return p;
}

std::string step_name(const NodeView& v, const std::vector<NodeView>& fused) {
  std::string name = "activation_f32 " + v.node->op;
  for (const NodeView& f : fused) name += " + " + f.node->op;
  return name + " " + to_string(v.inputs[0].dims);
}

class ActivationStep final : public LinearStep {
 public:
  ActivationStep(const Runtime& rt, const NodeView& v, Kind kind, const std::vector<NodeView>& fused)
      : LinearStep(rt, "activation.cl", step_name(v, fused), step_name(v, fused)),
        kind_(kind),
        p_(kind == Kind::RoundEven || kind == Kind::RoundAway ? round_params(fused) : params_of(v, kind)),
        total_(product(v.inputs[0].dims)),
        kernel_(kernel("activation_f32")),
        slope_(upload(p_.slope)) {}

  cl::Event enqueue(const std::vector<const cl::Buffer*>& in, const std::vector<const cl::Buffer*>& out,
                    const std::vector<cl::Event>& wait) override {
    begin();
    detail::set_args(kernel_, "activation_f32", *in[0], *out[0], slope_, cl_int(kind_), cl_float(p_.lo),
                     cl_float(p_.hi), cl_float(p_.scale), int_arg(p_.inner), int_arg(p_.channels),
                     int_arg(total_));
    return launch(kernel_, "activation_f32", static_cast<std::size_t>(total_), wait);
  }

 private:
  Kind kind_;
  Params p_;
  std::int64_t total_;
  cl::Kernel kernel_;
  cl::Buffer slope_;
};

class ActivationOp final : public Op {
 public:
  ActivationOp(const char* name, Kind kind) : name_(name), kind_(kind) {}
  const char* name() const override { return name_; }

  std::vector<TensorInfo> infer(const NodeView& v) const override {
    v.check_attributes(kind_ == Kind::Clamp   ? std::vector<std::string>{"min", "max"}
                       : kind_ == Kind::Round ? std::vector<std::string>{"mode"}
                                              : std::vector<std::string>{});
    kind_of(v);
    v.check_input_count(kind_ == Kind::PRelu ? 2 : 1, kind_ == Kind::PRelu ? 2 : 1);
    const TensorInfo& x = v.activation(0, ElementType::Float32);
    check_int_elements(v, x.dims, "the input");
    params_of(v, kind_);
    return {x};
  }

  Kind kind_of(const NodeView& v) const { return kind_ == Kind::Round ? round_kind(v) : kind_; }

  // A Round takes a Clamp, then a Multiply by one value.
  bool can_fuse(const NodeView& /*head*/, const std::vector<NodeView>& fused,
                const NodeView& next) const override {
    if (kind_ != Kind::Round || fused.size() >= 2) return false;
    const bool after_round = fused.empty(), after_clamp = fused.size() == 1 && fused[0].node->op == "Clamp";
    if (next.node->op == "Clamp") return after_round && next.inputs.size() == 1;
    return (after_round || after_clamp) && scalar_factor(next).has_value();
  }

  std::vector<Tensor> reference(const NodeView& v, const std::vector<const Tensor*>& in) const override {
    const Params p = params_of(v, kind_);
    const Kind kind = kind_of(v);
    Tensor out = *in[0];
    for (std::size_t i = 0; i < out.values.size(); ++i) {
      const double x = out.values[i];
      double y = x;
      if (kind == Kind::Relu) {
        y = x > 0 ? x : 0.0;
      } else if (kind == Kind::RoundEven) {
        y = std::nearbyint(x);  // the default rounding mode: to nearest, ties to even
      } else if (kind == Kind::RoundAway) {
        y = std::round(x);
      } else if (kind == Kind::Clamp) {
        y = x < p.lo ? p.lo : x > p.hi ? p.hi : x;
      } else if (x < 0) {
        const auto c = static_cast<std::size_t>((static_cast<std::int64_t>(i) / p.inner) % p.channels);
        y = x * static_cast<double>(p.slope[c]);
      }
      out.values[i] = static_cast<float>(y);
    }
    return {out};
  }

  std::unique_ptr<DeviceStep> plan(const Runtime& rt, const NodeView& v,
                                   const std::vector<NodeView>& fused) const override {
    return std::make_unique<ActivationStep>(rt, v, kind_of(v), fused);
  }

 private:
  const char* name_;
  Kind kind_;
};

}  // namespace

const Op& relu_op() {
  static const ActivationOp op("Relu", Kind::Relu);
  return op;
}
const Op& clamp_op() {
  static const ActivationOp op("Clamp", Kind::Clamp);
  return op;
}
const Op& round_op() {
  static const ActivationOp op("Round", Kind::Round);
  return op;
}
const Op& prelu_op() {
  static const ActivationOp op("PRelu", Kind::PRelu);
  return op;
}

}  // namespace xnorcl::ops
