// BinaryConvolution: validate -> pads -> pack the filter into the device layout -> plan -> enqueue the
// launchers (im2col_pack, xnor_gemm; where a pad_value other than +-1 meets pad taps, the GEMM folds it into
// its border stores). The output choice (Options::output) is the GEMM's epilogue (xnor_gemm_fused,
// xnor_gemm_bits); a packed input (Options::input_packed) is read by im2col_pack_units.
// Results are never computed on the host.
#include "xnorcl/binary_convolution.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <type_traits>

#include "runtime/cl_call.hpp"
#include "ops/binary_convolution/conv_layout.hpp"
#include "runtime/enqueue_checks.hpp"
#include "runtime/knobs.hpp"
#include "ops/binary_convolution/im2col_pack.hpp"
#include "runtime/runtime_state.hpp"
#include "ops/binary_convolution/xnor_gemm.hpp"
#include "xnorcl/error.hpp"

namespace xnorcl {
namespace {

using detail::Chunk;
using detail::cl_call;
using detail::LayerDims;
using detail::round_up;

// The patch buffer of one chunk stays below this many bytes (and below CL_DEVICE_MAX_MEM_ALLOC_SIZE).
constexpr std::uint64_t kDefaultChunkBudget = std::uint64_t(64) << 20;

// Test hook: XNORCL_MAX_CHUNK_BYTES (a positive integer) lowers the chunk budget, so tests can force a layer
// to be split into batches and row ranges, and the staging buffers of run() into batch groups. Not a tuning
// knob: a single output row of one image is always allowed (up to CL_DEVICE_MAX_MEM_ALLOC_SIZE).
std::uint64_t test_chunk_budget() {
  const auto v = detail::knob_text("XNORCL_MAX_CHUNK_BYTES", "a positive number of bytes");
  return v ? detail::parse_positive(*v, "XNORCL_MAX_CHUNK_BYTES", UINT64_MAX) : 0;
}

int to_int(std::int64_t value, const char* what) {
  if (value < 0 || value > INT_MAX) {
    throw InvalidArgument(std::string(what) + " = " + std::to_string(value) +
                          " is beyond what the kernels index with 32-bit integers (at most " +
                          std::to_string(INT_MAX) + ")");
  }
  return static_cast<int>(value);
}

// Order key of a threshold (the kernels compute the same key of each input): unsigned order of keys is the
// IEEE order of the values, -0 == +0, subnormals count as themselves.
cl_uint order_key(float value) {
  std::uint32_t u;
  std::memcpy(&u, &value, sizeof u);
  if ((u & 0x7fffffffu) == 0) u = 0;
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

bool is_nan(float value) {
  std::uint32_t u;
  std::memcpy(&u, &value, sizeof u);
  return (u & 0x7fffffffu) > 0x7f800000u;
}

std::string value_text(float value) {
  std::ostringstream o;
  o.precision(9);
  o << value;
  return o.str();
}

// Options checked before any device work (the caller's output is never touched on error).
void validate_options(const BinaryConvolution::Attributes& a, const BinaryConvolution::Options& o,
                      std::int64_t c_out) {
  const std::string where = "BinaryConvolution: ";
  if (o.input_packed && !a.input_thresholds.empty()) {
    throw InvalidArgument(where +
                          "the input is packed bits (Options::input_packed), so input_thresholds must be " +
                          "empty (" + std::to_string(a.input_thresholds.size()) +
                          " given): the bits were thresholded when they were packed");
  }
  using Kind = BinaryConvolution::Output::Kind;
  const BinaryConvolution::Output& out = o.output;
  if (out.kind == Kind::ScaleBias) {
    if (static_cast<std::int64_t>(out.scale.size()) != c_out ||
        static_cast<std::int64_t>(out.bias.size()) != c_out) {
      throw InvalidArgument(where + "Output::ScaleBias has " + std::to_string(out.scale.size()) +
                            " scales and " + std::to_string(out.bias.size()) + " biases for C_OUT = " +
                            std::to_string(c_out) + " output channels; give exactly C_OUT of each");
    }
    for (std::int64_t c = 0; c < c_out; ++c) {
      const float sc = out.scale[static_cast<std::size_t>(c)], b = out.bias[static_cast<std::size_t>(c)];
      if (!std::isfinite(sc) || !std::isfinite(b)) {
        throw InvalidArgument(where + "Output::ScaleBias of output channel " + std::to_string(c) +
                              " has scale " + value_text(sc) + " and bias " + value_text(b) +
                              "; both must be finite (not NaN or infinite)");
      }
    }
  } else if (out.kind == Kind::Packed) {
    if (static_cast<std::int64_t>(out.thresholds.size()) != c_out) {
      throw InvalidArgument(where + "Output::Packed has " + std::to_string(out.thresholds.size()) +
                            " threshold rules for C_OUT = " + std::to_string(c_out) +
                            " output channels; give exactly one rule per output channel");
    }
    for (std::int64_t c = 0; c < c_out; ++c) {
      const Threshold& r = out.thresholds[static_cast<std::size_t>(c)];
      const auto mode = static_cast<unsigned>(r.mode);
      if (mode > static_cast<unsigned>(ThresholdMode::AlwaysOne)) {
        throw InvalidArgument(where + "Output::Packed: the rule of output channel " + std::to_string(c) +
                              " has an unknown mode " + std::to_string(mode));
      }
      if ((r.mode == ThresholdMode::Greater || r.mode == ThresholdMode::Less) && is_nan(r.value)) {
        throw InvalidArgument(where + "Output::Packed: the threshold of output channel " + std::to_string(c) +
                              " is NaN (a " + (r.mode == ThresholdMode::Greater ? "Greater" : "Less") +
                              " rule needs a number; +-inf is allowed)");
      }
    }
  } else if (out.kind != Kind::Float) {
    throw InvalidArgument(where + "unknown Output::Kind " + std::to_string(static_cast<int>(out.kind)));
  }
  if (o.max_pool && out.kind != Kind::Packed) {
    throw InvalidArgument(where +
                          "Options::max_pool needs Output::Packed (it pools thresholded bits); the "
                          "output is " +
                          (out.kind == Kind::Float ? "Float" : "ScaleBias"));
  }
}

}  // namespace

std::string Plan::to_string() const {
  std::ostringstream out;
  out << "variant " << xnorcl::to_string(variant) << " (" << build_options << "), tile " << tile_m << "x"
      << tile_n << ", K = " << patch_bits << " bits in " << words_per_patch << " " << word_bits
      << "-bit words per "
      << (channel_packed ? "channel-packed"
          : bit_rows     ? "dense (from bit rows)"
                         : "dense (bit by bit)")
      << " patch" << (input_packed ? " (packed input)" : "") << ", output " << output << ", " << chunks
      << (chunks == 1 ? " chunk" : " chunks") << ", scratch " << scratch_bytes << " bytes";
  for (const Launch& l : launches) {
    out << "\n  " << l.kernel << " global " << l.global[0] << "x" << l.global[1] << " local " << l.local[0]
        << "x" << l.local[1];
  }
  return out.str();
}

struct BinaryConvolution::Impl {
  explicit Impl(const Runtime& r) : runtime(r) {}
  Runtime runtime;  // keeps the device, queue and programs alive
  Attributes attributes;
  Options options;
  ConvGeometry geometry;
  LayerDims dims;
  Plan plan;

