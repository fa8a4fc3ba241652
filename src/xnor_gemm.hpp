// Launches cl_kernels/xnor_gemm.cl: the xnor-popcount GEMM of packed filters and patches, written as float
// NCHW.
#pragma once

#include <vector>

#include "conv_layout.hpp"
#include "runtime_state.hpp"
#include "xnorcl/binary_convolution.hpp"

namespace xnorcl::detail {

class XnorGemmLauncher {
 public:
  XnorGemmLauncher() = default;
  explicit XnorGemmLauncher(const RuntimeState& state);

  static const char* kernel_name() { return "xnor_gemm"; }
  int tile_m() const { return config_.tile_m(); }
  int tile_n() const { return config_.tile_n(); }
  const GemmConfig& config() const { return config_; }
  Plan::Launch launch(int M_pad, const Chunk& c) const;
  // filters: [Kw][M_pad]; patches: [Kw][c.P_pad]; output: float NCHW of the buffer's batches.
  cl::Event enqueue(const cl::CommandQueue& queue, const cl::Buffer& filters, const cl::Buffer& patches,
                    const cl::Buffer& output, const LayerDims& d, int M_pad, const Chunk& c,
                    const std::vector<cl::Event>* wait);

 private:
  cl::Kernel kernel_;
  GemmConfig config_;
};

}  // namespace xnorcl::detail
