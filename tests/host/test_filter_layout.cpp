// SPDX-License-Identifier: Apache-2.0
// filter_image: the packed filter of random layers in every K layout against the Filter's bits, read back
// word by word and bit by bit through the layout's definition (which patch bit each filter bit meets), tail
// bits and padded rows zero, in blocks of 8 channels (Global) and in one block (Local); and the refusal of a
// filter beyond the allocation limit.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "layer_case.hpp"
#include "ops/binary_convolution/filter_layout.hpp"

using namespace xnorcl;
using detail::LayerDims;
using xnorcl::test::LayerCase;
using xnorcl::test::Rng;

namespace {

std::uint64_t word_at(const std::vector<unsigned char>& image, const LayerDims& d, std::size_t index) {
  if (d.word_bits == 64) {
    std::uint64_t w;
    std::memcpy(&w, image.data() + 8 * index, 8);
    return w;
  }
  std::uint32_t w;
  std::memcpy(&w, image.data() + 4 * index, 4);
  return w;
}

// The filter bit that bit j of patch word w holds for output channel o, or 0 where it holds none (tail bits):
// the inverse of the packing, from the layout's definition.
bool expected_bit(const Filter& f, const LayerDims& d, int o, int w, int j) {
  const int taps = d.KH * d.KW;
  int c = 0, tap = 0;
  if (d.unit_packed) {
    const int unit = w * d.units_per_word() + j / 32;
    tap = unit / d.Cw;
    c = (unit % d.Cw) * 32 + j % 32;
  } else if (d.channel_packed) {
    tap = w / d.Cw;
    c = (w % d.Cw) * d.word_bits + j;
  } else {
    const int k = w * d.word_bits + j;
    if (k >= d.K) return false;
    c = k / taps;
    tap = k % taps;
  }
  if (tap >= taps || c >= d.C_IN) return false;
  return f.bit(o, c, tap / d.KW, tap % d.KW);
}

}  // namespace

TEST_CASE("filter layout: every bit of every word from the Filter's bits, in each K layout",
          "[filter_layout]") {
  Rng rng(4242);
  int layouts[4] = {0, 0, 0, 0};  // dense bit by bit, dense from bit rows, channel-packed, unit-packed
  int blocked = 0, multi_block = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int word_bits = rng.chance(50) ? 32 : 64;
    const LayerCase c = test::random_layer(rng, word_bits, rng.chance(25), 100);
    const LayerDims& d = c.d;
    const int M_pad =
        static_cast<int>(detail::round_up(d.C_OUT, rng.pick(std::vector<int>{1, 4, 8, 32, 64})));
    const bool in_blocks = rng.chance(50);
    INFO(c.text << ", M_pad " << M_pad << (in_blocks ? ", in blocks" : ", one block"));
    ++layouts[d.unit_packed ? 3 : d.channel_packed ? 2 : d.bit_rows ? 1 : 0];
    const int row = detail::filter_row_words(M_pad, d.word_bits, in_blocks);
    REQUIRE(row == (in_blocks ? 8 : detail::filter_row_words(M_pad, d.word_bits, false)));
    REQUIRE(row >= (in_blocks ? 8 : M_pad));
    const int blocks = (M_pad + row - 1) / row;
    blocked += in_blocks;
    multi_block += blocks > 1;
    const std::vector<unsigned char> image = detail::filter_image(c.filter, d, M_pad, row, ~std::uint64_t(0));
    REQUIRE(image.size() ==
            std::size_t(blocks) * std::size_t(d.Kw) * std::size_t(row) * std::size_t(d.word_bits / 8));
    // Compared in one check per layer, naming the first wrong bit; o runs over every slot of every block.
    int ones = 0;
    std::string first_wrong;
    for (int w = 0; w < d.Kw && first_wrong.empty(); ++w) {
      for (int o = 0; o < blocks * row && first_wrong.empty(); ++o) {
        const std::size_t index = std::size_t(o / row) * d.Kw * row + std::size_t(w) * row + o % row;
        const std::uint64_t word = word_at(image, d, index);
        for (int j = 0; j < d.word_bits; ++j) {
          const bool want = o < d.C_OUT && expected_bit(c.filter, d, o, w, j);
          ones += want;
          if (((word >> j) & 1u) != (want ? 1u : 0u)) {
            first_wrong = "word " + std::to_string(w) + " of row " + std::to_string(o) + ", bit " +
                          std::to_string(j) + ": expected " + (want ? "1" : "0");
            break;
          }
        }
      }
    }
    REQUIRE(first_wrong == "");
    // Every filter bit lands somewhere: the image holds as many ones as the filter.
    int filter_ones = 0;
    for (std::int64_t i = 0; i < c.filter.size(); ++i) filter_ones += c.filter.bit(i);
    REQUIRE(ones == filter_ones);
  }
  for (int count : layouts) CHECK(count > 10);
  CHECK(blocked > 100);
  CHECK(blocked < 200);
  CHECK(multi_block > 50);
}

TEST_CASE("filter layout: rows of an even number of 64-byte lines get one line more", "[filter_layout]") {
  struct Row {
    int M_pad, word_bits, words;
  };
  for (const Row r :
       {Row{512, 64, 520}, Row{512, 32, 528}, Row{64, 64, 72}, Row{64, 32, 80}, Row{8, 64, 8},
        Row{16, 32, 16}, Row{24, 64, 24}, Row{4, 64, 4}, Row{48, 32, 48}, Row{32, 64, 40}, Row{40, 64, 40}}) {
    INFO("M_pad " << r.M_pad << ", " << r.word_bits << "-bit words");
    CHECK(detail::filter_row_words(r.M_pad, r.word_bits, false) == r.words);
    CHECK(detail::filter_row_words(r.M_pad, r.word_bits, true) == 8);
  }
}

TEST_CASE("filter layout: a packed filter beyond the allocation limit is refused with its numbers",
          "[filter_layout]") {
  BinaryConvolution::Attributes a;
  const ConvGeometry g = BinaryConvolution::validate(a, {1, 64, 5, 5}, {10, 64, 3, 3});
  const LayerDims d = test::dims_of(g, a, 32, false);
  REQUIRE(d.Kw == 18);
  const Filter f =
      Filter::from_packed(std::vector<std::uint8_t>(720, 0x5a).data(), 720, g.filter, BitOrder::MsbFirst);
  // 18 words of 4 bytes for 16 rows (one block of 16, or two of 8): 1152 bytes; rows padded to 12 in blocks
  // of 8 are two blocks all the same.
  for (int row : {16, 8}) {
    REQUIRE_THROWS_WITH(
        detail::filter_image(f, d, 16, row, 1151),
        "the packed filter 10x64x3x3 needs 1152 bytes, more than CL_DEVICE_MAX_MEM_ALLOC_SIZE (1151)");
    CHECK(detail::filter_image(f, d, 16, row, 1152).size() == 1152);
  }
  CHECK(detail::filter_image(f, d, 12, 8, 1152).size() == 1152);
}