  // Pad handling: v = +1 packs pad taps as bit 1, v = -1 as bit 0 (then the GEMM's integers are the result);
  // any other v packs bit 0 and, where pad taps exist, the GEMM writes the border positions as
  // fma(v, S, G + S) (the pad fold, cl_kernels/xnor_gemm.cl).
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
  enum class GemmKernel { Plain, Fused, Packed } gemm_kernel = GemmKernel::Plain;
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

  cl::Buffer filters;         // [Kw][M_pad] uint
  cl::Buffer wsum;            // [C_OUT][row_classes][column_classes] int S tables (only with the pad fold)
  cl::Buffer threshold_keys;  // [C_IN] uint
  cl::Buffer patches;         // [Kw][largest P_pad] words
  cl::Buffer packed;          // channel-packed and bit-row layouts: the binarized input of the largest chunk
  cl::Buffer run_input, run_output;  // run()'s staging buffers, created on first use

  std::vector<std::pair<std::string, cl::Event>> last_events;

  std::vector<Chunk> plan_chunks(int batches, std::int64_t max_columns) const;
  cl::Event enqueue_all(const cl::Buffer& input, const cl::Buffer& output, int batches,
                        detail::InputType input_type, const std::vector<cl::Event>* wait);
  template <class T, class Out>
  std::vector<Out> run(const T* x);
};

// Splits `batches` images into chunks whose patch matrix has at most max_columns columns (P_pad): whole
// batches where one image fits, else ranges of output rows of one image.
std::vector<Chunk> BinaryConvolution::Impl::plan_chunks(int batches, std::int64_t max_columns) const {
  const std::int64_t tile_n = gemm.tile_n();
  const std::int64_t per_image = std::int64_t(dims.OH) * dims.OW;
  std::vector<Chunk> out;
  auto add = [&](int n0, int n_count, int oy0, int rows) {
    Chunk c;
    c.n0 = n0;
    c.n_count = n_count;
    c.oy0 = oy0;
    c.rows = rows;
    c.P = static_cast<int>(std::int64_t(n_count) * rows * dims.OW);
    c.P_pad = static_cast<int>(round_up(c.P, tile_n));
    // Input rows the taps of output rows [oy0, oy0 + rows) can read, clamped to the input (rows outside are
    // pad and never read).
    const std::int64_t first = std::int64_t(oy0) * dims.stride_y - dims.pad_top;
    const std::int64_t last = std::int64_t(oy0 + rows - 1) * dims.stride_y - dims.pad_top +
                              std::int64_t(dims.KH - 1) * dims.dilation_y;
    const std::int64_t lo = std::clamp<std::int64_t>(first, 0, dims.H - 1);
    const std::int64_t hi = std::clamp<std::int64_t>(last, lo, dims.H - 1);
    c.iy_first = static_cast<int>(lo);
    c.iy_count = static_cast<int>(hi - lo + 1);
    out.push_back(c);
  };
  if (round_up(per_image, tile_n) <= max_columns) {
    std::int64_t per_chunk = std::max<std::int64_t>(1, max_columns / per_image);
    while (per_chunk > 1 && round_up(per_chunk * per_image, tile_n) > max_columns) --per_chunk;
    for (std::int64_t n0 = 0; n0 < batches; n0 += per_chunk) {
      add(static_cast<int>(n0), static_cast<int>(std::min<std::int64_t>(per_chunk, batches - n0)), 0,
          dims.OH);
    }
    return out;
  }
  std::int64_t rows = std::max<std::int64_t>(1, max_columns / dims.OW);
  while (rows > 1 && round_up(rows * dims.OW, tile_n) > max_columns) --rows;
  for (int n = 0; n < batches; ++n) {
    for (std::int64_t oy0 = 0; oy0 < dims.OH; oy0 += rows) {
      add(n, 1, static_cast<int>(oy0), static_cast<int>(std::min<std::int64_t>(rows, dims.OH - oy0)));
    }
  }
  return out;
}

cl::Event BinaryConvolution::Impl::enqueue_all(const cl::Buffer& input, const cl::Buffer& output, int batches,
                                               detail::InputType input_type,
                                               const std::vector<cl::Event>* wait) {
  const cl::CommandQueue& queue = runtime.state()->queue;
  const std::vector<Chunk> own = batches == dims.N ? std::vector<Chunk>() : plan_chunks(batches, max_columns);
  const std::vector<Chunk>& list = batches == dims.N ? chunks : own;
  // Every kernel waits for the one before it, so the patch buffer is reused safely even on an out-of-order
  // queue an application passed in.
  std::vector<cl::Event> previous;
  const std::vector<cl::Event>* wait_list = wait;
  cl::Event last;
  for (const Chunk& c : list) {
    last = pack.enqueue(queue, input_type, input, packed, patches, threshold_keys, dims, c, pad_bit,
                        wait_list, last_events);
    previous.assign(1, last);
    wait_list = &previous;
    if (gemm_kernel == GemmKernel::Fused) {
      last = gemm.enqueue_fused(queue, filters, patches, output, dims, M_pad, c, fold, wsum, epilogue,
                                wait_list);
      last_events.emplace_back(detail::XnorGemmLauncher::fused_kernel_name(), last);
    } else if (gemm_kernel == GemmKernel::Packed) {
      last = gemm.enqueue_packed(queue, filters, patches, output, dims, M_pad, c, fold, wsum, epilogue, pool,
                                 wait_list);
      last_events.emplace_back(detail::XnorGemmLauncher::packed_kernel_name(), last);
    } else {
      last = gemm.enqueue(queue, filters, patches, output, dims, M_pad, c, fold, wsum, wait_list);
      last_events.emplace_back(detail::XnorGemmLauncher::kernel_name(), last);
    }
    previous.assign(1, last);
  }
  return last;
}

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
  validate_options(attributes, options, g.filter[0]);
  const std::shared_ptr<detail::RuntimeState>& state = runtime.state();
  if (!state) throw InvalidArgument("BinaryConvolution needs a Runtime made by Runtime::create");

