// SPDX-License-Identifier: Apache-2.0
// layer_dims: a validated geometry in the kernels' int arguments, the K layout picked for the word size, and
// the refusal of a dimension beyond 32-bit indices; fused_pool: the resolved window and pooled shape.
#include <catch2/catch.hpp>

#include "ops/binary_convolution/layer_dims.hpp"
#include "xnorcl/xnorcl.hpp"

using namespace xnorcl;

TEST_CASE("layer_dims: the geometry's dimensions, strides, dilations and leading pads", "[layer_dims]") {
  BinaryConvolution::Attributes a;
  a.strides = {2, 1};
  a.dilations = {1, 3};
  a.pads_begin = {1, 2};
  a.pads_end = {0, 2};
  const ConvGeometry g = BinaryConvolution::validate(a, {2, 20, 9, 11}, {5, 20, 3, 2});
  const detail::LayerDims d = detail::layer_dims(g, a, 64, false);
  CHECK(d.N == 2);
  CHECK(d.C_IN == 20);
  CHECK(d.H == 9);
  CHECK(d.W == 11);
  CHECK(d.C_OUT == 5);
  CHECK(d.KH == 3);
  CHECK(d.KW == 2);
  CHECK(d.stride_y == 2);
  CHECK(d.stride_x == 1);
  CHECK(d.dilation_y == 1);
  CHECK(d.dilation_x == 3);
  CHECK(d.pad_top == 1);
  CHECK(d.pad_left == 2);
  CHECK(d.OH == 4);   // (9 + 1 - 3) / 2 + 1
  CHECK(d.OW == 12);  // 11 + 4 - 3
  CHECK(d.K == 120);
  CHECK(d.word_bits == 64);
  CHECK_FALSE(d.channel_packed);  // 20 channels waste more than half of a 64-bit word
  CHECK_FALSE(d.bit_rows);        // dilation_x 3
  CHECK(d.Kw == 2);               // ceil(120 / 64)
  const detail::LayerDims p = detail::layer_dims(g, a, 64, true);
  CHECK(p.unit_packed);
  CHECK(p.Cw == 1);
  CHECK(p.Kw == 3);  // 6 taps of one unit, 2 units per word
}

TEST_CASE("layer_dims: a dimension beyond INT_MAX is refused with its name and value", "[layer_dims]") {
  BinaryConvolution::Attributes a;
  ConvGeometry g;
  g.input = {1, 1, 1, std::int64_t(1) << 31};
  g.filter = {1, 1, 1, 1};
  g.output = g.input;
  REQUIRE_THROWS_AS(detail::layer_dims(g, a, 32, false), InvalidArgument);
  REQUIRE_THROWS_WITH(
      detail::layer_dims(g, a, 32, false),
      "W = 2147483648 is beyond what the kernels index with 32-bit integers (at most 2147483647)");
}

TEST_CASE("fused_pool: the window, leading pads and pooled shape; a pool that does not fit names the output",
          "[layer_dims]") {
  PoolAttributes p;
  p.kernel = {2, 3};
  p.strides = {2, 2};
  Shape pooled{};
  const detail::FusedPool f = detail::fused_pool(p, {1, 8, 6, 7}, pooled);
  CHECK(f.KH == 2);
  CHECK(f.KW == 3);
  CHECK(f.stride_y == 2);
  CHECK(f.stride_x == 2);
  CHECK(f.pad_top == 0);
  CHECK(f.pad_left == 0);
  CHECK(f.POH == 3);
  CHECK(f.POW == 3);
  CHECK(pooled == Shape{1, 8, 3, 3});
  p.kernel = {9, 3};
  REQUIRE_THROWS_AS(detail::fused_pool(p, {1, 8, 6, 7}, pooled), InvalidArgument);
  REQUIRE_THROWS_WITH(detail::fused_pool(p, {1, 8, 6, 7}, pooled),
                      Catch::StartsWith("BinaryConvolution: Options::max_pool on the output 1x8x6x7: "));
}
