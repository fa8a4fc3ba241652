// SPDX-License-Identifier: Apache-2.0
#include "ops/binary_convolution/im2col_pack.hpp"

#include <array>
#include <vector>

#include "runtime/cl_call.hpp"
#include "runtime/launch.hpp"

namespace xnorcl::detail {

Im2colPackLauncher::Im2colPackLauncher(const RuntimeState& state)
    : work_group_(state.pack_work_group),
      runs_(state.pack_in_runs),
      compare_floats_(state.floats_compare_exactly) {
  f32_ = make_kernel(state.im2col_pack, kernel_name(false), state.device, work_group_);
  u8_ = make_kernel(state.im2col_pack, kernel_name(true), state.device, work_group_);
  channel_f32_ = make_kernel(state.im2col_pack, kernel_name(false, true, runs_, compare_floats_),
                             state.device, work_group_);
  channel_u8_ = make_kernel(state.im2col_pack, kernel_name(true, true, runs_), state.device, work_group_);
  words_ = make_kernel(state.im2col_pack, words_kernel_name(runs_), state.device, work_group_);
  row_f32_ = make_kernel(state.im2col_pack, row_kernel_name(false), state.device, work_group_);
  row_u8_ = make_kernel(state.im2col_pack, row_kernel_name(true), state.device, work_group_);
  rows_ = make_kernel(state.im2col_pack, rows_kernel_name(), state.device, work_group_);
  units_ = make_kernel(state.im2col_pack, packed_input_kernel_name(), state.device, work_group_);
  patches_f32_ =
      make_kernel(state.im2col_pack, patches_kernel_name(false, compare_floats_), state.device, work_group_);
  patches_u8_ = make_kernel(state.im2col_pack, patches_kernel_name(true, false), state.device, work_group_);
}

const char* Im2colPackLauncher::patches_kernel_name(bool uint8_input, bool compare_floats) {
  if (uint8_input) return "channel_pack_patches_u8";
  return compare_floats ? "channel_pack_patches_f32_native_compare" : "channel_pack_patches_f32";
}

bool Im2colPackLauncher::patches_in_one_launch(const LayerDims& d, InputType input) const {
  const std::int64_t pad_right = std::int64_t(d.KW - 1) * d.dilation_x - d.pad_left;  // OW == W at stride 1
  return runs_ && d.channel_packed && input != InputType::Packed && d.stride_x == 1 && d.stride_y == 1 &&
         d.OW == d.W && d.pad_left < d.W && pad_right < d.W;
}

// The most scalars a packing kernel takes (im2col_pack_rows, im2col_pack_words and im2col_pack_units: 21).
constexpr std::size_t kMaxPackScalars = 24;

// channel_pack_patches_*'s work-items after the pixel runs: one per output line of the chunk and kernel row
// (the pad taps), then one for the zero columns.
static std::int64_t patch_pad_items(const LayerDims& d, const Chunk& c) {
  return std::int64_t(c.n_count) * c.rows * d.KH;
}

// channel_pack_*'s work-items along dimension 0: runs of kChannelPackRun consecutive pixels of one image's
// chunk rows (the last run of an image may be shorter).
std::int64_t Im2colPackLauncher::channel_pack_runs(const LayerDims& d, const Chunk& c) {
  const std::int64_t per_image = std::int64_t(c.iy_count) * d.W;
  return std::int64_t(c.n_count) * ((per_image + kChannelPackRun - 1) / kChannelPackRun);
}

// channel_pack_pixel_*'s work-items along dimension 0: the pixels of the chunk's rows of every image.
std::int64_t Im2colPackLauncher::channel_pack_pixels(const LayerDims& d, const Chunk& c) {
  return std::int64_t(c.n_count) * c.iy_count * d.W;
}

// im2col_pack_rows's and im2col_pack_words's runs: kOutputRun consecutive output columns of one output row
// (the last run of a row may be shorter).
std::int64_t Im2colPackLauncher::output_runs(const LayerDims& d, const Chunk& c) {
  return std::int64_t(c.n_count) * c.rows * ((d.OW + kOutputRun - 1) / kOutputRun);
}

const char* Im2colPackLauncher::kernel_name(bool uint8_input, bool channel_packed, bool runs,
                                            bool compare_floats) {
  if (channel_packed && runs && !uint8_input)
    return compare_floats ? "channel_pack_f32_native_compare" : "channel_pack_f32";
  if (channel_packed && runs) return "channel_pack_u8";
  if (channel_packed) return uint8_input ? "channel_pack_pixel_u8" : "channel_pack_pixel_f32";
  return uint8_input ? "im2col_pack_u8" : "im2col_pack_f32";
}

std::vector<Plan::Launch> Im2colPackLauncher::launches(const LayerDims& d, const Chunk& c,
                                                       InputType input) const {
  const bool uint8_input = input == InputType::U8;
  const auto wg = static_cast<std::int64_t>(work_group_);
  std::vector<Plan::Launch> out;
  Plan::Launch l;
  l.local = {work_group_, 1};
  if (d.bit_rows) {
    l.kernel = row_kernel_name(uint8_input);
    l.global = {static_cast<std::size_t>(round_up(std::int64_t(c.iy_count) * d.Rw, wg)),
                static_cast<std::size_t>(std::int64_t(c.n_count) * d.C_IN)};
    out.push_back(l);
    l.kernel = rows_kernel_name();
    // One more work-item than runs: it writes the zero columns [P, P_pad).
    l.global = {static_cast<std::size_t>(round_up(output_runs(d, c) + 1, wg)), 1};
    out.push_back(l);
    return out;
  }
  if (!d.channel_packed) {
    l.kernel = kernel_name(uint8_input);
    l.global = {static_cast<std::size_t>(round_up(c.P_pad, wg)), static_cast<std::size_t>(d.Kw)};
    out.push_back(l);
    return out;
  }
  if (input == InputType::Packed) {
    // One more work-item than runs: it writes the zero columns [P, P_pad).
    l.kernel = packed_input_kernel_name();
    l.global = {static_cast<std::size_t>(round_up(output_runs(d, c) + 1, wg)),
                static_cast<std::size_t>(d.Kw)};
    out.push_back(l);
    return out;
  }
  if (patches_in_one_launch(d, input)) {
    l.kernel = patches_kernel_name(uint8_input, compare_floats_);
    l.global = {static_cast<std::size_t>(round_up(channel_pack_runs(d, c) + patch_pad_items(d, c) + 1, wg)),
                static_cast<std::size_t>(d.Cw)};
    out.push_back(l);
    return out;
  }
  l.kernel = kernel_name(uint8_input, true, runs_, compare_floats_);
  l.global = {
      static_cast<std::size_t>(round_up(runs_ ? channel_pack_runs(d, c) : channel_pack_pixels(d, c), wg)),
      static_cast<std::size_t>(d.Cw)};
  out.push_back(l);
  l.kernel = words_kernel_name(runs_);
  if (runs_) {
    // One more work-item than runs: it writes the zero columns [P, P_pad).
    l.global = {static_cast<std::size_t>(round_up(output_runs(d, c) + 1, wg)),
                static_cast<std::size_t>(d.KH)};
  } else {
    l.global = {static_cast<std::size_t>(round_up(c.P_pad, wg)), static_cast<std::size_t>(d.Kw)};
  }
  out.push_back(l);
  return out;
}

cl::Event Im2colPackLauncher::enqueue(const cl::CommandQueue& queue, InputType input_type,
                                      const cl::Buffer& input, const cl::Buffer& packed,
                                      const cl::Buffer& patches, const cl::Buffer& threshold_keys,
                                      const LayerDims& d, const Chunk& c, cl_uint pad_bit,
                                      const std::vector<cl::Event>* wait,
                                      std::vector<std::pair<std::string, cl::Event>>& events) {
  const std::vector<Plan::Launch> ls = launches(d, c, input_type);
  const bool uint8_input = input_type == InputType::U8;
  auto run = [&](cl::Kernel& k, const Plan::Launch& l, const std::vector<cl::Event>* wait_list) {
    cl::Event e;
    const auto gate = launch_gate();
    queue.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(l.global[0], l.global[1]),
                               cl::NDRange(l.local[0], l.local[1]), wait_list, &e);
    events.emplace_back(l.kernel, e);
    return e;
  };
  // Sets a kernel's arguments in order, the buffers and then its scalars, each as 32 bits (the kernels' int
  // and uint fields alike), as one argument: the struct of the kernel's X-macro list (im2col_pack.cl), whose
  // fields are these values in this order. And launches it.
  auto launch = [&](cl::Kernel& k, const Plan::Launch& l, const std::vector<cl::Event>* wait_list,
                    std::initializer_list<const cl::Buffer*> buffers,
                    std::initializer_list<std::int64_t> scalars) {
    std::array<cl_int, kMaxPackScalars> values{};  // on the stack: this runs at every launch
    std::size_t count = 0;
    for (std::int64_t v : scalars) values.at(count++) = static_cast<cl_int>(v);
    return cl_call(
        [&] {
          cl_uint i = 0;
          for (const cl::Buffer* b : buffers) k.setArg(i++, *b);
          k.setArg(i++, count * sizeof(cl_int), values.data());
          return run(k, l, wait_list);
        },
        std::string("enqueueing ") + l.kernel);
  };
  const std::int64_t runs = output_runs(d, c);
  const std::int64_t runs_per_row = runs / (std::int64_t(c.n_count) * c.rows);
  if (d.bit_rows) {
    const std::vector<cl::Event> after(
        1, launch(uint8_input ? row_u8_ : row_f32_, ls[0], wait, {&input, &packed, &threshold_keys},
                  {d.C_IN, d.H, d.W, d.Rw, c.n0, c.iy_first, c.iy_count, pad_bit}));
    return launch(rows_, ls[1], &after, {&packed, &patches},
                  {d.C_IN,     d.H,        d.KH, d.KW,    d.stride_y, d.stride_x,   d.dilation_y,
                   d.pad_top,  d.pad_left, d.OW, d.Kw,    c.oy0,      c.rows,       c.iy_first,
                   c.iy_count, d.Rw,       c.P,  c.P_pad, pad_bit,    runs_per_row, runs});
  }
  if (!d.channel_packed) {
    return launch(uint8_input ? u8_ : f32_, ls[0], wait, {&input, &patches, &threshold_keys},
                  {d.C_IN, d.H, d.W, d.KH, d.KW, d.stride_y, d.stride_x, d.dilation_y, d.dilation_x,
                   d.pad_top, d.pad_left, d.OW, d.K, c.n0, c.oy0, c.rows, c.P, c.P_pad, pad_bit});
  }
  if (input_type == InputType::Packed) {
    const int units = d.KH * d.KW * d.Cw;
    return launch(units_, ls[0], wait, {&input, &patches},
                  {d.C_IN,       d.H,       d.W,        d.KW,    d.stride_y, d.stride_x,   d.dilation_y,
                   d.dilation_x, d.pad_top, d.pad_left, d.OW,    d.Cw,       units,        c.n0,
                   c.oy0,        c.rows,    c.P,        c.P_pad, pad_bit,    runs_per_row, runs});
  }
  if (patches_in_one_launch(d, input_type)) {
    const auto pack_runs = channel_pack_runs(d, c);
    return launch(uint8_input ? patches_u8_ : patches_f32_, ls[0], wait, {&input, &patches, &threshold_keys},
                  {d.C_IN,
                   d.H,
                   d.W,
                   d.Cw,
                   c.n0,
                   c.iy_first,
                   c.iy_count,
                   pack_runs / c.n_count,
                   pack_runs,
                   d.KH,
                   d.KW,
                   d.dilation_y,
                   d.dilation_x,
                   d.pad_top,
                   d.pad_left,
                   c.oy0,
                   c.rows,
                   c.P,
                   c.P_pad,
                   pad_bit,
                   patch_pad_items(d, c)});
  }
  cl::Kernel& channel = uint8_input ? channel_u8_ : channel_f32_;
  if (!runs_) {
    const std::vector<cl::Event> after(
        1, launch(channel, ls[0], wait, {&input, &packed, &threshold_keys},
                  {d.C_IN, d.H, d.W, d.Cw, c.n0, c.iy_first, c.iy_count, channel_pack_pixels(d, c)}));
    return launch(words_, ls[1], &after, {&packed, &patches},
                  {d.C_IN, d.H, d.W, d.KW, d.stride_y, d.stride_x, d.dilation_y, d.dilation_x, d.pad_top,
                   d.pad_left, d.OW, d.Cw, c.oy0, c.rows, c.iy_first, c.iy_count, c.P, c.P_pad, pad_bit});
  }
  const auto pack_runs = channel_pack_runs(d, c);
  const std::vector<cl::Event> after(
      1, launch(channel, ls[0], wait, {&input, &packed, &threshold_keys},
                {d.C_IN, d.H, d.W, d.Cw, c.n0, c.iy_first, c.iy_count, pack_runs / c.n_count, pack_runs}));
  return launch(words_, ls[1], &after, {&packed, &patches},
                {d.C_IN,       d.H,        d.W,        d.KW,    d.stride_y, d.stride_x,   d.dilation_y,
                 d.dilation_x, d.pad_top,  d.pad_left, d.OW,    d.Cw,       c.oy0,        c.rows,
                 c.iy_first,   c.iy_count, c.P,        c.P_pad, pad_bit,    runs_per_row, runs});
}

}  // namespace xnorcl::detail
