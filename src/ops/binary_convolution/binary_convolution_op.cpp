// BinaryConvolution as a graph op: OpenVINO's BinaryConvolution-1 over an f32 or packed-bits input and a
// u1 filter constant, run by the BinaryConvolution class. A FakeQuantize (levels 2) that alone reads its
// output becomes the packed output choice, and a MaxPool that alone reads those bits its max_pool: one
// launch, no float tensor stored (the class computes both in the GEMM's epilogue, bit for bit).
#include "ops/fake_quantize.hpp"
#include "ops/op.hpp"
#include "ops/pool_attributes.hpp"
#include "xnorcl/binary_convolution.hpp"
#include "xnorcl/error.hpp"
#include "xnorcl/layers.hpp"
#include "xnorcl/reference.hpp"

namespace xnorcl::ops {

namespace {

Shape shape4(const Dims& d) {
  return Shape{d[0], d[1], d[2], d[3]};
}

BinaryConvolution::Attributes attributes_of(const NodeView& v) {
  BinaryConvolution::Attributes a;
  a.strides = int_pair(v, "strides", a.strides);
  a.pads_begin = int_pair(v, "pads_begin", a.pads_begin);
  a.pads_end = int_pair(v, "pads_end", a.pads_end);
  a.dilations = int_pair(v, "dilations", a.dilations);
  a.mode = v.text("mode", a.mode);
  a.pad_value = static_cast<float>(v.real("pad_value", 0.0));
  a.auto_pad = parse_auto_pad(v, "auto_pad");
  return a;
}

Filter filter_of(const NodeView& v) {
  const Constant& f = v.constant(1, ElementType::Bits, 4);
  return Filter::from_packed(f.bits.data(), f.bits.size(), shape4(f.dims), BitOrder::MsbFirst);
}

class BinaryConvolutionStep final : public DeviceStep {
 public:
  BinaryConvolutionStep(const Runtime& rt, const NodeView& v, const BinaryConvolution::Options& options)
      : conv_(rt, attributes_of(v), shape4(v.inputs[0].dims), filter_of(v), options) {}
  cl::Event enqueue(const std::vector<const cl::Buffer*>& in, const std::vector<const cl::Buffer*>& out,
                    const std::vector<cl::Event>& wait) override {
    return conv_.enqueue(*in[0], *out[0], &wait);
  }
  std::vector<StageTime> stage_times() const override { return conv_.last_stage_times(); }
  std::size_t weight_bytes() const override { return conv_.plan().scratch_bytes; }
  std::string describe() const override {
    std::string kernels;
    for (const Plan::Launch& l : conv_.plan().launches) kernels += (kernels.empty() ? "" : " + ") + l.kernel;
    return kernels + " -> " + xnorcl::to_string(conv_.output_shape()) + " " + conv_.plan().output;
  }

 private:
  BinaryConvolution conv_;
};

class BinaryConvolutionOp final : public Op {
 public:
  const char* name() const override { return "BinaryConvolution"; }

  std::vector<TensorInfo> infer(const NodeView& v) const override {
    v.check_attributes({"strides", "pads_begin", "pads_end", "dilations", "mode", "pad_value", "auto_pad"});
    v.check_input_count(2, 2);
    if (v.inputs[0].type == ElementType::Bits)
      v.activation(0, ElementType::Bits, 4);
    else
      v.activation(0, ElementType::Float32, 4);
    const ConvGeometry g = BinaryConvolution::validate(attributes_of(v), shape4(v.inputs[0].dims),
                                                       shape4(v.constant(1, ElementType::Bits, 4).dims));
    return {{Dims(g.output.begin(), g.output.end()), ElementType::Float32}};
  }

  std::vector<Tensor> reference(const NodeView& v, const std::vector<const Tensor*>& in) const override {
    const Shape x_shape = shape4(v.inputs[0].dims);
    std::vector<float> unpacked;
    const float* x = in[0]->values.data();
    if (in[0]->type == ElementType::Bits) {
      unpacked = unpack_activations(in[0]->words.data(), x_shape);
      x = unpacked.data();
    }
    Tensor out;
    out.values = reference_binary_convolution(x, x_shape, filter_of(v), attributes_of(v));
    out.dims = infer(v)[0].dims;
    return {out};
  }

  bool can_fuse(const NodeView& /*head*/, const std::vector<NodeView>& fused,
                const NodeView& next) const override {
    if (fused.empty()) return next.node->op == "FakeQuantize";
    return fused.size() == 1 && next.node->op == "MaxPool";
  }

  std::unique_ptr<DeviceStep> plan(const Runtime& rt, const NodeView& v,
                                   const std::vector<NodeView>& fused) const override {
    BinaryConvolution::Options options;
    options.input_packed = v.inputs[0].type == ElementType::Bits;
    if (!fused.empty()) options.output = BinaryConvolution::Output::packed(fake_quantize_rules(fused[0]));
    if (fused.size() == 2) options.max_pool = pool_attributes(fused[1]);
    return std::make_unique<BinaryConvolutionStep>(rt, v, options);
  }
};

}  // namespace

const Op& binary_convolution_op() {
  static const BinaryConvolutionOp op;
  return op;
}

}  // namespace xnorcl::ops
