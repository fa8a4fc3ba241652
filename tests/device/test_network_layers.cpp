// SPDX-License-Identifier: Apache-2.0
// The network layers' kernels against their host references on randomized shapes, on both variants.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "conv_case.hpp"
#include "device_checks.hpp"
#include "device_support.hpp"

namespace xnorcl::test {
namespace {

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

Shape random_shape(Rng& rng) {
  static const std::vector<int> channels = {1, 3, 5, 31, 32, 33, 64, 70};
  return Shape{rng.uniform(1, 2), rng.pick(channels), rng.uniform(1, 7), rng.uniform(1, 7)};
}

std::int64_t count(const Shape& s) {
  return s[0] * s[1] * s[2] * s[3];
}

// Floats with specials and exact hits of the thresholds (the equality case).
std::vector<float> random_values(Rng& rng, const Shape& s, const std::vector<Threshold>& rules) {
  std::vector<float> y(static_cast<std::size_t>(count(s)));
  const std::vector<float> specials = {0.0f, -0.0f, from_bits(1u), from_bits(0x80000001u),
                                       kInf, -kInf, kNaN,          from_bits(0x007fffffu)};
  const std::int64_t plane = s[2] * s[3];
  for (std::size_t i = 0; i < y.size(); ++i) {
    const int r = rng.uniform(0, 9);
    const std::size_t c = static_cast<std::size_t>((static_cast<std::int64_t>(i) / plane) % s[1]);
    if (r < 2 && !rules.empty()) {
      y[i] = rules[c].value;
    } else if (r < 3) {
      y[i] = rng.pick(specials);
    } else {
      y[i] = static_cast<float>(rng.uniform(-8, 8)) * 0.25f;
    }
  }
  return y;
}

std::vector<Threshold> random_rules(Rng& rng, std::int64_t channels) {
  std::vector<Threshold> rules(static_cast<std::size_t>(channels));
  for (Threshold& r : rules) {
    r.value = static_cast<float>(rng.uniform(-6, 6)) * 0.25f;
    if (rng.chance(10)) r.value = rng.chance(50) ? -0.0f : from_bits(1u);
    const int m = rng.uniform(0, 9);
    r.mode = m < 5   ? ThresholdMode::Greater
             : m < 8 ? ThresholdMode::Less
             : m < 9 ? ThresholdMode::AlwaysZero
                     : ThresholdMode::AlwaysOne;
  }
  return rules;
}

void threshold_pack_matches_reference(Variant variant) {
  Runtime& rt = runtime_for(variant);
  Rng rng(100);
  for (int trial = 0; trial < 24; ++trial) {
    const Shape s = random_shape(rng);
    const std::vector<Threshold> rules = trial % 6 == 0 ? std::vector<Threshold>{} : random_rules(rng, s[1]);
    const std::vector<float> y = random_values(rng, s, rules);
    INFO("trial " << trial << " shape " << to_string(s));
    ThresholdPack k(rt, s, rules);
    const std::vector<std::uint32_t> got = k.run(y.data());
    const std::vector<std::uint32_t> want = pack_activations(y.data(), s, rules);
    REQUIRE(got == want);
  }
}

void folded_batch_norm_on_device(Variant variant) {
  Runtime& rt = runtime_for(variant);
  // Channels: scale > 0, < 0, +0 with bias > 0, -0 with bias 0; values hit each threshold exactly.
  const std::vector<float> scale{2.0f, -4.0f, 0.0f, -0.0f}, bias{1.0f, 2.0f, 1.0f, 0.0f};
  const std::vector<Threshold> rules = fold_batch_norm(scale, bias);
  const Shape s{1, 4, 1, 5};
  const std::vector<float> y = {-0.5f, -1.0f, 0.0f, kNaN, 1.0f, 0.5f, 0.0f,  1.0f, -kInf, kNaN,
                                3.0f,  -3.0f, kNaN, 0.0f, 1.0f, 3.0f, -3.0f, 0.0f, kInf,  kNaN};
  ThresholdPack k(rt, s, rules);
  const std::vector<std::uint32_t> got = k.run(y.data());
  REQUIRE(got == pack_activations(y.data(), s, rules));
  // Pixel x, channel c: c0 is y > -0.5, c1 is y < 0.5, c2 is 1 (but NaN), c3 is 0.
  REQUIRE(got == std::vector<std::uint32_t>{0b0100u, 0b0110u, 0b0001u, 0b0110u, 0b0101u});
}

PoolAttributes random_pool(Rng& rng) {
  PoolAttributes a;
  a.kernel = {rng.uniform(1, 3), rng.uniform(1, 3)};
  a.strides = {rng.uniform(1, 3), rng.uniform(1, 3)};
  a.pads_begin = {rng.uniform(0, 2), rng.uniform(0, 2)};
  a.pads_end = {rng.uniform(0, 2), rng.uniform(0, 2)};
  a.rounding_type = rng.chance(50) ? RoundingType::Ceil : RoundingType::Floor;
  a.auto_pad = rng.pick(std::vector<AutoPad>{AutoPad::Explicit, AutoPad::Explicit, AutoPad::Explicit,
                                             AutoPad::SameUpper, AutoPad::SameLower, AutoPad::Valid});
  return a;
}

// BinaryMaxPool and MaxPool on random values of shape s equal their host references.
void require_pools_match(Runtime& rt, Rng& rng, const PoolAttributes& a, const Shape& s) {
  const std::vector<float> y = random_values(rng, s, {});
  const std::vector<std::uint32_t> words = pack_activations(y.data(), s);
  BinaryMaxPool bp(rt, a, s);
  REQUIRE(bp.run(words.data()) == reference_binary_maxpool(words.data(), s, a));
  MaxPool fp(rt, a, s);
  REQUIRE(same_bits(fp.run(y.data()), reference_maxpool(y.data(), s, a)));
}

void maxpool_matches_reference(Variant variant) {
  Runtime& rt = runtime_for(variant);
  Rng rng(300);
  int checked = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const Shape s = random_shape(rng);
    const PoolAttributes a = random_pool(rng);
    try {
      validate_pool(a, s);
    } catch (const InvalidArgument&) {
      REQUIRE_THROWS_AS(BinaryMaxPool(rt, a, s), InvalidArgument);
      continue;
    }
    INFO("trial " << trial << " shape " << to_string(s) << " kernel " << a.kernel[0] << "x" << a.kernel[1]
                  << " strides " << a.strides[0] << "," << a.strides[1] << " pads " << a.pads_begin[0] << ","
                  << a.pads_begin[1] << "/" << a.pads_end[0] << "," << a.pads_end[1] << " "
                  << to_string(a.auto_pad) << " " << to_string(a.rounding_type));
    require_pools_match(rt, rng, a, s);
    ++checked;
  }
  REQUIRE(checked >= 20);
}

// Rows wide enough for the Global variant's runs of 16 outputs per work-item: interior runs read each tap as
// one vector (strides 1 and 2), runs cut by the input's edges or the row's end (and stride 3) lane by lane.
// The values hold NaN, infinities, subnormals, -0 and +0 (a tie the first tap wins) and many equal values.
void float_maxpool_over_wide_rows(Variant variant) {
  for (const bool other : {false, true}) {  // the device's kernel over runs, then the other one
    Runtime& rt = other ? runtime_with_other_float_compare(variant) : runtime_for(variant);
    Rng rng(320);
    int checked = 0, in_runs = 0;
    for (int trial = 0; trial < 30; ++trial) {
      const Shape s{rng.uniform(1, 2), rng.uniform(1, 4), rng.uniform(1, 6), rng.uniform(16, 90)};
      PoolAttributes a;
      a.kernel = {rng.uniform(1, 3), rng.uniform(1, 4)};
      a.strides = {rng.uniform(1, 2), trial % 3 + 1};
      a.pads_begin = {rng.uniform(0, a.kernel[0] - 1), rng.uniform(0, a.kernel[1] - 1)};
      a.pads_end = {rng.uniform(0, a.kernel[0] - 1), rng.uniform(0, a.kernel[1] - 1)};
      a.rounding_type = rng.chance(50) ? RoundingType::Ceil : RoundingType::Floor;
      try {
        validate_pool(a, s);
      } catch (const InvalidArgument&) {
        continue;
      }
      INFO("trial " << trial << " shape " << to_string(s) << " kernel " << a.kernel[0] << "x" << a.kernel[1]
                    << " strides " << a.strides[0] << "," << a.strides[1] << " pads " << a.pads_begin[0]
                    << "," << a.pads_begin[1] << "/" << a.pads_end[0] << "," << a.pads_end[1]);
      const std::vector<float> y = random_values(rng, s, {});
      MaxPool pool(rt, a, s);
      const bool runs = expect_pool_runs(variant, a, s);
      CHECK(std::string(pool.kernel()) == (runs ? maxpool_runs_kernel(rt, other) : "maxpool_f32"));
      in_runs += runs;
      REQUIRE(same_bits(pool.run(y.data()), reference_maxpool(y.data(), s, a)));
      ++checked;
    }
    REQUIRE(checked >= 20);
    if (variant == Variant::Global) REQUIRE(in_runs >= 10);
  }
}

// Windows whose only numbers are -inf or -FLT_MAX, and windows of NaN only (no number: -FLT_MAX), among
// -0, subnormals and ordinary values, in runs of both kernels: the float compare starts below every number
// and counts the numbers it saw.
void float_maxpool_windows_without_numbers(Variant variant) {
  const float lowest = -std::numeric_limits<float>::max();
  for (const bool other : {false, true}) {
    Runtime& rt = other ? runtime_with_other_float_compare(variant) : runtime_for(variant);
    Rng rng(322);
    int no_number = 0, only_minus_inf = 0;
    for (int trial = 0; trial < 12; ++trial) {
      const Shape s{1, 2, rng.uniform(2, 5), rng.uniform(33, 70)};
      PoolAttributes a;
      a.kernel = {rng.uniform(1, 2), rng.uniform(1, 3)};
      a.strides = {1, trial % 2 + 1};
      a.pads_begin = {0, rng.uniform(0, a.kernel[1] - 1)};
      a.pads_end = {0, rng.uniform(0, a.kernel[1] - 1)};
      INFO("trial " << trial << " shape " << to_string(s) << " kernel " << a.kernel[0] << "x" << a.kernel[1]
                    << " stride " << a.strides[1] << " pads " << a.pads_begin[1] << "/" << a.pads_end[1]);
      std::vector<float> y(static_cast<std::size_t>(count(s)));
      for (float& v : y) {
        const int r = rng.uniform(0, 9);
        v = r < 5 ? kNaN : r < 7 ? -kInf : r < 8 ? lowest : r < 9 ? -0.0f : from_bits(0x80000001u);
      }
      MaxPool pool(rt, a, s);
      CHECK(std::string(pool.kernel()) ==
            (expect_pool_runs(variant, a, s) ? maxpool_runs_kernel(rt, other) : "maxpool_f32"));
      const std::vector<float> want = reference_maxpool(y.data(), s, a);
      REQUIRE(same_bits(pool.run(y.data()), want));
      for (float v : want) {
        no_number += std::memcmp(&v, &lowest, 4) == 0;
        only_minus_inf += v == -kInf;
      }
    }
    REQUIRE(no_number >= 20);  // -FLT_MAX: a window of NaN only, or whose best number was -FLT_MAX
    REQUIRE(only_minus_inf >= 20);
  }
}

// Rows narrower than a run of 16 outputs whose windows lie inside the input row (strides 1 and 2, no left
// pad): on the Global variant one run per row whose spare lanes read on into the next rows; the tensor's last
// rows, whose spare lanes would read past its end, lane by lane. Values as above.
void float_maxpool_over_narrow_rows(Variant variant) {
  for (const bool other : {false, true}) {  // the device's kernel over runs, then the other one
    Runtime& rt = other ? runtime_with_other_float_compare(variant) : runtime_for(variant);
    Rng rng(321);
    int narrow_runs = 0;
    for (int trial = 0; trial < 24; ++trial) {
      PoolAttributes a;
      a.kernel = {rng.uniform(1, 3), rng.uniform(1, 3)};
      a.strides = {rng.uniform(1, 2), trial % 2 + 1};
      a.pads_begin = {rng.uniform(0, a.kernel[0] - 1), 0};
      a.pads_end = {rng.uniform(0, a.kernel[0] - 1), 0};
      const int out_width = rng.uniform(1, 15);
      const Shape s{rng.uniform(1, 3), rng.uniform(1, 5), rng.uniform(a.kernel[0], 9),
                    (out_width - 1) * a.strides[1] + a.kernel[1] + rng.uniform(0, a.strides[1] - 1)};
      INFO("trial " << trial << " shape " << to_string(s) << " kernel " << a.kernel[0] << "x" << a.kernel[1]
                    << " strides " << a.strides[0] << "," << a.strides[1] << " pads " << a.pads_begin[0]
                    << "/" << a.pads_end[0]);
      const std::vector<float> y = random_values(rng, s, {});
      MaxPool pool(rt, a, s);
      REQUIRE(pool.output_shape()[3] == out_width);
      const bool runs = expect_pool_runs(variant, a, s);
      REQUIRE(runs == (variant == Variant::Global));
      CHECK(std::string(pool.kernel()) == (runs ? maxpool_runs_kernel(rt, other) : "maxpool_f32"));
      narrow_runs += runs;
      REQUIRE(same_bits(pool.run(y.data()), reference_maxpool(y.data(), s, a)));
    }
    if (variant == Variant::Global) REQUIRE(narrow_runs == 24);
  }
}

// Strides and pads near INT_MAX: window corners beyond 32 bits (py * stride - pad) on either side of the
// input, windows cut by the edges and empty ones; the kernels compute the corners in 64 bits.
void maxpool_with_huge_attributes(Variant variant) {
  Runtime& rt = runtime_for(variant);
  Rng rng(310);
  const Shape s{2, 37, 5, 4};
  const int big = std::numeric_limits<int>::max();
  const std::vector<PoolAttributes> pools = [&] {
    std::vector<PoolAttributes> v(3);
    v[0].kernel = {2, 3};
    v[0].strides = {big, big - 1};
    v[0].pads_begin = {big - 1, big - 2};
    v[0].pads_end = {big - 1, big - 3};
    v[1] = v[0];
    v[1].rounding_type = RoundingType::Ceil;
    v[2].kernel = {5, 4};
    v[2].strides = {big - 7, 3};
    v[2].pads_begin = {4, 3};
    v[2].pads_end = {big - 5, 3};
    return v;
  }();
  for (const PoolAttributes& a : pools) {
    const PoolGeometry g = validate_pool(a, s);
    INFO("strides " << a.strides[0] << "," << a.strides[1] << " pads " << a.pads_begin[0] << ","
                    << a.pads_begin[1] << "/" << a.pads_end[0] << "," << a.pads_end[1] << " "
                    << to_string(a.rounding_type) << " -> " << to_string(g.output));
    REQUIRE(g.output[2] * g.output[3] >= 4);  // more than one window per axis somewhere
    require_pools_match(rt, rng, a, s);
  }
  // The same windows fused into a convolution's packed output (BinaryConvolution::Options::max_pool): a 1x1
  // convolution of +-1 input, whose output is the input times the filter signs.
  const Shape x_shape{2, 37, 5, 4};
  std::vector<float> x(static_cast<std::size_t>(count(x_shape)));
  for (float& v : x) v = rng.chance(50) ? 1.0f : -1.0f;
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>((33 * 37 + 7) / 8));
  for (auto& b : bytes) b = static_cast<std::uint8_t>(rng.next() >> 56);
  const Filter f = Filter::from_packed(bytes.data(), bytes.size(), Shape{33, 37, 1, 1}, BitOrder::LsbFirst);
  BinaryConvolution::Attributes attributes;
  const std::vector<float> conv = reference_binary_convolution(x.data(), x_shape, f, attributes);
  const Shape conv_shape{2, 33, 5, 4};
  const std::vector<Threshold> rules = random_rules(rng, 33);
  const std::vector<std::uint32_t> bits = pack_activations(conv.data(), conv_shape, rules);
  for (const PoolAttributes& a : pools) {
    BinaryConvolution::Options o;
    o.output = BinaryConvolution::Output::packed(rules);
    o.max_pool = a;
    BinaryConvolution c(rt, attributes, x_shape, f, o);
    REQUIRE(c.run_packed(x.data()) == reference_binary_maxpool(bits.data(), conv_shape, a));
  }
}