  auto impl = std::make_unique<Impl>(runtime);
  Impl& m = *impl;
  m.attributes = attributes;
  m.options = options;
  m.geometry = g;
  LayerDims& d = m.dims;
  d.N = to_int(g.input[0], "N");
  d.C_IN = to_int(g.input[1], "C_IN");
  d.H = to_int(g.input[2], "H");
  d.W = to_int(g.input[3], "W");
  d.C_OUT = to_int(g.filter[0], "C_OUT");
  d.KH = to_int(g.filter[2], "KH");
  d.KW = to_int(g.filter[3], "KW");
  d.stride_y = attributes.strides[0];
  d.stride_x = attributes.strides[1];
  d.dilation_y = attributes.dilations[0];
  d.dilation_x = attributes.dilations[1];
  d.pad_top = g.pads_begin[0];
  d.pad_left = g.pads_begin[1];
  d.OH = to_int(g.output[2], "OH");
  d.OW = to_int(g.output[3], "OW");
  d.K = to_int(g.input[1] * g.filter[2] * g.filter[3], "C_IN*KH*KW");
  detail::choose_packing(d, state->gemm.word_bits, options.input_packed);
  m.output_shape = g.output;
  if (options.max_pool) {
    PoolGeometry pg;
    try {
      pg = validate_pool(*options.max_pool, g.output);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(std::string("BinaryConvolution: Options::max_pool on the output ") +
                            to_string(g.output) + ": " + e.what());
    }
    const PoolAttributes& a = *options.max_pool;
    m.pool = {a.kernel[0],
              a.kernel[1],
              a.strides[0],
              a.strides[1],
              pg.pads_begin[0],
              pg.pads_begin[1],
              to_int(pg.output[2], "pooled OH"),
              to_int(pg.output[3], "pooled OW")};
    m.output_shape = pg.output;
  }

