// SPDX-License-Identifier: Apache-2.0
// MaxPool (OpenVINO MaxPool-1) as a graph op, on packed bits (the OR of each window: BinaryMaxPool) or on
// f32 (MaxPool). The same attributes drive BinaryConvolution's fused max-pool.
#include "ops/layer_access.hpp"
#include "ops/op.hpp"
#include "ops/pool_attributes.hpp"
#include "xnorcl/error.hpp"
#include "xnorcl/layers.hpp"

namespace xnorcl::ops {

namespace {

Shape shape4(const Dims& d) {
  return Shape{d[0], d[1], d[2], d[3]};
}

template <class Layer>
class PoolStep final : public DeviceStep {
 public:
  PoolStep(const Runtime& rt, const PoolAttributes& a, const Shape& input) : layer_(rt, a, input) {}
  cl::Event enqueue(const std::vector<const cl::Buffer*>& in, const std::vector<const cl::Buffer*>& out,
                    const std::vector<cl::Event>& wait) override {
    return layer_.enqueue(*in[0], *out[0], &wait);
  }
  std::vector<StageTime> stage_times() const override { return {}; }
  std::size_t weight_bytes() const override { return 0; }
  std::vector<detail::TuningPoint> tuning_points() const override {
    return {detail::LayerAccess::tuning_point(layer_)};
  }
  std::string describe() const override {
    if constexpr (std::is_same_v<Layer, BinaryMaxPool>)
      return "binary_maxpool " + xnorcl::to_string(layer_.output_shape());
    else
      return std::string(layer_.kernel()) + " " + xnorcl::to_string(layer_.output_shape());
  }

 private:
  Layer layer_;
};

class MaxPoolOp final : public Op {
 public:
  const char* name() const override { return "MaxPool"; }

  std::vector<TensorInfo> infer(const NodeView& v) const override {
    v.check_attributes({"kernel", "strides", "pads_begin", "pads_end", "auto_pad", "rounding_type"});
    v.check_input_count(1, 1);
    const TensorInfo& x = v.inputs[0].type == ElementType::Bits ? v.activation(0, ElementType::Bits, 4)
                                                                : v.activation(0, ElementType::Float32, 4);
    const PoolGeometry g = validate_pool(pool_attributes(v), shape4(x.dims));
    return {{Dims(g.output.begin(), g.output.end()), x.type}};
  }

  std::vector<Tensor> reference(const NodeView& v, const std::vector<const Tensor*>& in) const override {
    Tensor out;
    out.dims = infer(v)[0].dims;
    out.type = in[0]->type;
    if (out.type == ElementType::Bits)
      out.words = reference_binary_maxpool(in[0]->words.data(), shape4(in[0]->dims), pool_attributes(v));
    else
      out.values = reference_maxpool(in[0]->values.data(), shape4(in[0]->dims), pool_attributes(v));
    return {out};
  }

  std::unique_ptr<DeviceStep> plan(const Runtime& rt, const NodeView& v,
                                   const std::vector<NodeView>&) const override {
    if (v.inputs[0].type == ElementType::Bits)
      return std::make_unique<PoolStep<BinaryMaxPool>>(rt, pool_attributes(v), shape4(v.inputs[0].dims));
    return std::make_unique<PoolStep<MaxPool>>(rt, pool_attributes(v), shape4(v.inputs[0].dims));
  }
};

}  // namespace

const Op& max_pool_op() {
  static const MaxPoolOp op;
  return op;
}

}  // namespace xnorcl::ops
