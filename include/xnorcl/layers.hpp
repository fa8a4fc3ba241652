// SPDX-License-Identifier: Apache-2.0
// The layers around BinaryConvolution that a binarized network needs: thresholding into packed bits (folded
// batch-norm + sign), binary and float max-pooling, and the binary fully-connected layer. Each runs on a
// Runtime's queue with device buffers (enqueue, chained by events) or host memory (run), has a host reference
// computed exactly as the device computes, and refuses bad input with InvalidArgument before any device work.
//
// Thread safety as BinaryConvolution: one object from one thread at a time; each owns its cl::Kernel objects.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "xnorcl/binary_convolution.hpp"  // StageTime
#include "xnorcl/filter.hpp"
#include "xnorcl/opencl.hpp"
#include "xnorcl/packed.hpp"
#include "xnorcl/pool.hpp"
#include "xnorcl/runtime.hpp"
#include "xnorcl/shape.hpp"

namespace xnorcl {

namespace detail {
struct LayerAccess;  // the graph steps' view of a layer's tuned work-group size
}

// ---- thresholding --------------------------------------------------------------------------------------

// Float NCHW [N, C, H, W] -> packed bits (xnorcl/packed.hpp) with one Threshold rule per channel (empty:
// every channel Greater 0). Bitwise equal to pack_activations on every device.
class ThresholdPack {
 public:
  ThresholdPack(const Runtime& runtime, const Shape& shape, const std::vector<Threshold>& rules);
  ~ThresholdPack();
  ThresholdPack(ThresholdPack&&) noexcept;
  ThresholdPack& operator=(ThresholdPack&&) noexcept;

  const Shape& shape() const;  // the logical shape of input and output
  std::size_t input_bytes() const;
  std::size_t output_bytes() const;  // packed_word_count(shape) * 4
  // input: float32 NCHW; output: packed words. Returns the event of its kernel.
  cl::Event enqueue(const cl::Buffer& input, const cl::Buffer& output,
                    const std::vector<cl::Event>* wait = nullptr);
  std::vector<std::uint32_t> run(const float* y);

 private:
  friend struct detail::LayerAccess;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- max-pooling (OpenVINO MaxPool-1) -------------------------------------------------------------------

// RoundingType, PoolAttributes, PoolGeometry and validate_pool: xnorcl/pool.hpp.

// Max of +-1 values is the OR of their bits: packed in, packed out (same channel count).
class BinaryMaxPool {
 public:
  BinaryMaxPool(const Runtime& runtime, const PoolAttributes& attributes, const Shape& input);
  ~BinaryMaxPool();
  BinaryMaxPool(BinaryMaxPool&&) noexcept;
  BinaryMaxPool& operator=(BinaryMaxPool&&) noexcept;
  const PoolGeometry& geometry() const;
  Shape output_shape() const;
  cl::Event enqueue(const cl::Buffer& input, const cl::Buffer& output,
                    const std::vector<cl::Event>* wait = nullptr);
  std::vector<std::uint32_t> run(const std::uint32_t* words);

 private:
  friend struct detail::LayerAccess;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Float32 NCHW max-pool. The maximum is taken on order keys of the bit patterns (exact on every device; -0
// and +0 tie and the first in row-major window order wins); NaN never wins. Bitwise equal to the reference.
// The Global variant computes runs of 16 outputs of a row per work-item as vector lanes (maxpool_f32_runs;
// maxpool_f32_runs_native_compare, the same bits by float compares, where the device keeps subnormals), the
// Local variant one output per work-item (maxpool_f32).
class MaxPool {
 public:
  MaxPool(const Runtime& runtime, const PoolAttributes& attributes, const Shape& input);
  ~MaxPool();
  MaxPool(MaxPool&&) noexcept;
  MaxPool& operator=(MaxPool&&) noexcept;
  const PoolGeometry& geometry() const;
  Shape output_shape() const;
  const char* kernel() const;  // "maxpool_f32_runs", "maxpool_f32_runs_native_compare" or "maxpool_f32"
  cl::Event enqueue(const cl::Buffer& input, const cl::Buffer& output,
                    const std::vector<cl::Event>* wait = nullptr);
  std::vector<float> run(const float* x);

 private:
  friend struct detail::LayerAccess;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::vector<std::uint32_t> reference_binary_maxpool(const std::uint32_t* words, const Shape& input,
                                                    const PoolAttributes& attributes);
std::vector<float> reference_maxpool(const float* x, const Shape& input, const PoolAttributes& attributes);

// ---- binary fully-connected ------------------------------------------------------------------------------

// Packed input of logical shape [N, C, H, W] times binary weights of shape [O, C, H, W] (a Filter: the weight
// of output o for input (c, y, x) is element ((o*C + c)*H + y)*W + x, i.e. the NCHW flatten c*H*W + y*W + x).
// With K = C*H*W and P the number of agreeing bits, the float output [N, O, 1, 1] is 2P - K (exact integers,
// K <= 2^24). With output thresholds (one rule per output, or empty for Greater 0) the output is packed
// [N, O, 1, 1] instead (the float result thresholded on the device).
// Local variant (Runtime::variant()): each dot product is split over a work-group, partial popcounts reduced
// in __local memory (Khan, Huttunen, Boutellier, EUSIPCO 2018, section 3.2). Global variant: one work-item
// per output, no __local memory.
class BinaryFullyConnected {
 public:
  BinaryFullyConnected(const Runtime& runtime, const Shape& input, const Filter& weights,
                       const std::optional<std::vector<Threshold>>& output_thresholds = std::nullopt);
  ~BinaryFullyConnected();
  BinaryFullyConnected(BinaryFullyConnected&&) noexcept;
  BinaryFullyConnected& operator=(BinaryFullyConnected&&) noexcept;
  Shape input_shape() const;
  Shape output_shape() const;  // [N, O, 1, 1]
  bool packed_output() const;
  // input: packed words; output: float32 [N, O] or packed words.
  cl::Event enqueue(const cl::Buffer& input, const cl::Buffer& output,
                    const std::vector<cl::Event>* wait = nullptr);
  std::vector<float> run(const std::uint32_t* words);                 // float output only
  std::vector<std::uint32_t> run_packed(const std::uint32_t* words);  // packed output only
  // Device time per kernel of the last enqueue or run: binary_fc, then threshold_pack for a packed output
  // (empty without profiling).
  std::vector<StageTime> last_stage_times() const;

 private:
  friend struct detail::LayerAccess;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// 2P - K per output, from the bits themselves (independent of the device's weight layout).
std::vector<float> reference_binary_fully_connected(const std::uint32_t* words, const Shape& input,
                                                    const Filter& weights);

}  // namespace xnorcl
