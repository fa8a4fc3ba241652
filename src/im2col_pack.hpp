// Launches cl_kernels/im2col_pack.cl: binarizes the input and writes the packed k-major patch matrix.
#pragma once

#include <vector>

#include "conv_layout.hpp"
#include "runtime_state.hpp"
#include "xnorcl/binary_convolution.hpp"

namespace xnorcl::detail {

class Im2colPackLauncher {
 public:
  Im2colPackLauncher() = default;
  // Creates this object's own kernels from the runtime's program; throws if a kernel's
  // CL_KERNEL_WORK_GROUP_SIZE is below the program's local size.
  explicit Im2colPackLauncher(const RuntimeState& state);

  static const char* kernel_name(bool uint8_input);
  Plan::Launch launch(const LayerDims& d, const Chunk& c, bool uint8_input = false) const;
  // Packs the chunk's patches; pad_bit is the bit of every pad tap (1 only for pad_value +1).
  cl::Event enqueue(const cl::CommandQueue& queue, bool uint8_input, const cl::Buffer& input,
                    const cl::Buffer& patches, const cl::Buffer& threshold_keys, const LayerDims& d,
                    const Chunk& c, cl_uint pad_bit, const std::vector<cl::Event>* wait);

 private:
  cl::Kernel f32_, u8_;
  std::size_t work_group_ = 1;
};

}  // namespace xnorcl::detail
