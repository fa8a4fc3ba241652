// SPDX-License-Identifier: Apache-2.0
// BinaryConvolution::Options::also_packed: the float output (Float, ScaleBias, ScaleBias with a shortcut,
// clamped or not) and, in the same epilogue, the packed bits of every stored value, on the device against the
// host references (reference_binary_convolution, reference_clamp, reference_scale_bias, pack_activations),
// bitwise. Both ways of packing run: whole words assembled in __local memory (the Local variant's default
// tiles) and a thresholding pass after the GEMM (the Global variant, and the Local one with a work-group cap
// that makes its tile 16 channels).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <map>
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

Runtime& capped_runtime(Variant variant) {
  static std::map<Variant, Runtime> runtimes;
  auto it = runtimes.find(variant);
  if (it != runtimes.end()) return it->second;
  runtime_for(variant);  // fails (or skips) the test cleanly without a device
  RuntimeOptions options;
  options.variant = variant;
  options.max_work_group_size = 16;
  return runtimes.emplace(variant, Runtime::create(options)).first->second;
}

// Per channel a Greater or Less rule at a value the layer stores (so that ties are tested), at +-inf, or a
// constant rule.
std::vector<Threshold> random_rules(Rng& rng, const std::vector<float>& stored, std::int64_t channels) {
  std::vector<Threshold> rules(static_cast<std::size_t>(channels));
  for (Threshold& r : rules) {
    r.mode = rng.chance(50) ? ThresholdMode::Greater : ThresholdMode::Less;
    const int kind = rng.uniform(0, 9);
    if (kind == 0) {
      r.value = rng.chance(50) ? inf : -inf;
    } else if (kind == 1) {
      r.mode = rng.chance(50) ? ThresholdMode::AlwaysOne : ThresholdMode::AlwaysZero;
    } else if (kind == 2) {
      r.value = 0.0f;
    } else {
      r.value = stored[static_cast<std::size_t>(rng.uniform(0, static_cast<int>(stored.size()) - 1))];
    }
  }
  return rules;
}

struct Outputs {
  std::vector<float> y;
  std::vector<std::uint32_t> bits;
};

// The layer through enqueue(input, shortcut, output, bits). The bits buffer starts as garbage (all ones), so
// that a word nothing writes shows.
Outputs run_also_packed(Runtime& rt, BinaryConvolution& conv, const ConvCase& c,
                        const std::vector<float>* shortcut) {
  std::vector<float> x = c.x_f32;
  if (c.uint8_input) x.assign(c.x_u8.begin(), c.x_u8.end());
  const std::size_t words = static_cast<std::size_t>(packed_word_count(conv.output_shape()));
  cl::Buffer in(rt.context(), CL_MEM_READ_ONLY, x.size() * 4);
  cl::Buffer out(rt.context(), CL_MEM_READ_WRITE, conv.output_bytes());
  cl::Buffer bits(rt.context(), CL_MEM_READ_WRITE, words * 4);
  rt.queue().enqueueWriteBuffer(in, CL_TRUE, 0, x.size() * 4, x.data());
  const std::vector<std::uint32_t> garbage(words, 0xffffffffu);
  rt.queue().enqueueWriteBuffer(bits, CL_TRUE, 0, words * 4, garbage.data());
  cl::Buffer sc;
  if (shortcut) {
    sc = cl::Buffer(rt.context(), CL_MEM_READ_ONLY, shortcut->size() * 4);
    rt.queue().enqueueWriteBuffer(sc, CL_TRUE, 0, shortcut->size() * 4, shortcut->data());
  }
  std::vector<cl::Event> done(1, conv.enqueue(in, shortcut ? &sc : nullptr, out, bits));
  Outputs o;
  o.y.resize(conv.output_bytes() / 4);
  o.bits.resize(words);
  rt.queue().enqueueReadBuffer(out, CL_TRUE, 0, o.y.size() * 4, o.y.data(), &done);
  rt.queue().enqueueReadBuffer(bits, CL_TRUE, 0, words * 4, o.bits.data(), &done);
  return o;
}

struct Seen {
  int local_words = 0, pass_words = 0, shortcut = 0, clamped = 0, ones = 0, zeros = 0;
};

