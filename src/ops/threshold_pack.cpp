// SPDX-License-Identifier: Apache-2.0
// ThresholdPack: the launcher of cl_kernels/threshold_pack.cl.
#include <string>

#include "ops/layer_access.hpp"
#include "ops/layer_common.hpp"
#include "xnorcl/layers.hpp"

namespace xnorcl {

using detail::check_layer_shape;
using detail::element_count;
using detail::enqueue_linear;
using detail::set_args;

struct ThresholdPack::Impl {
  Runtime runtime;
  Shape shape{};
  cl::Kernel kernel;
  std::size_t wg = 1;
  cl::Buffer keys, modes;
  int C = 0, HW = 0, Cw = 0, total = 0;
  detail::TuningPoint tuning;
};

ThresholdPack::ThresholdPack(const Runtime& runtime, const Shape& shape,
                             const std::vector<Threshold>& rules) {
  const auto& s = detail::runtime_state(runtime, "ThresholdPack");
  check_layer_shape(shape, "ThresholdPack");
  if (!rules.empty() && static_cast<std::int64_t>(rules.size()) != shape[1]) {
    throw InvalidArgument("ThresholdPack: " + std::to_string(rules.size()) + " threshold rules for " +
                          std::to_string(shape[1]) + " channels (shape " + to_string(shape) +
                          "); give 0 or C");
  }
  std::vector<cl_uint> keys(static_cast<std::size_t>(shape[1]), detail::float_order_key(0.0f));
  std::vector<cl_uint> modes(static_cast<std::size_t>(shape[1]), 0u);
  for (std::size_t c = 0; c < rules.size(); ++c) {
    const Threshold& r = rules[c];
    detail::check_threshold_mode(r.mode, "ThresholdPack", c);
    if ((r.mode == ThresholdMode::Greater || r.mode == ThresholdMode::Less) &&
        detail::float_is_nan(r.value)) {
      throw InvalidArgument("ThresholdPack: the threshold of channel " + std::to_string(c) + " is NaN");
    }
    keys[c] = detail::float_order_key(r.value);
    modes[c] = static_cast<cl_uint>(r.mode);
  }
  auto m = std::make_unique<Impl>(Impl{runtime, shape, {}, 1, {}, {}, 0, 0, 0, 0, {}});
  const detail::RuntimeState::LinearProgram program =
      detail::tuned_linear_program(*s, "threshold_pack.cl", "threshold_pack " + to_string(shape), m->tuning);
  m->wg = program.work_group;
  m->C = static_cast<int>(shape[1]);
  m->HW = static_cast<int>(shape[2] * shape[3]);
  m->Cw = static_cast<int>(packed_words_per_pixel(shape[1]));
  m->total = static_cast<int>(packed_word_count(shape));
  m->kernel = detail::make_kernel(program.program, "threshold_pack", s->device, m->wg);
  detail::cl_call(
      [&] {
        m->keys =
            cl::Buffer(s->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, keys.size() * 4, keys.data());
        m->modes =
            cl::Buffer(s->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, modes.size() * 4, modes.data());
      },
      "allocating the rules of a ThresholdPack");
  impl_ = std::move(m);
}

ThresholdPack::~ThresholdPack() = default;
ThresholdPack::ThresholdPack(ThresholdPack&&) noexcept = default;
ThresholdPack& ThresholdPack::operator=(ThresholdPack&&) noexcept = default;
const Shape& ThresholdPack::shape() const {
  return impl_->shape;
}
std::size_t ThresholdPack::input_bytes() const {
  return static_cast<std::size_t>(element_count(impl_->shape)) * 4;
}
std::size_t ThresholdPack::output_bytes() const {
  return static_cast<std::size_t>(packed_word_count(impl_->shape)) * 4;
}

cl::Event ThresholdPack::enqueue(const cl::Buffer& input, const cl::Buffer& output,
                                 const std::vector<cl::Event>* wait) {
  Impl& m = *impl_;
  detail::check_enqueue_arguments("ThresholdPack::enqueue", m.runtime.state()->context,
                                  {input, input_bytes(), m.shape, false},
                                  {output, output_bytes(), m.shape, true}, false, wait);
  set_args(m.kernel, "threshold_pack", input, output, m.keys, m.modes, cl_int(m.C), cl_int(m.HW),
           cl_int(m.Cw), cl_int(m.total));
  return enqueue_linear(m.runtime.state()->queue, m.kernel, static_cast<std::size_t>(m.total), m.wg, wait,
                        "threshold_pack");
}

std::vector<std::uint32_t> ThresholdPack::run(const float* y) {
  return detail::run_on_device<std::uint32_t>(
      *impl_->runtime.state(), y, static_cast<std::size_t>(element_count(impl_->shape)),
      static_cast<std::size_t>(packed_word_count(impl_->shape)),
      [&](const cl::Buffer& in, const cl::Buffer& out) { return enqueue(in, out); }, "ThresholdPack::run");
}

detail::TuningPoint detail::LayerAccess::tuning_point(const ThresholdPack& layer) {
  return layer.impl_->tuning;
}

}  // namespace xnorcl
