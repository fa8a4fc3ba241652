// SPDX-License-Identifier: Apache-2.0
// Max-pooling: OpenVINO MaxPool-1 shape rules, host references, and the launchers of
// cl_kernels/binary_maxpool.cl (binary_maxpool on packed bits, maxpool_f32 on floats).
#include <algorithm>
#include <limits>
#include <string>

#include "ops/layer_access.hpp"
#include "ops/layer_common.hpp"
#include "runtime/device_profile.hpp"
#include "xnorcl/layers.hpp"

namespace xnorcl {

using detail::check_layer_shape;
using detail::element_count;

std::string to_string(RoundingType r) {
  return r == RoundingType::Ceil ? "ceil" : "floor";
}

PoolGeometry validate_pool(const PoolAttributes& a, const Shape& input) {
  check_layer_shape(input, "MaxPool");
  if (a.rounding_type != RoundingType::Floor && a.rounding_type != RoundingType::Ceil) {
    throw InvalidArgument("MaxPool: rounding_type = " + std::to_string(static_cast<int>(a.rounding_type)) +
                          " is not a RoundingType; use RoundingType::Floor or RoundingType::Ceil");
  }
  PoolGeometry g;
  g.input = input;
  g.output = input;
  const char* axis_name[2] = {"0 (height)", "1 (width)"};
  for (int i = 0; i < 2; ++i) {
    const std::string axis = std::string(" at axis ") + axis_name[i];
    if (a.kernel[i] < 1)
      throw InvalidArgument("MaxPool: kernel " + std::to_string(a.kernel[i]) + axis + " is below 1");
    if (a.strides[i] < 1)
      throw InvalidArgument("MaxPool: stride " + std::to_string(a.strides[i]) + axis + " is below 1");
    const std::int64_t D = input[2 + i], k = a.kernel[i], s = a.strides[i];
    std::int64_t pb = 0, pe = 0, out = 0;
    switch (a.auto_pad) {
      case AutoPad::Explicit:
        pb = a.pads_begin[i];
        pe = a.pads_end[i];
        if (pb < 0 || pe < 0) {
          throw InvalidArgument("MaxPool: negative pad (pads_begin " + std::to_string(pb) + ", pads_end " +
                                std::to_string(pe) + ")" + axis);
        }
        break;
      case AutoPad::Valid:
        break;
      case AutoPad::SameUpper:
      case AutoPad::SameLower: {
        out = (D + s - 1) / s;
        const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * s + k - D);
        const std::int64_t small = total / 2, big = total - small;
        pb = a.auto_pad == AutoPad::SameUpper ? small : big;
        pe = a.auto_pad == AutoPad::SameUpper ? big : small;
        break;
      }
    }
    if (a.auto_pad == AutoPad::Explicit || a.auto_pad == AutoPad::Valid) {
      const std::int64_t padded = D + pb + pe;
      if (k > padded) {
        throw InvalidArgument("MaxPool: kernel has size (dim: " + std::to_string(k) +
                              ") larger than the data shape after padding (dim: " + std::to_string(padded) +
                              ")" + axis);
      }
      const bool ceil = a.auto_pad == AutoPad::Explicit && a.rounding_type == RoundingType::Ceil;
      out = (padded - k + (ceil ? s - 1 : 0)) / s + 1;
    }
    if (pb > INT_MAX || pe > INT_MAX || out > INT_MAX) {
      throw InvalidArgument("MaxPool: pads or output size beyond 32-bit integers" + axis);
    }
    g.pads_begin[i] = static_cast<int>(pb);
    g.pads_end[i] = static_cast<int>(pe);
    g.output[2 + i] = out;
  }
  return g;
}

namespace {

// Calls f(iy, ix) for every input position of the window of (oy, ox), row by row.
template <class F>
void for_window(const PoolAttributes& a, const PoolGeometry& g, std::int64_t oy, std::int64_t ox, F&& f) {
  const std::int64_t H = g.input[2], W = g.input[3];
  const std::int64_t iy0 = oy * a.strides[0] - g.pads_begin[0], ix0 = ox * a.strides[1] - g.pads_begin[1];
  for (std::int64_t iy = std::max<std::int64_t>(iy0, 0); iy < std::min<std::int64_t>(iy0 + a.kernel[0], H);
       ++iy)
    for (std::int64_t ix = std::max<std::int64_t>(ix0, 0); ix < std::min<std::int64_t>(ix0 + a.kernel[1], W);
         ++ix)
      f(iy, ix);
}

}  // namespace

