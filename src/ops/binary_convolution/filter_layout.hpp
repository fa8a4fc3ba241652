// SPDX-License-Identifier: Apache-2.0
// The filter in the device layout: the GEMM xnors filter words against patch words, so the filter must be
// packed in the very K order the packing kernels give the layer's patches (see cl_kernels/im2col_pack.cl),
// once, at construction.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/binary_convolution/conv_layout.hpp"
#include "xnorcl/filter.hpp"

namespace xnorcl::detail {

// The words between word w and word w + 1 of one channel in the GEMM's filter buffer: M_pad (>= C_OUT: the
// GEMM's rows padded to its tile), plus one 64-byte line where M_pad words are an even number of lines. A
// work-item of the Global variant reads TM channels' words of every w, one line per w: at a stride of a
// power-of-two number of lines (M_pad = 512 64-bit words: 4 KiB) every one of those lines falls into the
// same set of a CPU's L1 cache, whose 8 ways then hold 8 of them (Bi-Real Net-18's 512-channel GEMMs ran
// about 10% faster on PoCL, AVX2, with the extra line). An odd number of lines spreads them over every set.
int filter_row_words(int M_pad, int word_bits);

// The bytes of the GEMM's filter buffer: d.Kw words of d.word_bits bits per output channel, word w of channel
// o at filters[w * filter_row_words(M_pad, d.word_bits) + o] (rows from C_OUT on, and the words past M_pad,
// are 0), in host byte order. Dense: bit j of word w is k = B*w + j of the (c, ky, kx) order; channel-packed:
// word w = (ky*KW + kx)*Cw + cw holds channels B*cw + j at bit j; unit-packed (packed input): unit u = (ky*KW
// + kx)*Cw + cw holds channels 32*cw + j at bit j, as half u % (B/32) of word u / (B/32). Bits past C_IN (or
// K) are 0. Throws Error where the buffer would exceed max_alloc (CL_DEVICE_MAX_MEM_ALLOC_SIZE).
std::vector<unsigned char> filter_image(const Filter& filter, const LayerDims& d, int M_pad,
                                        std::uint64_t max_alloc);

}  // namespace xnorcl::detail