void fully_connected_matches_reference(Variant variant) {
  Runtime& rt = runtime_for(variant);
  Rng rng(400);
  for (int trial = 0; trial < 12; ++trial) {
    const Shape s = trial == 0 ? Shape{1, 32, 24, 24} : random_shape(rng);  // trial 0: the paper's FC input
    const std::int64_t O = trial == 0 ? 100 : rng.uniform(1, 70);
    std::vector<float> y(static_cast<std::size_t>(count(s)));
    for (float& v : y) v = rng.chance(50) ? 1.0f : -1.0f;
    const std::vector<std::uint32_t> x = pack_activations(y.data(), s);
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>((O * s[1] * s[2] * s[3] + 7) / 8));
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng.next() >> 56);
    const Filter w =
        Filter::from_packed(bytes.data(), bytes.size(), Shape{O, s[1], s[2], s[3]}, BitOrder::LsbFirst);
    INFO("trial " << trial << " input " << to_string(s) << " outputs " << O);
    const std::vector<float> want = reference_binary_fully_connected(x.data(), s, w);
    BinaryFullyConnected fc(rt, s, w);
    REQUIRE(fc.output_shape() == Shape{s[0], O, 1, 1});
    REQUIRE(same_bits(fc.run(x.data()), want));
    // Packed output: the float result thresholded on the device.
    const std::vector<Threshold> rules = random_rules(rng, O);
    BinaryFullyConnected packed(rt, s, w, rules);
    REQUIRE(packed.packed_output());
    REQUIRE(packed.run_packed(x.data()) == pack_activations(want.data(), Shape{s[0], O, 1, 1}, rules));
    REQUIRE_THROWS_AS(packed.run(x.data()), InvalidArgument);
  }
}