  const float v = attributes.pad_value;
  m.pad_bit = v == 1.0f ? 1u : 0u;
  m.fold.border = detail::compute_border(d);
  m.fold.v = v;
  m.fold.correct = v != 1.0f && v != -1.0f && m.fold.border.per_plane > 0;

  // Kernels of this object, created from the runtime's programs (checked against CL_KERNEL_WORK_GROUP_SIZE).
  m.pack = detail::Im2colPackLauncher(*state);
  m.gemm = detail::XnorGemmLauncher(*state);

  // Chunks: the patch matrix of one chunk (Kw * P_pad words) stays within the budget, the device's
  // CL_DEVICE_MAX_MEM_ALLOC_SIZE and 32-bit column indices.
  const std::uint64_t max_alloc = std::max<std::uint64_t>(state->profile.info.max_mem_alloc_size, 1);
  const std::uint64_t test_budget = test_chunk_budget();
  std::uint64_t budget = std::min(max_alloc, kDefaultChunkBudget);
  if (test_budget) budget = std::min(budget, test_budget);
  const std::uint64_t word_bytes = d.word_bytes() * std::uint64_t(d.Kw);
  const std::int64_t tile_n = m.gemm.tile_n();
  const std::int64_t column_limit = (std::int64_t(INT_MAX) / 2) / tile_n * tile_n;
  auto columns_within = [&](std::uint64_t bytes) {
    return std::min<std::int64_t>(column_limit,
                                  static_cast<std::int64_t>(bytes / word_bytes) / tile_n * tile_n);
  };
  std::int64_t max_columns = std::max<std::int64_t>(columns_within(budget), tile_n);
  const std::int64_t one_row = round_up(d.OW, tile_n);
  if (max_columns < one_row) {
    // A single output row is the smallest chunk; the budget is soft, the allocation limit is not.
    if (one_row > columns_within(max_alloc)) {
      throw Error("layer " + to_string(g.input) + " * " + to_string(g.filter) + ": one output row of " +
                  std::to_string(d.OW) + " patches of " + std::to_string(d.Kw) + " words needs " +
                  std::to_string(std::uint64_t(one_row) * word_bytes) +
                  " bytes, more than CL_DEVICE_MAX_MEM_ALLOC_SIZE (" + std::to_string(max_alloc) + ")");
    }
    max_columns = one_row;
  }
  m.max_columns = max_columns;
  m.chunks = m.plan_chunks(d.N, max_columns);
  std::int64_t largest_P_pad = 0;
  std::uint64_t largest_packed = 0;  // words of the channel-packed input of a chunk
  std::uint64_t largest_extent = 0;  // of the packed input's indices the kernels count in ints
  for (const Chunk& c : m.chunks) {
    largest_P_pad = std::max<std::int64_t>(largest_P_pad, c.P_pad);
    largest_packed = std::max(largest_packed, c.packed_words(d));
    largest_extent = std::max(largest_extent, c.packed_int_extent(d));
  }
  // run() on fewer batches plans its own chunks of at most as many columns: never more packed rows than
  // these.
  if (largest_packed * d.word_bytes() > max_alloc || largest_extent > std::uint64_t(INT_MAX)) {
    throw Error("layer " + to_string(g.input) + " * " + to_string(g.filter) +
                ": the binarized input rows of a " + "chunk need " +
                std::to_string(largest_packed * d.word_bytes()) +
                " bytes, beyond CL_DEVICE_MAX_MEM_ALLOC_SIZE (" + std::to_string(max_alloc) +
                ") or 32-bit pixel indices");
  }

