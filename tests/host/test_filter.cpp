// SPDX-License-Identifier: Apache-2.0
// Filter::from_packed and Filter::from_values: both bit orders on hand-made bytes, what is ignored, and the
// refusals with their numbers.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "xnorcl/xnorcl.hpp"

using Catch::Contains;
using xnorcl::BitOrder;
using xnorcl::Filter;
using xnorcl::InvalidArgument;
using xnorcl::Shape;
using Bytes = std::vector<std::uint8_t>;

namespace {

std::vector<int> bits_of(const Filter& f) {
  std::vector<int> bits;
  for (std::int64_t i = 0; i < f.size(); ++i) bits.push_back(f.bit(i) ? 1 : 0);
  return bits;
}

Filter packed(const Bytes& bytes, const Shape& shape, BitOrder order) {
  return Filter::from_packed(bytes.data(), bytes.size(), shape, order);
}

}  // namespace

TEST_CASE("from_packed reads 0xAA in both bit orders", "[filter]") {
  const Bytes bytes{0xAA};  // 1010'1010
  SECTION("MsbFirst: element i is bit 7 - i") {
    const Filter f = packed(bytes, {1, 1, 2, 4}, BitOrder::MsbFirst);
    CHECK(f.shape() == Shape{1, 1, 2, 4});
    CHECK(f.size() == 8);
    CHECK(bits_of(f) == std::vector<int>{1, 0, 1, 0, 1, 0, 1, 0});
    CHECK(f.msb_first_bytes() == Bytes{0xAA});
  }
  SECTION("LsbFirst: element i is bit i") {
    const Filter f = packed(bytes, {1, 1, 2, 4}, BitOrder::LsbFirst);
    CHECK(bits_of(f) == std::vector<int>{0, 1, 0, 1, 0, 1, 0, 1});
    CHECK(f.msb_first_bytes() == Bytes{0x55});
  }
}

TEST_CASE("from_packed: OpenVINO's reference filters, MsbFirst", "[filter]") {
  // 0x2E 0x00 = 0010'1110 0: the 3x3 filter of reference case 4.
  const Filter f4 = packed({0x2E, 0x00}, {1, 1, 3, 3}, BitOrder::MsbFirst);
  CHECK(bits_of(f4) == std::vector<int>{0, 0, 1, 0, 1, 1, 1, 0, 0});
  // 0x6B 0x00 = 0110'1011 0: cases 5 to 7.
  const Filter f5 = packed({0x6B, 0x00}, {1, 1, 3, 3}, BitOrder::MsbFirst);
  CHECK(bits_of(f5) == std::vector<int>{0, 1, 1, 0, 1, 0, 1, 1, 0});
  // AA AA 80 over two channels, no padding between them: case 8.
  const Filter f8 = packed({0xAA, 0xAA, 0x80}, {1, 2, 3, 3}, BitOrder::MsbFirst);
  CHECK(bits_of(f8) == std::vector<int>{1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0});
  CHECK(f8.bit(0, 1, 0, 0) == false);  // flat index 9
  CHECK(f8.bit(0, 1, 0, 1) == true);   // flat index 10
  CHECK(f8.bit(0, 1, 2, 2) == false);  // flat index 17
}

TEST_CASE("from_packed: LsbFirst bytes that are the bit-reversal of MsbFirst bytes give the same filter",
          "[filter]") {
  SECTION("hand-reversed bytes") {
    // 0x2E = 0010'1110 reversed is 0111'0100 = 0x74; 0x6B = 0110'1011 reversed is 1101'0110 = 0xD6.
    CHECK(packed({0x74, 0x00}, {1, 1, 3, 3}, BitOrder::LsbFirst).msb_first_bytes() == Bytes{0x2E, 0x00});
    CHECK(packed({0xD6, 0x00}, {1, 1, 3, 3}, BitOrder::LsbFirst).msb_first_bytes() == Bytes{0x6B, 0x00});
    // 0xAA 0x80 reversed is 0x55 0x01.
    CHECK(bits_of(packed({0x55, 0x01}, {1, 1, 3, 3}, BitOrder::LsbFirst)) ==
          bits_of(packed({0xAA, 0x80}, {1, 1, 3, 3}, BitOrder::MsbFirst)));
  }
  SECTION("every byte value") {
    for (int b = 0; b < 256; ++b) {
      int reversed = 0;
      for (int k = 0; k < 8; ++k) reversed |= ((b >> k) & 1) << (7 - k);
      INFO("byte " << b);
      const Filter msb = packed({static_cast<std::uint8_t>(b)}, {2, 1, 1, 4}, BitOrder::MsbFirst);
      const Filter lsb = packed({static_cast<std::uint8_t>(reversed)}, {2, 1, 1, 4}, BitOrder::LsbFirst);
      REQUIRE(bits_of(msb) == bits_of(lsb));
      REQUIRE(msb.msb_first_bytes() == Bytes{static_cast<std::uint8_t>(b)});
    }
  }
}

