// SPDX-License-Identifier: Apache-2.0
// BinaryConvolution::validate: OpenVINO's shape cases, hand-derived strided and dilated cases, and one test
// per refusal of the shape rules. Expected values are worked out by hand in the comments.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "xnorcl/xnorcl.hpp"

using Catch::Contains;
using xnorcl::AutoPad;
using xnorcl::BinaryConvolution;
using xnorcl::ConvGeometry;
using xnorcl::InvalidArgument;
using xnorcl::Shape;
using Pair = std::array<int, 2>;

namespace {

BinaryConvolution::Attributes explicit_pads(Pair begin, Pair end) {
  BinaryConvolution::Attributes a;
  a.pads_begin = begin;
  a.pads_end = end;
  return a;
}

BinaryConvolution::Attributes auto_pad(AutoPad p) {
  BinaryConvolution::Attributes a;
  a.auto_pad = p;
  return a;
}

ConvGeometry validate(const BinaryConvolution::Attributes& a, const Shape& x, const Shape& f) {
  return BinaryConvolution::validate(a, x, f);
}

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

}  // namespace

// ---- OpenVINO's own cases
// -----------------------------------------------------------------------------------

TEST_CASE("same_lower, 5x5 input, 3x3 kernel: pads 1,1 / 1,1", "[shape]") {
  // out = ceil(5/1) = 5; total = 4*1 + 3 - 5 = 2; small = 1, big = 1.
  const ConvGeometry g = validate(auto_pad(AutoPad::SameLower), {1, 1, 5, 5}, {1, 1, 3, 3});
  CHECK(g.output == Shape{1, 1, 5, 5});
  CHECK(g.pads_begin == Pair{1, 1});
  CHECK(g.pads_end == Pair{1, 1});
  CHECK(g.has_pad_taps);
}

TEST_CASE("same_upper, 5x5 input, 2x2 kernel: pads 0,0 / 1,1", "[shape]") {
  // total = 4 + 2 - 5 = 1; small = 0 goes to the beginning, big = 1 to the end.
  const ConvGeometry g = validate(auto_pad(AutoPad::SameUpper), {1, 1, 5, 5}, {1, 1, 2, 2});
  CHECK(g.output == Shape{1, 1, 5, 5});
  CHECK(g.pads_begin == Pair{0, 0});
  CHECK(g.pads_end == Pair{1, 1});
  // The last output (4) reads input positions 4 and 5; 5 is the end pad.
  CHECK(g.has_pad_taps);
}

TEST_CASE("same_lower, 5x5 input, 2x2 kernel puts the odd pad at the beginning", "[shape]") {
  const ConvGeometry g = validate(auto_pad(AutoPad::SameLower), {1, 1, 5, 5}, {1, 1, 2, 2});
  CHECK(g.output == Shape{1, 1, 5, 5});
  CHECK(g.pads_begin == Pair{1, 1});
  CHECK(g.pads_end == Pair{0, 0});
  CHECK(g.has_pad_taps);
}

TEST_CASE("valid: {1,3,10,12} x {2,3,5,5} gives {1,2,6,8}", "[shape]") {
  // 10 - 5 + 1 = 6, 12 - 5 + 1 = 8.
  const ConvGeometry g = validate(auto_pad(AutoPad::Valid), {1, 3, 10, 12}, {2, 3, 5, 5});
  CHECK(g.input == Shape{1, 3, 10, 12});
  CHECK(g.filter == Shape{2, 3, 5, 5});
  CHECK(g.output == Shape{1, 2, 6, 8});
  CHECK(g.pads_begin == Pair{0, 0});
  CHECK(g.pads_end == Pair{0, 0});
  CHECK_FALSE(g.has_pad_taps);
}

TEST_CASE("same_upper and same_lower: {3,6,5,5} x {7,6,3,3} gives {3,7,5,5}", "[shape]") {
  for (AutoPad p : {AutoPad::SameUpper, AutoPad::SameLower}) {
    INFO(xnorcl::to_string(p));
    const ConvGeometry g = validate(auto_pad(p), {3, 6, 5, 5}, {7, 6, 3, 3});
    CHECK(g.output == Shape{3, 7, 5, 5});
    CHECK(g.pads_begin == Pair{1, 1});
    CHECK(g.pads_end == Pair{1, 1});
    CHECK(g.has_pad_taps);
  }
}

