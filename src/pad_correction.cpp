#include "pad_correction.hpp"

#include <algorithm>

#include "cl_call.hpp"
#include "launch.hpp"

namespace xnorcl::detail {
namespace {

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

PadCorrectionLauncher::PadCorrectionLauncher(const RuntimeState& state)
    : work_group_(state.correction_work_group) {
  kernel_ = make_kernel(state.pad_correction, kernel_name(), state.device, work_group_);
}

std::vector<Plan::Launch> PadCorrectionLauncher::launches(const Border& b, const LayerDims& /*d*/,
                                                          int batches) const {
  std::vector<Plan::Launch> out;
  const std::uint64_t count = b.per_plane * std::uint64_t(batches);  // positions; C_OUT planes each
  const std::uint64_t step = kMaxItemsPerLaunch / work_group_ * work_group_;
  for (std::uint64_t first = 0; first < count; first += step) {
    Plan::Launch l;
    l.kernel = kernel_name();
    const std::uint64_t items = std::min(step, count - first);
    l.global = {static_cast<std::size_t>(
                    round_up(static_cast<std::int64_t>(items), static_cast<std::int64_t>(work_group_))),
                1};
    l.local = {work_group_, 1};
    out.push_back(l);
  }
  return out;
}

cl::Event PadCorrectionLauncher::enqueue(const cl::CommandQueue& queue, const cl::Buffer& output,
                                         const cl::Buffer& wsum, float v, const LayerDims& d, const Border& b,
                                         int batches, const std::vector<cl::Event>* wait,
                                         std::vector<cl::Event>* all_events) {
  const std::uint64_t count = b.per_plane * std::uint64_t(batches);  // positions; C_OUT planes each
  const std::vector<Plan::Launch> ls = launches(b, d, batches);
  const std::uint64_t step = kMaxItemsPerLaunch / work_group_ * work_group_;
  return cl_call(
      [&] {
        cl_uint i = 0;
        kernel_.setArg(i++, output);
        kernel_.setArg(i++, wsum);
        kernel_.setArg(i++, v);
        for (int value : {d.C_OUT, d.H, d.W, d.KH, d.KW, d.stride_y, d.stride_x, d.dilation_y, d.dilation_x,
                          d.pad_top, d.pad_left, d.OH, d.OW, b.oy_lo, b.oy_hi, b.ox_lo, b.ox_hi}) {
          kernel_.setArg(i++, static_cast<cl_int>(value));
        }
        const cl_uint first_index = i++;
        kernel_.setArg(i++, static_cast<cl_ulong>(count));
        cl::Event last;
        std::vector<cl::Event> previous;
        const std::vector<cl::Event>* wait_list = wait;
        for (std::size_t n = 0; n < ls.size(); ++n) {
          kernel_.setArg(first_index, static_cast<cl_ulong>(n * step));
          queue.enqueueNDRangeKernel(kernel_, cl::NullRange, cl::NDRange(ls[n].global[0]),
                                     cl::NDRange(ls[n].local[0]), wait_list, &last);
          if (all_events) all_events->push_back(last);
          previous.assign(1, last);
          wait_list = &previous;
        }
        return last;
      },
      "enqueueing pad_correction");
}

}  // namespace xnorcl::detail
