// SPDX-License-Identifier: Apache-2.0
// BinaryConvolution as a graph op: OpenVINO's BinaryConvolution-1 over an f32 or packed-bits input and a
// u1 filter constant, run by the BinaryConvolution class. The nodes that alone read its output (a Relu or
// Clamp, a folded batch-norm, a residual Add, a FakeQuantize and a MaxPool of its bits; fusion_token below)
// run in the same launch, in the GEMM's epilogue: no float tensor stored between them.
#include <limits>

#include "ops/binary_convolution/binary_convolution_op.hpp"
#include "ops/binary_convolution/xnor_gemm.hpp"
#include "ops/fake_quantize.hpp"
#include "ops/layer_common.hpp"
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

// What the nodes after a convolution do to its output, as fusion sees them: a Relu or Clamp (A: the fused
// activation a Larq/LCE convolution applies to its sum before the multiplier and bias), a Multiply by
// per-channel constants (M), an Add of them (B: a folded batch-norm or bias), an Add of another tensor of the
// output's dims (R: a residual shortcut), a FakeQuantize (Q) and, after it, a MaxPool of the bits (P). A
// chain fuses when it reads A? M? B? (Q P? | R)?: the activation becomes the epilogue's clamp of the sum
// (Options::clamp_low/high; before packed output it is composed into the threshold rules), the batch-norm
// becomes the scale-and-bias epilogue or is folded into the thresholds, the shortcut is added in the same
// epilogue, the bits are pooled in the same launch.
char fusion_token(const NodeView& next, const Dims& output) {
  const std::string& op = next.node->op;
  if ((op == "Relu" || op == "Clamp") && next.inputs.size() == 1) return 'A';
  if (op == "FakeQuantize") return 'Q';
  if (op == "MaxPool") return 'P';
  if ((op == "Multiply" || op == "Add") && next.inputs.size() == 2) {
    if (per_channel_broadcast(next, 1)) return op == "Multiply" ? 'M' : 'B';
    if (op == "Add" && !next.constants[1] && next.inputs[1].type == ElementType::Float32 &&
        next.inputs[1].dims == output)
      return 'R';
  }
  return '?';
}

bool fusable(const std::string& tokens) {
  std::size_t i = 0;
  if (i < tokens.size() && tokens[i] == 'A') ++i;
  if (i < tokens.size() && tokens[i] == 'M') ++i;
  if (i < tokens.size() && tokens[i] == 'B') ++i;
  if (i < tokens.size() && tokens[i] == 'Q') {
    ++i;
    if (i < tokens.size() && tokens[i] == 'P') ++i;
  } else if (i < tokens.size() && tokens[i] == 'R') {
    ++i;
  }
  return i == tokens.size();
}

// The fused nodes turned into the convolution's options.
BinaryConvolution::Options fused_options(const NodeView& head, const std::vector<NodeView>& fused,
                                         const Dims& output) {
  BinaryConvolution::Options options;
  options.input_packed = head.inputs[0].type == ElementType::Bits;
  const std::size_t channels = static_cast<std::size_t>(output[1]);
  std::vector<float> scale(channels, 1.0f), bias(channels, 0.0f);
  bool scaled = false;
  for (const NodeView& n : fused) {
    switch (fusion_token(n, output)) {
      case 'A':
        // Relu is x > 0 ? x : 0, the clamp to [0, +inf] on every value but NaN and -0, which the
        // convolution never outputs; Clamp's bounds are rounded to float as the Clamp op does (and were
        // validated by it: numbers, min <= max).
        if (n.node->op == "Relu") {
          options.clamp_low = 0.0f;
          options.clamp_high = std::numeric_limits<float>::infinity();
        } else {
          options.clamp_low = static_cast<float>(n.real("min"));
          options.clamp_high = static_cast<float>(n.real("max"));
        }
        break;
      case 'M':
        scale = *per_channel_values(n, 1);
        scaled = true;
        break;
      case 'B':
        bias = *per_channel_values(n, 1);
        scaled = true;
        break;
      case 'Q':
        options.output = BinaryConvolution::Output::packed(scaled ? fake_quantize_rules_after(n, scale, bias)
                                                                  : fake_quantize_rules(n));
        break;
      case 'P':
        options.max_pool = pool_attributes(n);
        break;
      case 'R':
        options.add_shortcut = true;
        break;
      default:
        throw Error(n.where() + ": cannot be fused into a convolution");
    }
  }
  // The clamp alone keeps Float output (xnor_gemm_fused, mode 0).
  if (options.output.kind != BinaryConvolution::Output::Kind::Packed && (scaled || options.add_shortcut))
    options.output = BinaryConvolution::Output::scale_and_bias(scale, bias);
  return options;
}

