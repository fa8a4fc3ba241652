// SPDX-License-Identifier: Apache-2.0
// GroupConvolution (OpenVINO GroupConvolution-1) on f32 NCHW with constant f32 weights [G, O/G, C/G, KH, KW].
// Depthwise (one input and one output channel per group: MobileNet-style and QuickNet's blocks) runs its own
// kernel (cl_kernels/group_convolution.cl); other groupings run Convolution's kernel group by group. The same
// epilogue as Convolution absorbs a per-channel Multiply, Add and Relu.
#include "ops/float_conv_common.hpp"
#include "xnorcl/error.hpp"

namespace xnorcl::ops {

namespace {

struct Grouping {
  std::int64_t groups = 1, Og = 1, Cg = 1;
  ConvGeometry g;
  bool depthwise() const { return Og == 1 && Cg == 1; }
};

FloatLaunch depthwise_launch(const ConvGeometry& g, const BinaryConvolution::Attributes& a,
                             const std::vector<float>& w) {
  const std::int64_t col_blocks = (g.output[3] + 7) / 8;
  FloatLaunch l;
  l.file = "group_convolution.cl";
  l.kernel = "depthwise_convolution";
  l.weights = w;  // [C][1][1][KH][KW] is already [C][KH][KW]
  l.total = static_cast<std::size_t>(g.output[0] * g.output[1] * g.output[2] * col_blocks);
  l.params = {static_cast<std::int32_t>(g.output[1]),
              static_cast<std::int32_t>(g.input[2]),
              static_cast<std::int32_t>(g.input[3]),
              static_cast<std::int32_t>(g.output[2]),
              static_cast<std::int32_t>(g.output[3]),
              static_cast<std::int32_t>(g.filter[2]),
              static_cast<std::int32_t>(g.filter[3]),
              a.strides[0],
              a.strides[1],
              a.dilations[0],
              a.dilations[1],
              g.pads_begin[0],
              g.pads_begin[1],
              static_cast<std::int32_t>(col_blocks),
              static_cast<std::int32_t>(l.total)};
  l.description = "depthwise_convolution 8-column tiles -> " + xnorcl::to_string(g.output);
  return l;
}

class GroupConvolutionOp final : public Op {
 public:
  const char* name() const override { return "GroupConvolution"; }

  std::vector<TensorInfo> infer(const NodeView& v) const override {
    const ConvGeometry g = grouping(v).g;
    return {{Dims(g.output.begin(), g.output.end()), ElementType::Float32}};
  }

  std::vector<Tensor> reference(const NodeView& v, const std::vector<const Tensor*>& in) const override {
    const Grouping gr = grouping(v);
    Tensor out;
    out.dims = Dims(gr.g.output.begin(), gr.g.output.end());
    out.values =
        reference_convolution(in[0]->values, v.constants[1]->values, gr.g, conv_attributes(v), gr.groups);
    return {out};
  }

  bool can_fuse(const NodeView& head, const std::vector<NodeView>& fused,
                const NodeView& next) const override {
    return epilogue_accepts(fused, next, infer(head)[0].dims);
  }

  std::unique_ptr<DeviceStep> plan(const Runtime& rt, const NodeView& v,
                                   const std::vector<NodeView>& fused) const override {
    const Grouping gr = grouping(v);
    const BinaryConvolution::Attributes a = conv_attributes(v);
    const std::vector<float>& w = v.constants[1]->values;  // [G][Og][Cg][KH][KW] = [O][Cg][KH][KW]
    if (gr.depthwise())
      return make_work_group_tuned_step(rt, depthwise_launch(gr.g, a, w), epilogue_of(fused, gr.g.output[1]),
                                        "depthwise_convolution " + convolution_class(gr.g, a, gr.groups));
    return plan_convolution(rt, gr.g, a, w, gr.groups, epilogue_of(fused, gr.g.output[1]));
  }

 private:
  static Grouping grouping(const NodeView& v) {
    v.check_attributes({"strides", "pads_begin", "pads_end", "dilations", "auto_pad"});
    v.check_input_count(2, 2);
    const Dims& x = v.activation(0, ElementType::Float32, 4).dims;
    const Dims& w = v.constant(1, ElementType::Float32, 5).dims;
    Grouping gr;
    gr.groups = w[0];
    gr.Og = w[1];
    gr.Cg = w[2];
    if (gr.groups * gr.Cg != x[1])
      throw InvalidArgument(v.where() + ": input channels dimension of data batch (" + std::to_string(x[1]) +
                            ") is incompatible with filter groups (" + std::to_string(gr.groups) +
                            ") or input channels (" + std::to_string(gr.Cg) + "): groups * C/G must be " +
                            std::to_string(x[1]) + " (input " + to_string(x) +
                            ", weights [G, O/G, C/G, KH, KW] " + to_string(w) + ")");
    gr.g = conv_geometry(v, Shape{x[0], gr.Cg, x[2], x[3]}, Shape{gr.groups * gr.Og, gr.Cg, w[3], w[4]},
                         gr.groups);
    return gr;
  }
};

}  // namespace

const Op& group_convolution_op() {
  static const GroupConvolutionOp op;
  return op;
}

}  // namespace xnorcl::ops
