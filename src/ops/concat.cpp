// SPDX-License-Identifier: Apache-2.0
// Concat (OpenVINO Concat-1): one or more inputs, equal in every axis but `axis` (negative counts from the
// end), joined along it. Float32 inputs (activations or constants) of any rank up to 4; Bits activations
// along the channel axis (1) when every input but the last has a multiple of 32 channels, so that each
// input's packed words land whole in each output pixel. One copy launch per input (concat.cl), exact.
#include "ops/float_step.hpp"
#include "ops/layer_common.hpp"
#include "xnorcl/error.hpp"
#include "xnorcl/packed.hpp"

namespace xnorcl::ops {

namespace {

// Input i as [outer, width_i] 32-bit words, the output as [outer, sum of widths].
struct Layout {
  Dims out;
  ElementType type = ElementType::Float32;
  std::int64_t outer = 1;
  std::vector<std::int64_t> widths;
};

// Every input of input 0's type and dims but along `axis`: the result's dims.
Dims joined_dims(const NodeView& v, std::size_t axis) {
  const Dims& first = v.inputs[0].dims;
  Dims out = first;
  out[axis] = 0;
  for (std::size_t i = 0; i < v.inputs.size(); ++i) {
    const Dims& d = v.inputs[i].dims;
    if (v.inputs[0].type == ElementType::Bits)
      v.activation(i, ElementType::Bits);
    else if (v.constants[i])
      v.constant(i, ElementType::Float32);
    else
      v.activation(i, ElementType::Float32);
    bool same = d.size() == first.size();
    for (std::size_t k = 0; same && k < d.size(); ++k) same = k == axis || d[k] == first[k];
    if (!same)
      throw InvalidArgument(v.where() + ": input " + std::to_string(i) + " ('" + v.node->inputs[i] + "') " +
                            to_string(d) + " differs from input 0 " + to_string(first) + " outside axis " +
                            std::to_string(axis));
    out[axis] += d[axis];
  }
  if (out.size() > 4)
    throw InvalidArgument(v.where() + ": the result " + to_string(out) + " has more than 4 axes");
  check_int_elements(v, out, "the result");
  return out;
}

// Packed pixels hold ceil(C / 32) words: whole words of each input follow one another in the output's
// pixels when every input but the last fills its words.
void bits_words(const NodeView& v, std::size_t axis, Layout& l) {
  const Dims& first = v.inputs[0].dims;
  if (axis != 1 || (first.size() != 2 && first.size() != 4))
    throw InvalidArgument(
        v.where() + ": packed bits " + to_string(first) +
        " are joined along the channels only (axis 1 of [N, C] or [N, C, H, W]), not axis " +
        std::to_string(axis));
  for (std::size_t i = 0; i + 1 < v.inputs.size(); ++i)
    if (v.inputs[i].dims[1] % 32 != 0)
      throw InvalidArgument(v.where() + ": packed input " + std::to_string(i) + " ('" + v.node->inputs[i] +
                            "') has " + std::to_string(v.inputs[i].dims[1]) +
                            " channels; every packed input but the last needs a multiple of 32");
  const Shape s = bits_shape(first);
  l.outer = s[0] * s[2] * s[3];
  for (const TensorInfo& in : v.inputs) l.widths.push_back(packed_words_per_pixel(in.dims[1]));
}

Layout layout(const NodeView& v) {
  v.check_input_count(1, static_cast<std::size_t>(-1));
  const auto axis =
      static_cast<std::size_t>(normalize_axis(v, v.integer("axis"), v.inputs[0].dims.size(), "axis"));
  Layout l;
  l.type = v.inputs[0].type;
  l.out = joined_dims(v, axis);
  if (l.type == ElementType::Bits) {
    bits_words(v, axis, l);
    return l;
  }
  for (std::size_t k = 0; k < axis; ++k) l.outer *= v.inputs[0].dims[k];
  for (const TensorInfo& in : v.inputs) l.widths.push_back(product(in.dims) / l.outer);
  return l;
}

// The copy's geometry as a tuning class: each input's width per outer index, and the outer count.
std::string widths(const Layout& l) {
  std::string text;
  for (std::int64_t w : l.widths) text += (text.empty() ? "widths " : ",") + std::to_string(w);
  return text + " outer " + std::to_string(l.outer);
}

class ConcatStep final : public LinearStep {
 public:
  ConcatStep(const Runtime& rt, const NodeView& v, const Layout& l)
      : LinearStep(rt, "concat.cl",
                   "concat_copy x" + std::to_string(v.inputs.size()) + " -> " + to_string(l.out),
                   "concat_copy " + widths(l) + " -> " + to_string(l.out)),
        l_(l),
        kernel_(kernel("concat_copy")) {
    for (const Constant* c : v.constants) constants_.push_back(c ? upload(c->values) : cl::Buffer());
  }