  // run() uploads and downloads batch groups whose buffers fit the allocation limit (and the test budget).
  // Only one image in the layer's own input and output types must fit: run()'s float32 staging is checked
  // by run(), since enqueue() on the caller's buffers never needs it.
  {
    const std::uint64_t image = std::max(m.input_bytes_per_batch(), m.output_bytes_per_batch());
    if (image > max_alloc) {
      throw Error("one image of layer " + to_string(g.input) + " -> " + to_string(g.output) + " needs " +
                  std::to_string(image) +
                  " bytes of device buffer, more than CL_DEVICE_MAX_MEM_ALLOC_SIZE (" +
                  std::to_string(max_alloc) + ")");
    }
    const std::uint64_t per_batch = m.run_staging_per_batch();
    const std::uint64_t limit = test_budget ? std::min(max_alloc, test_budget) : max_alloc;
    const std::uint64_t group = std::max<std::uint64_t>(limit / per_batch, 1);
    m.run_group = static_cast<int>(std::min<std::uint64_t>(group, std::uint64_t(d.N)));
  }

  // The filter in the device layout: filters[w * M_pad + o] in the layer's K order (see im2col_pack.cl):
  // dense, bit j of word w is k = B*w + j; channel-packed, word w = (ky*KW + kx)*Cw + cw holds channels
  // B*cw + j at bit j; unit-packed (packed input), unit u = (ky*KW + kx)*Cw + cw holds channels 32*cw + j at
  // bit j, as half u % (B/32) of word u / (B/32). Tail bits are 0.
  const int tile_m = m.gemm.tile_m();
  // xnor_gemm_bits reads the 32 filter rows of each output word: M_pad a multiple of 32 as well.
  const bool packed_kernel =
      options.output.kind == Output::Kind::Packed && (!m.gemm.packs_in_fused() || options.max_pool);
  m.M_pad = static_cast<int>(round_up(d.C_OUT, packed_kernel ? m.gemm.packed_m_multiple() : tile_m));
  const std::uint64_t filter_words = std::uint64_t(d.Kw) * std::uint64_t(m.M_pad);
  const std::uint64_t filter_bytes = filter_words * d.word_bytes();
  if (filter_bytes > max_alloc) {
    throw Error("the packed filter " + to_string(g.filter) + " needs " + std::to_string(filter_bytes) +
                " bytes, more than CL_DEVICE_MAX_MEM_ALLOC_SIZE (" + std::to_string(max_alloc) + ")");
  }
  std::vector<std::uint64_t> words(static_cast<std::size_t>(filter_words), 0u);
  {
    const int B = d.word_bits;
    const int taps = d.KH * d.KW;
    for (int o = 0; o < d.C_OUT; ++o) {
      const std::int64_t base = std::int64_t(o) * d.K;
      for (int k = 0; k < d.K; ++k) {
        if (!filter.bit(base + k)) continue;
        std::size_t w;
        int bit;
        if (d.unit_packed) {
          const int c = k / taps, tap = k % taps;
          const std::size_t unit = std::size_t(tap) * d.Cw + std::size_t(c / 32);
          w = unit / std::size_t(d.units_per_word());
          bit = static_cast<int>(unit % std::size_t(d.units_per_word())) * 32 + c % 32;
        } else if (d.channel_packed) {
          const int c = k / taps, tap = k % taps;
          w = std::size_t(tap) * d.Cw + std::size_t(c / B);
          bit = c % B;
        } else {
          w = std::size_t(k / B);
          bit = k % B;
        }
        words[w * m.M_pad + o] |= std::uint64_t(1) << bit;
      }
    }
  }
  std::vector<unsigned char> filter_image(static_cast<std::size_t>(filter_bytes));
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (d.word_bits == 64) {
      const cl_ulong w = words[i];
      std::memcpy(filter_image.data() + 8 * i, &w, 8);
    } else {
      const cl_uint w = static_cast<cl_uint>(words[i]);
      std::memcpy(filter_image.data() + 4 * i, &w, 4);
    }
  }
  std::vector<cl_uint> keys(static_cast<std::size_t>(d.C_IN), order_key(0.0f));
  if (!attributes.input_thresholds.empty()) {
    for (int c = 0; c < d.C_IN; ++c) keys[c] = order_key(attributes.input_thresholds[c]);
  }
  // The pad fold's S tables (xnor_gemm.cl): per o, S (the sum of w_real over the pad taps) of every class of
  // border position, [row_classes][column_classes], from o's summed-area table of the sum over c of w_real.
  std::vector<cl_int> wsum;
  if (m.fold.correct) {
    const detail::Border& bd = m.fold.border;
    const int row_classes = bd.oy_lo + 1 + (d.OH - bd.oy_hi);
    const int column_classes = bd.ox_lo + 1 + (d.OW - bd.ox_hi);
    const std::uint64_t s_bytes =
        std::uint64_t(d.C_OUT) * std::uint64_t(row_classes) * std::uint64_t(column_classes) * 4;
    if (s_bytes > max_alloc) {
      throw Error("the pad_value tables of layer " + to_string(g.input) + " * " + to_string(g.filter) +
                  " need " + std::to_string(s_bytes) + " bytes, more than CL_DEVICE_MAX_MEM_ALLOC_SIZE (" +
                  std::to_string(max_alloc) + ")");
    }
    m.fold.row_classes = row_classes;
    m.fold.column_classes = column_classes;
    // The in-bounds taps of output row oy (column ox): [lo, hi), empty as [0, 0). Class `cls` of a dimension
    // with interior [in_lo, in_hi): classes below in_lo are positions, in_lo the interior (every tap), above
    // it positions in_hi + (cls - in_lo - 1).
    auto taps_of = [](int cls, int in_lo, int in_hi, int size, int taps, int stride, int dilation, int pad,
                      int& lo, int& hi) {
      if (cls == in_lo) {
        lo = 0;
        hi = taps;
        return;
      }
      const int o = cls < in_lo ? cls : in_hi + (cls - in_lo - 1);
      const std::int64_t i0 = std::int64_t(o) * stride - pad;
      lo = taps;
      hi = 0;
      for (int k = 0; k < taps; ++k) {
        const std::int64_t i = i0 + std::int64_t(k) * dilation;
        if (i >= 0 && i < size) {
          lo = std::min(lo, k);
          hi = std::max(hi, k + 1);
        }
      }
      if (hi <= lo) lo = hi = 0;
    };
    std::vector<std::array<int, 2>> rows(static_cast<std::size_t>(row_classes));
    std::vector<std::array<int, 2>> columns(static_cast<std::size_t>(column_classes));
    for (int r = 0; r < row_classes; ++r) {
      taps_of(r, bd.oy_lo, bd.oy_hi, d.H, d.KH, d.stride_y, d.dilation_y, d.pad_top, rows[r][0], rows[r][1]);
    }
    for (int x = 0; x < column_classes; ++x) {
      taps_of(x, bd.ox_lo, bd.ox_hi, d.W, d.KW, d.stride_x, d.dilation_x, d.pad_left, columns[x][0],
              columns[x][1]);
    }
    const int taps = d.KH * d.KW;
    const int row = d.KW + 1, table = (d.KH + 1) * row;
    std::vector<cl_int> per_tap(static_cast<std::size_t>(taps));
    std::vector<cl_int> sat(static_cast<std::size_t>(table));
    wsum.assign(std::size_t(d.C_OUT) * std::size_t(row_classes) * std::size_t(column_classes), 0);
    for (int o = 0; o < d.C_OUT; ++o) {
      std::fill(per_tap.begin(), per_tap.end(), 0);
      for (int c = 0; c < d.C_IN; ++c) {
        for (int t = 0; t < taps; ++t) {
          per_tap[t] += filter.bit((std::int64_t(o) * d.C_IN + c) * taps + t) ? 1 : -1;
        }
      }
      std::fill(sat.begin(), sat.end(), 0);
      for (int a = 1; a <= d.KH; ++a) {
        for (int b = 1; b <= d.KW; ++b) {
          sat[a * row + b] = per_tap[(a - 1) * d.KW + (b - 1)] + sat[(a - 1) * row + b] +
                             sat[a * row + b - 1] - sat[(a - 1) * row + b - 1];
        }
      }
      // S = (sum of all taps) - (sum over the in-bounds rectangle).
      cl_int* s = wsum.data() + std::size_t(o) * std::size_t(row_classes) * std::size_t(column_classes);
      for (int r = 0; r < row_classes; ++r) {
        const int ky_lo = rows[r][0], ky_hi = rows[r][1];
        for (int x = 0; x < column_classes; ++x) {
          const int kx_lo = columns[x][0], kx_hi = columns[x][1];
          const int inside = sat[ky_hi * row + kx_hi] - sat[ky_lo * row + kx_hi] - sat[ky_hi * row + kx_lo] +
                             sat[ky_lo * row + kx_lo];
          s[std::size_t(r) * std::size_t(column_classes) + std::size_t(x)] = sat[d.KH * row + d.KW] - inside;
        }
      }
    }
  }

