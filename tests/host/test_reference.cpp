// SPDX-License-Identifier: Apache-2.0
// The host reference against OpenVINO's published cases and against a naive real-valued convolution.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "openvino_cases.hpp"
#include "xnorcl/xnorcl.hpp"

using namespace xnorcl;
using xnorcl::test::bit_reversed;
using xnorcl::test::openvino_case;
using xnorcl::test::openvino_cases;

namespace {

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::string values(const std::vector<float>& v) {
  std::string s;
  for (float f : v) s += std::to_string(f) + " ";
  return s;
}

// Straight from the operation's formula, in double: each tap's x_real * w_real, pad taps as v.
std::vector<float> naive_convolution(const std::vector<float>& x, const Shape& xs, const Filter& f,
                                     const BinaryConvolution::Attributes& a) {
  const ConvGeometry g = BinaryConvolution::validate(a, xs, f.shape());
  const Shape& fs = f.shape();
  std::vector<float> y;
  for (std::int64_t n = 0; n < xs[0]; ++n)
    for (std::int64_t o = 0; o < fs[0]; ++o)
      for (std::int64_t oy = 0; oy < g.output[2]; ++oy)
        for (std::int64_t ox = 0; ox < g.output[3]; ++ox) {
          double sum = 0;
          for (std::int64_t c = 0; c < fs[1]; ++c)
            for (std::int64_t ky = 0; ky < fs[2]; ++ky)
              for (std::int64_t kx = 0; kx < fs[3]; ++kx) {
                const std::int64_t iy = oy * a.strides[0] - g.pads_begin[0] + ky * a.dilations[0];
                const std::int64_t ix = ox * a.strides[1] - g.pads_begin[1] + kx * a.dilations[1];
                const double w = f.bit(o, c, ky, kx) ? 1.0 : -1.0;
                double xr = a.pad_value;
                if (iy >= 0 && iy < xs[2] && ix >= 0 && ix < xs[3]) {
                  const float t = a.input_thresholds.empty() ? 0.0f : a.input_thresholds[c];
                  const float v = x[((n * xs[1] + c) * xs[2] + iy) * xs[3] + ix];
                  xr = v > t ? 1.0 : -1.0;  // the host FPU does not flush subnormals here
                }
                sum += xr * w;
              }
          y.push_back(static_cast<float>(sum));
        }
  return y;
}

std::int64_t ulp_distance(float a, float b) {
  std::int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  if (ia < 0) ia = std::numeric_limits<std::int32_t>::min() - ia;
  if (ib < 0) ib = std::numeric_limits<std::int32_t>::min() - ib;
  return std::llabs(static_cast<std::int64_t>(ia) - ib);
}

}  // namespace

TEST_CASE("reference reproduces OpenVINO's nine published cases in both bit orders", "[reference]") {
  for (const auto& c : openvino_cases()) {
    for (BitOrder order : {BitOrder::MsbFirst, BitOrder::LsbFirst}) {
      INFO("OpenVINO case " << c.id << ", " << to_string(order));
      const auto bytes =
          order == BitOrder::MsbFirst ? c.filter_bytes_msb_first : bit_reversed(c.filter_bytes_msb_first);
      const Filter f = Filter::from_packed(bytes.data(), bytes.size(), c.filter_shape, order);
      const auto y = reference_binary_convolution(c.input.data(), c.input_shape, f, c.attributes());
      INFO("got " << values(y));
      REQUIRE(bitwise_equal(y, c.expected));
    }
  }
}

TEST_CASE("reference gives the derived published values at pad values 0 and 0.5", "[reference]") {
  for (const auto& d : xnorcl::test::derived_cases()) {
    const auto& c = openvino_case(d.id);
    INFO("case " << d.id << " at v = " << d.pad_value);
    auto a = c.attributes();
    a.pad_value = d.pad_value;
    const Filter f = Filter::from_packed(c.filter_bytes_msb_first.data(), c.filter_bytes_msb_first.size(),
                                         c.filter_shape, BitOrder::MsbFirst);
    const auto y = reference_binary_convolution(c.input.data(), c.input_shape, f, a);
    INFO("got " << values(y));
    REQUIRE(bitwise_equal(y, d.expected));
  }
}

TEST_CASE("reference takes uint8 input like float input", "[reference]") {
  const auto& c = openvino_case(8);
  std::vector<std::uint8_t> x8(c.input.begin(), c.input.end());
  const Filter f = Filter::from_packed(c.filter_bytes_msb_first.data(), c.filter_bytes_msb_first.size(),
                                       c.filter_shape, BitOrder::MsbFirst);
  REQUIRE(
      bitwise_equal(reference_binary_convolution(x8.data(), c.input_shape, f, c.attributes()), c.expected));
}