  cl::Event enqueue(const std::vector<const cl::Buffer*>& in, const std::vector<const cl::Buffer*>& out,
                    const std::vector<cl::Event>& wait) override {
    begin();
    std::int64_t total_width = 0, offset = 0;
    for (std::int64_t w : l_.widths) total_width += w;
    cl::Event last;
    std::size_t next = 0;
    for (std::size_t i = 0; i < l_.widths.size(); ++i) {
      const cl::Buffer& source = constants_[i]() ? constants_[i] : *in[next++];
      const std::int64_t items = l_.outer * l_.widths[i];
      detail::set_args(kernel_, "concat_copy", source, *out[0], int_arg(l_.widths[i]), int_arg(total_width),
                       int_arg(offset), int_arg(items));
      last = launch(kernel_, "concat_copy", static_cast<std::size_t>(items), wait);
      offset += l_.widths[i];
    }
    return last;
  }

 private:
  Layout l_;
  cl::Kernel kernel_;
  std::vector<cl::Buffer> constants_;
};

class ConcatOp final : public Op {
 public:
  const char* name() const override { return "Concat"; }

  std::vector<TensorInfo> infer(const NodeView& v) const override {
    v.check_attributes({"axis"});
    const Layout l = layout(v);
    return {{l.out, l.type}};
  }

  std::vector<Tensor> reference(const NodeView& v, const std::vector<const Tensor*>& in) const override {
    const Layout l = layout(v);
    Tensor out;
    out.dims = l.out;
    out.type = l.type;
    if (l.type == ElementType::Bits) {
      // Through the logical values, independent of the word layout the device copies.
      std::vector<std::vector<float>> parts;
      for (const Tensor* t : in) parts.push_back(unpack_activations(t->words.data(), bits_shape(t->dims)));
      const Shape s = bits_shape(l.out);
      std::vector<float> joined;
      for (std::int64_t n = 0; n < s[0]; ++n)
        for (std::size_t i = 0; i < parts.size(); ++i) {
          const std::int64_t plane = bits_shape(in[i]->dims)[1] * s[2] * s[3];
          joined.insert(joined.end(), parts[i].begin() + n * plane, parts[i].begin() + (n + 1) * plane);
        }
      out.words = pack_activations(joined.data(), s, {});
      return {out};
    }
    for (std::int64_t o = 0; o < l.outer; ++o)
      for (std::size_t i = 0; i < l.widths.size(); ++i) {
        const std::vector<float>& x = in[i] ? in[i]->values : v.constants[i]->values;
        out.values.insert(out.values.end(), x.begin() + o * l.widths[i], x.begin() + (o + 1) * l.widths[i]);
      }
    return {out};
  }

  std::unique_ptr<DeviceStep> plan(const Runtime& rt, const NodeView& v,
                                   const std::vector<NodeView>& /*fused*/) const override {
    return std::make_unique<ConcatStep>(rt, v, layout(v));
  }
};

}  // namespace

const Op& concat_op() {
  static const ConcatOp op;
  return op;
}

}  // namespace xnorcl::ops
