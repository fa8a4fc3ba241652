// SPDX-License-Identifier: Apache-2.0
// The output rules: each threshold rule's interval of order keys against threshold_bit on special and random
// floats (as the kernels key them: NaN is 0), its interval of integer results against threshold_bit of every
// float(G) for G in [-K, K], the padded rule tables of xnor_gemm_bits, scale-and-bias, and the input keys.
#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <vector>

#include "conv_case.hpp"
#include "ops/binary_convolution/output_rules.hpp"
#include "ops/layer_common.hpp"

using namespace xnorcl;
using detail::IntInterval;
using detail::KeyInterval;
using xnorcl::test::from_bits;
using xnorcl::test::Rng;

namespace {

const float kInf = std::numeric_limits<float>::infinity();

// The key the kernels give a value (fused_order_key in cl_kernels/xnor_gemm.cl): NaN is 0.
std::uint32_t kernel_key(float y) {
  return detail::float_is_nan(y) ? 0u : detail::float_order_key(y);
}

bool in_keys(float y, KeyInterval i) {
  return static_cast<std::uint32_t>(kernel_key(y) - i.lo) < i.count;
}

std::vector<float> special_values() {
  return {0.0f,
          -0.0f,
          1.0f,
          -1.0f,
          0.5f,
          -2.5f,
          kInf,
          -kInf,
          std::numeric_limits<float>::quiet_NaN(),
          from_bits(0x00000001u),
          from_bits(0x80000001u),
          from_bits(0x007fffffu),
          from_bits(0x807fffffu),
          std::numeric_limits<float>::max(),
          -std::numeric_limits<float>::max(),
          16777216.0f,
          -16777217.0f,
          3.0f,
          -3.0f,
          2.99999976f,
          3.00000024f};
}

Threshold random_rule(Rng& rng, const std::vector<float>& specials) {
  Threshold r;
  r.mode = static_cast<ThresholdMode>(rng.uniform(0, 3));
  do {
    r.value = rng.chance(50) ? rng.pick(specials) : (rng.unit() - 0.5f) * float(rng.uniform(1, 5000));
  } while (detail::float_is_nan(r.value));
  if (rng.chance(20)) r.value = static_cast<float>(rng.uniform(-300, 300)) + (rng.chance(50) ? 0.0f : 0.5f);
  return r;
}

std::string rule_text(const Threshold& r) {
  return "mode " + std::to_string(static_cast<int>(r.mode)) + " value " + test::float_text(r.value);
}

}  // namespace

TEST_CASE("output rules: key intervals accept exactly what threshold_bit accepts", "[output_rules]") {
  Rng rng(31);
  const std::vector<float> specials = special_values();
  for (int trial = 0; trial < 2000; ++trial) {
    const Threshold r = random_rule(rng, specials);
    const KeyInterval keys = detail::key_interval(r);
    INFO(rule_text(r) << ": keys lo " << keys.lo << " count " << keys.count);
    std::vector<float> ys = specials;
    for (int i = 0; i < 20; ++i) ys.push_back(from_bits(static_cast<std::uint32_t>(rng.next())));
    std::string first_wrong;  // one check per rule, naming the first value it gets wrong
    for (float y : ys) {
      if (in_keys(y, keys) != threshold_bit(y, r)) {
        first_wrong = "y " + test::float_text(y) + ": threshold_bit " + (threshold_bit(y, r) ? "1" : "0");
        break;
      }
    }
    REQUIRE(first_wrong == "");
  }
}

TEST_CASE("output rules: integer intervals hold exactly the G in [-K, K] whose float passes the rule",
          "[output_rules]") {
  Rng rng(32);
  const std::vector<float> specials = special_values();
  for (int trial = 0; trial < 400; ++trial) {
    const Threshold r = random_rule(rng, specials);
    const int K = rng.chance(10) ? rng.uniform(0, 3) : rng.uniform(1, 700);
    const IntInterval ints = detail::integer_interval(detail::key_interval(r), K);
    INFO(rule_text(r) << ", K " << K << ": G from " << ints.lo << ", count " << ints.count);
    if (ints.count == 0) REQUIRE(ints.lo == 0);
    std::string first_wrong;
    for (int g = -K; g <= K; ++g) {
      const bool inside = std::int64_t(g) >= ints.lo && std::int64_t(g) < std::int64_t(ints.lo) + ints.count;
      if (inside != threshold_bit(static_cast<float>(g), r)) {
        first_wrong = "G " + std::to_string(g) + (inside ? " inside" : " outside");
        break;
      }
    }
    REQUIRE(first_wrong == "");
  }
  // K = 2^24, the largest: G near the ends and near the threshold.
  const int K = 1 << 24;
  for (const Threshold& r :
       {Threshold{16777215.5f, ThresholdMode::Greater}, Threshold{-16777215.0f, ThresholdMode::Less},
        Threshold{kInf, ThresholdMode::Less}, Threshold{7.5f, ThresholdMode::Greater}}) {
    const IntInterval ints = detail::integer_interval(detail::key_interval(r), K);
    INFO(rule_text(r) << ": G from " << ints.lo << ", count " << ints.count);
    for (int g : {-K, -K + 1, -16777215, -8, 7, 8, 9, K - 1, K}) {
      const bool inside = std::int64_t(g) >= ints.lo && std::int64_t(g) < std::int64_t(ints.lo) + ints.count;
      INFO("G " << g);
      REQUIRE(inside == threshold_bit(static_cast<float>(g), r));
    }
  }
}

