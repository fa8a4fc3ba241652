// SPDX-License-Identifier: Apache-2.0
// Launches cl_kernels/xnor_gemm.cl: the xnor-popcount GEMM of packed filters and patches, written as float
// NCHW, with the pad fold (pad_value other than +-1 where pad taps exist) in its border stores, and its
// output epilogues (scale-and-bias, packed words).
#pragma once

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "ops/binary_convolution/conv_layout.hpp"
#include "ops/binary_convolution/filter_layout.hpp"
#include "runtime/runtime_state.hpp"
#include "xnorcl/binary_convolution.hpp"

namespace xnorcl::detail {

// The interior and the border of a layer's output (computed on the host; an empty interior is allowed).
Border compute_border(const LayerDims& d);

// The pad fold of a layer: with `correct`, the GEMM writes border positions as fma(v, S, G + S), S from the
// per-class tables in `sat` (see cl_kernels/xnor_gemm.cl); without, `sat` is not read.
struct PadFold {
  bool correct = false;
  float v = 0.0f;
  Border border;
  // Of the S table, [C_OUT][row_classes][column_classes] (then the [OH][OW] position classes).
  int row_classes = 0, column_classes = 0;
};

// The output epilogue of xnor_gemm_fused and xnor_gemm_bits (cl_kernels/xnor_gemm.cl): mode 0 float, 1
// scale-and-bias (scale, bias: [C_OUT] float), 2 packed words (keys, modes: [C_OUT] uint, each rule as an
// interval of order keys, lo and count; words per pixel Cw_out), 3 scale-and-bias plus a residual shortcut
// (float NCHW of the output's shape, set per enqueue). In modes 0, 1 and 3 the value is first clamped to
// [clamp_low, clamp_high] (Options::clamp_low/high; -inf, +inf: none); mode 2's rules have the clamp
// composed in on the host.
struct Epilogue {
  int mode = 0;
  float clamp_low = -std::numeric_limits<float>::infinity();
  float clamp_high = std::numeric_limits<float>::infinity();
  cl::Buffer scale, bias, keys, modes;
  cl::Buffer shortcut;           // mode 3
  cl::Buffer int_lo, int_count;  // xnor_gemm_bits: each rule as an interval of integer results G
  int Cw_out = 0;
  // Modes 0, 1 and 3 with Options::also_packed: the stored values' bits under keys/modes go to `bits` too.
  bool also_packed = false;
  cl::Buffer bits;
};

// A max-pool fused into xnor_gemm_bits (BinaryConvolution::Options::max_pool): the resolved window of the
// pooled output [POH, POW]; KH == 0 means none.
struct FusedPool {
  int KH = 0, KW = 0, stride_y = 1, stride_x = 1, pad_top = 0, pad_left = 0, POH = 0, POW = 0;
  // The pooled rows whose windows meet the chunk's output rows (the first chunk of an image also takes
  // those before, the last those after: empty windows are written 0 by whoever has them), as
  // [first, first + count).
  std::pair<int, int> rows_of(const LayerDims& d, const Chunk& c) const;
};

class XnorGemmLauncher {
 public:
  XnorGemmLauncher() = default;
  // The kernels of `program`, built for `config`.
  XnorGemmLauncher(const RuntimeState& state, const cl::Program& program, const GemmConfig& config);