TEST_CASE("from_packed ignores extra bytes and the unused bits of the last byte", "[filter]") {
  // 9 bits: element 8 is the top bit of byte 1 (MsbFirst) or its bottom bit (LsbFirst).
  SECTION("MsbFirst") {
    const Filter f = packed({0xAA, 0xFF, 0x12, 0x34}, {1, 1, 3, 3}, BitOrder::MsbFirst);
    CHECK(f.msb_first_bytes() == Bytes{0xAA, 0x80});
    CHECK(bits_of(f) == std::vector<int>{1, 0, 1, 0, 1, 0, 1, 0, 1});
    CHECK(packed({0xAA, 0x7F}, {1, 1, 3, 3}, BitOrder::MsbFirst).msb_first_bytes() == Bytes{0xAA, 0x00});
  }
  SECTION("LsbFirst") {
    CHECK(packed({0x55, 0xFF, 0x99}, {1, 1, 3, 3}, BitOrder::LsbFirst).msb_first_bytes() ==
          Bytes{0xAA, 0x80});
    CHECK(packed({0x55, 0xFE}, {1, 1, 3, 3}, BitOrder::LsbFirst).msb_first_bytes() == Bytes{0xAA, 0x00});
  }
}

TEST_CASE("from_packed refuses a short buffer, naming both byte counts", "[filter][refusal]") {
  const Bytes one{0xAA};
  REQUIRE_THROWS_AS(Filter::from_packed(one.data(), 1, {1, 1, 3, 3}, BitOrder::MsbFirst), InvalidArgument);
  REQUIRE_THROWS_WITH(Filter::from_packed(one.data(), 1, {1, 1, 3, 3}, BitOrder::MsbFirst),
                      Contains("1x1x3x3") && Contains("ceil(9/8) = 2 bytes, got 1"));
  // The spec's layer: 64*3*5*5 = 4800 bits = 600 bytes.
  const Bytes almost(599, 0);
  REQUIRE_THROWS_WITH(Filter::from_packed(almost.data(), almost.size(), {64, 3, 5, 5}, BitOrder::LsbFirst),
                      Contains("ceil(4800/8) = 600 bytes, got 599"));
  CHECK(Filter::from_packed(Bytes(600, 0).data(), 600, {64, 3, 5, 5}, BitOrder::LsbFirst).size() == 4800);
}

TEST_CASE("from_packed refuses a null pointer", "[filter][refusal]") {
  REQUIRE_THROWS_AS(Filter::from_packed(nullptr, 2, {1, 1, 3, 3}, BitOrder::MsbFirst), InvalidArgument);
  REQUIRE_THROWS_WITH(Filter::from_packed(nullptr, 2, {1, 1, 3, 3}, BitOrder::MsbFirst),
                      Contains("null pointer") && Contains("1x1x3x3 needs 2 bytes"));
}

TEST_CASE("from_packed refuses an unknown bit order", "[filter][refusal]") {
  const Bytes b{0xAA};
  REQUIRE_THROWS_AS(Filter::from_packed(b.data(), 1, {1, 1, 2, 4}, static_cast<BitOrder>(5)),
                    InvalidArgument);
  REQUIRE_THROWS_WITH(Filter::from_packed(b.data(), 1, {1, 1, 2, 4}, static_cast<BitOrder>(5)),
                      Contains("unknown bit order 5"));
}