std::vector<std::uint32_t> reference_binary_maxpool(const std::uint32_t* words, const Shape& input,
                                                    const PoolAttributes& a) {
  if (!words) throw InvalidArgument("reference_binary_maxpool: the input pointer is null");
  const PoolGeometry g = validate_pool(a, input);
  const std::int64_t N = input[0], C = input[1], H = input[2], W = input[3], OH = g.output[2],
                     OW = g.output[3];
  const std::int64_t Cw = packed_words_per_pixel(C);
  std::vector<std::uint32_t> out(static_cast<std::size_t>(packed_word_count(g.output)), 0u);
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t oy = 0; oy < OH; ++oy)
      for (std::int64_t ox = 0; ox < OW; ++ox)
        for (std::int64_t c = 0; c < C; ++c) {  // bit by bit, independent of the kernel's word-wide OR
          bool any = false;
          for_window(a, g, oy, ox, [&](std::int64_t iy, std::int64_t ix) {
            any = any || packed_bit(words, input, n, c, iy, ix);
          });
          if (any) out[static_cast<std::size_t>(((n * OH + oy) * OW + ox) * Cw + c / 32)] |= 1u << (c % 32);
        }
  (void)H;
  (void)W;
  return out;
}

std::vector<float> reference_maxpool(const float* x, const Shape& input, const PoolAttributes& a) {
  if (!x) throw InvalidArgument("reference_maxpool: the input pointer is null");
  const PoolGeometry g = validate_pool(a, input);
  const std::int64_t planes = input[0] * input[1], H = input[2], W = input[3], OH = g.output[2],
                     OW = g.output[3];
  std::vector<float> out(static_cast<std::size_t>(planes * OH * OW));
  for (std::int64_t p = 0; p < planes; ++p)
    for (std::int64_t oy = 0; oy < OH; ++oy)
      for (std::int64_t ox = 0; ox < OW; ++ox) {
        float best = std::numeric_limits<float>::lowest();
        std::uint32_t best_key = 0;  // below every non-NaN key
        for_window(a, g, oy, ox, [&](std::int64_t iy, std::int64_t ix) {
          const float v = x[(p * H + iy) * W + ix];
          if (detail::float_is_nan(v)) return;
          const std::uint32_t k = detail::float_order_key(v);
          if (k > best_key) {
            best_key = k;
            best = v;
          }
        });
        out[static_cast<std::size_t>((p * OH + oy) * OW + ox)] = best;
      }
  return out;
}

// ---- device
// -------------------------------------------------------------------------------------------------

namespace {

struct PoolLaunch {
  Runtime runtime;
  PoolAttributes attributes;
  PoolGeometry geometry;
  bool runs = false;  // maxpool_f32_runs: a work-item per run of a row
  const char* kernel_name = "";
  cl::Kernel kernel;
  std::size_t wg = 1;
  detail::TuningPoint tuning;
};

// binary_maxpool on packed bits; on floats maxpool_f32, or where pools_in_runs says so maxpool_f32_runs (or
// its float-compare twin, RuntimeState::floats_compare_exactly).
PoolLaunch make_pool(const Runtime& runtime, const PoolAttributes& a, const Shape& input, bool binary,
                     const char* what) {
  const auto& s = detail::runtime_state(runtime, what);
  PoolLaunch p{runtime, a, validate_pool(a, input), false, "", {}, 1, {}};
  check_layer_shape(p.geometry.output, what);
  p.runs = !binary && detail::pools_in_runs(runtime.variant(), p.geometry, a);
  p.kernel_name = binary                      ? "binary_maxpool"
                  : !p.runs                   ? "maxpool_f32"
                  : s->floats_compare_exactly ? "maxpool_f32_runs_native_compare"
                                              : "maxpool_f32_runs";
  const detail::RuntimeState::LinearProgram program = detail::tuned_linear_program(
      *s, "binary_maxpool.cl", detail::pool_tuning_class(p.kernel_name, p.geometry, a), p.tuning);
  p.wg = program.work_group;
  p.kernel = detail::make_kernel(program.program, p.kernel_name, s->device, p.wg);
  return p;
}

// The arguments after (in, out) up to `total`, in the kernels' order.
cl::Event enqueue_pool(PoolLaunch& p, bool binary, const cl::Buffer& input, const cl::Buffer& output,
                       const std::vector<cl::Event>* wait) {
  const PoolGeometry& g = p.geometry;
  const PoolAttributes& a = p.attributes;
  const char* name = p.kernel_name;
  const std::uint64_t in_bytes =
      4 * std::uint64_t(binary ? packed_word_count(g.input) : element_count(g.input));
  const std::uint64_t out_count = binary ? packed_word_count(g.output) : element_count(g.output);
  detail::check_enqueue_arguments(binary ? "BinaryMaxPool::enqueue" : "MaxPool::enqueue",
                                  p.runtime.state()->context, {input, in_bytes, g.input, binary},
                                  {output, out_count * 4, g.output, binary}, false, wait);
  const cl_int H = cl_int(g.input[2]), W = cl_int(g.input[3]), OH = cl_int(g.output[2]),
               OW = cl_int(g.output[3]);
  const cl_int KH = a.kernel[0], KW = a.kernel[1], sy = a.strides[0], sx = a.strides[1];
  const cl_int pt = g.pads_begin[0], pl = g.pads_begin[1];
  const std::int64_t work_items =
      binary ? static_cast<std::int64_t>(out_count) : detail::pool_work_items(g.output, p.runs);
  const cl_int total = cl_int(work_items);
  if (binary) {
    detail::set_args(p.kernel, name, input, output, H, W, cl_int(packed_words_per_pixel(g.input[1])), OH, OW,
                     KH, KW, sy, sx, pt, pl, total);
  } else {
    detail::set_args(p.kernel, name, input, output, H, W, OH, OW, KH, KW, sy, sx, pt, pl, total);
  }
  return detail::enqueue_linear(p.runtime.state()->queue, p.kernel, static_cast<std::size_t>(work_items),
                                p.wg, wait, name);
}

}  // namespace

