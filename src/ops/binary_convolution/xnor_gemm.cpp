// SPDX-License-Identifier: Apache-2.0
#include "ops/binary_convolution/xnor_gemm.hpp"

#include <algorithm>

#include "ops/binary_convolution/filter_layout.hpp"
#include "runtime/cl_call.hpp"
#include "runtime/launch.hpp"

namespace xnorcl::detail {
namespace {

// The GEMM kernels' scalar arguments as one struct passed by value, field for field the kernels' structs of
// the same names in snake_case (cl_kernels/xnor_gemm.cl): PoCL pays about 0.2 us per kernel argument at each
// launch. 64-bit fields first, then 32-bit ones: the same layout in C and OpenCL C.
struct GemmScalars {  // the part every GEMM with an epilogue reads: the layer, the chunk, the pad fold
  cl_ulong OHW, row_offset;
  cl_int M, filter_row, Kw, K, P, P_pad, per_image, n0, correct;
  cl_float v;
  cl_int OW, oy0, oy_lo, oy_hi, ox_lo, ox_hi, row_classes, column_classes, Cw_out;
};
static_assert(sizeof(GemmScalars) == 2 * 8 + 19 * 4 + 4, "GemmScalars: 8-byte aligned, no inner padding");
struct FusedGemmScalars {
  GemmScalars gemm;
  cl_int out_mode;
  cl_float clamp_lo, clamp_hi;
  cl_int also_packed;
};
struct BitsGemmScalars {
  GemmScalars gemm;
  cl_int pool_KH, pool_KW, pool_sy, pool_sx, pool_pt, pool_pl, POH, POW, OH, py_first, py_count;
};
static_assert(sizeof(FusedGemmScalars) == sizeof(GemmScalars) + 4 * 4, "FusedGemmScalars: no padding");
static_assert(sizeof(BitsGemmScalars) == sizeof(GemmScalars) + 11 * 4 + 4, "BitsGemmScalars: 8-byte aligned");

GemmScalars gemm_scalars(const LayerDims& d, int filter_row, const Chunk& c, const PadFold& fold,
                         int Cw_out) {
  const Border& b = fold.border;
  return {d.output_plane(),
          std::uint64_t(c.oy0) * std::uint64_t(d.OW),
          d.C_OUT,
          filter_row,
          d.Kw,
          d.K,
          c.P,
          c.P_pad,
          c.rows * d.OW,
          c.n0,
          fold.correct ? 1 : 0,
          fold.v,
          d.OW,
          c.oy0,
          b.oy_lo,
          b.oy_hi,
          b.ox_lo,
          b.ox_hi,
          fold.row_classes,
          fold.column_classes,
          Cw_out};
}

// Output indices o in [0, out) whose taps start + o*stride + k*dilation (k in [0, taps)) all lie in [0,
// size): [lo, hi) with 0 <= lo <= hi <= out.
void interior(int size, int taps, int stride, int dilation, int pad_begin, int out, int& lo, int& hi) {
  // o*stride - pad_begin >= 0  <=>  o >= ceil(pad_begin / stride)
  const std::int64_t first = (std::int64_t(pad_begin) + stride - 1) / stride;
  // o*stride - pad_begin + (taps-1)*dilation <= size-1
  const std::int64_t numerator = std::int64_t(size) - 1 + pad_begin - std::int64_t(taps - 1) * dilation;
  const std::int64_t last_plus_one = numerator >= 0 ? numerator / stride + 1 : 0;
  lo = static_cast<int>(std::min<std::int64_t>(first, out));
  hi = static_cast<int>(std::clamp<std::int64_t>(last_plus_one, lo, out));
}

}  // namespace

Border compute_border(const LayerDims& d) {
  Border b;
  interior(d.H, d.KH, d.stride_y, d.dilation_y, d.pad_top, d.OH, b.oy_lo, b.oy_hi);
  interior(d.W, d.KW, d.stride_x, d.dilation_x, d.pad_left, d.OW, b.ox_lo, b.ox_hi);
  const std::uint64_t full_rows = std::uint64_t(b.oy_lo) + std::uint64_t(d.OH - b.oy_hi);
  const std::uint64_t sides = std::uint64_t(b.ox_lo) + std::uint64_t(d.OW - b.ox_hi);
  b.per_plane = full_rows * std::uint64_t(d.OW) + std::uint64_t(b.oy_hi - b.oy_lo) * sides;
  return b;
}

XnorGemmLauncher::XnorGemmLauncher(const RuntimeState& state, const cl::Program& program,
                                   const GemmConfig& config)
    : config_(config) {
  kernel_ = make_kernel(program, kernel_name(), state.device, config_.work_group_size());
  program_ = program;
  device_ = state.device;
}

namespace {

std::function<std::vector<std::string>(TuneSearch)> gemm_candidate_texts(const RuntimeState& state,
                                                                         const GemmConfig& base) {
  return [base, profile = state.profile, cap = state.work_group_cap](TuneSearch search) {
    std::vector<std::string> texts;
    for (const GemmConfig& c : gemm_candidates(base, profile, cap, search)) texts.push_back(to_text(c));
    return texts;
  };
}

}  // namespace

XnorGemmLauncher tuned_gemm(const RuntimeState& state, const std::string& shape_class, bool stores_floats,
                            std::int64_t rows, std::int64_t columns, TuningPoint& point) {
  const GemmConfig base =
      layer_gemm_default(state.gemm, state.profile, state.work_group_cap, stores_floats, rows, columns);
  const auto parse = [&](const std::string& text) {
    // The defaults may lie outside the searched ranges (small work-group caps).
    if (text == to_text(base)) return std::optional<GemmConfig>(base);
    if (text == to_text(state.gemm)) return std::optional<GemmConfig>(state.gemm);
    return parse_gemm_config(text, base);
  };
  const auto accept = [&](const std::string& text) {
    const std::optional<GemmConfig> c = parse(text);
    return c && gemm_config_fits(*c, state.profile, state.work_group_cap);
  };
  point = choose_config(state, shape_class, to_text(base), accept, gemm_candidate_texts(state, base));
  if (point.config == to_text(state.gemm)) return XnorGemmLauncher(state, state.xnor_gemm, state.gemm);
  const GemmConfig c = *parse(point.config);
  const std::vector<const char*> kernels = {XnorGemmLauncher::kernel_name(),
                                            XnorGemmLauncher::fused_kernel_name(),
                                            XnorGemmLauncher::packed_kernel_name()};
  if (const auto p = state.program_variant("xnor_gemm.cl", c.build_options(), kernels, c.work_group_size()))
    return XnorGemmLauncher(state, p->program, c);
  if (point.tuned)
    warn(state, "the tuned configuration '" + point.config + "' of " + shape_class +
                    " exceeds this device's work-group or local memory limits for its kernels; using the "
                    "default");
  // The runtime's own program was built and checked at create().
  point.config = point.default_config = to_text(state.gemm);
  point.tuned = false;
  return XnorGemmLauncher(state, state.xnor_gemm, state.gemm);
}

TuningPoint gemm_tuning_point(const RuntimeState& state, const Plan& plan) {
  TuningPoint p;
  p.shape_class = plan.shape_class;
  p.default_config = plan.default_configuration;
  p.config = plan.configuration;
  p.tuned = plan.tuned;
  const std::optional<GemmConfig> base = plan.default_configuration == to_text(state.gemm)
                                             ? std::optional<GemmConfig>(state.gemm)
                                             : parse_gemm_config(plan.default_configuration, state.gemm);
  p.candidates = gemm_candidate_texts(state, base ? *base : state.gemm);
  return p;
}

Plan::Launch XnorGemmLauncher::launch(int M_pad, const Chunk& c) const {
  Plan::Launch l;
  l.kernel = kernel_name();
  l.global = {static_cast<std::size_t>(c.P_pad / config_.tn), static_cast<std::size_t>(M_pad / config_.tm)};
  l.local = {static_cast<std::size_t>(config_.wg), static_cast<std::size_t>(config_.wg)};
  return l;
}

cl::Event XnorGemmLauncher::enqueue(const cl::CommandQueue& queue, const cl::Buffer& filters,
                                    const cl::Buffer& patches, const cl::Buffer& output, const LayerDims& d,
                                    int M_pad, const Chunk& c, const PadFold& fold, const cl::Buffer& sat,
                                    const std::vector<cl::Event>* wait) {
  const Plan::Launch l = launch(M_pad, c);
  return cl_call(
      [&] {
        cl_uint i = 0;
        kernel_.setArg(i++, filters);
        kernel_.setArg(i++, patches);
        kernel_.setArg(i++, output);
        for (int v : {d.C_OUT, filter_row(M_pad), d.Kw, d.K, c.P, c.P_pad, c.rows * d.OW, c.n0}) {
          kernel_.setArg(i++, static_cast<cl_int>(v));
        }
        kernel_.setArg(i++, static_cast<cl_ulong>(d.output_plane()));
        kernel_.setArg(i++, static_cast<cl_ulong>(std::uint64_t(c.oy0) * std::uint64_t(d.OW)));
        kernel_.setArg(i++, static_cast<cl_int>(fold.correct ? 1 : 0));
        kernel_.setArg(i++, static_cast<cl_float>(fold.v));
        // Without the fold the table is never read: any valid buffer will do (the filters).
        kernel_.setArg(i++, fold.correct ? sat : filters);
        const Border& b = fold.border;
        for (int v :
             {d.OW, c.oy0, b.oy_lo, b.oy_hi, b.ox_lo, b.ox_hi, fold.row_classes, fold.column_classes}) {
          kernel_.setArg(i++, static_cast<cl_int>(v));
        }
        cl::Event e;
        const auto gate = launch_gate();
        queue.enqueueNDRangeKernel(kernel_, cl::NullRange, cl::NDRange(l.global[0], l.global[1]),
                                   cl::NDRange(l.local[0], l.local[1]), wait, &e);
        return e;
      },
      "enqueueing xnor_gemm");
}

bool XnorGemmLauncher::all_runs(const LayerDims& d, const Chunk& c, const Epilogue& e) const {
  // One image of at least tn positions: the last block overlaps the one before it (see the kernel).
  const std::int64_t per_image = std::int64_t(c.rows) * d.OW;
  const bool whole_blocks = per_image % config_.tn == 0 || (c.P == per_image && c.P >= config_.tn);
  return config_.variant == Variant::Global && config_.tn % 4 == 0 && whole_blocks && e.mode != 2 &&
         !e.also_packed;
}

const char* XnorGemmLauncher::fused_kernel_for(const LayerDims& d, const Chunk& c, const Epilogue& e) const {
  return all_runs(d, c, e) ? fused_runs_kernel_name() : fused_kernel_name();
}

cl::Event XnorGemmLauncher::enqueue_fused(const cl::CommandQueue& queue, const cl::Buffer& filters,
                                          const cl::Buffer& patches, const cl::Buffer& output,
                                          const LayerDims& d, int M_pad, const Chunk& c, const PadFold& fold,
                                          const cl::Buffer& sat, const Epilogue& e,
                                          const std::vector<cl::Event>* wait) {
  cl::Kernel& kernel = all_runs(d, c, e) ? fused_runs_ : fused_;
  if (!kernel())
    kernel = make_kernel(program_, fused_kernel_for(d, c, e), device_, config_.work_group_size());
  Plan::Launch l = launch(M_pad, c);
  const FusedGemmScalars scalars{gemm_scalars(d, filter_row(M_pad), c, fold, e.Cw_out), e.mode, e.clamp_low,
                                 e.clamp_high, e.also_packed ? 1 : 0};
  return cl_call(
      [&] {
        cl_uint i = 0;
        kernel.setArg(i++, filters);
        kernel.setArg(i++, patches);
        // y is written in modes 0/1/3, words in mode 2 (and with also_packed); a buffer that is not written
        // gets one the kernel never writes (the filters).
        kernel.setArg(i++, e.mode == 2 ? filters : output);
        kernel.setArg(i++, e.mode == 2 ? output : e.also_packed ? e.bits : filters);
        // Buffers a mode does not read: any valid buffer (the filters); without the fold the table is never
        // read.
        kernel.setArg(i++, fold.correct ? sat : filters);
        const bool scales = e.mode == 1 || e.mode == 3;
        kernel.setArg(i++, scales ? e.scale : filters);
        kernel.setArg(i++, scales ? e.bias : filters);
        const bool rules = e.mode == 2 || e.also_packed;
        kernel.setArg(i++, rules ? e.keys : filters);
        kernel.setArg(i++, rules ? e.modes : filters);
        kernel.setArg(i++, e.mode == 3 ? e.shortcut : filters);
        kernel.setArg(i++, sizeof(scalars), &scalars);
        cl::Event ev;
        const auto gate = launch_gate();
        queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(l.global[0], l.global[1]),
                                   cl::NDRange(l.local[0], l.local[1]), wait, &ev);
        return ev;
      },
      "enqueueing xnor_gemm_fused");
}

