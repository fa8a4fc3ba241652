// SPDX-License-Identifier: Apache-2.0
// Shared by the reliability tests: small layers to prove that things still work after an error, sentinels to
// prove that nothing was written, and the interceptor's view of what the library allocated and enqueued.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cl_intercept.hpp"
#include "conv_case.hpp"
#include "device/device_checks.hpp"
#include "device_support.hpp"

namespace xnorcl::test {

using Catch::Matchers::Contains;

// A float32 case of a few thousand outputs (float input, so that enqueue() can take it too).
inline ConvCase small_case(std::uint64_t seed, float pad_value = 0.5f) {
  ConvCase c;
  c.name = "small layer " + std::to_string(seed);
  c.seed = seed;
  c.input = {2, 5, 9, 8};
  c.filter = {6, 5, 3, 3};
  c.attributes.pads_begin = {1, 1};
  c.attributes.pads_end = {1, 2};
  c.attributes.pad_value = pad_value;
  c.kind = InputKind::Floats;
  Rng rng(seed);
  c.attributes.input_thresholds = random_thresholds(rng, 5, false, c.kind);
  fill_data(c, rng);
  return c;
}

inline std::size_t element_count(const Shape& s) {
  return static_cast<std::size_t>(s[0] * s[1] * s[2] * s[3]);
}

// Runs an existing object through run() and, for float input, enqueue(); both must match the reference.
inline void require_still_correct(BinaryConvolution& conv, Variant variant, const ConvCase& c) {
  INFO("after the error: " << describe(c));
  const std::vector<float> want = c.reference();
  REQUIRE(bitwise_difference(run_case(conv, c), want, conv.output_shape()).empty());
  require_kernels_ran(conv, variant, c.uint8_input);
  if (c.uint8_input) return;
  Runtime rt = runtime_for(variant);
  const std::size_t out_bytes = want.size() * sizeof(float);
  cl::Buffer in(rt.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, c.x_f32.size() * sizeof(float),
                const_cast<float*>(c.x_f32.data()));
  cl::Buffer out(rt.context(), CL_MEM_READ_WRITE, out_bytes);
  conv.enqueue(in, out).wait();
  std::vector<float> y(want.size());
  rt.queue().enqueueReadBuffer(out, CL_TRUE, 0, out_bytes, y.data());
  REQUIRE(bitwise_difference(y, want, conv.output_shape()).empty());
}

// After an error: the object that failed (if any), an object made before the error, and a new object on the
// same runtime all give the reference's answer.
inline void require_everything_works(Variant variant, BinaryConvolution* failed, const ConvCase& failed_case,
                                     BinaryConvolution& earlier, const ConvCase& earlier_case) {
  if (failed) require_still_correct(*failed, variant, failed_case);
  require_still_correct(earlier, variant, earlier_case);
  const ConvCase fresh = small_case(earlier_case.seed + 1000, 1.0f);
  BinaryConvolution conv(runtime_for(variant), fresh.attributes, fresh.input, fresh.make_filter());
  require_still_correct(conv, variant, fresh);
}

// What the library did between construction and done(): buffers created and commands enqueued.
class Activity {
 public:
  Activity() : before_(intercept::counts()), live_(intercept::live_buffers()) {}
  std::int64_t buffers_created() const {
    return intercept::counts().buffers_created - before_.buffers_created;
  }
  std::int64_t commands() const { return intercept::counts().commands() - before_.commands(); }
  std::int64_t kernels() const { return intercept::counts().kernels_enqueued - before_.kernels_enqueued; }
  std::int64_t transfers() const { return intercept::counts().transfers - before_.transfers; }
  // Buffers created since and not released (a leak when the operation failed).
  std::int64_t buffers_kept() const { return intercept::live_buffers() - live_; }

 private:
  intercept::Counts before_;
  std::int64_t live_;
};

// Sets an environment variable (a test hook) for the lifetime of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) { ::setenv(name, value.c_str(), 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

}  // namespace xnorcl::test
