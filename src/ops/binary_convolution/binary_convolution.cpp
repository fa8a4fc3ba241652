// SPDX-License-Identifier: Apache-2.0
// BinaryConvolution: validate -> pads -> pack the filter into the device layout -> plan -> enqueue the
// launchers (im2col_pack, xnor_gemm; where a pad_value other than +-1 meets pad taps, the GEMM folds it into
// its border stores). The output choice (Options::output) is the GEMM's epilogue (xnor_gemm_fused,
// xnor_gemm_bits); a packed input (Options::input_packed) is read by im2col_pack_units.
// Results are never computed on the host. The constructor's steps live in their own units beside this file
// (validate_options, layer_dims, pad_fold, chunk_plan, output_rules, filter_layout, layer_buffers,
// launch_plan); this file holds the object, run() and enqueue().
#include "xnorcl/binary_convolution.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>

#include "ops/binary_convolution/chunk_plan.hpp"
#include "ops/binary_convolution/conv_layout.hpp"
#include "ops/binary_convolution/filter_layout.hpp"
#include "ops/binary_convolution/im2col_pack.hpp"
#include "ops/binary_convolution/launch_plan.hpp"
#include "ops/binary_convolution/layer_buffers.hpp"
#include "ops/binary_convolution/layer_dims.hpp"
#include "ops/binary_convolution/output_rules.hpp"
#include "ops/binary_convolution/pad_fold.hpp"
#include "ops/binary_convolution/validate_options.hpp"
#include "ops/binary_convolution/xnor_gemm.hpp"
#include "ops/layer_common.hpp"
#include "runtime/cl_call.hpp"
#include "runtime/enqueue_checks.hpp"
#include "runtime/runtime_state.hpp"
#include "xnorcl/error.hpp"
#include "xnorcl/layers.hpp"

namespace xnorcl {
namespace {

using detail::Chunk;
using detail::cl_call;
using detail::LayerDims;

}  // namespace

struct BinaryConvolution::Impl {
  explicit Impl(const Runtime& r) : runtime(r) {}
  Runtime runtime;  // keeps the device, queue and programs alive
  Attributes attributes;
  Options options;
  ConvGeometry geometry;
  LayerDims dims;
  Plan plan;

  // Pad handling (pad_fold.hpp): v = +1 packs pad taps as bit 1, v = -1 as bit 0; any other v packs bit 0
  // and, where pad taps exist, the GEMM folds v into its border stores.
  cl_uint pad_bit = 0;
  detail::PadFold fold;

  int M_pad = 0;
  std::vector<Chunk> chunks;     // of one enqueue over all N batches
  std::int64_t max_columns = 0;  // P_pad of a chunk at most (the patch buffer holds Kw * max_columns words)
  int run_group = 1;             // batches per upload/download in run()

  detail::Im2colPackLauncher pack;
  detail::XnorGemmLauncher gemm;

  // The output choice, applied in the GEMM's epilogue: Float runs xnor_gemm; ScaleBias runs
  // xnor_gemm_fused; Packed runs xnor_gemm_fused where the Local variant's tile covers whole words, else
  // xnor_gemm_bits (XnorGemmLauncher::packs_in_fused).
  detail::Epilogue epilogue;
  using GemmKernel = detail::GemmKernel;
  GemmKernel gemm_kernel = GemmKernel::Plain;
  // Options::max_pool, resolved (KH 0: none); output is then [N, C_OUT, POH, POW].
  detail::FusedPool pool;
  Shape output_shape{};

  std::uint64_t input_bytes_per_batch() const {
    return options.input_packed ? std::uint64_t(dims.H) * std::uint64_t(dims.W) *
                                      std::uint64_t(packed_words_per_pixel(dims.C_IN)) * 4
                                : dims.input_per_batch() * sizeof(float);
  }
  std::uint64_t output_bytes_per_batch() const {
    return options.output.kind == Output::Kind::Packed
               ? std::uint64_t(output_shape[2]) * std::uint64_t(output_shape[3]) *
                     std::uint64_t(packed_words_per_pixel(dims.C_OUT)) * 4
               : dims.output_per_batch() * sizeof(float);
  }
  // run()'s staging buffers serve every input and output type: at least float32 per batch.
  std::uint64_t run_input_per_batch() const {
    return std::max(dims.input_per_batch() * sizeof(float), input_bytes_per_batch());
  }
  std::uint64_t run_output_per_batch() const {
    return std::max(dims.output_per_batch() * sizeof(float), output_bytes_per_batch());
  }
  std::uint64_t run_staging_per_batch() const {
    return std::max(run_input_per_batch(), run_output_per_batch());
  }