TEST_CASE("the spec's example: 1x3x224x224, 64x3x5x5, pads 2 gives 1x64x224x224", "[shape]") {
  BinaryConvolution::Attributes a = explicit_pads({2, 2}, {2, 2});
  // (224 + 2 + 2 - 5)/1 + 1 = 224.
  const ConvGeometry g = validate(a, {1, 3, 224, 224}, {64, 3, 5, 5});
  CHECK(g.output == Shape{1, 64, 224, 224});
  CHECK(g.pads_begin == Pair{2, 2});
  CHECK(g.pads_end == Pair{2, 2});
  CHECK(g.has_pad_taps);
}

TEST_CASE("the geometry of OpenVINO's strided and dilated reference cases", "[shape]") {
  SECTION("case 4: 5x5, 3x3, strides 2: (5 - 3)/2 + 1 = 2") {
    BinaryConvolution::Attributes a;
    a.strides = {2, 2};
    const ConvGeometry g = validate(a, {1, 1, 5, 5}, {1, 1, 3, 3});
    CHECK(g.output == Shape{1, 1, 2, 2});
    CHECK_FALSE(g.has_pad_taps);
  }
  SECTION("case 5: 7x7, 3x3, dilations 2: dk = 5, 7 - 5 + 1 = 3") {
    BinaryConvolution::Attributes a;
    a.dilations = {2, 2};
    const ConvGeometry g = validate(a, {1, 1, 7, 7}, {1, 1, 3, 3});
    CHECK(g.output == Shape{1, 1, 3, 3});
    CHECK_FALSE(g.has_pad_taps);
  }
  SECTION("case 6: 7x7, 3x3, strides 2, pads 2/2, dilations 2: (11 - 5)/2 + 1 = 4") {
    BinaryConvolution::Attributes a = explicit_pads({2, 2}, {2, 2});
    a.strides = {2, 2};
    a.dilations = {2, 2};
    const ConvGeometry g = validate(a, {1, 1, 7, 7}, {1, 1, 3, 3});
    CHECK(g.output == Shape{1, 1, 4, 4});
    CHECK(g.has_pad_taps);
  }
  SECTION("case 8: two input channels, 4x4, 3x3 gives 2x2") {
    const ConvGeometry g = validate({}, {1, 2, 4, 4}, {1, 2, 3, 3});
    CHECK(g.output == Shape{1, 1, 2, 2});
  }
  SECTION("case 9: two batches") {
    const ConvGeometry g = validate({}, {2, 1, 4, 4}, {1, 1, 3, 3});
    CHECK(g.output == Shape{2, 1, 2, 2});
  }
}

// ---- hand-derived strided and dilated cases
// ------------------------------------------------------------------

TEST_CASE("same padding with strides and dilations, where small and big pads differ", "[shape]") {
  // H: D 8, k 5, s 2, d 1: out = ceil(8/2) = 4, total = 3*2 + 5 - 8 = 3, small 1, big 2.
  // W: D 7, k 3, s 3, d 2: dk = 5, out = ceil(7/3) = 3, total = 2*3 + 5 - 7 = 4, small 2, big 2.
  BinaryConvolution::Attributes a;
  a.strides = {2, 3};
  a.dilations = {1, 2};
  a.pads_begin = {9, 9};  // ignored with auto_pad other than explicit
  a.pads_end = {9, 9};
  SECTION("same_upper: small at the beginning") {
    a.auto_pad = AutoPad::SameUpper;
    const ConvGeometry g = validate(a, {2, 3, 8, 7}, {5, 3, 5, 3});
    CHECK(g.output == Shape{2, 5, 4, 3});
    CHECK(g.pads_begin == Pair{1, 2});
    CHECK(g.pads_end == Pair{2, 2});
    CHECK(g.has_pad_taps);
  }
  SECTION("same_lower: big at the beginning") {
    a.auto_pad = AutoPad::SameLower;
    const ConvGeometry g = validate(a, {2, 3, 8, 7}, {5, 3, 5, 3});
    CHECK(g.output == Shape{2, 5, 4, 3});
    CHECK(g.pads_begin == Pair{2, 2});
    CHECK(g.pads_end == Pair{1, 2});
    CHECK(g.has_pad_taps);
  }
}

