// SPDX-License-Identifier: Apache-2.0
// FakeQuantize with levels 2: binarization to packed bits. The bit of x is OpenVINO's FakeQuantize value
// q(x) > 0, the sign a binary op reads ({0, 1} and {-1, +1} outputs alike). Per channel, the bit is a
// monotone function of x, so it becomes one Threshold rule found by bisection over the float order (bit
// for bit OpenVINO's float formula, ties included) and runs as threshold_pack.
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>

#include "ops/binary_convolution/binary_convolution_op.hpp"
#include "ops/fake_quantize.hpp"
#include "ops/layer_access.hpp"
#include "xnorcl/error.hpp"
#include "xnorcl/layers.hpp"

namespace xnorcl::ops {

namespace {

// OpenVINO's reference FakeQuantize for levels 2 (computed in float).
float fake_quantize_value(float x, float il, float ih, float ol, float oh) {
  if (x <= std::min(il, ih)) return ol;
  if (x > std::max(il, ih)) return oh;
  return std::nearbyint((x - il) / (ih - il)) * (oh - ol) + ol;
}

std::uint32_t order_key(float v) {
  std::uint32_t u;
  std::memcpy(&u, &v, 4);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
float from_order_key(std::uint32_t k) {
  const std::uint32_t u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
  float v;
  std::memcpy(&v, &u, 4);
  return v;
}

// A range input: one value or one per channel, as stored (a scalar is not expanded: validation allocates
// nothing that a hostile dims could make large).
const std::vector<float>& range_values(const NodeView& v, std::size_t input) {
  const Constant& c = v.constant(input, ElementType::Float32);
  if (!per_channel_broadcast(v, input))
    throw InvalidArgument(v.where() + ": input " + std::to_string(input) + " ('" + v.node->inputs[input] +
                          "') " + to_string(c.dims) + " must be one value or one per channel of " +
                          to_string(v.inputs[0].dims));
  for (float value : c.values)
    if (std::isnan(value))
      throw InvalidArgument(v.where() + ": input " + std::to_string(input) + " ('" + v.node->inputs[input] +
                            "') holds NaN");
  return c.values;
}

// The four ranges of a node, each one value or one per channel.
struct Ranges {
  const std::vector<float>*il, *ih, *ol, *oh;
  static float at(const std::vector<float>* v, std::size_t c) { return v->size() == 1 ? (*v)[0] : (*v)[c]; }
  float in_low(std::size_t c) const { return at(il, c); }
  float in_high(std::size_t c) const { return at(ih, c); }
  float out_low(std::size_t c) const { return at(ol, c); }
  float out_high(std::size_t c) const { return at(oh, c); }
};

Ranges ranges(const NodeView& v) {
  Ranges r{&range_values(v, 1), &range_values(v, 2), &range_values(v, 3), &range_values(v, 4)};
  const std::size_t stored = std::max(r.il->size(), r.ih->size());  // the per-channel ones hold every channel
  for (std::size_t c = 0; c < stored; ++c) {
    if (r.in_low(c) > r.in_high(c))
      throw InvalidArgument(v.where() + ": channel " + std::to_string(c) + " has input_low " +
                            std::to_string(r.in_low(c)) + " above input_high " +
                            std::to_string(r.in_high(c)) + " (its output would not be monotone in x)");
  }
  return r;
}

}  // namespace

Threshold monotone_rule(const std::function<bool(float)>& bit) {
  const float lowest = -std::numeric_limits<float>::infinity();
  const float highest = std::numeric_limits<float>::infinity();
  const bool low = bit(lowest), high = bit(highest);
  if (low == high) return {0.0f, low ? ThresholdMode::AlwaysOne : ThresholdMode::AlwaysZero};
  // Bisect for the last x (in float order) whose bit equals bit(-inf).
  std::uint32_t lo = order_key(lowest), hi = order_key(highest);
  while (hi - lo > 1) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (bit(from_order_key(mid)) == low)
      lo = mid;
    else
      hi = mid;
  }
  const float last = from_order_key(lo), first = from_order_key(hi);
  return high ? Threshold{last, ThresholdMode::Greater} : Threshold{first, ThresholdMode::Less};
}

namespace {

// The rule whose bit equals fake_quantize_value(x) > 0 for every non-NaN x.
Threshold channel_rule(float il, float ih, float ol, float oh) {
  return monotone_rule([&](float x) { return fake_quantize_value(x, il, ih, ol, oh) > 0; });
}

class FakeQuantizeStep final : public DeviceStep {
 public:
  FakeQuantizeStep(const Runtime& rt, const Shape& shape, const std::vector<Threshold>& rules)
      : layer_(rt, shape, rules) {}
  cl::Event enqueue(const std::vector<const cl::Buffer*>& in, const std::vector<const cl::Buffer*>& out,
                    const std::vector<cl::Event>& wait) override {
    return layer_.enqueue(*in[0], *out[0], &wait);
  }
  std::vector<StageTime> stage_times() const override { return {}; }
  std::size_t weight_bytes() const override { return 0; }
  std::vector<detail::TuningPoint> tuning_points() const override {
    return {detail::LayerAccess::tuning_point(layer_)};
  }
  std::string describe() const override { return "threshold_pack " + xnorcl::to_string(layer_.shape()); }