  // The output choice's rules and tables (validated above).
  using Kind = Output::Kind;
  std::vector<cl_float> out_scale, out_bias;
  std::vector<cl_uint> out_keys, out_modes, out_int_count;
  std::vector<cl_int> out_int_lo;
  if (options.output.kind == Kind::ScaleBias) {
    out_scale.assign(options.output.scale.begin(), options.output.scale.end());
    out_bias.assign(options.output.bias.begin(), options.output.bias.end());
    m.epilogue.mode = 1;
    m.gemm_kernel = Impl::GemmKernel::Fused;
  } else if (options.output.kind == Kind::Packed) {
    // Each rule as an interval of order keys (lo, count): the kernels test (key(y) - lo) < count (see
    // fused_rule_bit in cl_kernels/xnor_gemm.cl); key 0 is NaN's, never inside.
    for (const Threshold& r : options.output.thresholds) {
      const cl_uint t = order_key(r.value);
      cl_uint lo = 1, count = 0;
      switch (r.mode) {
        case ThresholdMode::Greater:
          lo = t + 1;  // t <= key(+inf) = 0xff800000: no wrap
          count = 0xffffffffu - t;
          break;
        case ThresholdMode::Less:
          count = t - 1;  // t >= key(-inf) = 0x007fffff: no wrap
          break;
        case ThresholdMode::AlwaysOne:
          count = 0xffffffffu;
          break;
        case ThresholdMode::AlwaysZero:
          break;
      }
      out_keys.push_back(lo);
      out_modes.push_back(count);
      // The same rule over the integer results G in [-K, K] (exact floats, K <= 2^24): the keys of float(G)
      // increase with G, so the accepted G form one interval [first, last], found by binary search.
      const std::int64_t K = d.K;
      auto key_of = [](std::int64_t g) { return order_key(static_cast<float>(g)); };
      std::int64_t first = K + 1, last = -K - 1;
      if (count > 0) {
        const std::uint64_t top = std::uint64_t(lo) + count - 1;  // <= 0xffffffff
        std::int64_t a = -K, b = K + 1;                           // first g with key >= lo
        while (a < b) {
          const std::int64_t mid = a + (b - a) / 2;
          if (key_of(mid) >= lo)
            b = mid;
          else
            a = mid + 1;
        }
        first = a;
        a = -K - 1, b = K;  // last g with key <= top
        while (a < b) {
          const std::int64_t mid = b - (b - a) / 2;
          if (std::uint64_t(key_of(mid)) <= top)
            a = mid;
          else
            b = mid - 1;
        }
        last = a;
      }
      if (first <= last) {
        out_int_lo.push_back(static_cast<cl_int>(first));
        out_int_count.push_back(static_cast<cl_uint>(last - first + 1));
      } else {
        out_int_lo.push_back(0);
        out_int_count.push_back(0);
      }
    }
    // Rows o >= C_OUT up to M_pad: intervals that hold nothing, so xnor_gemm_bits tests all 32 channels of
    // a word as vectors, without a per-channel bound check (its tail bits come out 0).
    out_int_lo.resize(std::size_t(m.M_pad), 0);
    out_int_count.resize(std::size_t(m.M_pad), 0);
    m.epilogue.mode = 2;
    m.gemm_kernel = packed_kernel ? Impl::GemmKernel::Packed : Impl::GemmKernel::Fused;
  }
  m.epilogue.Cw_out = static_cast<int>(packed_words_per_pixel(d.C_OUT));
  const std::uint64_t patch_bytes = std::uint64_t(largest_P_pad) * word_bytes;
  const std::uint64_t packed_bytes = largest_packed * d.word_bytes();
  cl_call(
      [&] {
        m.filters = cl::Buffer(state->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, filter_image.size(),
                               filter_image.data());
        m.threshold_keys =
            cl::Buffer(state->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, keys.size() * 4, keys.data());
        if (m.fold.correct) {
          m.wsum = cl::Buffer(state->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, wsum.size() * 4,
                              wsum.data());
        }
        m.patches = cl::Buffer(state->context, CL_MEM_READ_WRITE, static_cast<std::size_t>(patch_bytes));
        if (packed_bytes > 0) {
          m.packed = cl::Buffer(state->context, CL_MEM_READ_WRITE, static_cast<std::size_t>(packed_bytes));
        }
        if (!out_scale.empty()) {
          m.epilogue.scale = cl::Buffer(state->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                        out_scale.size() * 4, out_scale.data());
          m.epilogue.bias = cl::Buffer(state->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                       out_bias.size() * 4, out_bias.data());
        }
        if (!out_keys.empty()) {
          m.epilogue.keys = cl::Buffer(state->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                       out_keys.size() * 4, out_keys.data());
          m.epilogue.modes = cl::Buffer(state->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                        out_modes.size() * 4, out_modes.data());
          m.epilogue.int_lo = cl::Buffer(state->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                         out_int_lo.size() * 4, out_int_lo.data());
          m.epilogue.int_count = cl::Buffer(state->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                            out_int_count.size() * 4, out_int_count.data());
        }
      },
      "allocating the device buffers of a BinaryConvolution");

