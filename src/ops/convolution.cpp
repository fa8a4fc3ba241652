// SPDX-License-Identifier: Apache-2.0
// Convolution (OpenVINO Convolution-1) on f32 NCHW with constant f32 weights [O, C, KH, KW], run as a direct
// convolution (cl_kernels/convolution.cl). A following per-channel Multiply (a folded batch-norm's scale),
// Add (its shift, or a bias) and Relu, each by a constant, run in the kernel's epilogue.
#include "ops/float_conv_common.hpp"

#include <algorithm>

#include "runtime/device_profile.hpp"
#include "xnorcl/error.hpp"

namespace xnorcl::ops {

namespace {

Shape shape4(const Dims& d) {
  return Shape{d[0], d[1], d[2], d[3]};
}

}  // namespace

FloatLaunch convolution_launch(const ConvGeometry& g, const BinaryConvolution::Attributes& a,
                               const std::vector<float>& w, std::int64_t groups, int columns) {
  const std::int64_t O = g.output[1], Og = O / groups, Cg = g.filter[1], taps = g.filter[2] * g.filter[3];
  const std::int64_t group_blocks = (Og + 7) / 8;
  // [G][group_blocks][Cg][KH][KW][8]: the 8 channels of a work-item's tile side by side for each tap.
  std::vector<float> packed(static_cast<std::size_t>(groups * group_blocks * Cg * taps * 8), 0.0f);
  for (std::int64_t o = 0; o < O; ++o) {
    const std::int64_t block = o / Og * group_blocks + o % Og / 8, lane = o % Og % 8;
    for (std::int64_t ct = 0; ct < Cg * taps; ++ct)
      packed[static_cast<std::size_t>((block * Cg * taps + ct) * 8 + lane)] =
          w[static_cast<std::size_t>(o * Cg * taps + ct)];
  }
  const std::int64_t H = g.input[2], W = g.input[3], OH = g.output[2], OW = g.output[3];
  const bool pointwise = taps == 1 && a.strides[0] == 1 && a.strides[1] == 1 && g.pads_begin[0] == 0 &&
                         g.pads_begin[1] == 0 && g.pads_end[0] == 0 && g.pads_end[1] == 0;
  FloatLaunch l;
  l.file = "convolution.cl";
  l.weights = std::move(packed);
  const auto i32 = [](std::int64_t v) { return static_cast<std::int32_t>(v); };
  if (pointwise) {  // tiles of `columns` pixels along the whole plane, across row ends
    const std::int64_t col_blocks = (H * W + columns - 1) / columns;
    l.kernel = "convolution_1x1";
    l.total = static_cast<std::size_t>(g.output[0] * groups * group_blocks * col_blocks);
    l.params = {i32(Cg), i32(H * W), i32(Og), i32(groups), i32(group_blocks), i32(col_blocks), i32(l.total)};
  } else {
    // Output columns [col_lo, col_hi) load only columns inside the row (a stride-2 tile loads one column past
    // its last tap); where a whole tile fits in them, the kernel tiles just that span and the row's first
    // work-item also computes the columns beside it.
    const std::int64_t SW = a.strides[1], PW = g.pads_begin[1], past = SW == 2 ? 1 : 0;
    const std::int64_t col_lo = std::min(OW, (PW + SW - 1) / SW);
    const std::int64_t reach = W - 1 - past - (g.filter[3] - 1) * a.dilations[1] + PW;  // ow*SW <= reach
    const std::int64_t col_hi = reach < 0 ? 0 : std::min(OW, reach / SW + 1);
    const std::int64_t span = col_hi - col_lo >= columns ? col_hi - col_lo : OW;
    const std::int64_t col_blocks = (span + columns - 1) / columns;
    l.kernel = "convolution";
    l.total = static_cast<std::size_t>(g.output[0] * groups * group_blocks * OH * col_blocks);
    l.params = {i32(Cg),           i32(H),           i32(W),           i32(Og),         i32(OH),
                i32(OW),           i32(g.filter[2]), i32(g.filter[3]), a.strides[0],    a.strides[1],
                a.dilations[0],    a.dilations[1],   g.pads_begin[0],  g.pads_begin[1], i32(groups),
                i32(group_blocks), i32(col_blocks),  i32(l.total),     i32(col_lo),     i32(col_hi)};
  }
  if (columns != detail::kFloatConvColumns) l.options = " -DCOLS=" + std::to_string(columns);
  l.description =
      std::string(l.kernel) + " 8x" + std::to_string(columns) + " tiles -> " + xnorcl::to_string(g.output);
  return l;
}

namespace {

class ConvolutionOp final : public Op {
 public:
  const char* name() const override { return "Convolution"; }

  std::vector<TensorInfo> infer(const NodeView& v) const override {
    const ConvGeometry g = geometry(v);
    return {{Dims(g.output.begin(), g.output.end()), ElementType::Float32}};
  }

  std::vector<Tensor> reference(const NodeView& v, const std::vector<const Tensor*>& in) const override {
    const ConvGeometry g = geometry(v);
    Tensor out;
    out.dims = Dims(g.output.begin(), g.output.end());
    out.values = reference_convolution(in[0]->values, v.constants[1]->values, g, conv_attributes(v), 1);
    return {out};
  }

  bool can_fuse(const NodeView& head, const std::vector<NodeView>& fused,
                const NodeView& next) const override {
    return epilogue_accepts(fused, next, infer(head)[0].dims);
  }

  std::unique_ptr<DeviceStep> plan(const Runtime& rt, const NodeView& v,
                                   const std::vector<NodeView>& fused) const override {
    const ConvGeometry g = geometry(v);
    return plan_convolution(rt, g, conv_attributes(v), v.constants[1]->values, 1,
                            epilogue_of(fused, g.output[1]));
  }

 private:
  static ConvGeometry geometry(const NodeView& v) {
    v.check_attributes({"strides", "pads_begin", "pads_end", "dilations", "auto_pad"});
    v.check_input_count(2, 2);
    const TensorInfo& x = v.activation(0, ElementType::Float32, 4);
    const Constant& w = v.constant(1, ElementType::Float32, 4);
    if (x.dims[1] != w.dims[1])
      throw InvalidArgument(v.where() + ": data batch channel count (" + std::to_string(x.dims[1]) +
                            ") does not match filter input channel count (" + std::to_string(w.dims[1]) +
                            ") (input " + to_string(x.dims) + ", weights " + to_string(w.dims) + ")");
    return conv_geometry(v, shape4(x.dims), shape4(w.dims), 1);
  }
};

}  // namespace

const Op& convolution_op() {
  static const ConvolutionOp op;
  return op;
}

}  // namespace xnorcl::ops