TEST_CASE("same padding that needs no pad at all", "[shape]") {
  // D 6, k 2, s 3: out = 2, (out-1)*s + k - D = 3 + 2 - 6 = -1, so total = max(0, -1) = 0.
  BinaryConvolution::Attributes a = auto_pad(AutoPad::SameUpper);
  a.strides = {3, 3};
  const ConvGeometry g = validate(a, {1, 1, 6, 6}, {1, 1, 2, 2});
  CHECK(g.output == Shape{1, 1, 2, 2});
  CHECK(g.pads_begin == Pair{0, 0});
  CHECK(g.pads_end == Pair{0, 0});
  CHECK_FALSE(g.has_pad_taps);
}

TEST_CASE("an end pad that the strides never reach has no pad taps", "[shape]") {
  // D 5, k 3, s 2, pads 0/1: padded 6, out = (6 - 3)/2 + 1 = 2; the last output reads 2..4, all in bounds.
  BinaryConvolution::Attributes a = explicit_pads({0, 0}, {1, 1});
  a.strides = {2, 2};
  const ConvGeometry g = validate(a, {1, 1, 5, 5}, {1, 1, 3, 3});
  CHECK(g.output == Shape{1, 1, 2, 2});
  CHECK(g.pads_begin == Pair{0, 0});
  CHECK(g.pads_end == Pair{1, 1});
  CHECK_FALSE(g.has_pad_taps);
}

TEST_CASE("an end pad the strides do reach has pad taps", "[shape]") {
  // D 5, k 3, s 2, pads 0/2: padded 7, out = (7 - 3)/2 + 1 = 3; the last output reads 4..6, 5 and 6 are pad.
  BinaryConvolution::Attributes a = explicit_pads({0, 0}, {2, 2});
  a.strides = {2, 2};
  const ConvGeometry g = validate(a, {1, 1, 5, 5}, {1, 1, 3, 3});
  CHECK(g.output == Shape{1, 1, 3, 3});
  CHECK(g.has_pad_taps);
}

TEST_CASE("pad taps on one axis only are pad taps", "[shape]") {
  SECTION("a begin pad on W") {
    // W: D 5, k 3, pads 1/0: out = (6 - 3) + 1 = 4, the first output reads -1.
    const ConvGeometry g = validate(explicit_pads({0, 1}, {0, 0}), {1, 1, 5, 5}, {1, 1, 3, 3});
    CHECK(g.output == Shape{1, 1, 3, 4});
    CHECK(g.has_pad_taps);
  }
  SECTION("an end pad on H reached only through the dilation") {
    // H: D 5, k 2, d 3: dk 4, pads 0/1: out = (6 - 4) + 1 = 3; the last output reads 2 and 5, 5 is pad.
    BinaryConvolution::Attributes a = explicit_pads({0, 0}, {1, 0});
    a.dilations = {3, 1};
    const ConvGeometry g = validate(a, {1, 1, 5, 5}, {1, 1, 2, 2});
    CHECK(g.output == Shape{1, 1, 3, 4});
    CHECK(g.has_pad_taps);
  }
  SECTION("strides skip the end pad on H but reach it on W") {
    // H: D 6, k 2, s 3, pads 0/1: padded 7, out = 5/3 + 1 = 2, the last output reads 3..4: in bounds.
    // W: D 6, k 2, s 3, pads 0/2: padded 8, out = 6/3 + 1 = 3, the last output reads 6..7: both pad.
    BinaryConvolution::Attributes a = explicit_pads({0, 0}, {1, 2});
    a.strides = {3, 3};
    ConvGeometry g = validate(a, {1, 1, 6, 6}, {1, 1, 2, 2});
    CHECK(g.output == Shape{1, 1, 2, 3});
    CHECK(g.has_pad_taps);
    // With pads 0/1 on W too, neither axis reads its pad.
    a.pads_end = {1, 1};
    g = validate(a, {1, 1, 6, 6}, {1, 1, 2, 2});
    CHECK(g.output == Shape{1, 1, 2, 2});
    CHECK_FALSE(g.has_pad_taps);
  }
}

TEST_CASE("valid and same ignore pads_begin and pads_end, even negative ones", "[shape]") {
  BinaryConvolution::Attributes a = explicit_pads({-3, 4}, {5, -6});
  a.auto_pad = AutoPad::Valid;
  ConvGeometry g = validate(a, {1, 1, 5, 6}, {1, 1, 3, 3});
  CHECK(g.output == Shape{1, 1, 3, 4});
  CHECK(g.pads_begin == Pair{0, 0});
  CHECK(g.pads_end == Pair{0, 0});
  a.auto_pad = AutoPad::SameUpper;
  g = validate(a, {1, 1, 5, 6}, {1, 1, 3, 3});
  CHECK(g.output == Shape{1, 1, 5, 6});
  CHECK(g.pads_begin == Pair{1, 1});
  CHECK(g.pads_end == Pair{1, 1});
}

