// SPDX-License-Identifier: Apache-2.0
// AvgPool (OpenVINO AvgPool-1) on Float32 [N, C, H, W]: the window attributes of MaxPool (pool_attributes,
// validate_pool for the geometry) plus exclude-pad. The divisor is OpenVINO's reference's:
//   exclude-pad true, or no padding at all (every pad 0 after auto_pad): the window's in-bounds taps only,
//     also where ceil rounding lets a window reach past the input;
//   exclude-pad false with some padding: the whole kernel, KH * KW, even where a ceil-rounded window
//     reaches past the padded input.
// A window without an in-bounds tap (ceil rounding) averages to 0. exclude-pad is required, as in the IR:
// "true"/"false" or an integer 1/0. One work-item per output (avg_pool.cl), summing its window row by row in
// float; the reference sums in double.
#include <algorithm>

#include "ops/float_step.hpp"
#include "ops/layer_common.hpp"
#include "ops/pool_attributes.hpp"
#include "runtime/device_profile.hpp"
#include "xnorcl/error.hpp"

namespace xnorcl::ops {

namespace {

struct AvgGeometry {
  PoolAttributes attributes;
  PoolGeometry g;
  std::int64_t full = 0;  // the divisor of every window, or 0: count its in-bounds taps
};

AvgGeometry geometry(const NodeView& v) {
  const Dims& d = v.activation(0, ElementType::Float32, 4).dims;
  AvgGeometry a;
  a.attributes = pool_attributes(v);
  try {
    a.g = validate_pool(a.attributes, Shape{d[0], d[1], d[2], d[3]});
  } catch (const InvalidArgument& e) {
    std::string message = e.what();
    if (message.rfind("MaxPool: ", 0) == 0) message.erase(0, 9);
    throw InvalidArgument(v.where() + ": " + message);
  }
  const bool padded = a.g.pads_begin[0] || a.g.pads_begin[1] || a.g.pads_end[0] || a.g.pads_end[1];
  if (!boolean_attribute(v, "exclude-pad", std::nullopt) && padded)
    a.full = static_cast<std::int64_t>(a.attributes.kernel[0]) * a.attributes.kernel[1];
  return a;
}

// avg_pool_f32, or avg_pool_f32_runs (a work-item per run of a row) where pools_in_runs says so.
const char* avg_pool_kernel(bool runs) {
  return runs ? "avg_pool_f32_runs" : "avg_pool_f32";
}

class AvgPoolStep final : public LinearStep {
 public:
  AvgPoolStep(const Runtime& rt, const AvgGeometry& a, bool runs)
      : LinearStep(rt, "avg_pool.cl",
                   std::string(avg_pool_kernel(runs)) + " " + xnorcl::to_string(a.g.output),
                   detail::pool_tuning_class(avg_pool_kernel(runs), a.g, a.attributes)),
        a_(a),
        name_(avg_pool_kernel(runs)),
        total_(detail::pool_work_items(a.g.output, runs)),
        kernel_(kernel(name_)) {}

  cl::Event enqueue(const std::vector<const cl::Buffer*>& in, const std::vector<const cl::Buffer*>& out,
                    const std::vector<cl::Event>& wait) override {
    begin();
    const PoolGeometry& g = a_.g;
    const PoolAttributes& p = a_.attributes;
    detail::set_args(kernel_, name_, *in[0], *out[0], int_arg(g.input[2]), int_arg(g.input[3]),
                     int_arg(g.output[2]), int_arg(g.output[3]), cl_int(p.kernel[0]), cl_int(p.kernel[1]),
                     cl_int(p.strides[0]), cl_int(p.strides[1]), cl_int(g.pads_begin[0]),
                     cl_int(g.pads_begin[1]), int_arg(a_.full), int_arg(total_));
    return launch(kernel_, name_, static_cast<std::size_t>(total_), wait);
  }

 private:
  AvgGeometry a_;
  const char* name_;
  std::int64_t total_;
  cl::Kernel kernel_;
};

class AvgPoolOp final : public Op {
 public:
  const char* name() const override { return "AvgPool"; }

  std::vector<TensorInfo> infer(const NodeView& v) const override {
    v.check_attributes(
        {"kernel", "strides", "pads_begin", "pads_end", "auto_pad", "rounding_type", "exclude-pad"});
    v.check_input_count(1, 1);
    const AvgGeometry a = geometry(v);
    const Dims out(a.g.output.begin(), a.g.output.end());
    check_int_elements(v, out, "the output");
    if (a.full > INT_MAX)
      throw InvalidArgument(v.where() + ": kernel " + std::to_string(a.attributes.kernel[0]) + "x" +
                            std::to_string(a.attributes.kernel[1]) + " holds more than " +
                            std::to_string(INT_MAX) + " taps");
    return {{out, ElementType::Float32}};
  }

  std::vector<Tensor> reference(const NodeView& v, const std::vector<const Tensor*>& in) const override {
    const AvgGeometry a = geometry(v);
    const PoolGeometry& g = a.g;
    const std::int64_t H = g.input[2], W = g.input[3], OH = g.output[2], OW = g.output[3];
    const std::int64_t KH = a.attributes.kernel[0], KW = a.attributes.kernel[1];
    Tensor out;
    out.dims.assign(g.output.begin(), g.output.end());
    out.values.reserve(static_cast<std::size_t>(product(out.dims)));
    for (std::int64_t plane = 0; plane < g.input[0] * g.input[1]; ++plane) {
      const float* x = in[0]->values.data() + plane * H * W;
      for (std::int64_t oy = 0; oy < OH; ++oy)
        for (std::int64_t ox = 0; ox < OW; ++ox) {
          const std::int64_t y0 = oy * a.attributes.strides[0] - g.pads_begin[0];
          const std::int64_t x0 = ox * a.attributes.strides[1] - g.pads_begin[1];
          double sum = 0;
          std::int64_t taps = 0;
          for (std::int64_t y = std::max<std::int64_t>(y0, 0); y < std::min(y0 + KH, H); ++y)
            for (std::int64_t xx = std::max<std::int64_t>(x0, 0); xx < std::min(x0 + KW, W); ++xx, ++taps)
              sum += x[y * W + xx];
          const std::int64_t divisor = a.full ? a.full : taps;
          out.values.push_back(divisor ? static_cast<float>(sum / static_cast<double>(divisor)) : 0.0f);
        }
    }
    return {out};
  }

  std::unique_ptr<DeviceStep> plan(const Runtime& rt, const NodeView& v,
                                   const std::vector<NodeView>& /*fused*/) const override {
    const AvgGeometry a = geometry(v);
    return std::make_unique<AvgPoolStep>(rt, a, detail::pools_in_runs(rt.variant(), a.g, a.attributes));
  }
};

}  // namespace

const Op& avg_pool_op() {
  static const AvgPoolOp op;
  return op;
}

}  // namespace xnorcl::ops
