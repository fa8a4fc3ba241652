// SPDX-License-Identifier: Apache-2.0
// The pad fold of random small layers: whether it applies (pad_value other than +-1 and pad taps, as
// validate() sees them), and each S table entry against a direct count, for every output position, of the
// real filter values over the taps that fall outside the input, looked up through the class of the position
// that the tables list.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "layer_case.hpp"
#include "ops/binary_convolution/pad_fold.hpp"

using namespace xnorcl;
using detail::LayerDims;
using detail::PadFold;
using xnorcl::test::LayerCase;
using xnorcl::test::Rng;

namespace {

// S of output channel o at (oy, ox): the sum of w_real (+-1) over the taps outside the input.
int pad_tap_sum(const Filter& f, const LayerDims& d, int o, int oy, int ox) {
  int s = 0;
  for (int c = 0; c < d.C_IN; ++c) {
    for (int ky = 0; ky < d.KH; ++ky) {
      for (int kx = 0; kx < d.KW; ++kx) {
        const int iy = oy * d.stride_y - d.pad_top + ky * d.dilation_y;
        const int ix = ox * d.stride_x - d.pad_left + kx * d.dilation_x;
        if (iy < 0 || iy >= d.H || ix < 0 || ix >= d.W) s += f.bit(o, c, ky, kx) ? 1 : -1;
      }
    }
  }
  return s;
}

// The class of a position in one dimension (border_class in cl_kernels/xnor_gemm.cl).
int class_of(int o, int lo, int hi) {
  return o < lo ? o : (o < hi ? lo : lo + 1 + (o - hi));
}

}  // namespace

TEST_CASE("pad fold: the S tables against a direct count of each output position's pad taps", "[pad_fold]") {
  Rng rng(99);
  int folded = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const LayerCase c = test::random_layer(rng, rng.chance(50) ? 32 : 64, rng.chance(20), 40);
    const LayerDims& d = c.d;
    const float v = c.attributes.pad_value;
    INFO(c.text << ", pad_value " << v);
    CHECK(detail::pad_bit(v) == (v == 1.0f ? 1u : 0u));
    PadFold fold = detail::pad_fold(d, v);
    REQUIRE(fold.v == v);
    REQUIRE(fold.correct == (v != 1.0f && v != -1.0f && c.g.has_pad_taps));
    const std::vector<cl_int> s = detail::pad_fold_tables(c.filter, d, fold, ~std::uint64_t(0), c.g);
    if (!fold.correct) {
      REQUIRE(s.empty());
      REQUIRE(fold.row_classes == 0);
      REQUIRE(fold.column_classes == 0);
      continue;
    }
    ++folded;
    const detail::Border& b = fold.border;
    REQUIRE(fold.row_classes == b.oy_lo + 1 + (d.OH - b.oy_hi));
    REQUIRE(fold.column_classes == b.ox_lo + 1 + (d.OW - b.ox_hi));
    const std::size_t classes = std::size_t(fold.row_classes) * fold.column_classes;
    REQUIRE(s.size() == std::size_t(d.C_OUT) * classes + std::size_t(d.OH) * d.OW);
    const cl_int* position_class = s.data() + std::size_t(d.C_OUT) * classes;
    std::string first_wrong;
    int border_positions = 0;
    for (int o = 0; o < d.C_OUT && first_wrong.empty(); ++o) {
      for (int oy = 0; oy < d.OH && first_wrong.empty(); ++oy) {
        for (int ox = 0; ox < d.OW; ++ox) {
          const int want = pad_tap_sum(c.filter, d, o, oy, ox);
          const std::size_t cls = std::size_t(class_of(oy, b.oy_lo, b.oy_hi)) * fold.column_classes +
                                  class_of(ox, b.ox_lo, b.ox_hi);
          // The runs read each position's class from the table, interior positions included.
          if (o == 0) REQUIRE(position_class[std::size_t(oy) * d.OW + ox] == cl_int(cls));
          const int got = s[std::size_t(o) * classes + cls];
          const bool interior = oy >= b.oy_lo && oy < b.oy_hi && ox >= b.ox_lo && ox < b.ox_hi;
          if (interior) {
            REQUIRE(want == 0);  // the interior has no pad taps
            REQUIRE(got == 0);   // so the runs' fold changes nothing there
            continue;
          }
          if (o == 0) ++border_positions;
          if (got != want) {
            first_wrong = "o " + std::to_string(o) + " oy " + std::to_string(oy) + " ox " +
                          std::to_string(ox) + ": S " + std::to_string(got) + ", pad taps sum to " +
                          std::to_string(want);
            break;
          }
        }
      }
    }
    REQUIRE(first_wrong == "");
    if (first_wrong.empty()) REQUIRE(std::uint64_t(border_positions) == b.per_plane);
  }
  CHECK(folded > 50);
}

TEST_CASE("pad fold: tables beyond the allocation limit are refused with their numbers", "[pad_fold]") {
  BinaryConvolution::Attributes a;
  a.pads_begin = {1, 1};
  a.pads_end = {1, 1};
  a.pad_value = 0.5f;
  const ConvGeometry g = BinaryConvolution::validate(a, {1, 2, 6, 6}, {3, 2, 3, 3});
  const LayerDims d = test::dims_of(g, a, 32, false);
  const Filter f =
      Filter::from_packed(std::vector<std::uint8_t>(7, 0xa5).data(), 7, g.filter, BitOrder::MsbFirst);
  PadFold fold = detail::pad_fold(d, a.pad_value);
  REQUIRE(fold.correct);
  // Rows: above, interior, below (likewise columns): 3 channels of 3x3 ints, then the classes of the 6x6
  // output positions: 252 bytes.
  REQUIRE_THROWS_WITH(detail::pad_fold_tables(f, d, fold, 251, g),
                      "the pad_value tables of layer 1x2x6x6 * 3x2x3x3 need 252 bytes, more than "
                      "CL_DEVICE_MAX_MEM_ALLOC_SIZE (251)");
  CHECK(detail::pad_fold_tables(f, d, fold, 252, g).size() == 27 + 36);
  CHECK(fold.row_classes == 3);
  CHECK(fold.column_classes == 3);
}
