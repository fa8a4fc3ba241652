// SPDX-License-Identifier: Apache-2.0
// The device layouts shared by the packing kernel and the GEMM (see the header comments
// of cl_kernels/im2col_pack.cl and cl_kernels/xnor_gemm.cl), and the pieces a layer is split into.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace xnorcl::detail {

// What the packing stage reads: float32 or uint8 NCHW values (binarized with the input thresholds), or packed
// words in the contract layout of include/xnorcl/packed.hpp (a packed-input layer, always channel-packed).
enum class InputType { F32, U8, Packed };

// A validated layer in the int arguments the kernels take.
struct LayerDims {
  int N = 0, C_IN = 0, H = 0, W = 0;
  int C_OUT = 0, KH = 0, KW = 0;
  int stride_y = 1, stride_x = 1, dilation_y = 1, dilation_x = 1;
  int pad_top = 0, pad_left = 0;
  int OH = 0, OW = 0;
  int K = 0;  // bits per patch, C_IN*KH*KW (at most 2^24)
  // Packed words: word_bits per word (the GEMM configuration's); K order dense (c, ky, kx) with
  // Kw = ceil(K / word_bits), or channel-packed (ky, kx, cw) with Cw = ceil(C_IN / word_bits) words per pixel
  // and Kw = KH*KW*Cw (see cl_kernels/im2col_pack.cl; chosen by choose_packing()).
  int word_bits = 32;
  bool channel_packed = false;
  int Cw = 0;
  // A packed input (InputType::Packed) is channel-packed in 32-bit units, the contract's words: K order
  // (ky, kx, cw) with Cw = ceil(C_IN / 32) units per pixel, unit u = (ky*KW + kx)*Cw + cw is half u % 2 of
  // word u / 2 with 64-bit words (a word may span two taps: 32 channels fill 13 words of a 5x5 patch, not
  // 25), the word itself with 32-bit words; Kw = ceil(KH*KW*Cw / units_per_word()). Read straight from the
  // input by im2col_pack_units, no binarized copy.
  bool unit_packed = false;
  int units_per_word() const { return word_bits / 32; }
  // Dense layouts with dilation_x == 1 and KW <= word_bits are built from binarized bit rows of
  // Rw = ceil(W / word_bits) words (row_pack_*, then im2col_pack_rows); other dense layouts bit by bit
  // (im2col_pack_*).
  bool bit_rows = false;
  int Rw = 0;
  int Kw = 0;  // words per patch
  std::uint64_t word_bytes() const { return std::uint64_t(word_bits / 8); }
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
  // Channel-packed and bit-row layouts: the input rows [iy_first, iy_first + iy_count) the chunk's taps can
  // read (clamped to the input), binarized once per chunk.
  int iy_first = 0, iy_count = 0;
  // Words of the binarized input of the chunk ([n_count][iy_count][W][Cw] channel-packed,
  // [n_count][C_IN][iy_count][Rw] bit rows; none for per-bit dense packing) and the largest index of its
  // first dimension(s) the kernels count in 32-bit ints.
  std::uint64_t packed_words(const LayerDims& d) const {
    if (d.unit_packed) return 0;
    if (d.channel_packed)
      return std::uint64_t(n_count) * std::uint64_t(iy_count) * std::uint64_t(d.W) * std::uint64_t(d.Cw);
    if (d.bit_rows)
      return std::uint64_t(n_count) * std::uint64_t(d.C_IN) * std::uint64_t(iy_count) * std::uint64_t(d.Rw);
    return 0;
  }
  std::uint64_t packed_int_extent(const LayerDims& d) const {
    if (d.unit_packed) return 0;
    if (d.channel_packed) return std::uint64_t(n_count) * std::uint64_t(iy_count) * std::uint64_t(d.W);
    if (d.bit_rows)
      return std::max(std::uint64_t(n_count) * std::uint64_t(d.C_IN),
                      std::uint64_t(iy_count) * std::uint64_t(d.Rw));
    return 0;
  }
};

// The K layout of a layer: channel-packed where the channel words waste at most half their bits
// (2*C_IN >= Cw*word_bits: many channels, e.g. ResNet's 64..512 or the paper's 32 with 32-bit words) and
// dense packing from bit rows would not save a quarter of the words; else dense (c, ky, kx) packing (a
// 3-channel first layer; the paper's 32 channels with 64-bit words: 13 words per 5x5 patch instead of 25,
// and the GEMM's time goes with the words), from bit rows where dilation_x == 1 and KW <= word_bits (needs
// d.W, d.KW and d.dilation_x), else bit by bit. A packed input (packed_input) is always unit-packed: its
// words are copied, not binarized. Sets channel_packed, unit_packed, Cw, bit_rows, Rw and Kw.
inline void choose_packing(LayerDims& d, int word_bits, bool packed_input = false) {
  d.word_bits = word_bits;
  d.Rw = (d.W + word_bits - 1) / word_bits;
  if (packed_input) {
    d.channel_packed = d.unit_packed = true;
    d.bit_rows = false;
    d.Cw = (d.C_IN + 31) / 32;
    d.Kw = static_cast<int>((std::int64_t(d.KH) * d.KW * d.Cw + d.units_per_word() - 1) / d.units_per_word());
    return;
  }
  d.unit_packed = false;
  d.Cw = (d.C_IN + word_bits - 1) / word_bits;
  const bool rows_possible = d.dilation_x == 1 && d.KW <= word_bits;
  const std::int64_t dense_words = (std::int64_t(d.K) + word_bits - 1) / word_bits;
  const std::int64_t channel_words = std::int64_t(d.KH) * d.KW * d.Cw;
  d.channel_packed = 2 * std::int64_t(d.C_IN) >= std::int64_t(d.Cw) * word_bits &&
                     !(rows_possible && 4 * dense_words <= 3 * channel_words);
  d.bit_rows = !d.channel_packed && rows_possible;
  d.Kw = d.channel_packed ? d.KH * d.KW * d.Cw : (d.K + word_bits - 1) / word_bits;
}

// The interior of the output (every tap in bounds) is [oy_lo, oy_hi) x [ox_lo, ox_hi), possibly empty; every
// other position is a border position, where the GEMM folds a pad_value other than +-1 into its store.
struct Border {
  int oy_lo = 0, oy_hi = 0, ox_lo = 0, ox_hi = 0;
  std::uint64_t per_plane = 0;  // border positions of one (n, o) plane
};

inline std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

}  // namespace xnorcl::detail
