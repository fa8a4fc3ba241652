// SPDX-License-Identifier: Apache-2.0
// The filter in the device layout: the GEMM xnors filter words against patch words, so the filter must be
// packed in the very K order the packing kernels give the layer's patches (see cl_kernels/im2col_pack.cl),
// once, at construction.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/binary_convolution/conv_layout.hpp"
#include "runtime/device_profile.hpp"
#include "xnorcl/filter.hpp"

namespace xnorcl::detail {

// The words between word w and word w + 1 of one channel in the GEMM's filter buffer, which holds the
// channels in blocks of that many channels, each block k-major (filter_image).
// - in_blocks (the Global variant): kGemmFilterBlock (8). A work-item reads the words of TM <= 8
//   channels, one block, front to back: one stream, which a CPU's prefetcher follows. With one k-major
//   matrix each step of K was a row of M_pad words further (4 KiB at 512 channels: a new page per step,
//   which the prefetchers do not cross). On PoCL (Intel Xeon, AVX-512, 2 cores), both layouts in turn in
//   one process: the float-output GEMMs of Bi-Real Net-18 and the binary ResNet-18 17-29% less time at 512
//   channels, 2-8% at 256, within 3% at 64 and 128; xnor_gemm_bits (32 channels, four adjacent lines per
//   word of K either way) within 4% (docs/benchmarks.md).
// - otherwise (the Local variant, whose work-groups stage rows of a tile with adjacent work-items reading
//   adjacent channels): one block of M_pad, plus one 64-byte line where M_pad words are an even number of
//   lines. At a stride of a power-of-two number of lines every line a work-item reads falls into the same set
//   of a CPU's L1 cache, whose 8 ways then hold 8 of them; an odd number spreads them over every set.
int filter_row_words(int M_pad, int word_bits, bool in_blocks);

// The bytes of the GEMM's filter buffer: d.Kw words of d.word_bits bits per output channel, in blocks of
// `row` channels (row = filter_row_words()): word w of channel o at filters[(o / row) * d.Kw * row + w * row
// + o % row], ceil(M_pad / row) blocks (channels from C_OUT on, and the words past M_pad, are 0), in host
// byte order. Dense: bit j of word w is k = B*w + j of the (c, ky, kx) order; channel-packed: word w = (ky*KW
// + kx)*Cw + cw holds channels B*cw + j at bit j; unit-packed (packed input): unit u = (ky*KW + kx)*Cw + cw
// holds channels 32*cw + j at bit j, as half u % (B/32) of word u / (B/32). Bits past C_IN (or K) are 0.
// Throws Error where the buffer would exceed max_alloc (CL_DEVICE_MAX_MEM_ALLOC_SIZE).
std::vector<unsigned char> filter_image(const Filter& filter, const LayerDims& d, int M_pad, int row,
                                        std::uint64_t max_alloc);

}  // namespace xnorcl::detail