std::pair<int, int> FusedPool::rows_of(const LayerDims& d, const Chunk& c) const {
  // Pooled row py's window covers output rows [py*stride_y - pad_top, + KH).
  const std::int64_t s = stride_y, end = std::int64_t(c.oy0) + c.rows;
  std::int64_t first = 0, last = POH;  // [first, last)
  if (c.oy0 > 0) {
    // First py with py*s - pad_top + KH > oy0.
    const std::int64_t need = std::int64_t(c.oy0) + pad_top - KH;  // py*s > need
    first = need < 0 ? 0 : need / s + 1;
  }
  if (end < d.OH) {
    // Past the last py with py*s - pad_top < end.
    last = (end + pad_top + s - 1) / s;
  }
  first = std::clamp<std::int64_t>(first, 0, POH);
  last = std::clamp<std::int64_t>(last, first, POH);
  return {static_cast<int>(first), static_cast<int>(last - first)};
}

Plan::Launch XnorGemmLauncher::packed_launch(const Chunk& c, const LayerDims& d,
                                             const FusedPool& pool) const {
  Plan::Launch l;
  l.kernel = packed_kernel_name();
  const std::int64_t group = static_cast<std::int64_t>(config_.work_group_size());
  const std::int64_t items =
      pool.KH > 0 ? std::int64_t(c.n_count) * pool.rows_of(d, c).second * pool.POW : std::int64_t(c.P_pad);
  // One work-item per output word (M_pad may hold more rows: a Local tile of 64 channels).
  l.global = {static_cast<std::size_t>(std::max<std::int64_t>((items + group - 1) / group * group, group)),
              static_cast<std::size_t>((d.C_OUT + 31) / 32)};
  l.local = {config_.work_group_size(), 1};
  return l;
}

