// The device layouts shared by the packing kernel, the GEMM and the pad correction (see the header comments
// of cl_kernels/im2col_pack.cl and cl_kernels/xnor_gemm.cl), and the pieces a layer is split into.
#pragma once

#include <cstddef>
#include <cstdint>

namespace xnorcl::detail {

// A validated layer in the int arguments the kernels take.
struct LayerDims {
  int N = 0, C_IN = 0, H = 0, W = 0;
  int C_OUT = 0, KH = 0, KW = 0;
  int stride_y = 1, stride_x = 1, dilation_y = 1, dilation_x = 1;
  int pad_top = 0, pad_left = 0;
  int OH = 0, OW = 0;
  int K = 0;   // bits per patch, C_IN*KH*KW (at most 2^24)
  int Kw = 0;  // 32-bit words per patch, ceil(K/32)
  std::uint64_t input_per_batch() const { return std::uint64_t(C_IN) * std::uint64_t(H) * std::uint64_t(W); }
  std::uint64_t output_plane() const { return std::uint64_t(OH) * std::uint64_t(OW); }
  std::uint64_t output_per_batch() const { return std::uint64_t(C_OUT) * output_plane(); }
};

// Output positions of rows [oy0, oy0 + rows) of batches [n0, n0 + n_count) (batch indices relative to the
// buffers the chunk is enqueued on); P = n_count*rows*OW columns of the patch matrix, padded to P_pad.
struct Chunk {
  int n0 = 0, n_count = 0;
  int oy0 = 0, rows = 0;
  int P = 0, P_pad = 0;
};

// The interior of the output (every tap in bounds) is [oy_lo, oy_hi) x [ox_lo, ox_hi), possibly empty; every
// other position is a border position that the pad correction rewrites.
struct Border {
  int oy_lo = 0, oy_hi = 0, ox_lo = 0, ox_hi = 0;
  std::uint64_t per_plane = 0;  // border positions of one (n, o) plane
};

inline std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

}  // namespace xnorcl::detail
