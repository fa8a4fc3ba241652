// SPDX-License-Identifier: Apache-2.0
// BinaryFullyConnected: launcher of cl_kernels/binary_fc.cl (the weights reordered once into the packed
// input's word layout) and its host reference.
#include <algorithm>
#include <string>

#include "ops/layer_access.hpp"
#include "ops/layer_common.hpp"
#include "xnorcl/layers.hpp"

namespace xnorcl {

using detail::check_layer_shape;

namespace {

void check_fc(const Shape& input, const Filter& weights, const char* what) {
  check_layer_shape(input, what);
  const Shape& w = weights.shape();
  if (w[1] != input[1] || w[2] != input[2] || w[3] != input[3]) {
    throw InvalidArgument(std::string(what) + ": the weights' shape " + to_string(w) +
                          " must be [O, C, H, W] of the input " + to_string(input) + " (O x " +
                          std::to_string(input[1]) + "x" + std::to_string(input[2]) + "x" +
                          std::to_string(input[3]) + ")");
  }
  const std::int64_t K = input[1] * input[2] * input[3];
  if (K > (std::int64_t(1) << 24)) {
    throw InvalidArgument(std::string(what) + ": K = C*H*W = " + std::to_string(K) +
                          " is above 2^24, beyond exact float32 counts");
  }
  if (w[0] > INT_MAX || w[0] * input[0] > INT_MAX) {
    throw InvalidArgument(std::string(what) + ": " + std::to_string(w[0]) + " outputs of " +
                          std::to_string(input[0]) + " images are beyond 32-bit indices");
  }
}

}  // namespace

std::vector<float> reference_binary_fully_connected(const std::uint32_t* words, const Shape& input,
                                                    const Filter& weights) {
  if (!words) throw InvalidArgument("reference_binary_fully_connected: the input pointer is null");
  check_fc(input, weights, "reference_binary_fully_connected");
  const std::int64_t N = input[0], C = input[1], H = input[2], W = input[3], O = weights.shape()[0];
  const std::int64_t K = C * H * W;
  std::vector<float> y(static_cast<std::size_t>(N * O));
  std::vector<std::uint8_t> x(static_cast<std::size_t>(K));
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t yy = 0; yy < H; ++yy)
        for (std::int64_t xx = 0; xx < W; ++xx)
          x[(c * H + yy) * W + xx] = packed_bit(words, input, n, c, yy, xx);
    for (std::int64_t o = 0; o < O; ++o) {
      std::int64_t agree = 0;
      for (std::int64_t k = 0; k < K; ++k) agree += x[k] == (weights.bit(o * K + k) ? 1 : 0);
      y[static_cast<std::size_t>(n * O + o)] = static_cast<float>(2 * agree - K);
    }
  }
  return y;
}

struct BinaryFullyConnected::Impl {
  explicit Impl(const Runtime& r) : runtime(r) {}
  Runtime runtime;
  Shape input{}, output{};
  bool local = false;
  cl::Kernel kernel;
  std::size_t wg = 1;
  cl::Buffer weights;
  int O = 0, Kwt = 0, K = 0;
  std::optional<ThresholdPack> pack;  // packed output: the float result is thresholded
  cl::Buffer scratch;                 // the float result when the output is packed
  std::vector<std::pair<std::string, cl::Event>> last_events;
  detail::TuningPoint tuning;
};

BinaryFullyConnected::BinaryFullyConnected(const Runtime& runtime, const Shape& input, const Filter& weights,
                                           const std::optional<std::vector<Threshold>>& output_thresholds) {
  const auto& s = detail::runtime_state(runtime, "BinaryFullyConnected");
  check_fc(input, weights, "BinaryFullyConnected");
  const std::int64_t C = input[1], H = input[2], W = input[3], O = weights.shape()[0];
  const std::int64_t Cw = packed_words_per_pixel(C), Kwt = H * W * Cw, K = C * H * W;
  if (Kwt * O > INT_MAX) {
    throw InvalidArgument("BinaryFullyConnected: " + std::to_string(O) + " x " + std::to_string(Kwt) +
                          " weight words are beyond 32-bit indices");
  }
  // Refused here rather than by clCreateBuffer: the weights (and the float result a packed output
  // thresholds).
  const std::uint64_t max_alloc = s->profile.info.max_mem_alloc_size;
  const std::uint64_t weight_bytes = std::uint64_t(O) * std::uint64_t(Kwt) * 4;
  const std::uint64_t result_bytes = std::uint64_t(input[0]) * std::uint64_t(O) * 4;
  if (weight_bytes > max_alloc || (output_thresholds && result_bytes > max_alloc)) {
    throw InvalidArgument("BinaryFullyConnected: " + std::to_string(O) + " outputs of " + to_string(input) +
                          " need " + std::to_string(std::max(weight_bytes, result_bytes)) +
                          " bytes in one device buffer, more than CL_DEVICE_MAX_MEM_ALLOC_SIZE (" +
                          std::to_string(max_alloc) + ")");
  }
  auto m = std::make_unique<Impl>(runtime);
  m->input = input;
  m->output = Shape{input[0], O, 1, 1};
  m->local = s->variant == Variant::Local;
  const detail::RuntimeState::LinearProgram program = detail::tuned_linear_program(
      *s, "binary_fc.cl", "binary_fc " + to_string(input) + " -> " + std::to_string(O), m->tuning);
  m->wg = program.work_group;
  m->O = static_cast<int>(O);
  m->Kwt = static_cast<int>(Kwt);
  m->K = static_cast<int>(K);
  if (output_thresholds) m->pack.emplace(runtime, m->output, *output_thresholds);
  m->kernel = detail::make_kernel(program.program, "binary_fc", s->device, m->wg);

  // Weight (o, c, y, x) -> bit c%32 of word (y*W + x)*Cw + c/32 of row o, the input's own layout.
  std::vector<cl_uint> words(static_cast<std::size_t>(O * Kwt), 0u);
  for (std::int64_t o = 0; o < O; ++o)
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t p = 0; p < H * W; ++p) {
        if (!weights.bit((o * C + c) * H * W + p)) continue;
        const std::int64_t j = p * Cw + c / 32;
        words[static_cast<std::size_t>(o * Kwt + j)] |= 1u << (c % 32);
      }
  detail::cl_call(
      [&] {
        m->weights =
            cl::Buffer(s->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, words.size() * 4, words.data());
        if (m->pack) {
          m->scratch = cl::Buffer(s->context, CL_MEM_READ_WRITE, static_cast<std::size_t>(input[0] * O * 4));
        }
      },
      "allocating the weights of a BinaryFullyConnected");
  impl_ = std::move(m);
}