  static const char* kernel_name() { return "xnor_gemm"; }
  static const char* fused_kernel_name() { return "xnor_gemm_fused"; }
  static const char* fused_runs_kernel_name() { return "xnor_gemm_fused_runs"; }
  // The kernel enqueue_fused runs for chunk c: xnor_gemm_fused_runs where every block of TN columns is one
  // run of an image's output positions (the Global variant with TN % 4 == 0, float output only, and a
  // multiple of TN positions per image in the chunk or one image of at least TN positions, whose last block
  // overlaps the one before it), else xnor_gemm_fused.
  const char* fused_kernel_for(const LayerDims& d, const Chunk& c, const Epilogue& epilogue) const;
  static const char* packed_kernel_name() { return "xnor_gemm_bits"; }
  // Which kernel writes packed output: xnor_gemm_fused (its __local flags, one barrier) where the variant is
  // Local and the tile of output channels covers whole words; otherwise xnor_gemm_bits (32 channels per
  // work-item, no __local, no barrier: the Global variant's, PoCL's and Mali's). M_pad must then be a
  // multiple of 32 (packed_m_multiple()).
  bool packs_in_fused() const { return config_.packs_words_in_local(); }
  int packed_m_multiple() const { return std::max(config_.tile_m(), 32); }
  Plan::Launch packed_launch(const Chunk& c, const LayerDims& d, const FusedPool& pool) const;
  int tile_m() const { return config_.tile_m(); }
  int tile_n() const { return config_.tile_n(); }
  const GemmConfig& config() const { return config_; }
  Plan::Launch launch(int M_pad, const Chunk& c) const;
  // The filter buffer's layout these kernels read (filter_row_words, filter_layout.hpp): blocks of 8 channels
  // in the Global variant, one block in the Local one.
  int filter_row(int M_pad) const {
    return filter_row_words(M_pad, config_.word_bits, config_.variant == Variant::Global);
  }
  // filters: filter_image(..., filter_row(M_pad), ...) (filter_layout.hpp); patches: [Kw][c.P_pad]; output:
  // float NCHW of the buffer's batches.
  cl::Event enqueue(const cl::CommandQueue& queue, const cl::Buffer& filters, const cl::Buffer& patches,
                    const cl::Buffer& output, const LayerDims& d, int M_pad, const Chunk& c,
                    const PadFold& fold, const cl::Buffer& sat, const std::vector<cl::Event>* wait);
  // xnor_gemm_fused (created on first use): output is float NCHW for modes 0/1, packed words for mode 2.
  cl::Event enqueue_fused(const cl::CommandQueue& queue, const cl::Buffer& filters, const cl::Buffer& patches,
                          const cl::Buffer& output, const LayerDims& d, int M_pad, const Chunk& c,
                          const PadFold& fold, const cl::Buffer& sat, const Epilogue& epilogue,
                          const std::vector<cl::Event>* wait);
  // xnor_gemm_bits (created on first use): packed words (epilogue mode 2) into output, max-pooled where
  // pool.KH > 0 (chunks run in order: a window cut by a chunk boundary is ORed into by the next chunk).
  cl::Event enqueue_packed(const cl::CommandQueue& queue, const cl::Buffer& filters,
                           const cl::Buffer& patches, const cl::Buffer& output, const LayerDims& d, int M_pad,
                           const Chunk& c, const PadFold& fold, const cl::Buffer& sat,
                           const Epilogue& epilogue, const FusedPool& pool,
                           const std::vector<cl::Event>* wait);

 private:
  bool all_runs(const LayerDims& d, const Chunk& c, const Epilogue& epilogue) const;

  cl::Kernel kernel_, fused_, fused_runs_, packed_;
  cl::Program program_;
  cl::Device device_;
  GemmConfig config_;
};

// The GEMM of a layer of shape class `shape_class` in its configuration: the tuning table's where it runs
// here, else the layer's default (layer_gemm_default; `stores_floats`: its output is not packed; `rows` by
// `columns`: output channels by output positions of all images). `point` receives what it ran and the
// candidates a search tries.
XnorGemmLauncher tuned_gemm(const RuntimeState& state, const std::string& shape_class, bool stores_floats,
                            std::int64_t rows, std::int64_t columns, TuningPoint& point);
// The tuning point of a planned layer (its plan's shape class and configuration).
TuningPoint gemm_tuning_point(const RuntimeState& state, const Plan& plan);

}  // namespace xnorcl::detail