TEST_CASE("filters refuse bad shapes", "[filter][refusal]") {
  const Bytes b(16, 0);
  const float values[16] = {};
  SECTION("a zero dimension") {
    REQUIRE_THROWS_AS(Filter::from_packed(b.data(), b.size(), {2, 0, 3, 3}, BitOrder::MsbFirst),
                      InvalidArgument);
    REQUIRE_THROWS_WITH(
        Filter::from_packed(b.data(), b.size(), {2, 0, 3, 3}, BitOrder::MsbFirst),
        Contains("Filter::from_packed") && Contains("2x0x3x3") && Contains("C_IN (axis 1) is 0"));
  }
  SECTION("a negative dimension") {
    REQUIRE_THROWS_AS(Filter::from_values(values, {1, 1, 3, -1}), InvalidArgument);
    REQUIRE_THROWS_WITH(Filter::from_values(values, {1, 1, 3, -1}),
                        Contains("Filter::from_values") && Contains("KW (axis 3) is -1"));
  }
  SECTION("an element count that overflows 64 bits") {
    // 2^32 * 2^32 = 2^64.
    const Shape huge{std::int64_t{1} << 32, std::int64_t{1} << 32, 1, 1};
    REQUIRE_THROWS_AS(Filter::from_packed(b.data(), b.size(), huge, BitOrder::MsbFirst), InvalidArgument);
    REQUIRE_THROWS_WITH(Filter::from_packed(b.data(), b.size(), huge, BitOrder::MsbFirst),
                        Contains("C_OUT*C_IN*KH*KW overflows") && Contains("4294967296 * 4294967296"));
  }
}

TEST_CASE("from_values(float): w > 0 is +1, everything else -1", "[filter]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float tiny = 1e-45f;  // the smallest subnormal: above zero, so +1
  REQUIRE(std::fpclassify(tiny) == FP_SUBNORMAL);
  const float values[9] = {1.0f, 0.0f, -0.0f, nan, tiny, -tiny, -2.5f, inf, -inf};
  const Filter f = Filter::from_values(values, {1, 1, 3, 3});
  CHECK(bits_of(f) == std::vector<int>{1, 0, 0, 0, 1, 0, 0, 1, 0});
  // 1000'1001 then 0 in the top bit of byte 1, the rest zero.
  CHECK(f.msb_first_bytes() == Bytes{0x89, 0x00});
}

TEST_CASE("from_values(uint8): any non-zero value is +1", "[filter]") {
  const std::uint8_t values[9] = {0, 1, 2, 255, 0, 0, 128, 1, 7};
  const Filter f = Filter::from_values(values, {1, 1, 3, 3});
  CHECK(bits_of(f) == std::vector<int>{0, 1, 1, 1, 0, 0, 1, 1, 1});
  // 0111'0011 then 1 in the top bit of byte 1.
  CHECK(f.msb_first_bytes() == Bytes{0x73, 0x80});
}

TEST_CASE("from_values and from_packed agree on a multi-channel filter", "[filter]") {
  // Shape 2x1x1x5, flat index o*5 + kx; bytes 1100'1010 01 (MsbFirst) = 0xCA 0x40.
  const float values[10] = {1, 1, -1, -1, 1, -1, 1, -1, -1, 1};
  const Filter v = Filter::from_values(values, {2, 1, 1, 5});
  const Filter p = packed({0xCA, 0x40}, {2, 1, 1, 5}, BitOrder::MsbFirst);
  CHECK(v.msb_first_bytes() == Bytes{0xCA, 0x40});
  CHECK(bits_of(v) == bits_of(p));
  CHECK(v.bit(1, 0, 0, 1) == true);   // flat index 6
  CHECK(v.bit(1, 0, 0, 2) == false);  // flat index 7
  CHECK(v.bit(1, 0, 0, 4) == true);   // flat index 9
}

TEST_CASE("from_values refuses a null pointer", "[filter][refusal]") {
  REQUIRE_THROWS_AS(Filter::from_values(static_cast<const float*>(nullptr), {1, 1, 3, 3}), InvalidArgument);
  REQUIRE_THROWS_WITH(Filter::from_values(static_cast<const float*>(nullptr), {1, 1, 3, 3}),
                      Contains("null pointer") && Contains("1x1x3x3 needs 9 floats"));
  REQUIRE_THROWS_AS(Filter::from_values(static_cast<const std::uint8_t*>(nullptr), {2, 1, 1, 1}),
                    InvalidArgument);
  REQUIRE_THROWS_WITH(Filter::from_values(static_cast<const std::uint8_t*>(nullptr), {2, 1, 1, 1}),
                      Contains("null pointer") && Contains("2x1x1x1 needs 2 uint8 values"));
}
