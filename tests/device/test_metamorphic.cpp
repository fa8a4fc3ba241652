// SPDX-License-Identifier: Apache-2.0
// Metamorphic relations on the device: each compares device runs with device runs.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "conv_case.hpp"
#include "device_checks.hpp"
#include "device_support.hpp"
#include "openvino_cases.hpp"

namespace xnorcl::test {
namespace {

constexpr int kCases = 16;

std::vector<float> run_on(Variant variant, const ConvCase& c) {
  BinaryConvolution conv(runtime_for(variant), c.attributes, c.input, c.make_filter());
  std::vector<float> y = run_case(conv, c);
  require_kernels_ran(conv, variant, c.uint8_input);
  return y;
}

void require_same(const std::vector<float>& got, const std::vector<float>& want, const ConvCase& c) {
  const std::string difference =
      bitwise_difference(got, want, BinaryConvolution::validate(c.attributes, c.input, c.filter).output);
  INFO(difference);
  REQUIRE(difference.empty());
}

// Y(v) == fmaf(v, (Y(+1) - Y(-1))/2, (Y(+1) + Y(-1))/2), from the device's own +-1 runs.
void affine_in_pad_value(Variant variant) {
  for (int i = 0; i < kCases; ++i) {
    ConvCase c = random_case(5000 + i);
    INFO(describe(c));
    c.attributes.pad_value = 1.0f;
    const std::vector<float> plus = run_on(variant, c);
    c.attributes.pad_value = -1.0f;
    const std::vector<float> minus = run_on(variant, c);
    for (float v : {0.0f, 0.5f, -0.25f, 0.1f, 0.75f, -3.0f}) {
      c.attributes.pad_value = v;
      INFO("pad_value " << float_text(v));
      std::vector<float> want(plus.size());
      for (std::size_t k = 0; k < plus.size(); ++k) {
        want[k] = std::fmaf(v, (plus[k] - minus[k]) / 2, (plus[k] + minus[k]) / 2);
      }
      require_same(run_on(variant, c), want, c);
    }
  }
}

// Flipping every filter bit at v = 0 negates Y (with +0 for zeros, as fmaf gives).
void flipped_filter_negates(Variant variant) {
  for (int i = 0; i < kCases; ++i) {
    ConvCase c = random_case(5100 + i);
    c.attributes.pad_value = 0.0f;
    INFO(describe(c));
    const std::vector<float> y = run_on(variant, c);
    ConvCase flipped = c;
    for (auto& b : flipped.filter_bytes) b = static_cast<std::uint8_t>(~b);
    std::vector<float> want(y.size());
    for (std::size_t k = 0; k < y.size(); ++k) want[k] = 0.0f - y[k];
    require_same(run_on(variant, flipped), want, c);
  }
}

// LsbFirst bytes that are the bit-reversal of MsbFirst bytes give the same Y.
void bit_orders_agree(Variant variant) {
  for (int i = 0; i < kCases; ++i) {
    ConvCase c = random_case(5200 + i);
    c.order = BitOrder::MsbFirst;
    INFO(describe(c));
    const std::vector<float> msb = run_on(variant, c);
    c.order = BitOrder::LsbFirst;
    c.filter_bytes = bit_reversed(c.filter_bytes);
    require_same(run_on(variant, c), msb, c);
  }
}

// Adding an integer delta to small-integer x and to every threshold leaves Y unchanged.
void threshold_shift_invariant(Variant variant) {
  for (int i = 0; i < kCases; ++i) {
    ConvCase c = random_case(5300 + i);
    Rng rng(5300 + i);
    c.kind = InputKind::SmallInteger;
    c.x_f32.clear();
    c.x_u8.clear();
    fill_data(c, rng);
    if (!c.attributes.input_thresholds.empty()) {
      for (auto& t : c.attributes.input_thresholds)
        t = static_cast<float>(rng.uniform(-1, 5)) + 0.5f * rng.uniform(0, 1);
    }
    INFO(describe(c));
    const std::vector<float> y = run_on(variant, c);
    for (int delta : {1, 7, 100}) {
      ConvCase shifted = c;
      INFO("delta " << delta);
      if (shifted.uint8_input) {
        for (auto& x : shifted.x_u8) x = static_cast<std::uint8_t>(x + delta);  // 0..6 + 100 stays below 256
      } else {
        for (auto& x : shifted.x_f32) x += static_cast<float>(delta);
      }
      auto& t = shifted.attributes.input_thresholds;
      if (t.empty()) t.assign(static_cast<std::size_t>(c.input[1]), 0.0f);
      for (auto& v : t) v += static_cast<float>(delta);
      require_same(run_on(variant, shifted), y, c);
    }
  }
}

// Every v enqueues exactly the kernels of a layer without pad taps (its packing kernels and the GEMM): pad
// taps add work only in the GEMM's border stores (v = 0 and 0.5 fold the pad value in there).
void kernel_counts(Variant variant) {
  const OpenVinoCase& padded = openvino_case(2);  // pads 1: has pad taps
  const OpenVinoCase& unpadded = openvino_case(1);
  for (const OpenVinoCase* ov : {&padded, &unpadded}) {
    for (float v : {1.0f, -1.0f, 0.0f, 0.5f}) {
      ConvCase c;
      c.name = "OpenVINO case " + std::to_string(ov->id);
      c.input = ov->input_shape;
      c.filter = ov->filter_shape;
      c.attributes = ov->attributes();
      c.attributes.pad_value = v;
      c.filter_bytes = ov->filter_bytes_msb_first;
      c.x_f32 = ov->input;
      INFO(describe(c));
      BinaryConvolution conv(runtime_for(variant), c.attributes, c.input, c.make_filter());
      run_case(conv, c);
      require_kernels_ran(conv, variant, false);
      // Pad taps add work only in the GEMM's border stores: the same kernels for every v, padded or not.
      const std::vector<StageTime> stages = conv.last_stage_times();
      INFO("stages: " << stage_list(stages) << "; plan: " << conv.plan().to_string());
      const std::size_t packing = packing_kernels(conv.plan(), false).size();
      REQUIRE(stages.size() == packing + 1u);
      REQUIRE(conv.plan().launches.size() == packing + 1u);
      REQUIRE(has_stage(stages, "xnor_gemm"));
    }
  }
}

}  // namespace

XNORCL_VARIANT_TEST("metamorphic: Y is affine in pad_value", "[metamorphic]", affine_in_pad_value)
XNORCL_VARIANT_TEST("metamorphic: flipping every filter bit at v = 0 negates Y", "[metamorphic]",
                    flipped_filter_negates)
XNORCL_VARIANT_TEST("metamorphic: bit-reversed LsbFirst bytes give the same Y", "[metamorphic]",
                    bit_orders_agree)
XNORCL_VARIANT_TEST("metamorphic: shifting x and thresholds by an integer leaves Y", "[metamorphic]",
                    threshold_shift_invariant)
XNORCL_VARIANT_TEST("metamorphic: kernels enqueued per pad_value", "[metamorphic]", kernel_counts)

}  // namespace xnorcl::test