 private:
  ThresholdPack layer_;
};

// The rules as thresholds t[c] of x > t[c], the binarization a convolution's packing applies to a float
// input; nullopt where a rule is not of that form (a Less rule: a FakeQuantize with falling levels).
std::optional<std::vector<float>> greater_thresholds(const std::vector<Threshold>& rules) {
  std::vector<float> thresholds;
  for (const Threshold& r : rules) {
    if (r.mode == ThresholdMode::Greater)
      thresholds.push_back(r.value);
    else if (r.mode == ThresholdMode::AlwaysZero)  // no value, NaN aside, is above +inf
      thresholds.push_back(std::numeric_limits<float>::infinity());
    else
      return std::nullopt;
  }
  return thresholds;
}

std::vector<NodeView> after_first(const std::vector<NodeView>& fused) {
  return std::vector<NodeView>(fused.begin() + 1, fused.end());
}

class FakeQuantizeOp final : public Op {
 public:
  const char* name() const override { return "FakeQuantize"; }

  std::vector<TensorInfo> infer(const NodeView& v) const override {
    v.check_attributes({"levels", "auto_broadcast"});
    v.check_input_count(5, 5);
    const TensorInfo& x = v.activation(0, ElementType::Float32);
    if (x.dims.size() != 2 && x.dims.size() != 4)
      throw InvalidArgument(v.where() + ": its input must be [N, C] or [N, C, H, W], it is " +
                            to_string(x.dims));
    if (v.integer("levels") != 2)
      throw InvalidArgument(v.where() + ": levels " + std::to_string(v.integer("levels")) +
                            " is not supported; xnorcl binarizes (levels 2)");
    const std::string broadcast = v.text("auto_broadcast", "numpy");
    if (broadcast != "numpy")
      throw InvalidArgument(v.where() + ": auto_broadcast '" + broadcast + "' is not supported (numpy is)");
    ranges(v);
    return {{x.dims, ElementType::Bits}};
  }

  std::vector<Tensor> reference(const NodeView& v, const std::vector<const Tensor*>& in) const override {
    const Ranges r = ranges(v);
    const Tensor& x = *in[0];
    const Shape s = bits_shape(x.dims);
    std::vector<float> bits(x.values.size());
    const std::int64_t hw = s[2] * s[3];
    for (std::size_t i = 0; i < bits.size(); ++i) {
      const std::size_t c = static_cast<std::size_t>((static_cast<std::int64_t>(i) / hw) % s[1]);
      bits[i] = fake_quantize_value(x.values[i], r.in_low(c), r.in_high(c), r.out_low(c), r.out_high(c)) > 0
                    ? 1.0f
                    : 0.0f;
    }
    Tensor out;
    out.dims = x.dims;
    out.type = ElementType::Bits;
    out.words = pack_activations(bits.data(), s, {});  // 1 > 0 is bit 1, 0 is bit 0
    return {out};
  }