class BinaryConvolutionStep final : public DeviceStep {
 public:
  BinaryConvolutionStep(const Runtime& rt, const BinaryConvolution::Attributes& attributes, const NodeView& v,
                        const BinaryConvolution::Options& options)
      : runtime_(rt), conv_(rt, attributes, shape4(v.inputs[0].dims), filter_of(v), options) {}
  cl::Event enqueue(const std::vector<const cl::Buffer*>& in, const std::vector<const cl::Buffer*>& out,
                    const std::vector<cl::Event>& wait) override {
    if (!conv_.options().also_packed.empty())
      return conv_.enqueue(*in[0], conv_.options().add_shortcut ? in[1] : nullptr, *out[0], *out[1], &wait);
    if (conv_.options().add_shortcut) return conv_.enqueue(*in[0], *in[1], *out[0], &wait);
    return conv_.enqueue(*in[0], *out[0], &wait);
  }
  std::vector<StageTime> stage_times() const override { return conv_.last_stage_times(); }
  std::size_t weight_bytes() const override { return conv_.plan().scratch_bytes; }
  std::string describe() const override {
    std::string kernels;
    for (const Plan::Launch& l : conv_.plan().launches) kernels += (kernels.empty() ? "" : " + ") + l.kernel;
    return kernels + " -> " + xnorcl::to_string(conv_.output_shape()) + " " + conv_.plan().output;
  }
  std::vector<detail::TuningPoint> tuning_points() const override {
    return {detail::gemm_tuning_point(*runtime_.state(), conv_.plan())};
  }

 private:
  Runtime runtime_;
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

  bool can_fuse(const NodeView& head, const std::vector<NodeView>& fused,
                const NodeView& next) const override {
    const Dims output = infer(head)[0].dims;
    std::string tokens;
    for (const NodeView& n : fused) tokens += fusion_token(n, output);
    return fusable(tokens + fusion_token(next, output));
  }

  std::unique_ptr<DeviceStep> plan(const Runtime& rt, const NodeView& v,
                                   const std::vector<NodeView>& fused) const override {
    return plan_thresholded_convolution(rt, v, fused, nullptr, {});
  }

  // A FakeQuantize that reads the step's float output beside its other consumers (a Bi-Real block's sum
  // feeds the next block's binarization and its shortcut): its bits are packed in the same epilogue
  // (Options::also_packed) from the values stored, so no thresholding pass reads them back. Only where the
  // GEMM's work-groups assemble whole words in __local memory (the Local variant's tiles of 32k channels):
  // elsewhere the epilogue ORs bits into words with atomics, which on PoCL keeps the whole GEMM from
  // running as vector lanes and costs more than the separate pass (measured: a 64x56x56 3x3 step 0.31 ->
  // 1.0 ms, the pass it saves 0.15 ms).
  bool can_fuse_side(const Runtime& runtime, const NodeView& head, const std::vector<NodeView>& fused,
                     const NodeView& side) const override {
    if (!detail::runtime_state(runtime, "Model")->gemm.packs_words_in_local()) return false;
    const Dims output = infer(head)[0].dims;
    for (const NodeView& n : fused) {
      const char token = fusion_token(n, output);
      if (token == 'Q' || token == 'P') return false;  // the output is packed already
    }
    return side.node->op == "FakeQuantize" && side.inputs[0].dims == output;
  }

  std::unique_ptr<DeviceStep> plan_with_side(const Runtime& rt, const NodeView& v,
                                             const std::vector<NodeView>& fused,
                                             const NodeView& side) const override {
    return plan_thresholded_convolution(rt, v, fused, &side, {});
  }
};

}  // namespace

const Op& binary_convolution_op() {
  static const BinaryConvolutionOp op;
  return op;
}

std::unique_ptr<DeviceStep> plan_thresholded_convolution(const Runtime& runtime, const NodeView& conv,
                                                         const std::vector<NodeView>& fused,
                                                         const NodeView* side,
                                                         std::vector<float> input_thresholds) {
  BinaryConvolution::Attributes attributes = attributes_of(conv);
  BinaryConvolution::Options options =
      fused_options(conv, fused, binary_convolution_op().infer(conv)[0].dims);
  if (!input_thresholds.empty()) {
    attributes.input_thresholds = std::move(input_thresholds);
    options.input_packed = false;  // the convolution reads the floats before the FakeQuantize
  }
  if (side) options.also_packed = fake_quantize_rules(*side);
  return std::make_unique<BinaryConvolutionStep>(runtime, attributes, conv, options);
}

}  // namespace xnorcl::ops