TEST_CASE("input bit is an exact IEEE x > t with NaN as -1", "[reference]") {
  const float denorm = std::numeric_limits<float>::denorm_min();
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(input_bit(1.0f, 0.0f));
  CHECK_FALSE(input_bit(0.0f, 0.0f));
  CHECK_FALSE(input_bit(0.0f, -0.0f));
  CHECK_FALSE(input_bit(-0.0f, 0.0f));
  CHECK(input_bit(denorm, 0.0f));
  CHECK_FALSE(input_bit(-denorm, 0.0f));
  CHECK(input_bit(0.0f, -denorm));
  CHECK(input_bit(2 * denorm, denorm));
  CHECK_FALSE(input_bit(denorm, denorm));
  CHECK_FALSE(input_bit(nan, 0.0f));
  CHECK_FALSE(input_bit(nan, -inf));
  CHECK(input_bit(-1e30f, -inf));
  CHECK_FALSE(input_bit(-inf, -inf));
  CHECK_FALSE(input_bit(inf, inf));
  CHECK(input_bit(inf, 3.0f));
  CHECK_FALSE(input_bit(-2.0f, -1.0f));
  CHECK(input_bit(-1.0f, -2.0f));
  CHECK(input_bit(0.5f, 0.25f));
}

TEST_CASE("reference equals a naive double-accumulated convolution on random small layers", "[reference]") {
  std::mt19937 rng(20261122);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const float pad_values[] = {1.0f, -1.0f, 0.0f, 0.5f, -0.25f, 0.75f, 0.1f};
  const AutoPad pads[] = {AutoPad::Explicit, AutoPad::SameUpper, AutoPad::SameLower, AutoPad::Valid};
  int checked = 0;
  for (int iteration = 0; iteration < 400; ++iteration) {
    const Shape xs{pick(1, 2), pick(1, 9), pick(1, 9), pick(1, 9)};
    const Shape fs{pick(1, 5), xs[1], pick(1, 4), pick(1, 4)};
    BinaryConvolution::Attributes a;
    a.strides = {pick(1, 3), pick(1, 3)};
    a.dilations = {pick(1, 2), pick(1, 2)};
    a.pads_begin = {pick(0, 3), pick(0, 3)};
    a.pads_end = {pick(0, 3), pick(0, 3)};
    a.auto_pad = pads[pick(0, 3)];
    a.pad_value = pad_values[pick(0, 6)];
    if (pick(0, 1)) {
      for (int c = 0; c < xs[1]; ++c) a.input_thresholds.push_back(static_cast<float>(pick(-4, 4)) * 0.25f);
    }
    try {
      BinaryConvolution::validate(a, xs, fs);
    } catch (const InvalidArgument&) {
      continue;  // a kernel larger than the padded input: not a layer
    }
    std::vector<float> x(static_cast<std::size_t>(xs[0] * xs[1] * xs[2] * xs[3]));
    for (auto& v : x) v = static_cast<float>(pick(-3, 3)) * 0.5f;
    std::vector<float> w(static_cast<std::size_t>(fs[0] * fs[1] * fs[2] * fs[3]));
    for (auto& v : w) v = static_cast<float>(pick(0, 1));
    const Filter f = Filter::from_values(w.data(), fs);
    const auto got = reference_binary_convolution(x.data(), xs, f, a);
    const auto want = naive_convolution(x, xs, f, a);
    INFO("iteration " << iteration << " x " << to_string(xs) << " f " << to_string(fs) << " v " << a.pad_value
                      << " auto_pad " << to_string(a.auto_pad));
    REQUIRE(got.size() == want.size());
    if (a.pad_value == 0.1f) {
      for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(ulp_distance(got[i], want[i]) <= 1);
    } else {
      REQUIRE(bitwise_equal(got, want));
    }
    ++checked;
  }
  REQUIRE(checked > 300);
}

TEST_CASE("reference refuses a null input and invalid attributes", "[reference]") {
  const auto& c = openvino_case(1);
  const Filter f =
      Filter::from_packed(c.filter_bytes_msb_first.data(), 2, c.filter_shape, BitOrder::MsbFirst);
  REQUIRE_THROWS_AS(
      reference_binary_convolution(static_cast<const float*>(nullptr), c.input_shape, f, c.attributes()),
      InvalidArgument);
  auto a = c.attributes();
  a.mode = "xnor";
  REQUIRE_THROWS_AS(reference_binary_convolution(c.input.data(), c.input_shape, f, a), InvalidArgument);
}

TEST_CASE("reference: an output larger than the host can hold is an Error naming its size", "[reference]") {
  // 2^30 images of 2^15 x 2^15 pixels, one output channel: 2^60 outputs. The input is never read.
  const Shape input{std::int64_t(1) << 30, 1, 32768, 32768};
  const std::vector<float> x(1, 1.0f);
  const std::uint8_t bits = 0x80;
  const Filter f = Filter::from_packed(&bits, 1, Shape{1, 1, 1, 1}, BitOrder::MsbFirst);
  try {
    reference_binary_convolution(x.data(), input, f, BinaryConvolution::Attributes{});
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("reference_binary_convolution") &&
                             Catch::Contains("1073741824x1x32768x32768") &&
                             Catch::Contains("1152921504606846976 values of 4 bytes"));
  }
}
