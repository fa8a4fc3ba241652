// SPDX-License-Identifier: Apache-2.0
// Checks shared by the device tests: run a case on a forced variant, prove the kernels ran, compare bitwise.
#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "conv_case.hpp"
#include "device_support.hpp"
#include "xnorcl/xnorcl.hpp"

namespace xnorcl::test {

// Registers one test body for each variant: "<name> (local)" tagged [local] and "<name> (global)" tagged
// [global], so CTest counts and runs each variant's tests separately.
#define XNORCL_VARIANT_TEST(name, tags, body)    \
  TEST_CASE(name " (local)", tags "[local]") {   \
    body(::xnorcl::Variant::Local);              \
  }                                              \
  TEST_CASE(name " (global)", tags "[global]") { \
    body(::xnorcl::Variant::Global);             \
  }

inline bool has_stage(const std::vector<StageTime>& stages, const std::string& kernel) {
  for (const auto& s : stages) {
    if (s.kernel == kernel) return true;
  }
  return false;
}

inline std::string stage_list(const std::vector<StageTime>& stages) {
  std::string s;
  for (const auto& t : stages) s += (s.empty() ? "" : ", ") + t.kernel;
  return s.empty() ? "(none)" : s;
}

// The packing kernels of the plan's layout: dense (c, ky, kx) packing from bit rows binarizes with
// row_pack_<type>, then im2col_pack_rows cuts runs out of the rows; dense packing bit by bit (dilation_x > 1)
// is one kernel, im2col_pack_<type>; channel-packed layouts binarize with channel_pack_<type>, then
// im2col_pack_words copies words, in vector runs (CPU devices; floats by float compares where the device
// keeps subnormals, channel_pack_f32_native_compare), or a word per work-item with channel_pack_pixel_<type>
// and im2col_pack_word (other devices, and the tests' runtimes of the other geometry); in vector runs at
// stride 1 with rows that keep their width, channel_pack_patches_<type> does both in one launch: the plan's
// first launch says which, and test_binary_convolution.cpp checks that choice.
inline std::vector<std::string> packing_kernels(const Plan& plan, bool uint8_input) {
  const std::string type = uint8_input ? "u8" : "f32";
  if (plan.channel_packed) {
    // The plan names the float kernel (the input's type is the run's); the geometry is the same.
    const std::string first = plan.launches.empty() ? "" : plan.launches.front().kernel;
    if (first.rfind("channel_pack_pixel_", 0) == 0) return {"channel_pack_pixel_" + type, "im2col_pack_word"};
    if (first.rfind("channel_pack_patches_", 0) == 0)
      return {uint8_input ? "channel_pack_patches_u8" : first};
    return {uint8_input ? "channel_pack_u8" : first, "im2col_pack_words"};
  }
  if (plan.bit_rows) return {"row_pack_" + type, "im2col_pack_rows"};
  return {"im2col_pack_" + type};
}

// No stub can pass: the object runs on the forced variant and its packing and GEMM kernels ran (profiling
// events of this run).
inline void require_kernels_ran(const BinaryConvolution& conv, Variant variant, bool uint8_input) {
  REQUIRE(conv.plan().variant == variant);
  const std::vector<StageTime> stages = conv.last_stage_times();
  INFO("stages of the last run: " << stage_list(stages));
  for (const std::string& kernel : packing_kernels(conv.plan(), uint8_input))
    REQUIRE(has_stage(stages, kernel));
  REQUIRE(has_stage(stages, "xnor_gemm"));
}

inline std::vector<float> run_case(BinaryConvolution& conv, const ConvCase& c) {
  return c.uint8_input ? conv.run(c.x_u8.data()) : conv.run(c.x_f32.data());
}

// Runs the case on the runtime (forced to `variant`) and requires a bitwise match with the reference.
inline void check_case_on(Runtime& rt, Variant variant, const ConvCase& c) {
  INFO(describe(c));
  BinaryConvolution conv(rt, c.attributes, c.input, c.make_filter());
  INFO("plan: " << conv.plan().to_string());
  const std::vector<float> y = run_case(conv, c);
  require_kernels_ran(conv, variant, c.uint8_input);
  // Pad taps add work only in the GEMM's border stores: every pad_value enqueues exactly the kernels of a
  // layer without pad taps (the packing kernels and xnor_gemm), whatever the pad taps.
  const std::vector<StageTime> stages = conv.last_stage_times();
  REQUIRE(stages.size() == packing_kernels(conv.plan(), c.uint8_input).size() + 1);
  REQUIRE(conv.plan().launches.size() == stages.size());
  const std::vector<float> want = c.reference();
  const std::string difference = bitwise_difference(y, want, conv.output_shape());
  INFO(difference);
  REQUIRE(difference.empty());
}

inline void check_case(Variant variant, const ConvCase& c) {
  check_case_on(runtime_for(variant), variant, c);
}

// The word size the device's architecture does not choose (PoCL: 32, GPUs: 64), forced through
// RuntimeOptions::word_bits, so both the GPUs' 32-bit path and PoCL's 64-bit path run on every device.
inline int other_word_bits(Variant variant) {
  BinaryConvolution probe(
      runtime_for(variant), BinaryConvolution::Attributes{}, Shape{1, 1, 1, 1},
      Filter::from_packed(std::vector<std::uint8_t>{0x80}.data(), 1, Shape{1, 1, 1, 1}, BitOrder::MsbFirst));
  return probe.plan().word_bits == 64 ? 32 : 64;
}

// Packed words, word for word; on a difference, a message naming the first differing word (else empty).
inline std::string word_difference(const std::vector<std::uint32_t>& got,
                                   const std::vector<std::uint32_t>& want) {
  if (got.size() != want.size())
    return "sizes " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i])
      return "word " + std::to_string(i) + ": got " + std::to_string(got[i]) + ", want " +
             std::to_string(want[i]);
  return "";
}

}  // namespace xnorcl::test