void check_case(Runtime& rt, Variant variant, const ConvCase& c, int form, Seen& seen) {
  INFO(describe(c));
  Rng rng(c.seed * 29 + static_cast<std::uint64_t>(form));
  const ConvGeometry g = BinaryConvolution::validate(c.attributes, c.input, c.filter);
  const std::int64_t channels = c.filter[0];
  std::vector<float> want = c.reference();
  Options o;
  if (form == 1 || rng.chance(30)) {  // a clamp of the sum first, as a Larq model has
    const float mid = std::round(want[want.size() / 2]);
    o.clamp_low = mid - 1.5f;
    o.clamp_high = mid + 2.0f;
    want = reference_clamp(want, o.clamp_low, o.clamp_high);
    ++seen.clamped;
  }
  std::vector<float> shortcut;
  if (form >= 2) {
    std::vector<float> scale, bias;
    random_scale_bias(rng, channels, scale, bias);
    want = reference_scale_bias(want.data(), g.output, scale, bias);
    o.output = Output::scale_and_bias(scale, bias);
  }
  if (form == 3) {
    o.add_shortcut = true;
    shortcut.resize(want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      shortcut[i] = static_cast<float>(rng.uniform(-40, 40)) * 0.125f;
      want[i] += shortcut[i];
    }
    ++seen.shortcut;
  }
  o.also_packed = random_rules(rng, want, channels);
  const std::vector<std::uint32_t> want_bits = pack_activations(want.data(), g.output, o.also_packed);
  for (std::uint32_t w : want_bits) {
    seen.ones += w != 0;
    seen.zeros += w != 0xffffffffu;
  }

  BinaryConvolution conv(rt, c.attributes, c.input, c.make_filter(), o);
  INFO(conv.plan().to_string());
  REQUIRE(conv.plan().variant == variant);
  const bool in_local = conv.plan().output.find("in __local memory") != std::string::npos;
  REQUIRE((in_local || conv.plan().output.find("threshold_pack after the GEMM") != std::string::npos));
  (in_local ? seen.local_words : seen.pass_words) += 1;
  const Outputs got = run_also_packed(rt, conv, c, form == 3 ? &shortcut : nullptr);
  // The GEMM ran: the fused one wherever it packs or has an epilogue; a plain float output thresholded by
  // the pass after it runs the plain one.
  REQUIRE((has_stage(conv.last_stage_times(), fused_gemm_kernel(conv)) ||
           (!in_local && has_stage(conv.last_stage_times(), "xnor_gemm"))));
  REQUIRE(has_stage(conv.last_stage_times(), "threshold_pack") == !in_local);
  const std::string y_difference = bitwise_difference(got.y, want, g.output);
  INFO("float output: " << y_difference);
  REQUIRE(y_difference.empty());
  const std::string bits_difference = word_difference(got.bits, want_bits);
  INFO("bits: " << bits_difference);
  REQUIRE(bits_difference.empty());
}

// Random layers (tests/conv_case.hpp: odd C_OUT, kernels 1..7, strides, dilations, every auto_pad and
// pad_value class, batch 1..3, float and uint8 inputs), each output form, with the variant's default tiles
// and with 16-channel tiles.
void random_also_packed_cases(Variant variant) {
  Seen seen;
  for (Runtime* rt : {&runtime_for(variant), &capped_runtime(variant)}) {
    for (int i = 0; i < 12; ++i) {
      const ConvCase c =
          random_case(std::uint64_t(9700) + std::uint64_t(i) + (rt == &runtime_for(variant) ? 0 : 50), 3e6);
      check_case(*rt, variant, c, i % 4, seen);
    }
  }
  INFO("local words " << seen.local_words << ", by a pass " << seen.pass_words << ", shortcut "
                      << seen.shortcut << ", clamped " << seen.clamped);
  CHECK(seen.pass_words > 0);
  if (variant == Variant::Local) CHECK(seen.local_words > 0);
  CHECK(seen.shortcut > 0);
  CHECK(seen.clamped > 0);
  CHECK(seen.ones > 0);
  CHECK(seen.zeros > 0);
}

// Refusals: the options, and enqueues that do not match them, name the problem.
void also_packed_refusals(Variant variant) {
  Runtime& rt = runtime_for(variant);
  const ConvCase c = random_case(9001, 1e5);
  const Filter f = c.make_filter();
  const std::size_t channels = static_cast<std::size_t>(c.filter[0]);
  Options o;
  o.also_packed.assign(channels + 1, Threshold{});
  REQUIRE_THROWS_WITH(BinaryConvolution(rt, c.attributes, c.input, f, o),
                      Catch::Contains("Options::also_packed has " + std::to_string(channels + 1)));
  o.also_packed.assign(channels, Threshold{std::nanf(""), ThresholdMode::Greater});
  REQUIRE_THROWS_WITH(BinaryConvolution(rt, c.attributes, c.input, f, o), Catch::Contains("is NaN"));
  o.also_packed.assign(channels, Threshold{});
  o.output = Output::packed(std::vector<Threshold>(channels));
  REQUIRE_THROWS_WITH(BinaryConvolution(rt, c.attributes, c.input, f, o),
                      Catch::Contains("Options::also_packed needs Output::Float or ScaleBias"));
  o.output = Output::float32();
  BinaryConvolution conv(rt, c.attributes, c.input, f, o);
  REQUIRE_THROWS_WITH(conv.run(c.x_f32.data()), Catch::Contains("also writes packed bits"));
  cl::Buffer in(rt.context(), CL_MEM_READ_WRITE, c.x_f32.size() * 4);
  cl::Buffer out(rt.context(), CL_MEM_READ_WRITE, conv.output_bytes());
  REQUIRE_THROWS_WITH(conv.enqueue(in, out), Catch::Contains("enqueue(input, shortcut, output, bits)"));
  REQUIRE_THROWS_WITH(conv.enqueue(in, &in, out, out), Catch::Contains("a shortcut was given"));
  REQUIRE_THROWS_WITH(conv.enqueue(in, nullptr, out, out), Catch::Contains("overlap"));
  BinaryConvolution plain(rt, c.attributes, c.input, f);
  REQUIRE_THROWS_WITH(plain.enqueue(in, nullptr, out, out), Catch::Contains("needs a layer made with"));
}

}  // namespace

XNORCL_VARIANT_TEST("also_packed: float output and its bits in one epilogue equal the host references",
                    "[conv_also_packed]", random_also_packed_cases)
XNORCL_VARIANT_TEST("also_packed: refusals", "[conv_also_packed]", also_packed_refusals)

}  // namespace xnorcl::test