void bad_arguments_are_refused(Variant variant) {
  Runtime& rt = runtime_for(variant);
  REQUIRE_THROWS_WITH(ThresholdPack(rt, Shape{1, 3, 2, 2}, greater_than({1.0f})),
                      Catch::Contains("1 threshold rules for 3 channels"));
  REQUIRE_THROWS_WITH(ThresholdPack(rt, Shape{1, 3, 0, 2}, {}), Catch::Contains("1x3x0x2"));
  REQUIRE_THROWS_WITH(ThresholdPack(rt, Shape{1, 1, 2, 2}, {{0.0f, static_cast<ThresholdMode>(4)}}),
                      Catch::Contains("is 4, not a ThresholdMode"));
  PoolAttributes a;
  a.kernel = {5, 5};
  REQUIRE_THROWS_WITH(BinaryMaxPool(rt, a, Shape{1, 3, 4, 4}), Catch::Contains("(dim: 5)"));
  std::vector<std::uint8_t> bytes(64, 0xff);
  const Filter w = Filter::from_packed(bytes.data(), bytes.size(), Shape{2, 3, 4, 4}, BitOrder::MsbFirst);
  REQUIRE_THROWS_WITH(BinaryFullyConnected(rt, Shape{1, 3, 4, 5}, w), Catch::Contains("[O, C, H, W]"));
  // Buffers smaller than the shapes need, refused before any device work.
  ThresholdPack k(rt, Shape{1, 33, 2, 2}, {});
  cl::Buffer small(rt.context(), CL_MEM_READ_WRITE, 16);
  cl::Buffer big(rt.context(), CL_MEM_READ_WRITE, 4096);
  REQUIRE_THROWS_WITH(k.enqueue(small, big),
                      Catch::Contains("input buffer holds 16 bytes") && Catch::Contains("needs 528"));
  REQUIRE_THROWS_WITH(k.enqueue(big, small),
                      Catch::Contains("output buffer holds 16 bytes") && Catch::Contains("needs 32"));
  REQUIRE_THROWS_AS(k.enqueue(cl::Buffer(), big), InvalidArgument);
  REQUIRE_THROWS_AS(k.run(nullptr), InvalidArgument);
}

}  // namespace