  detail::LayerBuffers buffers;
  cl::Buffer run_input, run_output;  // run()'s staging buffers, created on first use

  std::vector<std::pair<std::string, cl::Event>> last_events;
  // Options::also_packed where the GEMM's tiles do not cover whole words: the stored output thresholded by
  // a pass of its own after the GEMM (an epilogue ORing bits into words needs atomics, whose mere presence
  // kept PoCL from running the fused GEMM as vector lanes: every scale-and-bias layer was up to 1.4x slower).
  std::optional<ThresholdPack> pack_after;

  // Batches per upload/download of run()'s staging buffers (they fit the allocation limit and the test
  // budget).
  int staging_group(const detail::MemoryLimits& limits) const;
  void refuse_also_packed() const {
    if (!options.also_packed.empty())
      throw InvalidArgument(
          "BinaryConvolution::enqueue: the layer also writes packed bits (Options::also_packed); pass their "
          "buffer to enqueue(input, shortcut, output, bits)");
  }
  cl::Event enqueue_all(const cl::Buffer& input, const cl::Buffer& output, int batches,
                        detail::InputType input_type, const std::vector<cl::Event>* wait);
  template <class T, class Out>
  void check_run(const T* x) const;
  template <class T, class Out>
  std::vector<Out> run(const T* x);
};

cl::Event BinaryConvolution::Impl::enqueue_all(const cl::Buffer& input, const cl::Buffer& output, int batches,
                                               detail::InputType input_type,
                                               const std::vector<cl::Event>* wait) {
  const cl::CommandQueue& queue = runtime.state()->queue;
  const std::vector<Chunk> own = batches == dims.N
                                     ? std::vector<Chunk>()
                                     : detail::plan_chunks(dims, gemm.tile_n(), batches, max_columns);
  const std::vector<Chunk>& list = batches == dims.N ? chunks : own;
  // Every kernel waits for the one before it, so the patch buffer is reused safely even on an out-of-order
  // queue an application passed in.
  std::vector<cl::Event> previous;
  const std::vector<cl::Event>* wait_list = wait;
  cl::Event last;
  const detail::LayerBuffers& b = buffers;
  for (const Chunk& c : list) {
    last = pack.enqueue(queue, input_type, input, b.packed, b.patches, b.threshold_keys, dims, c, pad_bit,
                        wait_list, last_events);
    previous.assign(1, last);
    wait_list = &previous;
    if (gemm_kernel == GemmKernel::Fused) {
      last = gemm.enqueue_fused(queue, b.filters, b.patches, output, dims, M_pad, c, fold, b.wsum, epilogue,
                                wait_list);
      last_events.emplace_back(gemm.fused_kernel_for(dims, c, epilogue), last);
    } else if (gemm_kernel == GemmKernel::Packed) {
      last = gemm.enqueue_packed(queue, b.filters, b.patches, output, dims, M_pad, c, fold, b.wsum, epilogue,
                                 pool, wait_list);
      last_events.emplace_back(detail::XnorGemmLauncher::packed_kernel_name(), last);
    } else {
      last = gemm.enqueue(queue, b.filters, b.patches, output, dims, M_pad, c, fold, b.wsum, wait_list);
      last_events.emplace_back(detail::XnorGemmLauncher::kernel_name(), last);
    }
    previous.assign(1, last);
  }
  return last;
}

// run() uploads and downloads batch groups whose buffers fit the allocation limit (and the test budget).
// Only one image in the layer's own input and output types must fit: run()'s float32 staging is checked
// by run(), since enqueue() on the caller's buffers never needs it.
int BinaryConvolution::Impl::staging_group(const detail::MemoryLimits& limits) const {
  const std::uint64_t max_alloc = limits.max_alloc, test_budget = limits.test_budget;
  const std::uint64_t image = std::max(input_bytes_per_batch(), output_bytes_per_batch());
  if (image > max_alloc) {
    throw Error("one image of layer " + to_string(geometry.input) + " -> " + to_string(geometry.output) +
                " needs " + std::to_string(image) +
                " bytes of device buffer, more than CL_DEVICE_MAX_MEM_ALLOC_SIZE (" +
                std::to_string(max_alloc) + ")");
  }
  const std::uint64_t limit = test_budget ? std::min(max_alloc, test_budget) : max_alloc;
  const std::uint64_t group = std::max<std::uint64_t>(limit / run_staging_per_batch(), 1);
  return static_cast<int>(std::min<std::uint64_t>(group, std::uint64_t(dims.N)));
}

namespace {

// What decides the GEMM's speed: the variant and word size, the output channels, the patch length, the
// positions per image and images, and what the epilogue writes.
std::string gemm_shape_class(const detail::RuntimeState& state, const LayerDims& d,
                             const BinaryConvolution::Options& options) {
  using Kind = BinaryConvolution::Output::Kind;
  const Kind kind = options.output.kind;
  return "xnor_gemm " + to_string(state.variant) + " " + std::to_string(d.word_bits) + "-bit out " +
         std::to_string(d.C_OUT) + " patch " + std::to_string(d.K) + " bits (" + std::to_string(d.Kw) +
         " words) positions " + std::to_string(std::int64_t(d.OH) * d.OW) + " batch " + std::to_string(d.N) +
         " output " +
         (kind == Kind::Float       ? "float"
          : kind == Kind::ScaleBias ? "scale_bias"
                                    : "packed") +
         (options.max_pool ? "+pool" : "") + (options.also_packed.empty() ? "" : "+bits") +
         (options.add_shortcut ? "+shortcut" : "");
}

}  // namespace

BinaryConvolution::BinaryConvolution(const Runtime& runtime, const Attributes& attributes,
                                     const Shape& input_shape, const Filter& filter)
    : BinaryConvolution(runtime, attributes, input_shape, filter, Options{}) {}

BinaryConvolution::BinaryConvolution(const Runtime& runtime, const Attributes& attributes,
                                     const Shape& input_shape, const Filter& filter, const Options& options) {
  const ConvGeometry g = validate(attributes, input_shape, filter.shape());
  if (filter.shape() != g.filter) {
    throw InvalidArgument("the filter's shape " + to_string(filter.shape()) + " differs from " +
                          to_string(g.filter));
  }
  detail::validate_options(attributes, options, g.filter[0]);
  const std::shared_ptr<detail::RuntimeState>& state = runtime.state();
  if (!state) throw InvalidArgument("BinaryConvolution needs a Runtime made by Runtime::create");

  auto impl = std::make_unique<Impl>(runtime);
  Impl& m = *impl;
  m.attributes = attributes;
  m.options = options;
  m.geometry = g;
  m.dims = detail::layer_dims(g, attributes, state->gemm.word_bits, options.input_packed);
  const LayerDims& d = m.dims;
  m.output_shape = g.output;
  if (options.max_pool) m.pool = detail::fused_pool(*options.max_pool, g.output, m.output_shape);

  m.pad_bit = detail::pad_bit(attributes.pad_value);
  m.fold = detail::pad_fold(d, attributes.pad_value);

  // Kernels of this object, created from the runtime's programs (checked against CL_KERNEL_WORK_GROUP_SIZE).
  m.pack = detail::Im2colPackLauncher(*state);
  detail::TuningPoint tuning;
  m.gemm = detail::tuned_gemm(*state, gemm_shape_class(*state, d, options),
                              options.output.kind != Output::Kind::Packed, d.C_OUT,
                              std::int64_t(d.N) * d.OH * d.OW, tuning);

  const detail::MemoryLimits limits = detail::memory_limits(state->profile.info.max_mem_alloc_size);
  detail::ChunkPlan chunk_plan = detail::plan_layer_chunks(d, m.gemm.tile_n(), limits, g);
  m.max_columns = chunk_plan.max_columns;
  m.chunks = std::move(chunk_plan.chunks);
  m.run_group = m.staging_group(limits);

  const bool packs_in_epilogue = !options.also_packed.empty() && m.gemm.packs_in_fused();
  if (!options.also_packed.empty() && !packs_in_epilogue)
    m.pack_after.emplace(runtime, m.output_shape, options.also_packed);
  const detail::GemmChoice gemm_choice = detail::choose_gemm(
      options.output, options.max_pool.has_value(), m.gemm, d.C_OUT, options.clamped(), packs_in_epilogue);
  m.gemm_kernel = gemm_choice.kernel;
  m.M_pad = gemm_choice.M_pad;
  detail::LayerTables tables;
  tables.filter_image =
      detail::filter_image(filter, d, m.M_pad, m.gemm.filter_row(m.M_pad), limits.max_alloc);
  tables.threshold_keys = detail::input_threshold_keys(attributes.input_thresholds, d.C_IN);
  tables.wsum = detail::pad_fold_tables(filter, d, m.fold, limits.max_alloc, g);
  // A clamp before packed output is composed into the rules (clamped_rule); the kernels see plain rules.
  Output output = options.output;
  if (output.kind == Output::Kind::Packed && options.clamped()) {
    for (Threshold& rule : output.thresholds)
      rule = detail::clamped_rule(rule, options.clamp_low, options.clamp_high);
  }
  tables.rules = detail::output_rules(output, d.K, m.M_pad, options.also_packed);
  tables.patch_bytes = chunk_plan.patch_bytes(d);
  tables.packed_bytes = chunk_plan.packed_bytes(d);
  m.epilogue.mode = options.add_shortcut ? 3 : tables.rules.mode;
  m.epilogue.Cw_out = static_cast<int>(packed_words_per_pixel(d.C_OUT));
  m.epilogue.also_packed = packs_in_epilogue;
  if (output.kind != Output::Kind::Packed) {
    m.epilogue.clamp_low = options.clamp_low;
    m.epilogue.clamp_high = options.clamp_high;
  }
  m.buffers = detail::create_buffers(state->context, tables, m.epilogue);

  m.plan = detail::describe_plan(state->variant, m.pack, m.gemm, d, m.chunks, options, gemm_choice,
                                 m.epilogue, m.pool, tables.bytes());
  m.plan.shape_class = tuning.shape_class;
  m.plan.tuned = tuning.tuned;
  m.plan.default_configuration = tuning.default_config;
  impl_ = std::move(impl);
}

BinaryConvolution::~BinaryConvolution() = default;

// A moved-from object holds no layer: using it is the caller's mistake, reported, not a null dereference.
BinaryConvolution::Impl& BinaryConvolution::impl() const {
  if (!impl_) throw Error("this BinaryConvolution was moved from and holds no layer");
  return *impl_;
}
BinaryConvolution::BinaryConvolution(BinaryConvolution&&) noexcept = default;
BinaryConvolution& BinaryConvolution::operator=(BinaryConvolution&&) noexcept = default;

Shape BinaryConvolution::input_shape() const {
  return impl().geometry.input;
}
Shape BinaryConvolution::output_shape() const {
  return impl().output_shape;
}
std::array<int, 2> BinaryConvolution::pads_begin() const {
  return impl().geometry.pads_begin;
}
std::array<int, 2> BinaryConvolution::pads_end() const {
  return impl().geometry.pads_end;
}
const BinaryConvolution::Attributes& BinaryConvolution::attributes() const {
  return impl().attributes;
}
const Plan& BinaryConvolution::plan() const {
  return impl().plan;
}
const BinaryConvolution::Options& BinaryConvolution::options() const {
  return impl().options;
}
bool BinaryConvolution::input_packed() const {
  return impl().options.input_packed;
}
bool BinaryConvolution::output_packed() const {
  return impl().options.output.kind == Output::Kind::Packed;
}
std::size_t BinaryConvolution::input_bytes() const {
  return static_cast<std::size_t>(impl().input_bytes_per_batch() * std::uint64_t(impl().dims.N));
}
std::size_t BinaryConvolution::output_bytes() const {
  return static_cast<std::size_t>(impl().output_bytes_per_batch() * std::uint64_t(impl().dims.N));
}

// Refuses a run() the layer cannot do from host memory: a shortcut or second output only enqueue() takes,
// input or output types other than the layer's, a null input, a staging buffer beyond the allocation limit.
template <class T, class Out>
void BinaryConvolution::Impl::check_run(const T* x) const {
  constexpr bool words_in = std::is_same<T, std::uint32_t>::value;
  constexpr bool words_out = std::is_same<Out, std::uint32_t>::value;
  if (options.add_shortcut)
    throw InvalidArgument(
        "BinaryConvolution::run: the layer adds a shortcut (Options::add_shortcut), which only "
        "enqueue(input, shortcut, output) takes");
  if (!options.also_packed.empty())
    throw InvalidArgument(
        "BinaryConvolution::run: the layer also writes packed bits (Options::also_packed), which only "
        "enqueue(input, shortcut, output, bits) takes");
  if (words_in != options.input_packed) {
    throw InvalidArgument(std::string("BinaryConvolution::run: ") +
                          (options.input_packed
                               ? "this layer reads packed input (Options::input_packed): pass its "
                                 "std::uint32_t words"
                               : "this layer reads float32 or uint8 values; std::uint32_t words "
                                 "need Options::input_packed"));
  }
  const bool packed_output = options.output.kind == Output::Kind::Packed;
  if (words_out != packed_output) {
    throw InvalidArgument(std::string("BinaryConvolution::run: ") +
                          (packed_output
                               ? "this layer writes packed words (Output::Packed): use run_packed() "
                                 "or an std::uint32_t output"
                               : "this layer writes float32 values: use run() with a float output"));
  }
  if (!x) throw InvalidArgument("BinaryConvolution::run: the input pointer is null");
  const std::shared_ptr<detail::RuntimeState>& state = runtime.state();
  const std::uint64_t max_alloc = std::max<std::uint64_t>(state->profile.info.max_mem_alloc_size, 1);
  if (run_staging_per_batch() > max_alloc) {
    throw Error("BinaryConvolution::run: one image of layer " + to_string(geometry.input) + " -> " +
                to_string(output_shape) + " needs " + std::to_string(run_staging_per_batch()) +
                " bytes of staging buffer (float32), more than CL_DEVICE_MAX_MEM_ALLOC_SIZE (" +
                std::to_string(max_alloc) + "); enqueue() on buffers of the layer's own types needs none");
  }
}

// T: float, uint8 or packed words (std::uint32_t); Out: float or packed words (std::uint32_t).
template <class T, class Out>
std::vector<Out> BinaryConvolution::Impl::run(const T* x) {
  check_run<T, Out>(x);
  constexpr bool words_in = std::is_same<T, std::uint32_t>::value;
  const std::shared_ptr<detail::RuntimeState>& state = runtime.state();
  const cl::CommandQueue& queue = state->queue;
  const std::uint64_t in_bytes = words_in ? input_bytes_per_batch() : dims.input_per_batch() * sizeof(T);
  const std::uint64_t out_bytes = output_bytes_per_batch();
  std::vector<Out> y(static_cast<std::size_t>(out_bytes * std::uint64_t(dims.N) / sizeof(Out)));
  const detail::InputType input_type = words_in         ? detail::InputType::Packed
                                       : sizeof(T) == 1 ? detail::InputType::U8
                                                        : detail::InputType::F32;
  last_events.clear();
  try {
    cl_call(
        [&] {
          // Both or neither: a failed allocation of run_output must not leave run_input alone behind. Sized
          // for float32 per batch, at least what any input or output type needs.
          if (!run_input() || !run_output()) {
            run_input = cl::Buffer(state->context, CL_MEM_READ_ONLY,
                                   static_cast<std::size_t>(run_input_per_batch() * run_group));
            run_output = cl::Buffer(state->context, CL_MEM_READ_WRITE,
                                    static_cast<std::size_t>(run_output_per_batch() * run_group));
          }
          const auto* bytes_in = reinterpret_cast<const unsigned char*>(x);
          auto* bytes_out = reinterpret_cast<unsigned char*>(y.data());
          for (int n0 = 0; n0 < dims.N; n0 += run_group) {
            const int batches = std::min(run_group, dims.N - n0);
            std::vector<cl::Event> written(1);
            queue.enqueueWriteBuffer(run_input, CL_FALSE, 0, static_cast<std::size_t>(in_bytes * batches),
                                     bytes_in + in_bytes * std::uint64_t(n0), nullptr, &written[0]);
            std::vector<cl::Event> done(1);
            done[0] = enqueue_all(run_input, run_output, batches, input_type, &written);
            queue.enqueueReadBuffer(run_output, CL_TRUE, 0, static_cast<std::size_t>(out_bytes * batches),
                                    bytes_out + out_bytes * std::uint64_t(n0), &done);
          }
        },
        "BinaryConvolution::run");
    state->after_first_host_run();  // the program cache, on drivers that add code at first launch
  } catch (...) {
    // The non-blocking upload may still read the caller's x: let everything finish before returning.
    try {
      queue.finish();
    } catch (...) {
    }
    throw;
  }
  return y;
}

namespace {
template <class Out>
void copy_out(const std::vector<Out>& result, Out* y) {
  std::memcpy(y, result.data(), result.size() * sizeof(Out));
}
void check_output_pointer(const void* y) {
  if (!y) throw InvalidArgument("BinaryConvolution::run: the output pointer is null");
}
}  // namespace

std::vector<float> BinaryConvolution::run(const float* x) {
  return impl().run<float, float>(x);
}
std::vector<float> BinaryConvolution::run(const std::uint8_t* x) {
  return impl().run<std::uint8_t, float>(x);
}
std::vector<float> BinaryConvolution::run(const std::uint32_t* x) {
  return impl().run<std::uint32_t, float>(x);
}
std::vector<std::uint32_t> BinaryConvolution::run_packed(const float* x) {
  return impl().run<float, std::uint32_t>(x);
}
std::vector<std::uint32_t> BinaryConvolution::run_packed(const std::uint8_t* x) {
  return impl().run<std::uint8_t, std::uint32_t>(x);
}
std::vector<std::uint32_t> BinaryConvolution::run_packed(const std::uint32_t* x) {
  return impl().run<std::uint32_t, std::uint32_t>(x);
}
void BinaryConvolution::run(const float* x, float* y) {
  check_output_pointer(y);
  copy_out(impl().run<float, float>(x), y);
}
void BinaryConvolution::run(const std::uint8_t* x, float* y) {
  check_output_pointer(y);
  copy_out(impl().run<std::uint8_t, float>(x), y);
}
void BinaryConvolution::run(const std::uint32_t* x, float* y) {
  check_output_pointer(y);
  copy_out(impl().run<std::uint32_t, float>(x), y);
}
void BinaryConvolution::run_packed(const float* x, std::uint32_t* y) {
  check_output_pointer(y);
  copy_out(impl().run<float, std::uint32_t>(x), y);
}
void BinaryConvolution::run_packed(const std::uint8_t* x, std::uint32_t* y) {
  check_output_pointer(y);
  copy_out(impl().run<std::uint8_t, std::uint32_t>(x), y);
}
void BinaryConvolution::run_packed(const std::uint32_t* x, std::uint32_t* y) {
  check_output_pointer(y);
  copy_out(impl().run<std::uint32_t, std::uint32_t>(x), y);
}

cl::Event BinaryConvolution::enqueue(const cl::Buffer& input, const cl::Buffer& output,
                                     const std::vector<cl::Event>* wait) {
  Impl& m = impl();
  m.refuse_also_packed();
  if (m.options.add_shortcut)
    throw InvalidArgument(
        "BinaryConvolution: the layer adds a shortcut (Options::add_shortcut); pass it to "
        "enqueue(input, shortcut, output)");
  const std::uint64_t need_in = m.input_bytes_per_batch() * std::uint64_t(m.dims.N);
  const std::uint64_t need_out = m.output_bytes_per_batch() * std::uint64_t(m.dims.N);
  detail::check_enqueue_arguments("BinaryConvolution::enqueue", m.runtime.state()->context,
                                  {input, need_in, m.geometry.input, m.options.input_packed},
                                  {output, need_out, m.output_shape, output_packed()}, false, wait);
  m.last_events.clear();
  return m.enqueue_all(input, output, m.dims.N,
                       m.options.input_packed ? detail::InputType::Packed : detail::InputType::F32, wait);
}

cl::Event BinaryConvolution::enqueue(const cl::Buffer& input, const cl::Buffer& shortcut,
                                     const cl::Buffer& output, const std::vector<cl::Event>* wait) {
  Impl& m = impl();
  m.refuse_also_packed();
  if (!m.options.add_shortcut)
    throw InvalidArgument(
        "BinaryConvolution: enqueue with a shortcut needs a layer made with Options::add_shortcut");
  const std::uint64_t need_in = m.input_bytes_per_batch() * std::uint64_t(m.dims.N);
  const std::uint64_t need_out = m.output_bytes_per_batch() * std::uint64_t(m.dims.N);
  const cl::Context& context = m.runtime.state()->context;
  const char* where = "BinaryConvolution::enqueue";
  detail::check_enqueue_arguments(where, context, {input, need_in, m.geometry.input, m.options.input_packed},
                                  {output, need_out, m.output_shape, false}, false, wait);
  detail::check_enqueue_arguments(where, context, {shortcut, need_out, m.output_shape, false},
                                  {output, need_out, m.output_shape, false}, false, wait);
  m.last_events.clear();
  m.epilogue.shortcut = shortcut;
  return m.enqueue_all(input, output, m.dims.N,
                       m.options.input_packed ? detail::InputType::Packed : detail::InputType::F32, wait);
}

cl::Event BinaryConvolution::enqueue(const cl::Buffer& input, const cl::Buffer* shortcut,
                                     const cl::Buffer& output, const cl::Buffer& bits,
                                     const std::vector<cl::Event>* wait) {
  Impl& m = impl();
  const char* where = "BinaryConvolution::enqueue";
  if (m.options.also_packed.empty())
    throw InvalidArgument(std::string(where) +
                          ": a bits buffer needs a layer made with Options::also_packed (this one has none)");
  if ((shortcut != nullptr) != m.options.add_shortcut)
    throw InvalidArgument(std::string(where) +
                          (m.options.add_shortcut ? ": the layer adds a shortcut (Options::add_shortcut); "
                                                    "pass its buffer, not nullptr"
                                                  : ": a shortcut was given, but the layer was made without "
                                                    "Options::add_shortcut"));
  const std::uint64_t need_in = m.input_bytes_per_batch() * std::uint64_t(m.dims.N);
  const std::uint64_t need_out = m.output_bytes_per_batch() * std::uint64_t(m.dims.N);
  const std::uint64_t need_bits = packed_word_count(m.output_shape) * 4;
  const cl::Context& context = m.runtime.state()->context;
  const detail::EnqueueBuffer in{input, need_in, m.geometry.input, m.options.input_packed};
  const detail::EnqueueBuffer out{output, need_out, m.output_shape, false};
  const detail::EnqueueBuffer packed{bits, need_bits, m.output_shape, true};
  // The output is read back by the threshold pass where the GEMM's tiles do not cover whole words.
  const bool output_read = m.pack_after.has_value();
  detail::check_enqueue_arguments(where, context, in, out, output_read, wait);
  detail::check_enqueue_arguments(where, context, in, packed, false, wait);
  detail::check_outputs_apart(where, context, out, packed);
  if (shortcut) {
    const detail::EnqueueBuffer cut{*shortcut, need_out, m.output_shape, false};
    detail::check_enqueue_arguments(where, context, cut, out, output_read, wait);
    detail::check_enqueue_arguments(where, context, cut, packed, false, wait);
    m.epilogue.shortcut = *shortcut;
  }
  m.last_events.clear();
  m.epilogue.bits = bits;
  cl::Event last =
      m.enqueue_all(input, output, m.dims.N,
                    m.options.input_packed ? detail::InputType::Packed : detail::InputType::F32, wait);
  if (m.pack_after) {
    const std::vector<cl::Event> gemm_done(1, last);
    last = m.pack_after->enqueue(output, bits, &gemm_done);
    m.last_events.emplace_back("threshold_pack", last);
  }
  return last;
}

std::vector<StageTime> BinaryConvolution::last_stage_times() const {
  std::vector<StageTime> out;
  if (!impl().runtime.state()->profiling) return out;
  cl_call(
      [&] {
        for (const auto& named_event : impl().last_events) {
          const std::string& name = named_event.first;
          const cl::Event& event = named_event.second;
          const double ms = detail::event_milliseconds(event);
          auto it =
              std::find_if(out.begin(), out.end(), [&](const StageTime& s) { return s.kernel == name; });
          if (it == out.end()) {
            out.push_back({name, ms});
          } else {
            it->milliseconds += ms;
          }
        }
      },
      "reading profiling events");
  return out;
}

}  // namespace xnorcl
