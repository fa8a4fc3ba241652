// Launches cl_kernels/pad_correction.cl over the border output positions (pad_value other than +1 and -1).
#pragma once

#include <cstdint>
#include <vector>

#include "conv_layout.hpp"
#include "runtime_state.hpp"
#include "xnorcl/binary_convolution.hpp"

namespace xnorcl::detail {

// The interior and the border of a layer's output (computed on the host; an empty interior is allowed).
Border compute_border(const LayerDims& d);

class PadCorrectionLauncher {
 public:
  PadCorrectionLauncher() = default;
  explicit PadCorrectionLauncher(const RuntimeState& state);

  static const char* kernel_name() { return "pad_correction"; }
  // Work-items per launch at most (the global index is 64-bit; launches are split to stay far below 2^32).
  static constexpr std::uint64_t kMaxItemsPerLaunch = std::uint64_t(1) << 30;
  std::vector<Plan::Launch> launches(const Border& b, const LayerDims& d, int batches) const;
  // Rewrites the border positions of `batches` images of output; returns the last launch's event.
  cl::Event enqueue(const cl::CommandQueue& queue, const cl::Buffer& output, const cl::Buffer& wsum, float v,
                    const LayerDims& d, const Border& b, int batches, const std::vector<cl::Event>* wait,
                    std::vector<cl::Event>* all_events);

 private:
  cl::Kernel kernel_;
  std::size_t work_group_ = 1;
};

}  // namespace xnorcl::detail