XNORCL_VARIANT_TEST("threshold_pack equals the host packing", "[layers]", threshold_pack_matches_reference)
XNORCL_VARIANT_TEST("folded batch-norm thresholds on the device, equality and NaN", "[layers]",
                    folded_batch_norm_on_device)
XNORCL_VARIANT_TEST("binary and float max-pool equal their references", "[layers]", maxpool_matches_reference)
XNORCL_VARIANT_TEST("float max-pool over rows of several runs of 16 equals its reference", "[layers]",
                    float_maxpool_over_wide_rows)
XNORCL_VARIANT_TEST("float max-pool over rows narrower than a run of 16 equals its reference", "[layers]",
                    float_maxpool_over_narrow_rows)
XNORCL_VARIANT_TEST("float max-pool windows of NaN, -inf and -FLT_MAX only equal their references",
                    "[layers]", float_maxpool_windows_without_numbers)
XNORCL_VARIANT_TEST("max-pools with strides and pads near INT_MAX equal their references", "[layers]",
                    maxpool_with_huge_attributes)
XNORCL_VARIANT_TEST("binary fully-connected equals its reference, float and packed output", "[layers]",
                    fully_connected_matches_reference)
XNORCL_VARIANT_TEST("network layers refuse bad arguments before device work", "[layers]",
                    bad_arguments_are_refused)

}  // namespace xnorcl::test