cl::Event XnorGemmLauncher::enqueue_packed(const cl::CommandQueue& queue, const cl::Buffer& filters,
                                           const cl::Buffer& patches, const cl::Buffer& output,
                                           const LayerDims& d, int M_pad, const Chunk& c, const PadFold& fold,
                                           const cl::Buffer& sat, const Epilogue& e, const FusedPool& pool,
                                           const std::vector<cl::Event>* wait) {
  if (!packed_()) packed_ = make_kernel(program_, packed_kernel_name(), device_, config_.work_group_size());
  const Plan::Launch l = packed_launch(c, d, pool);
  const std::pair<int, int> pooled_rows = pool.KH > 0 ? pool.rows_of(d, c) : std::pair<int, int>(0, 0);
  const BitsGemmScalars scalars{gemm_scalars(d, filter_row(M_pad), c, fold, e.Cw_out),
                                pool.KH,
                                pool.KW,
                                pool.stride_y,
                                pool.stride_x,
                                pool.pad_top,
                                pool.pad_left,
                                pool.POH,
                                pool.POW,
                                d.OH,
                                pooled_rows.first,
                                pooled_rows.second};
  return cl_call(
      [&] {
        cl_uint i = 0;
        packed_.setArg(i++, filters);
        packed_.setArg(i++, patches);
        packed_.setArg(i++, output);
        packed_.setArg(i++, fold.correct ? sat : filters);
        packed_.setArg(i++, e.keys);
        packed_.setArg(i++, e.modes);
        packed_.setArg(i++, e.int_lo);
        packed_.setArg(i++, e.int_count);
        packed_.setArg(i++, sizeof(scalars), &scalars);
        cl::Event ev;
        const auto gate = launch_gate();
        queue.enqueueNDRangeKernel(packed_, cl::NullRange, cl::NDRange(l.global[0], l.global[1]),
                                   cl::NDRange(l.local[0], l.local[1]), wait, &ev);
        return ev;
      },
      "enqueueing xnor_gemm_bits");
}

}  // namespace xnorcl::detail