BinaryFullyConnected::~BinaryFullyConnected() = default;
BinaryFullyConnected::BinaryFullyConnected(BinaryFullyConnected&&) noexcept = default;
BinaryFullyConnected& BinaryFullyConnected::operator=(BinaryFullyConnected&&) noexcept = default;
Shape BinaryFullyConnected::input_shape() const {
  return impl_->input;
}
Shape BinaryFullyConnected::output_shape() const {
  return impl_->output;
}
bool BinaryFullyConnected::packed_output() const {
  return impl_->pack.has_value();
}

cl::Event BinaryFullyConnected::enqueue(const cl::Buffer& input, const cl::Buffer& output,
                                        const std::vector<cl::Event>* wait) {
  Impl& m = *impl_;
  const std::int64_t N = m.input[0];
  detail::check_enqueue_arguments("BinaryFullyConnected::enqueue", m.runtime.state()->context,
                                  {input, std::uint64_t(packed_word_count(m.input)) * 4, m.input, true},
                                  {output, std::uint64_t(m.pack ? packed_word_count(m.output) : N * m.O) * 4,
                                   m.output, m.pack.has_value()},
                                  false, wait);
  const cl::Buffer& target = m.pack ? m.scratch : output;
  detail::set_args(m.kernel, "binary_fc", input, m.weights, target, cl_int(m.O), cl_int(m.Kwt), cl_int(m.K));
  const std::size_t global0 = m.local ? static_cast<std::size_t>(m.O) * m.wg : static_cast<std::size_t>(m.O);
  cl::Event e = detail::enqueue_linear(m.runtime.state()->queue, m.kernel, global0, m.wg, wait, "binary_fc",
                                       static_cast<std::size_t>(N));
  m.last_events = {{"binary_fc", e}};
  if (!m.pack) return e;
  const std::vector<cl::Event> after(1, e);
  m.last_events.emplace_back("threshold_pack", m.pack->enqueue(m.scratch, output, &after));
  return m.last_events.back().second;
}

std::vector<StageTime> BinaryFullyConnected::last_stage_times() const {
  std::vector<StageTime> times;
  if (!impl_->runtime.state()->profiling) return times;
  detail::cl_call(
      [&] {
        for (const auto& [name, e] : impl_->last_events)
          times.push_back({name, detail::event_milliseconds(e)});
      },
      "reading the profiling events of a BinaryFullyConnected");
  return times;
}

std::vector<float> BinaryFullyConnected::run(const std::uint32_t* words) {
  if (impl_->pack) throw InvalidArgument("BinaryFullyConnected::run: the output is packed; use run_packed");
  return detail::run_on_device<float>(
      *impl_->runtime.state(), words, static_cast<std::size_t>(packed_word_count(impl_->input)),
      static_cast<std::size_t>(impl_->input[0] * impl_->O),
      [&](const cl::Buffer& in, const cl::Buffer& out) { return enqueue(in, out); },
      "BinaryFullyConnected::run");
}

std::vector<std::uint32_t> BinaryFullyConnected::run_packed(const std::uint32_t* words) {
  if (!impl_->pack) throw InvalidArgument("BinaryFullyConnected::run_packed: the output is float32; use run");
  return detail::run_on_device<std::uint32_t>(
      *impl_->runtime.state(), words, static_cast<std::size_t>(packed_word_count(impl_->input)),
      static_cast<std::size_t>(packed_word_count(impl_->output)),
      [&](const cl::Buffer& in, const cl::Buffer& out) { return enqueue(in, out); },
      "BinaryFullyConnected::run_packed");
}

detail::TuningPoint detail::LayerAccess::tuning_point(const BinaryFullyConnected& layer) {
  return layer.impl_->tuning;
}

}  // namespace xnorcl