TEST_CASE("a dilated kernel exactly as large as the padded input gives one output", "[shape]") {
  // dk = 2*3 + 1 = 7 = 5 + 1 + 1.
  BinaryConvolution::Attributes a = explicit_pads({1, 1}, {1, 1});
  a.dilations = {3, 3};
  const ConvGeometry g = validate(a, {1, 1, 5, 5}, {1, 1, 3, 3});
  CHECK(g.output == Shape{1, 1, 1, 1});
  CHECK(g.has_pad_taps);
}

TEST_CASE("mode is compared case-insensitively", "[shape]") {
  BinaryConvolution::Attributes a;
  a.mode = "XNOR-Popcount";
  CHECK(validate(a, {1, 1, 3, 3}, {1, 1, 3, 3}).output == Shape{1, 1, 1, 1});
}

TEST_CASE("a patch of exactly 2^24 bits is accepted", "[shape]") {
  // 4096 * 64 * 64 = 2^12 * 2^6 * 2^6 = 2^24.
  CHECK(validate({}, {1, 4096, 64, 64}, {1, 4096, 64, 64}).output == Shape{1, 1, 1, 1});
}

TEST_CASE("pad values and thresholds that are accepted", "[shape]") {
  BinaryConvolution::Attributes a;
  for (float v : {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::max()}) {
    INFO(v);
    a.pad_value = v;
    CHECK_NOTHROW(validate(a, {1, 2, 3, 3}, {1, 2, 3, 3}));
  }
  a.pad_value = 0;
  a.input_thresholds = {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
  CHECK_NOTHROW(validate(a, {1, 2, 3, 3}, {1, 2, 3, 3}));
  a.input_thresholds = {0.5f, -3.0f};
  CHECK_NOTHROW(validate(a, {1, 2, 3, 3}, {1, 2, 3, 3}));
}

// ---- refusals: one each, the type and the values in the message
// --------------------------------------------

TEST_CASE("refused: a zero input dimension", "[shape][refusal]") {
  REQUIRE_THROWS_AS(validate({}, {1, 0, 5, 5}, {1, 0, 3, 3}), InvalidArgument);
  REQUIRE_THROWS_WITH(validate({}, {1, 0, 5, 5}, {1, 0, 3, 3}),
                      Contains("input shape 1x0x5x5") && Contains("C_IN (axis 1) is 0"));
}

TEST_CASE("refused: a negative filter dimension", "[shape][refusal]") {
  REQUIRE_THROWS_AS(validate({}, {1, 1, 5, 5}, {1, 1, -3, 3}), InvalidArgument);
  REQUIRE_THROWS_WITH(validate({}, {1, 1, 5, 5}, {1, 1, -3, 3}),
                      Contains("filter shape 1x1x-3x3") && Contains("KH (axis 2) is -3"));
}

TEST_CASE("refused: C_IN of input and filter differ", "[shape][refusal]") {
  REQUIRE_THROWS_AS(validate({}, {1, 3, 5, 5}, {2, 4, 3, 3}), InvalidArgument);
  REQUIRE_THROWS_WITH(validate({}, {1, 3, 5, 5}, {2, 4, 3, 3}),
                      Contains("C_IN of the input (3) and of the filter (4) differ"));
}

TEST_CASE("refused: a stride below 1", "[shape][refusal]") {
  BinaryConvolution::Attributes a;
  a.strides = {1, 0};
  REQUIRE_THROWS_AS(validate(a, {1, 1, 5, 5}, {1, 1, 3, 3}), InvalidArgument);
  REQUIRE_THROWS_WITH(validate(a, {1, 1, 5, 5}, {1, 1, 3, 3}),
                      Contains("strides must be at least 1, got 1,0"));
}

TEST_CASE("refused: a dilation below 1", "[shape][refusal]") {
  BinaryConvolution::Attributes a;
  a.dilations = {-2, 1};
  REQUIRE_THROWS_AS(validate(a, {1, 1, 5, 5}, {1, 1, 3, 3}), InvalidArgument);
  REQUIRE_THROWS_WITH(validate(a, {1, 1, 5, 5}, {1, 1, 3, 3}),
                      Contains("dilations must be at least 1, got -2,1"));
}

TEST_CASE("refused: negative explicit pads", "[shape][refusal]") {
  SECTION("pads_begin") {
    const auto a = explicit_pads({0, -1}, {0, 0});
    REQUIRE_THROWS_AS(validate(a, {1, 1, 5, 5}, {1, 1, 3, 3}), InvalidArgument);
    REQUIRE_THROWS_WITH(validate(a, {1, 1, 5, 5}, {1, 1, 3, 3}),
                        Contains("pads_begin must not be negative, got 0,-1"));
  }
  SECTION("pads_end") {
    const auto a = explicit_pads({0, 0}, {-7, 2});
    REQUIRE_THROWS_AS(validate(a, {1, 1, 5, 5}, {1, 1, 3, 3}), InvalidArgument);
    REQUIRE_THROWS_WITH(validate(a, {1, 1, 5, 5}, {1, 1, 3, 3}),
                        Contains("pads_end must not be negative, got -7,2"));
  }
}

TEST_CASE("refused: a dilated kernel larger than the padded input, in OpenVINO's words", "[shape][refusal]") {
  SECTION("axis 0: 3x3 kernel, dilation 3 (dk 7) on a 5x5 input") {
    BinaryConvolution::Attributes a;
    a.dilations = {3, 3};
    REQUIRE_THROWS_AS(validate(a, {1, 1, 5, 5}, {1, 1, 3, 3}), InvalidArgument);
    REQUIRE_THROWS_WITH(validate(a, {1, 1, 5, 5}, {1, 1, 3, 3}),
                        Contains("Kernel after dilation has size (dim: 7) larger than the data shape after "
                                 "padding (dim: 5) at axis 0"));
  }
  SECTION("axis 1: a 4-wide kernel on a 2-wide input padded to 3") {
    const auto a = explicit_pads({0, 1}, {0, 0});
    REQUIRE_THROWS_AS(validate(a, {1, 1, 6, 2}, {1, 1, 2, 4}), InvalidArgument);
    REQUIRE_THROWS_WITH(validate(a, {1, 1, 6, 2}, {1, 1, 2, 4}),
                        Contains("Kernel after dilation has size (dim: 4) larger than the data shape after "
                                 "padding (dim: 3) at axis 1"));
  }
  SECTION("valid padding") {
    REQUIRE_THROWS_WITH(validate(auto_pad(AutoPad::Valid), {1, 1, 2, 5}, {1, 1, 3, 3}),
                        Contains("Kernel after dilation has size (dim: 3) larger than the data shape after "
                                 "padding (dim: 2) at axis 0"));
  }
}

TEST_CASE("refused: an unknown mode", "[shape][refusal]") {
  BinaryConvolution::Attributes a;
  a.mode = "xnor";
  REQUIRE_THROWS_AS(validate(a, {1, 1, 5, 5}, {1, 1, 3, 3}), InvalidArgument);
  REQUIRE_THROWS_WITH(validate(a, {1, 1, 5, 5}, {1, 1, 3, 3}), Contains("unknown mode \"xnor\""));
  a.mode = "xnor-popcount ";
  REQUIRE_THROWS_WITH(validate(a, {1, 1, 5, 5}, {1, 1, 3, 3}), Contains("unknown mode \"xnor-popcount \""));
}

TEST_CASE("refused: an unknown auto_pad value", "[shape][refusal]") {
  const auto a = auto_pad(static_cast<AutoPad>(9));
  REQUIRE_THROWS_AS(validate(a, {1, 1, 5, 5}, {1, 1, 3, 3}), InvalidArgument);
  REQUIRE_THROWS_WITH(validate(a, {1, 1, 5, 5}, {1, 1, 3, 3}), Contains("unknown auto_pad value 9"));
}

TEST_CASE("refused: an input whose element count overflows 64 bits", "[shape][refusal]") {
  // 2^62 * 4 = 2^64.
  const Shape x{std::int64_t{1} << 62, 4, 1, 1};
  REQUIRE_THROWS_AS(validate({}, x, {1, 4, 1, 1}), InvalidArgument);
  REQUIRE_THROWS_WITH(validate({}, x, {1, 4, 1, 1}),
                      Contains("input shape 4611686018427387904x4x1x1") && Contains("N*C_IN*H*W overflows"));
}

TEST_CASE("refused: a filter whose element count overflows 64 bits", "[shape][refusal]") {
  // 2^40 * 2 * 2^23 = 2^64.
  const Shape f{std::int64_t{1} << 40, 2, std::int64_t{1} << 23, 1};
  REQUIRE_THROWS_AS(validate({}, {1, 2, 5, 5}, f), InvalidArgument);
  REQUIRE_THROWS_WITH(validate({}, {1, 2, 5, 5}, f), Contains("filter shape 1099511627776x2x8388608x1") &&
                                                         Contains("C_OUT*C_IN*KH*KW overflows"));
}

TEST_CASE("refused: an output whose element count overflows 64 bits", "[shape][refusal]") {
  // Input 2^40 * 2^10 and filter 2^20 fit; the output 2^40 * 2^20 * 2^10 * 1 = 2^70 does not.
  const Shape x{std::int64_t{1} << 40, 1, 1024, 1};
  const Shape f{std::int64_t{1} << 20, 1, 1, 1};
  REQUIRE_THROWS_AS(validate({}, x, f), InvalidArgument);
  REQUIRE_THROWS_WITH(validate({}, x, f), Contains("output shape 1099511627776x1048576x1024x1") &&
                                              Contains("N*C_OUT*OH*OW overflows"));
}

TEST_CASE("refused: an input whose size in bytes overflows 64 bits", "[shape][refusal]") {
  // 2^62 elements fit; 2^62 * sizeof(float) = 2^64 bytes do not.
  const Shape x{1, 1, std::int64_t{1} << 62, 1};
  REQUIRE_THROWS_AS(validate({}, x, {1, 1, 1, 1}), InvalidArgument);
  REQUIRE_THROWS_WITH(validate({}, x, {1, 1, 1, 1}),
                      Contains("input shape 1x1x4611686018427387904x1: size in bytes overflows") &&
                          Contains("4611686018427387904 * 4"));
}

TEST_CASE("refused: an output whose size in bytes overflows 64 bits", "[shape][refusal]") {
  // The input 2^60 elements (2^62 bytes) and the output 2^60 * 4 elements fit; 2^62 * sizeof(float) = 2^64
  // bytes do not.
  const Shape x{std::int64_t{1} << 60, 1, 1, 1};
  const Shape f{4, 1, 1, 1};
  REQUIRE_THROWS_AS(validate({}, x, f), InvalidArgument);
  REQUIRE_THROWS_WITH(validate({}, x, f),
                      Contains("output shape 1152921504606846976x4x1x1: size in bytes overflows") &&
                          Contains("4611686018427387904 * 4"));
}

TEST_CASE("refused: a padded input that overflows 64 bits", "[shape][refusal]") {
  SECTION("explicit: D + pads_begin") {
    const auto a = explicit_pads({1, 0}, {0, 0});
    const Shape x{1, 1, kInt64Max, 1};
    REQUIRE_THROWS_AS(validate(a, x, {1, 1, 1, 1}), InvalidArgument);
    REQUIRE_THROWS_WITH(validate(a, x, {1, 1, 1, 1}),
                        Contains("padded input at axis 0") && Contains("9223372036854775807 + 1"));
  }
  SECTION("same_upper: (out - 1)*s + dk") {
    // out = D, (D - 1) + 3 overflows.
    const Shape x{1, 1, kInt64Max, 1};
    REQUIRE_THROWS_AS(validate(auto_pad(AutoPad::SameUpper), x, {1, 1, 3, 1}), InvalidArgument);
    REQUIRE_THROWS_WITH(validate(auto_pad(AutoPad::SameUpper), x, {1, 1, 3, 1}),
                        Contains("at axis 0") && Contains("9223372036854775806 + 3"));
  }
}

TEST_CASE("refused: same padding that does not fit in int", "[shape][refusal]") {
  // KH 2^24 (a patch of exactly 2^24 bits), dilation 2^30: dk = (2^24 - 1)*2^30 + 1 = 18014397435740161;
  // on a 1-high input out = 1, total = dk - 1 = 18014397435740160, small = big = 9007198717870080.
  BinaryConvolution::Attributes a = auto_pad(AutoPad::SameUpper);
  a.dilations = {1 << 30, 1};
  const Shape f{1, 1, std::int64_t{1} << 24, 1};
  REQUIRE_THROWS_AS(validate(a, {1, 1, 1, 1}, f), InvalidArgument);
  REQUIRE_THROWS_WITH(validate(a, {1, 1, 1, 1}, f),
                      Contains("padding 9007198717870080/9007198717870080 does not fit in int at axis 0"));
}

TEST_CASE("refused: a patch of more than 2^24 bits", "[shape][refusal]") {
  // 4097 * 64 * 64 = 16781312 > 16777216.
  REQUIRE_THROWS_AS(validate({}, {1, 4097, 64, 64}, {1, 4097, 64, 64}), InvalidArgument);
  REQUIRE_THROWS_WITH(validate({}, {1, 4097, 64, 64}, {1, 4097, 64, 64}),
                      Contains("C_IN*KH*KW = 16781312") && Contains("limit of 16777216"));
  // One bit over.
  REQUIRE_THROWS_WITH(validate({}, {1, 16777217, 1, 1}, {1, 16777217, 1, 1}),
                      Contains("C_IN*KH*KW = 16777217"));
}

TEST_CASE("refused: pad values that are not finite normal numbers", "[shape][refusal]") {
  BinaryConvolution::Attributes a;
  SECTION("NaN") {
    a.pad_value = std::numeric_limits<float>::quiet_NaN();
    REQUIRE_THROWS_AS(validate(a, {1, 1, 3, 3}, {1, 1, 3, 3}), InvalidArgument);
    REQUIRE_THROWS_WITH(validate(a, {1, 1, 3, 3}, {1, 1, 3, 3}), Contains("pad_value is NaN (nan)"));
  }
  SECTION("+inf") {
    a.pad_value = std::numeric_limits<float>::infinity();
    REQUIRE_THROWS_AS(validate(a, {1, 1, 3, 3}, {1, 1, 3, 3}), InvalidArgument);
    REQUIRE_THROWS_WITH(validate(a, {1, 1, 3, 3}, {1, 1, 3, 3}), Contains("pad_value is infinite (inf)"));
  }
  SECTION("-inf") {
    a.pad_value = -std::numeric_limits<float>::infinity();
    REQUIRE_THROWS_WITH(validate(a, {1, 1, 3, 3}, {1, 1, 3, 3}), Contains("pad_value is infinite (-inf)"));
  }
  SECTION("subnormal") {
    a.pad_value = 1e-45f;
    REQUIRE(std::fpclassify(a.pad_value) == FP_SUBNORMAL);
    REQUIRE_THROWS_AS(validate(a, {1, 1, 3, 3}, {1, 1, 3, 3}), InvalidArgument);
    REQUIRE_THROWS_WITH(validate(a, {1, 1, 3, 3}, {1, 1, 3, 3}),
                        Contains("pad_value 1.40129846e-45 is subnormal"));
  }
  SECTION("negative subnormal") {
    a.pad_value = -std::numeric_limits<float>::min() / 2;  // -2^-127
    REQUIRE_THROWS_WITH(validate(a, {1, 1, 3, 3}, {1, 1, 3, 3}),
                        Contains("pad_value -5.87747175e-39 is subnormal"));
  }
}

TEST_CASE("refused: input_thresholds of the wrong count", "[shape][refusal]") {
  BinaryConvolution::Attributes a;
  a.input_thresholds = {0.5f, 0.5f};
  REQUIRE_THROWS_AS(validate(a, {1, 3, 3, 3}, {1, 3, 3, 3}), InvalidArgument);
  REQUIRE_THROWS_WITH(validate(a, {1, 3, 3, 3}, {1, 3, 3, 3}),
                      Contains("input_thresholds holds 2 values") && Contains("C_IN = 3"));
  a.input_thresholds = {0, 0, 0, 0};
  REQUIRE_THROWS_WITH(validate(a, {1, 3, 3, 3}, {1, 3, 3, 3}),
                      Contains("input_thresholds holds 4 values") && Contains("C_IN = 3"));
}

TEST_CASE("refused: a NaN input threshold", "[shape][refusal]") {
  BinaryConvolution::Attributes a;
  a.input_thresholds = {0.0f, std::numeric_limits<float>::infinity(), std::nanf("")};
  REQUIRE_THROWS_AS(validate(a, {1, 3, 3, 3}, {1, 3, 3, 3}), InvalidArgument);
  REQUIRE_THROWS_WITH(validate(a, {1, 3, 3, 3}, {1, 3, 3, 3}), Contains("input_thresholds[2] is NaN"));
}