struct BinaryMaxPool::Impl {
  PoolLaunch p;
};
BinaryMaxPool::BinaryMaxPool(const Runtime& runtime, const PoolAttributes& attributes, const Shape& input)
    : impl_(std::make_unique<Impl>(Impl{make_pool(runtime, attributes, input, true, "BinaryMaxPool")})) {}
BinaryMaxPool::~BinaryMaxPool() = default;
BinaryMaxPool::BinaryMaxPool(BinaryMaxPool&&) noexcept = default;
BinaryMaxPool& BinaryMaxPool::operator=(BinaryMaxPool&&) noexcept = default;
const PoolGeometry& BinaryMaxPool::geometry() const {
  return impl_->p.geometry;
}
Shape BinaryMaxPool::output_shape() const {
  return impl_->p.geometry.output;
}
cl::Event BinaryMaxPool::enqueue(const cl::Buffer& input, const cl::Buffer& output,
                                 const std::vector<cl::Event>* wait) {
  return enqueue_pool(impl_->p, true, input, output, wait);
}
std::vector<std::uint32_t> BinaryMaxPool::run(const std::uint32_t* words) {
  const PoolGeometry& g = impl_->p.geometry;
  return detail::run_on_device<std::uint32_t>(
      *impl_->p.runtime.state(), words, static_cast<std::size_t>(packed_word_count(g.input)),
      static_cast<std::size_t>(packed_word_count(g.output)),
      [&](const cl::Buffer& in, const cl::Buffer& out) { return enqueue(in, out); }, "BinaryMaxPool::run");
}

struct MaxPool::Impl {
  PoolLaunch p;
};
MaxPool::MaxPool(const Runtime& runtime, const PoolAttributes& attributes, const Shape& input)
    : impl_(std::make_unique<Impl>(Impl{make_pool(runtime, attributes, input, false, "MaxPool")})) {}
MaxPool::~MaxPool() = default;
MaxPool::MaxPool(MaxPool&&) noexcept = default;
MaxPool& MaxPool::operator=(MaxPool&&) noexcept = default;
const PoolGeometry& MaxPool::geometry() const {
  return impl_->p.geometry;
}
Shape MaxPool::output_shape() const {
  return impl_->p.geometry.output;
}
const char* MaxPool::kernel() const {
  return impl_->p.kernel_name;
}
cl::Event MaxPool::enqueue(const cl::Buffer& input, const cl::Buffer& output,
                           const std::vector<cl::Event>* wait) {
  return enqueue_pool(impl_->p, false, input, output, wait);
}
std::vector<float> MaxPool::run(const float* x) {
  const PoolGeometry& g = impl_->p.geometry;
  return detail::run_on_device<float>(
      *impl_->p.runtime.state(), x, static_cast<std::size_t>(element_count(g.input)),
      static_cast<std::size_t>(element_count(g.output)),
      [&](const cl::Buffer& in, const cl::Buffer& out) { return enqueue(in, out); }, "MaxPool::run");
}

detail::TuningPoint detail::LayerAccess::tuning_point(const BinaryMaxPool& layer) {
  return layer.impl_->p.tuning;
}

detail::TuningPoint detail::LayerAccess::tuning_point(const MaxPool& layer) {
  return layer.impl_->p.tuning;
}

}  // namespace xnorcl
