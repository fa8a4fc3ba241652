// SPDX-License-Identifier: Apache-2.0
#include "ops/binary_convolution/filter_layout.hpp"

#include <cstring>
#include <string>

#include "xnorcl/error.hpp"
#include "xnorcl/opencl.hpp"

namespace xnorcl::detail {
namespace {

// Word w, bit `bit` of the packed filter holding bit k of a patch (k in the (c, ky, kx) order of the Filter).
void word_and_bit(const LayerDims& d, int k, std::size_t& w, int& bit) {
  const int B = d.word_bits;
  const int taps = d.KH * d.KW;
  if (d.unit_packed) {
    const int c = k / taps, tap = k % taps;
    const std::size_t unit = std::size_t(tap) * d.Cw + std::size_t(c / 32);
    w = unit / std::size_t(d.units_per_word());
    bit = static_cast<int>(unit % std::size_t(d.units_per_word())) * 32 + c % 32;
  } else if (d.channel_packed) {
    const int c = k / taps, tap = k % taps;
    w = std::size_t(tap) * d.Cw + std::size_t(c / B);
    bit = c % B;
  } else {
    w = std::size_t(k / B);
    bit = k % B;
  }
}

}  // namespace

int filter_row_words(int M_pad, int word_bits, bool in_blocks) {
  if (in_blocks) return kGemmFilterBlock;
  const int line_words = 512 / word_bits;
  const int lines = (M_pad + line_words - 1) / line_words;
  return lines % 2 == 0 ? M_pad + line_words : M_pad;
}

std::vector<unsigned char> filter_image(const Filter& filter, const LayerDims& d, int M_pad, int row,
                                        std::uint64_t max_alloc) {
  const std::uint64_t blocks = (std::uint64_t(M_pad) + std::uint64_t(row) - 1) / std::uint64_t(row);
  const std::uint64_t block_words = std::uint64_t(d.Kw) * std::uint64_t(row);
  const std::uint64_t filter_words = blocks * block_words;
  const std::uint64_t filter_bytes = filter_words * d.word_bytes();
  if (filter_bytes > max_alloc) {
    throw Error("the packed filter " + xnorcl::to_string(filter.shape()) + " needs " +
                std::to_string(filter_bytes) + " bytes, more than CL_DEVICE_MAX_MEM_ALLOC_SIZE (" +
                std::to_string(max_alloc) + ")");
  }
  std::vector<std::uint64_t> words(static_cast<std::size_t>(filter_words), 0u);
  for (int o = 0; o < d.C_OUT; ++o) {
    const std::int64_t base = std::int64_t(o) * d.K;
    const std::size_t start = std::size_t(o / row) * block_words + std::size_t(o % row);
    for (int k = 0; k < d.K; ++k) {
      if (!filter.bit(base + k)) continue;
      std::size_t w;
      int bit;
      word_and_bit(d, k, w, bit);
      words[start + w * std::size_t(row)] |= std::uint64_t(1) << bit;
    }
  }
  std::vector<unsigned char> image(static_cast<std::size_t>(filter_bytes));
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (d.word_bits == 64) {
      const cl_ulong w = words[i];
      std::memcpy(image.data() + 8 * i, &w, 8);
    } else {
      const cl_uint w = static_cast<cl_uint>(words[i]);
      std::memcpy(image.data() + 4 * i, &w, 4);
    }
  }
  return image;
}

}  // namespace xnorcl::detail