TEST_CASE("output rules: the tables of each output kind", "[output_rules]") {
  using Kind = BinaryConvolution::Output::Kind;
  BinaryConvolution::Output out;
  detail::OutputRules r = detail::output_rules(out, 9, 32);
  CHECK(r.mode == 0);
  CHECK(r.bytes() == 0);

  out.kind = Kind::ScaleBias;
  out.scale = {2.0f, -0.5f, 1.0f};
  out.bias = {0.25f, 3.0f, -1.0f};
  r = detail::output_rules(out, 9, 32);
  CHECK(r.mode == 1);
  CHECK(r.scale == std::vector<cl_float>{2.0f, -0.5f, 1.0f});
  CHECK(r.bias == std::vector<cl_float>{0.25f, 3.0f, -1.0f});
  CHECK(r.keys.empty());
  CHECK(r.int_lo.empty());
  CHECK(r.bytes() == 24);

  out.kind = Kind::Packed;
  out.thresholds = {{2.5f, ThresholdMode::Greater},
                    {-1.0f, ThresholdMode::Less},
                    {0.0f, ThresholdMode::AlwaysOne},
                    {0.0f, ThresholdMode::AlwaysZero}};
  r = detail::output_rules(out, 9, 32);
  CHECK(r.mode == 2);
  REQUIRE(r.keys.size() == 4);
  REQUIRE(r.modes.size() == 4);
  CHECK(r.keys[0] == detail::float_order_key(2.5f) + 1);
  CHECK(r.modes[0] == 0xffffffffu - detail::float_order_key(2.5f));
  CHECK(r.keys[1] == 1u);
  CHECK(r.modes[1] == detail::float_order_key(-1.0f) - 1);
  CHECK(r.keys[2] == 1u);
  CHECK(r.modes[2] == 0xffffffffu);
  CHECK(r.modes[3] == 0u);
  // G in [-9, 9]: > 2.5 is 3..9; < -1 is -9..-2; always one all 19; always zero none; rows 4..31 none.
  std::vector<cl_int> lo(32, 0);
  std::vector<cl_uint> count(32, 0);
  lo[0] = 3, count[0] = 7;
  lo[1] = -9, count[1] = 8;
  lo[2] = -9, count[2] = 19;
  CHECK(r.int_lo == lo);
  CHECK(r.int_count == count);
  CHECK(r.bytes() == (4 + 4 + 32 + 32) * 4);
}

TEST_CASE("output rules: the input thresholds as order keys, key(0) where none are given", "[output_rules]") {
  CHECK(detail::input_threshold_keys({}, 3) == std::vector<cl_uint>(3, detail::float_order_key(0.0f)));
  CHECK(detail::input_threshold_keys({0.5f, -kInf}, 2) ==
        std::vector<cl_uint>{detail::float_order_key(0.5f), detail::float_order_key(-kInf)});
  CHECK(detail::float_order_key(-0.0f) == detail::float_order_key(0.0f));
}

TEST_CASE("output rules: a clamp composed into a rule gives the bit of the clamped value", "[output_rules]") {
  Rng rng(77);
  const std::vector<float> specials = special_values();
  std::vector<float> ys = specials;
  for (int i = 0; i < 400; ++i) ys.push_back((rng.unit() - 0.5f) * float(rng.uniform(1, 50)));
  for (int i = -12; i <= 12; ++i) ys.push_back(0.5f * static_cast<float>(i));
  int constant = 0, kept = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const Threshold rule = random_rule(rng, specials);
    float lo = 0, hi = 0;
    do {
      lo = rng.chance(30) ? rng.pick(specials) : static_cast<float>(rng.uniform(-8, 8)) * 0.5f;
      hi = rng.chance(30) ? rng.pick(specials) : static_cast<float>(rng.uniform(-8, 8)) * 0.5f;
      if (rng.chance(10)) lo = -kInf;
      if (rng.chance(10)) hi = kInf;
    } while (detail::float_is_nan(lo) || detail::float_is_nan(hi) || !(lo <= hi));
    const Threshold composed = detail::clamped_rule(rule, lo, hi);
    constant += composed.mode != rule.mode;
    kept += composed.mode == rule.mode;
    const std::vector<float> clamped = reference_clamp(ys, lo, hi);
    for (std::size_t i = 0; i < ys.size(); ++i) {
      INFO(rule_text(rule) << " clamp [" << test::float_text(lo) << ", " << test::float_text(hi) << "] y "
                           << test::float_text(ys[i]));
      REQUIRE(threshold_bit(ys[i], composed) == threshold_bit(clamped[i], rule));
      // What the kernels test: the composed rule's key interval.
      REQUIRE(in_keys(ys[i], detail::key_interval(composed)) == threshold_bit(clamped[i], rule));
    }
  }
  CHECK(constant > 100);
  CHECK(kept > 100);
}
