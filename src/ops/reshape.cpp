// SPDX-License-Identifier: Apache-2.0
// Reshape (OpenVINO Reshape-1) of a Float32 activation: the target shape is the second input, a Float32
// constant (1-D) holding integer values, or, with a single input, the attribute `shape`. As in
// OpenVINO: -1 (at most once) takes what the other axes leave; 0 copies the input's size of that axis when
// special_zero is true ("true"/"false" or 1/0, default false) and is refused otherwise (xnorcl tensors have
// no empty axis). The result has at most 4 axes. Row-major order is kept, so the device copies the bytes
// (clEnqueueCopyBuffer). Packed bits are refused: their word layout depends on the channel axis.
#include "ops/float_step.hpp"
#include "ops/layer_common.hpp"
#include "xnorcl/error.hpp"

namespace xnorcl::ops {

namespace {

// OpenVINO's rules for 0 and -1; `what` prefixes every message.
Dims resolve(const std::vector<std::int64_t>& pattern, const Dims& x, bool special_zero,
             const std::string& what) {
  const std::int64_t count = product(x);
  Dims out;
  std::int64_t known = 1;  // the product of the resolved sizes, never above count
  std::size_t minus_one = pattern.size();
  for (std::size_t k = 0; k < pattern.size(); ++k) {
    std::int64_t d = pattern[k];
    if (d == 0) {
      if (!special_zero)
        throw InvalidArgument(what + ": axis " + std::to_string(k) + " is 0 without special_zero");
      if (k >= x.size())
        throw InvalidArgument(what + ": axis " + std::to_string(k) + " copies (0) an axis the input lacks");
      d = x[k];
    } else if (d == -1) {
      if (minus_one != pattern.size()) throw InvalidArgument(what + ": -1 appears more than once");
      minus_one = k;
    } else if (d < 0) {
      throw InvalidArgument(what + ": axis " + std::to_string(k) + " is " + std::to_string(d));
    }
    out.push_back(d);
    if (d == -1) continue;
    if (known > count / d)
      throw InvalidArgument(what + ": the target holds more elements than the input (" +
                            std::to_string(count) + ")");
    known *= d;
  }
  if (minus_one != pattern.size()) {
    if (count % known != 0)
      throw InvalidArgument(what + ": -1 cannot take up " + std::to_string(count) + " elements");
    out[minus_one] = count / known;
    known = count;
  }
  if (known != count)
    throw InvalidArgument(what + ": " + to_string(out) + " holds " + std::to_string(known) +
                          " elements, the input " + std::to_string(count));
  return out;
}

Dims target_shape(const NodeView& v) {
  v.check_input_count(1, 2);
  const Dims& x = v.activation(0, ElementType::Float32).dims;
  if (v.inputs.size() == 2 && v.has("shape"))
    throw InvalidArgument(v.where() +
                          ": give the target shape as input 1 or as the attribute 'shape', not both");
  const std::vector<std::int64_t> pattern =
      v.inputs.size() == 2 ? integer_constant(v, 1) : v.integers("shape");
  std::string text;
  for (std::int64_t p : pattern) text += (text.empty() ? "" : ", ") + std::to_string(p);
  const std::string what = v.where() + ": target shape {" + text + "} for input " + to_string(x);
  const Dims out = resolve(pattern, x, boolean_attribute(v, "special_zero", false), what);
  if (out.size() > 4)
    throw InvalidArgument(what + ": the result " + to_string(out) + " has more than 4 axes");
  return out;
}

class ReshapeStep final : public DeviceStep {
 public:
  ReshapeStep(const Runtime& rt, const NodeView& v)
      : runtime_(rt),
        bytes_(tensor_bytes(v.inputs[0])),
        description_("copy " + std::to_string(bytes_) + " bytes") {}

  cl::Event enqueue(const std::vector<const cl::Buffer*>& in, const std::vector<const cl::Buffer*>& out,
                    const std::vector<cl::Event>& wait) override {
    return detail::cl_call(
        [&] {
          cl::Event e;
          runtime_.state()->queue.enqueueCopyBuffer(*in[0], *out[0], 0, 0, bytes_,
                                                    wait.empty() ? nullptr : &wait, &e);
          return e;
        },
        "enqueueing the copy of a Reshape");
  }
  std::vector<StageTime> stage_times() const override { return {}; }
  std::size_t weight_bytes() const override { return 0; }
  std::string describe() const override { return description_; }

 private:
  Runtime runtime_;
  std::size_t bytes_;
  std::string description_;
};

class ReshapeOp final : public Op {
 public:
  const char* name() const override { return "Reshape"; }

  std::vector<TensorInfo> infer(const NodeView& v) const override {
    v.check_attributes({"special_zero", "shape"});
    return {{target_shape(v), ElementType::Float32}};
  }

  std::vector<Tensor> reference(const NodeView& v, const std::vector<const Tensor*>& in) const override {
    Tensor out = *in[0];
    out.dims = target_shape(v);
    return {out};
  }

  std::unique_ptr<DeviceStep> plan(const Runtime& rt, const NodeView& v,
                                   const std::vector<NodeView>& /*fused*/) const override {
    return std::make_unique<ReshapeStep>(rt, v);
  }
};

}  // namespace

const Op& reshape_op() {
  static const ReshapeOp op;
  return op;
}

}  // namespace xnorcl::ops
