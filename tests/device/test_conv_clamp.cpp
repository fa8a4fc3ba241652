// SPDX-License-Identifier: Apache-2.0
// BinaryConvolution::Options::clamp_low/high (the fused activation of a Larq/LCE binary convolution, applied
// to the sum before the multiplier and bias) in the GEMM's epilogue, on the device against the host
// references (reference_binary_convolution, reference_clamp, reference_scale_bias, pack_activations),
// bitwise: Float, ScaleBias, ScaleBias with a shortcut, and Packed output (the clamp composed into the
// rules).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "conv_case.hpp"
#include "device_checks.hpp"
#include "device_support.hpp"

namespace xnorcl::test {
namespace {

using Output = BinaryConvolution::Output;
using Options = BinaryConvolution::Options;
constexpr float inf = std::numeric_limits<float>::infinity();

// The clamps a converted model uses (Relu, RELU6, RELU_N1_TO_1) and random ones inside the range of y (so
// that both bounds bite), half-integers (between the integer sums, next to the pad fold's fractions), and a
// single point.
std::pair<float, float> random_clamp(Rng& rng, const std::vector<float>& y) {
  float y_lo = inf, y_hi = -inf;
  for (float v : y) {
    y_lo = std::min(y_lo, v);
    y_hi = std::max(y_hi, v);
  }
  switch (rng.uniform(0, 6)) {
    case 0:
      return {0.0f, inf};
    case 1:
      return {0.0f, 6.0f};
    case 2:
      return {-1.0f, 1.0f};
    case 3: {
      const float a = y[static_cast<std::size_t>(rng.uniform(0, static_cast<int>(y.size()) - 1))];
      const float b = y[static_cast<std::size_t>(rng.uniform(0, static_cast<int>(y.size()) - 1))];
      return {std::min(a, b), std::max(a, b)};
    }
    case 4: {
      const float mid = std::round((y_lo + y_hi) / 2);
      return {mid - 2.5f, mid + 1.5f};
    }
    case 5:
      return {-inf, std::round(y_hi / 2)};
    default: {
      const float a = y[static_cast<std::size_t>(rng.uniform(0, static_cast<int>(y.size()) - 1))];
      return {a, a};
    }
  }
}

// Per channel a Greater or Less rule at a value y really takes, at a clamp bound, just outside the clamp
// range (the composed rule is then constant), or at +-inf.
std::vector<Threshold> random_rules(Rng& rng, const std::vector<float>& y, std::int64_t channels, float lo,
                                    float hi) {
  std::vector<Threshold> rules(static_cast<std::size_t>(channels));
  for (Threshold& r : rules) {
    r.mode = rng.chance(50) ? ThresholdMode::Greater : ThresholdMode::Less;
    switch (rng.uniform(0, 6)) {
      case 0:
        r.value = lo;
        break;
      case 1:
        r.value = hi;
        break;
      case 2:
        r.value = lo - 0.5f;
        break;
      case 3:
        r.value = hi + 0.5f;
        break;
      case 4:
        r.value = rng.chance(50) ? inf : -inf;
        break;
      default:
        r.value = y[static_cast<std::size_t>(rng.uniform(0, static_cast<int>(y.size()) - 1))];
    }
    if (std::isnan(r.value)) r.value = 0.0f;  // inf - inf cannot happen here, but keep rules valid
  }
  return rules;
}

std::vector<float> run_float(BinaryConvolution& conv, const ConvCase& c) {
  return c.uint8_input ? conv.run(c.x_u8.data()) : conv.run(c.x_f32.data());
}

// The layer's output through enqueue(input, shortcut, output) on the device.
std::vector<float> run_with_shortcut(Runtime& rt, BinaryConvolution& conv, const ConvCase& c,
                                     const std::vector<float>& shortcut) {
  std::vector<float> x = c.x_f32;
  if (c.uint8_input) x.assign(c.x_u8.begin(), c.x_u8.end());
  cl::Buffer in(rt.context(), CL_MEM_READ_ONLY, x.size() * 4);
  cl::Buffer sc(rt.context(), CL_MEM_READ_ONLY, shortcut.size() * 4);
  cl::Buffer out(rt.context(), CL_MEM_READ_WRITE, conv.output_bytes());
  rt.queue().enqueueWriteBuffer(in, CL_TRUE, 0, x.size() * 4, x.data());
  rt.queue().enqueueWriteBuffer(sc, CL_TRUE, 0, shortcut.size() * 4, shortcut.data());
  std::vector<cl::Event> done(1, conv.enqueue(in, sc, out));
  std::vector<float> y(shortcut.size());
  rt.queue().enqueueReadBuffer(out, CL_TRUE, 0, y.size() * 4, y.data(), &done);
  return y;
}

bool ran(const BinaryConvolution& conv, const std::string& kernel) {
  return has_stage(conv.last_stage_times(), kernel);
}

// Counts what the cases covered, so the test proves it saw the classes it claims.
struct Coverage {
  int clamped_values = 0, fractional_values = 0, constant_rules = 0;
};

void check_clamp_case(Runtime& rt, Variant variant, const ConvCase& c, Coverage& seen) {
  INFO(describe(c));
  Rng rng(c.seed * 13 + 5);
  const std::vector<float> y_ref = c.reference();
  const ConvGeometry g = BinaryConvolution::validate(c.attributes, c.input, c.filter);
  const Filter f = c.make_filter();
  const auto [lo, hi] = random_clamp(rng, y_ref);
  INFO("clamp [" << lo << ", " << hi << "]");
  const std::vector<float> clamped = reference_clamp(y_ref, lo, hi);
  for (std::size_t i = 0; i < y_ref.size(); ++i) {
    seen.clamped_values += clamped[i] != y_ref[i];
    seen.fractional_values += y_ref[i] != std::round(y_ref[i]) && clamped[i] == y_ref[i];
  }
  Options base;
  base.clamp_low = lo;
  base.clamp_high = hi;
  // Float: xnor_gemm_fused, mode 0, clamped.
  {
    BinaryConvolution conv(rt, c.attributes, c.input, f, base);
    REQUIRE(conv.plan().variant == variant);
    REQUIRE(conv.plan().output.rfind("float32 (" + fused_gemm_kernel(conv) + "), clamped to [", 0) == 0);
    const std::vector<float> got = run_float(conv, c);
    REQUIRE(ran(conv, fused_gemm_kernel(conv)));
    const std::string difference = bitwise_difference(got, clamped, g.output);
    INFO("float: " << difference);
    REQUIRE(difference.empty());
  }
  // ScaleBias, and ScaleBias with a shortcut.
  std::vector<float> scale, bias;
  random_scale_bias(rng, c.filter[0], scale, bias);
  const std::vector<float> want_sb = reference_scale_bias(clamped.data(), g.output, scale, bias);
  {
    Options o = base;
    o.output = Output::scale_and_bias(scale, bias);
    BinaryConvolution conv(rt, c.attributes, c.input, f, o);
    const std::vector<float> got = run_float(conv, c);
    REQUIRE(ran(conv, fused_gemm_kernel(conv)));
    const std::string difference = bitwise_difference(got, want_sb, g.output);
    INFO("scale_bias: " << difference);
    REQUIRE(difference.empty());
  }
  {
    Options o = base;
    o.output = Output::scale_and_bias(scale, bias);
    o.add_shortcut = true;
    BinaryConvolution conv(rt, c.attributes, c.input, f, o);
    std::vector<float> shortcut(want_sb.size()), want(want_sb.size());
    for (std::size_t i = 0; i < shortcut.size(); ++i) {
      shortcut[i] = static_cast<float>(rng.uniform(-40, 40)) * 0.125f;
      want[i] = want_sb[i] + shortcut[i];
    }
    const std::vector<float> got = run_with_shortcut(rt, conv, c, shortcut);
    const std::string difference = bitwise_difference(got, want, g.output);
    INFO("scale_bias+shortcut: " << difference);
    REQUIRE(difference.empty());
  }
  // Packed: the bit of the clamped value, whichever GEMM kernel packs.
  {
    const std::vector<Threshold> rules = random_rules(rng, y_ref, c.filter[0], lo, hi);
    for (const Threshold& r : rules)
      seen.constant_rules += (r.mode == ThresholdMode::Greater && (lo > r.value || hi <= r.value)) ||
                             (r.mode == ThresholdMode::Less && (hi < r.value || lo >= r.value));
    const std::vector<std::uint32_t> want = pack_activations(clamped.data(), g.output, rules);
    Options o = base;
    o.output = Output::packed(rules);
    BinaryConvolution conv(rt, c.attributes, c.input, f, o);
    const std::vector<std::uint32_t> got =
        c.uint8_input ? conv.run_packed(c.x_u8.data()) : conv.run_packed(c.x_f32.data());
    const std::string difference = word_difference(got, want);
    INFO("packed (" << conv.plan().output << "): " << difference);
    REQUIRE(difference.empty());
  }
}

// Random layers (tests/conv_case.hpp: odd C_OUT, kernels 1..7, strides, dilations, every auto_pad and
// pad_value class, batch 1..3, float and uint8 inputs) with both word sizes.
void random_clamp_cases(Variant variant) {
  Coverage seen;
  int pad_fold_cases = 0, batched = 0;
  for (int word_bits : {0, other_word_bits(variant)}) {
    Runtime& rt = runtime_for(variant, word_bits);
    INFO("word_bits " << word_bits);
    for (int i = 0; i < 10; ++i) {
      const ConvCase c = random_case(std::uint64_t(9100) + std::uint64_t(word_bits) * 100 + i, 3e6);
      const ConvGeometry g = BinaryConvolution::validate(c.attributes, c.input, c.filter);
      pad_fold_cases += g.has_pad_taps && c.attributes.pad_value != 1.0f && c.attributes.pad_value != -1.0f;
      batched += c.input[0] > 1;
      check_clamp_case(rt, variant, c, seen);
    }
  }
  INFO("clamped " << seen.clamped_values << ", fractional " << seen.fractional_values << ", constant rules "
                  << seen.constant_rules << ", pad-fold cases " << pad_fold_cases << ", batched " << batched);
  CHECK(seen.clamped_values > 0);
  CHECK(seen.fractional_values > 0);
  CHECK(seen.constant_rules > 0);
  CHECK(pad_fold_cases > 0);
  CHECK(batched > 0);
}

// Refusals of the clamp bounds, naming the values.
void clamp_refusals(Variant variant) {
  Runtime& rt = runtime_for(variant);
  const ConvCase c = random_case(9001, 1e5);
  const Filter f = c.make_filter();
  for (const auto& [lo, hi] : std::vector<std::pair<float, float>>{
           {1.0f, 0.0f}, {std::nanf(""), 1.0f}, {0.0f, std::nanf("")}, {inf, -inf}}) {
    Options o;
    o.clamp_low = lo;
    o.clamp_high = hi;
    REQUIRE_THROWS_WITH(BinaryConvolution(rt, c.attributes, c.input, f, o),
                        Catch::Contains("must be numbers (+-inf allowed) with clamp_low <= clamp_high"));
  }
  REQUIRE_THROWS_AS(reference_clamp({1.0f}, 2.0f, 1.0f), InvalidArgument);
}

}  // namespace

XNORCL_VARIANT_TEST("clamp of the sum before the output choice equals the host references", "[conv_clamp]",
                    random_clamp_cases)
XNORCL_VARIANT_TEST("clamp of the sum: refusals", "[conv_clamp]", clamp_refusals)

}  // namespace xnorcl::test