  Plan& p = m.plan;
  p.variant = state->variant;
  p.build_options = m.gemm.config().build_options();
  p.tile_m = tile_m;
  p.tile_n = m.gemm.tile_n();
  p.words_per_patch = d.Kw;
  p.word_bits = d.word_bits;
  p.channel_packed = d.channel_packed;
  p.bit_rows = d.bit_rows;
  p.patch_bits = d.K;
  p.chunks = static_cast<int>(m.chunks.size());
  p.input_packed = options.input_packed;
  using GemmKernel = Impl::GemmKernel;
  const char* gemm_name = m.gemm_kernel == GemmKernel::Fused ? detail::XnorGemmLauncher::fused_kernel_name()
                          : m.gemm_kernel == GemmKernel::Packed
                              ? detail::XnorGemmLauncher::packed_kernel_name()
                              : detail::XnorGemmLauncher::kernel_name();
  p.output = options.output.kind == Kind::Float       ? std::string("float32")
             : options.output.kind == Kind::ScaleBias ? std::string("scale_bias (") + gemm_name + ")"
             : options.max_pool                       ? std::string("packed, max-pooled (") + gemm_name + ")"
                                                      : std::string("packed (") + gemm_name + ")";
  for (const Plan::Launch& l : m.pack.launches(
           d, m.chunks.front(), options.input_packed ? detail::InputType::Packed : detail::InputType::F32))
    p.launches.push_back(l);
  p.launches.push_back(m.gemm_kernel == GemmKernel::Packed ? m.gemm.packed_launch(m.chunks.front(), d, m.pool)
                                                           : m.gemm.launch(m.M_pad, m.chunks.front()));
  p.launches.back().kernel = gemm_name;
  p.scratch_bytes = static_cast<std::size_t>(
      filter_bytes + keys.size() * 4 + wsum.size() * 4 + patch_bytes + packed_bytes +
      (out_scale.size() + out_bias.size()) * 4 +
      (out_keys.size() + out_modes.size() + out_int_lo.size() + out_int_count.size()) * 4);

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

// T: float, uint8 or packed words (std::uint32_t); Out: float or packed words (std::uint32_t).
template <class T, class Out>
std::vector<Out> BinaryConvolution::Impl::run(const T* x) {
  constexpr bool words_in = std::is_same<T, std::uint32_t>::value;
  constexpr bool words_out = std::is_same<Out, std::uint32_t>::value;
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
  const std::uint64_t need_in = m.input_bytes_per_batch() * std::uint64_t(m.dims.N);
  const std::uint64_t need_out = m.output_bytes_per_batch() * std::uint64_t(m.dims.N);
  detail::check_enqueue_arguments("BinaryConvolution::enqueue", m.runtime.state()->context,
                                  {input, need_in, m.geometry.input, m.options.input_packed},
                                  {output, need_out, m.output_shape, output_packed()}, false, wait);
  m.last_events.clear();
  return m.enqueue_all(input, output, m.dims.N,
                       m.options.input_packed ? detail::InputType::Packed : detail::InputType::F32, wait);
}

std::vector<StageTime> BinaryConvolution::last_stage_times() const {
  std::vector<StageTime> out;
  if (!impl().runtime.state()->profiling) return out;
  cl_call(
      [&] {
        for (const auto& named_event : impl().last_events) {
          const std::string& name = named_event.first;
          const cl::Event& event = named_event.second;
          event.wait();
          const cl_ulong start = event.getProfilingInfo<CL_PROFILING_COMMAND_START>();
          const cl_ulong end = event.getProfilingInfo<CL_PROFILING_COMMAND_END>();
          const double ms = double(end - start) * 1e-6;
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
