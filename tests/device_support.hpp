// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the device tests.
#pragma once

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>

#include "runtime/device_profile.hpp"
#include "runtime/runtime_state.hpp"
#include "xnorcl/xnorcl.hpp"

namespace xnorcl::test {

// Programs a runtime builds besides those of create(): 1 where layers that store floats run a GEMM
// configuration of their own (detail::layer_gemm_default), else 0. Asked for a grid that fills any device,
// so that only the rule by kind of output counts (the callers force Global, where it is the only one).
inline int float_layer_programs(const Runtime& rt) {
  const detail::RuntimeState& s = *rt.state();
  const detail::GemmConfig c =
      detail::layer_gemm_default(s.gemm, s.profile, s.work_group_cap, true, 1 << 16, 1 << 16);
  return detail::to_text(c) == detail::to_text(s.gemm) ? 0 : 1;
}

// One Runtime per forced variant (and forced word size: 0 = the architecture's) per process (programs build
// once). A missing OpenCL platform fails the
// test: a device test never passes without a device. Only a job that declares XNORCL_EXPECT_NO_DEVICE=1
// (the qemu cross job) turns that into exit code 77, which CTest reports as skipped.
inline Runtime& runtime_for(Variant variant, int word_bits = 0) {
  static std::map<std::pair<Variant, int>, Runtime> runtimes;
  const auto key = std::make_pair(variant, word_bits);
  auto it = runtimes.find(key);
  if (it != runtimes.end()) return it->second;
  try {
    RuntimeOptions options;
    options.variant = variant;
    if (word_bits) options.word_bits = word_bits;  // the test hook: both word sizes on any device
    return runtimes.emplace(key, Runtime::create(options)).first->second;
  } catch (const DeviceNotFound& e) {
    const char* expect = std::getenv("XNORCL_EXPECT_NO_DEVICE");
    if (expect && std::string(expect) == "1") {
      std::fprintf(stderr, "skipped: no OpenCL device (XNORCL_EXPECT_NO_DEVICE=1): %s\n", e.what());
      std::fflush(stderr);
      std::_Exit(77);
    }
    FAIL("no OpenCL device for a device test: " << e.what());
    throw;
  }
}

// A runtime of its own with runtime_for's options, for helpers that change its state (runtime_for's is
// shared).
inline Runtime separate_runtime(Variant variant, int word_bits = 0) {
  runtime_for(variant, word_bits);  // skips or fails as every device test does where there is no device
  RuntimeOptions options;
  options.variant = variant;
  if (word_bits) options.word_bits = word_bits;
  return Runtime::create(options);
}

// A runtime like runtime_for's whose channel-packed layouts pack in the geometry the device does not choose
// (detail::packs_in_vector_runs: vector runs on CPU devices, a word per work-item elsewhere), so that both
// run on every device. One per variant and word size per process.
inline Runtime& runtime_with_other_packing(Variant variant, int word_bits = 0) {
  static std::map<std::pair<Variant, int>, Runtime> runtimes;
  const auto key = std::make_pair(variant, word_bits);
  auto it = runtimes.find(key);
  if (it != runtimes.end()) return it->second;
  Runtime rt = separate_runtime(variant, word_bits);
  rt.state()->pack_in_runs = !detail::packs_in_vector_runs(rt.state()->profile);
  return runtimes.emplace(key, std::move(rt)).first->second;
}

// A runtime like runtime_for's with the portable popcount (RuntimeOptions::native_popcount = false): on a
// device with DeviceInfo::native_popcount its default runtime counts bits with the vector instruction, so
// this runs the other code; elsewhere it is the default code again. One per variant per process.
inline Runtime& runtime_with_portable_popcount(Variant variant) {
  static std::map<Variant, Runtime> runtimes;
  auto it = runtimes.find(variant);
  if (it != runtimes.end()) return it->second;
  runtime_for(variant);  // skips or fails as every device test does where there is no device
  RuntimeOptions options;
  options.variant = variant;
  options.native_popcount = false;
  return runtimes.emplace(variant, Runtime::create(options)).first->second;
}

// The float max-pool's kernel over runs, written out from the documented rule: where the device reports
// CL_FP_DENORM for single precision it compares floats (maxpool_f32_runs_native_compare), elsewhere order
// keys (maxpool_f32_runs); `other` names the kernel the device does not choose.
inline std::string maxpool_runs_kernel(const Runtime& rt, bool other = false) {
  const bool denormals = (rt.device().getInfo<CL_DEVICE_SINGLE_FP_CONFIG>() & CL_FP_DENORM) != 0;
  return denormals != other ? "maxpool_f32_runs_native_compare" : "maxpool_f32_runs";
}

// The channel packing's kernel for float input in vector runs, by the same rule: float compares
// (channel_pack_f32_native_compare) where the device reports CL_FP_DENORM, else order keys
// (channel_pack_f32).
inline std::string channel_pack_runs_kernel(const Runtime& rt, bool other = false) {
  const bool denormals = (rt.device().getInfo<CL_DEVICE_SINGLE_FP_CONFIG>() & CL_FP_DENORM) != 0;
  return denormals != other ? "channel_pack_f32_native_compare" : "channel_pack_f32";
}
// The same binarization's kernel that also writes the patch matrix (stride 1, rows that keep their width).
inline std::string channel_pack_patches_kernel(const Runtime& rt, bool other = false) {
  return "channel_pack_patches" +
         channel_pack_runs_kernel(rt, other).substr(std::string("channel_pack").size());
}

// A runtime like runtime_for's whose float max-pool over runs and channel packing in runs take the kernels
// the device does not choose (RuntimeState::floats_compare_exactly flipped), so that both run on every
// device. One per variant and word size per process.
inline Runtime& runtime_with_other_float_compare(Variant variant, int word_bits = 0) {
  static std::map<std::pair<Variant, int>, Runtime> runtimes;
  const auto key = std::make_pair(variant, word_bits);
  auto it = runtimes.find(key);
  if (it != runtimes.end()) return it->second;
  Runtime rt = separate_runtime(variant, word_bits);
  rt.state()->floats_compare_exactly = !detail::compares_floats_exactly(rt.state()->profile);
  return runtimes.emplace(key, std::move(rt)).first->second;
}

// Whether the float pools (maxpool_f32_runs, avg_pool_f32_runs) should compute runs of 16 outputs per
// work-item, written out from the documented rule: on the Global variant, for output rows of 16 or more, and
// for narrower rows whose every window lies inside the input row at stride 1 or 2.
inline bool expect_pool_runs(Variant variant, const PoolAttributes& a, const Shape& input) {
  const PoolGeometry g = validate_pool(a, input);
  const std::int64_t OW = g.output[3], stride = a.strides[1];
  const bool narrow_inside =
      (stride == 1 || stride == 2) && g.pads_begin[1] == 0 && (OW - 1) * stride + a.kernel[1] <= input[3];
  return variant == Variant::Global && (OW >= 16 || narrow_inside);
}

}  // namespace xnorcl::test
