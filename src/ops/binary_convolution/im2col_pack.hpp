// SPDX-License-Identifier: Apache-2.0
// Launches cl_kernels/im2col_pack.cl: binarizes the input and writes the packed k-major patch matrix, in the
// layer's layout (dense from bit rows: row_pack_* then im2col_pack_rows; dense bit by bit (dilation_x > 1):
// one launch of im2col_pack_*; channel-packed: channel_pack_* then im2col_pack_words in vector runs on CPU
// devices, or one launch of channel_pack_patches_* at stride 1 where OW == W, channel_pack_pixel_* then
// im2col_pack_word a word per work-item elsewhere (RuntimeState::pack_in_runs); a packed input, unit-packed:
// one launch of im2col_pack_units).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ops/binary_convolution/conv_layout.hpp"
#include "runtime/runtime_state.hpp"
#include "xnorcl/binary_convolution.hpp"

namespace xnorcl::detail {

class Im2colPackLauncher {
 public:
  Im2colPackLauncher() = default;
  // Creates this object's own kernels from the runtime's program; throws if a kernel's
  // CL_KERNEL_WORK_GROUP_SIZE is below the program's local size.
  explicit Im2colPackLauncher(const RuntimeState& state);

  // The kernel that reads X (the one every run of the layout enqueues first); `runs`: the channel-packed
  // layout's vector runs (RuntimeState::pack_in_runs), else its word per work-item; `compare_floats`: runs
  // of floats binarized by float compares (RuntimeState::floats_compare_exactly), else by order keys.
  static const char* kernel_name(bool uint8_input, bool channel_packed = false, bool runs = true,
                                 bool compare_floats = false);
  // channel_pack_patches_*: the channel-packed layout's two launches in one (vector runs, stride 1, OW == W;
  // see patches_in_one_launch).
  static const char* patches_kernel_name(bool uint8_input, bool compare_floats);
  // Whether the channel-packed layout's runs write the patch matrix themselves (channel_pack_patches_*):
  // stride 1 and rows that keep their width (OW == W), so that a pixel's tap positions are a constant
  // shift of its own position.
  bool patches_in_one_launch(const LayerDims& d, InputType input) const;
  static const char* packed_input_kernel_name() { return "im2col_pack_units"; }
  static const char* words_kernel_name(bool runs = true) {
    return runs ? "im2col_pack_words" : "im2col_pack_word";
  }
  static const char* row_kernel_name(bool uint8_input) {
    return uint8_input ? "row_pack_u8" : "row_pack_f32";
  }
  static const char* rows_kernel_name() { return "im2col_pack_rows"; }
  // Pixels per channel_pack_* work-item (PACK_RUN in cl_kernels/im2col_pack.cl).
  static constexpr int kChannelPackRun = 16;
  static std::int64_t channel_pack_runs(const LayerDims& d, const Chunk& c);
  static std::int64_t channel_pack_pixels(const LayerDims& d, const Chunk& c);
  // Output columns per im2col_pack_rows, im2col_pack_words and im2col_pack_units work-item (ROWS_RUN and
  // WORDS_RUN in cl_kernels/im2col_pack.cl).
  static constexpr int kOutputRun = 16;
  static std::int64_t output_runs(const LayerDims& d, const Chunk& c);
  std::vector<Plan::Launch> launches(const LayerDims& d, const Chunk& c,
                                     InputType input = InputType::F32) const;
  // Packs the chunk's patches (channel-packed layouts in two launches go through `packed`,
  // [n_count][iy_count][W][Cw] words,
  // bit-row layouts through `packed` as [n_count][C_IN][iy_count][Rw] words);
  // a packed input (InputType::Packed, unit-packed layouts only) is read straight into the patches by
  // im2col_pack_units; pad_bit is the bit of every pad tap (1 only for pad_value +1). Appends (kernel,
  // event) of each launch to `events`; returns the last event.
  cl::Event enqueue(const cl::CommandQueue& queue, InputType input_type, const cl::Buffer& input,
                    const cl::Buffer& packed, const cl::Buffer& patches, const cl::Buffer& threshold_keys,
                    const LayerDims& d, const Chunk& c, cl_uint pad_bit, const std::vector<cl::Event>* wait,
                    std::vector<std::pair<std::string, cl::Event>>& events);

 private:
  cl::Kernel f32_, u8_, channel_f32_, channel_u8_, words_, row_f32_, row_u8_, rows_, units_, patches_f32_,
      patches_u8_;
  std::size_t work_group_ = 1;
  bool runs_ = true;             // RuntimeState::pack_in_runs when this object was made
  bool compare_floats_ = false;  // RuntimeState::floats_compare_exactly when this object was made
};

}  // namespace xnorcl::detail