  // A FakeQuantize whose bits only a BinaryConvolution reads runs inside that convolution's packing, as its
  // input thresholds: the floats are read once and no packed tensor is stored between the two. For inputs
  // of few channels the packing is denser too (a 3-channel 5x5 patch in 3 words, not 25 channel words), so
  // the GEMM does less. What the step absorbs after the convolution, the convolution's op decides.
  bool can_fuse(const NodeView& head, const std::vector<NodeView>& fused,
                const NodeView& next) const override {
    if (fused.empty())
      return next.node->op == "BinaryConvolution" && head.inputs[0].dims.size() == 4 &&
             greater_thresholds(fake_quantize_rules(head)).has_value();
    return binary_convolution_op().can_fuse(fused[0], after_first(fused), next);
  }

  bool can_fuse_side(const Runtime& runtime, const NodeView& /*head*/, const std::vector<NodeView>& fused,
                     const NodeView& side) const override {
    return !fused.empty() &&
           binary_convolution_op().can_fuse_side(runtime, fused[0], after_first(fused), side);
  }

  std::unique_ptr<DeviceStep> plan(const Runtime& rt, const NodeView& v,
                                   const std::vector<NodeView>& fused) const override {
    if (!fused.empty())
      return plan_thresholded_convolution(rt, fused[0], after_first(fused), nullptr,
                                          *greater_thresholds(fake_quantize_rules(v)));
    return std::make_unique<FakeQuantizeStep>(rt, bits_shape(v.inputs[0].dims), fake_quantize_rules(v));
  }

  std::unique_ptr<DeviceStep> plan_with_side(const Runtime& rt, const NodeView& v,
                                             const std::vector<NodeView>& fused,
                                             const NodeView& side) const override {
    return plan_thresholded_convolution(rt, fused[0], after_first(fused), &side,
                                        *greater_thresholds(fake_quantize_rules(v)));
  }
};

}  // namespace

std::vector<Threshold> fake_quantize_rules(const NodeView& v) {
  const Ranges r = ranges(v);
  std::vector<Threshold> rules;
  const std::size_t channels = static_cast<std::size_t>(v.inputs[0].dims[1]);
  for (std::size_t c = 0; c < channels; ++c)
    rules.push_back(channel_rule(r.in_low(c), r.in_high(c), r.out_low(c), r.out_high(c)));
  return rules;
}

std::vector<Threshold> fake_quantize_rules_after(const NodeView& v, const std::vector<float>& scale,
                                                 const std::vector<float>& bias) {
  const Ranges r = ranges(v);
  std::vector<Threshold> rules;
  const std::size_t channels = static_cast<std::size_t>(v.inputs[0].dims[1]);
  for (std::size_t c = 0; c < channels; ++c) {
    const float s = scale[c], b = bias[c];
    rules.push_back(monotone_rule([&](float y) {
      // The input is a convolution's output, always finite: +-inf is taken as +-FLT_MAX, the same bit as
      // every finite value beyond it. (At +-inf itself a zero scale gives NaN, bit 0, which would make the
      // bit look non-monotone and the rule constant 0 where the finite inputs give 1.)
      const float x = std::isinf(y) ? std::copysign(std::numeric_limits<float>::max(), y) : y;
      // The graph's Multiply then Add, each rounded once (the library builds with -ffp-contract=off).
      const float z = x * s;
      return fake_quantize_value(z + b, r.in_low(c), r.in_high(c), r.out_low(c), r.out_high(c)) > 0;
    }));
  }
  return rules;
}

const Op& fake_quantize_op() {
  static const FakeQuantizeOp op;
  return op;
}

}  // namespace xnorcl::ops
