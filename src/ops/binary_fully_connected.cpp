// SPDX-License-Identifier: Apache-2.0
// BinaryFullyConnected: packed bits [N, C, H, W] (or [N, C]) times binary weights, a u1 constant [O, C*H*W]
// or [O, C, H, W] in NCHW flatten order, giving f32 [N, O] = 2P - K (xnorcl's own op: OpenVINO spells it
// as a MatMul of binarized operands). A FakeQuantize that alone reads its output becomes the layer's output
// thresholds: packed [N, O] in the same launch.
#include "ops/fake_quantize.hpp"
#include "ops/layer_access.hpp"
#include "ops/op.hpp"
#include "xnorcl/error.hpp"
#include "xnorcl/layers.hpp"

namespace xnorcl::ops {

namespace {

Filter weights_of(const NodeView& v) {
  const Constant& w = v.constant(1, ElementType::Bits);
  const Shape in = bits_shape(v.inputs[0].dims);
  const std::int64_t k = in[1] * in[2] * in[3];
  const bool flat = w.dims.size() == 2 && w.dims[1] == k;
  const bool nchw = w.dims.size() == 4 && w.dims[1] == in[1] && w.dims[2] == in[2] && w.dims[3] == in[3];
  if (!flat && !nchw)
    throw InvalidArgument(v.where() + ": weights " + to_string(w.dims) + " must be [O, " + std::to_string(k) +
                          "] or [O, C, H, W] of its input " + to_string(v.inputs[0].dims));
  return Filter::from_packed(w.bits.data(), w.bits.size(), Shape{w.dims[0], in[1], in[2], in[3]},
                             BitOrder::MsbFirst);
}

class FullyConnectedStep final : public DeviceStep {
 public:
  FullyConnectedStep(const Runtime& rt, const Shape& in, const Filter& w,
                     const std::optional<std::vector<Threshold>>& rules)
      : layer_(rt, in, w, rules) {}
  cl::Event enqueue(const std::vector<const cl::Buffer*>& in, const std::vector<const cl::Buffer*>& out,
                    const std::vector<cl::Event>& wait) override {
    return layer_.enqueue(*in[0], *out[0], &wait);
  }
  std::vector<detail::TuningPoint> tuning_points() const override {
    return {detail::LayerAccess::tuning_point(layer_)};
  }
  std::vector<StageTime> stage_times() const override { return layer_.last_stage_times(); }
  std::size_t weight_bytes() const override {
    const Shape in = layer_.input_shape();
    return static_cast<std::size_t>(layer_.output_shape()[1] * packed_words_per_pixel(in[1]) * in[2] * in[3] *
                                    4);
  }
  std::string describe() const override {
    return std::string("binary_fc -> ") + xnorcl::to_string(layer_.output_shape()) +
           (layer_.packed_output() ? " packed" : " f32");
  }

 private:
  BinaryFullyConnected layer_;
};

class BinaryFullyConnectedOp final : public Op {
 public:
  const char* name() const override { return "BinaryFullyConnected"; }

  std::vector<TensorInfo> infer(const NodeView& v) const override {
    v.check_attributes({});
    v.check_input_count(2, 2);
    const TensorInfo& x = v.activation(0, ElementType::Bits);
    if (x.dims.size() != 2 && x.dims.size() != 4)
      throw InvalidArgument(v.where() + ": its input must be [N, C] or [N, C, H, W] bits, it is " +
                            to_string(x.dims));
    const Filter w = weights_of(v);
    return {{Dims{x.dims[0], w.shape()[0]}, ElementType::Float32}};
  }

  std::vector<Tensor> reference(const NodeView& v, const std::vector<const Tensor*>& in) const override {
    Tensor out;
    out.dims = infer(v)[0].dims;
    out.values =
        reference_binary_fully_connected(in[0]->words.data(), bits_shape(in[0]->dims), weights_of(v));
    return {out};
  }

  bool can_fuse(const NodeView&, const std::vector<NodeView>& fused, const NodeView& next) const override {
    return fused.empty() && next.node->op == "FakeQuantize";
  }

  std::unique_ptr<DeviceStep> plan(const Runtime& rt, const NodeView& v,
                                   const std::vector<NodeView>& fused) const override {
    std::optional<std::vector<Threshold>> rules;
    if (!fused.empty()) rules = fake_quantize_rules(fused[0]);
    return std::make_unique<FullyConnectedStep>(rt, bits_shape(v.inputs[0].dims), weights_of(v), rules);
  }
};

}  // namespace

const Op& binary_fully_connected_op() {
  static const BinaryFullyConnectedOp op;
  return op;
}

}  // namespace xnorcl::ops
