// SPDX-License-Identifier: Apache-2.0
// OpenCL failures, provoked for real (the driver refuses a call the interceptor bent), become OpenCLError
// naming the call and the symbolic code; the caller's output is untouched, nothing leaks, and the runtime,
// the failed object and every other object keep giving the reference's answer.
//
// Each test fails the 1st, 2nd, 3rd ... call of one kind in turn until the operation succeeds without
// reaching the fault, so every allocation site and every launch of a layer fails once.
#include "fault_support.hpp"

namespace xnorcl::test {
namespace {

using intercept::Fault;

// Float input, 3 images split into several chunks, pad_value 0.5 with pad taps (the pad correction runs):
// several launches of every kernel, and every scratch buffer.
ConvCase many_launches_case() {
  ConvCase c;
  c.name = "layer of many launches";
  c.seed = 4242;
  c.input = {3, 33, 9, 11};
  c.filter = {37, 33, 3, 3};
  c.attributes.pads_begin = {1, 2};
  c.attributes.pads_end = {2, 1};
  c.attributes.pad_value = 0.5f;
  c.kind = InputKind::Floats;
  Rng rng(c.seed);
  c.attributes.input_thresholds = random_thresholds(rng, 33, false, c.kind);
  fill_data(c, rng);
  return c;
}

// Budget of XNORCL_MAX_CHUNK_BYTES (the constructor's test hook) that splits many_launches_case in chunks.
constexpr int kChunkBytes = 6000;

std::unique_ptr<BinaryConvolution> make_chunked(Runtime& rt, const ConvCase& c) {
  ScopedEnv budget("XNORCL_MAX_CHUNK_BYTES", std::to_string(kChunkBytes));
  return std::make_unique<BinaryConvolution>(rt, c.attributes, c.input, c.make_filter());
}

void require_opencl_error(const OpenCLError& e, const std::string& call, cl_int code) {
  const std::string what = e.what();
  INFO(what);
  REQUIRE(intercept::fired());
  CHECK(e.call() == call);
  CHECK(e.code() == code);
  CHECK_THAT(what, Contains(call) && Contains(cl_error_name(code)));
}

void allocation_failures_in_the_constructor(Variant variant) {
  Runtime& rt = runtime_for(variant);
  REQUIRE(intercept::active(rt));
  const ConvCase earlier_case = small_case(11);
  BinaryConvolution earlier(rt, earlier_case.attributes, earlier_case.input, earlier_case.make_filter());
  require_still_correct(earlier, variant, earlier_case);

  const ConvCase c = many_launches_case();
  int failures = 0;
  for (int nth = 0;; ++nth) {
    INFO("clCreateBuffer number " << nth << " of the constructor asks for more than the device has");
    const Activity activity;
    std::unique_ptr<BinaryConvolution> conv;
    try {
      intercept::Armed fault(Fault::OversizedBuffer, nth);
      conv = make_chunked(rt, c);
    } catch (const OpenCLError& e) {
      require_opencl_error(e, "clCreateBuffer", CL_INVALID_BUFFER_SIZE);
      CHECK(activity.buffers_kept() == 0);  // the buffers made before the failing one were released
      ++failures;
      require_everything_works(variant, nullptr, c, earlier, earlier_case);
      continue;
    }
    REQUIRE_FALSE(intercept::fired());
    // Every allocation of the constructor has failed once (at least the packed filter and the patches).
    CHECK(failures == activity.buffers_created());
    CHECK(failures >= 2);
    require_everything_works(variant, conv.get(), c, earlier, earlier_case);
    break;
  }
}

void allocation_failures_in_run(Variant variant) {
  Runtime& rt = runtime_for(variant);
  REQUIRE(intercept::active(rt));
  const ConvCase earlier_case = small_case(12);
  BinaryConvolution earlier(rt, earlier_case.attributes, earlier_case.input, earlier_case.make_filter());
  require_still_correct(earlier, variant, earlier_case);

  // run() allocates its staging buffers on first use: fail each of those allocations on a fresh object.
  const ConvCase c = small_case(13);
  int failures = 0;
  for (int nth = 0;; ++nth) {
    INFO("clCreateBuffer number " << nth << " of the first run() asks for more than the device has");
    const Activity activity;
    bool failed = false;
    {
      BinaryConvolution conv(rt, c.attributes, c.input, c.make_filter());
      std::vector<float> y(element_count(conv.output_shape()), -777.0f);
      const std::vector<float> sentinel = y;
      const Activity in_run;
      try {
        intercept::Armed fault(Fault::OversizedBuffer, nth);
        conv.run(c.x_f32.data(), y.data());
      } catch (const OpenCLError& e) {
        require_opencl_error(e, "clCreateBuffer", CL_INVALID_BUFFER_SIZE);
        REQUIRE(std::memcmp(y.data(), sentinel.data(), y.size() * sizeof(float)) == 0);
        failed = true;
        // The same object allocates again on its next run (after a failure of the second staging buffer too).
        require_everything_works(variant, &conv, c, earlier, earlier_case);
      }
      if (!failed) {
        REQUIRE_FALSE(intercept::fired());
        REQUIRE(bitwise_difference(y, c.reference(), conv.output_shape()).empty());
        CHECK(failures == in_run.buffers_created());  // each staging buffer has failed once
      }
    }
    CHECK(activity.buffers_kept() == 0);  // the object released every buffer it made
    if (!failed) break;
    ++failures;
  }
  CHECK(failures >= 1);
}

// Fails each launch of run() or enqueue() in turn with a work-group above CL_KERNEL_WORK_GROUP_SIZE.
void launch_failures(Variant variant, bool use_enqueue) {
  Runtime& rt = runtime_for(variant);
  REQUIRE(intercept::active(rt));
  const ConvCase earlier_case = small_case(14);
  BinaryConvolution earlier(rt, earlier_case.attributes, earlier_case.input, earlier_case.make_filter());
  require_still_correct(earlier, variant, earlier_case);

  const ConvCase c = many_launches_case();
  std::unique_ptr<BinaryConvolution> conv = make_chunked(rt, c);
  INFO(conv->plan().to_string());
  REQUIRE(conv->plan().chunks > 1);
  const std::vector<float> want = c.reference();
  const std::size_t in_bytes = c.x_f32.size() * sizeof(float), out_bytes = want.size() * sizeof(float);
  cl::Buffer in(rt.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, in_bytes,
                const_cast<float*>(c.x_f32.data()));
  cl::Buffer out(rt.context(), CL_MEM_READ_WRITE, out_bytes);
  // A first run allocates run()'s staging buffers, which the object keeps: from here on a failure must
  // leave the number of live buffers as it was.
  require_still_correct(*conv, variant, c);
  int failures = 0;
  for (int nth = 0;; ++nth) {
    INFO((use_enqueue ? "enqueue" : "run")
         << ": launch number " << nth << " asks for an oversized work-group");
    std::vector<float> y(want.size(), -777.0f);
    const std::vector<float> sentinel = y;
    const Activity activity;
    try {
      intercept::Armed fault(Fault::OversizedWorkGroup, nth);
      if (use_enqueue) {
        conv->enqueue(in, out).wait();
        rt.queue().enqueueReadBuffer(out, CL_TRUE, 0, out_bytes, y.data());
      } else {
        conv->run(c.x_f32.data(), y.data());
      }
    } catch (const OpenCLError& e) {
      require_opencl_error(e, "clEnqueueNDRangeKernel", CL_INVALID_WORK_GROUP_SIZE);
      // The message names the kernel whose launch failed.
      const std::string what = e.what();
      bool names_kernel = false;
      for (const Plan::Launch& l : conv->plan().launches)
        names_kernel |= what.find(l.kernel) != std::string::npos;
      CHECK(names_kernel);
      CHECK(activity.buffers_kept() == 0);
      rt.queue().finish();  // what was enqueued before the failure completes
      if (use_enqueue) {
        // The input is never written, even by a half-enqueued layer.
        std::vector<float> x(c.x_f32.size());
        rt.queue().enqueueReadBuffer(in, CL_TRUE, 0, in_bytes, x.data());
        REQUIRE(std::memcmp(x.data(), c.x_f32.data(), in_bytes) == 0);
      } else {
        REQUIRE(std::memcmp(y.data(), sentinel.data(), out_bytes) == 0);
      }
      ++failures;
      require_everything_works(variant, conv.get(), c, earlier, earlier_case);
      continue;
    }
    REQUIRE_FALSE(intercept::fired());
    REQUIRE(bitwise_difference(y, want, conv->output_shape()).empty());
    // Every launch has failed once: the packing and GEMM of each chunk, and the pad correction.
    CHECK(failures == activity.kernels());
    CHECK(failures > conv->plan().chunks);
    break;
  }
}

void launch_failures_in_run(Variant variant) {
  launch_failures(variant, false);
}
void launch_failures_in_enqueue(Variant variant) {
  launch_failures(variant, true);
}

// run()'s upload and download refused by the driver (a transfer one byte past the buffer).
void transfer_failures_in_run(Variant variant) {
  Runtime& rt = runtime_for(variant);
  REQUIRE(intercept::active(rt));
  const ConvCase earlier_case = small_case(15);
  BinaryConvolution earlier(rt, earlier_case.attributes, earlier_case.input, earlier_case.make_filter());
  require_still_correct(earlier, variant, earlier_case);

  for (bool uint8_input : {false, true}) {
    ConvCase c = small_case(16);
    if (uint8_input) {
      c.uint8_input = true;
      c.kind = InputKind::SmallInteger;
      c.attributes.input_thresholds.clear();
      Rng rng(16);
      fill_data(c, rng);
    }
    BinaryConvolution conv(rt, c.attributes, c.input, c.make_filter());
    int failures = 0;
    for (int nth = 0;; ++nth) {
      INFO((uint8_input ? "uint8" : "float") << " run(): transfer number " << nth << " overruns its buffer");
      std::vector<float> y(element_count(conv.output_shape()), -777.0f);
      const std::vector<float> sentinel = y;
      const Activity activity;
      try {
        intercept::Armed fault(Fault::OversizedTransfer, nth);
        if (uint8_input) {
          conv.run(c.x_u8.data(), y.data());
        } else {
          conv.run(c.x_f32.data(), y.data());
        }
      } catch (const OpenCLError& e) {
        REQUIRE(intercept::fired());
        INFO(e.what());
        CHECK((e.call() == "clEnqueueWriteBuffer" || e.call() == "clEnqueueReadBuffer"));
        CHECK(e.code() == CL_INVALID_VALUE);
        CHECK_THAT(e.what(), Contains("CL_INVALID_VALUE"));
        REQUIRE(std::memcmp(y.data(), sentinel.data(), y.size() * sizeof(float)) == 0);
        ++failures;
        require_everything_works(variant, &conv, c, earlier, earlier_case);
        continue;
      }
      REQUIRE_FALSE(intercept::fired());
      REQUIRE(bitwise_difference(y, c.reference(), conv.output_shape()).empty());
      CHECK(failures == activity.transfers());  // the upload and the download have failed once each
      CHECK(failures >= 2);
      break;
    }
  }
}

}  // namespace

XNORCL_VARIANT_TEST("allocation failures in the constructor: OpenCLError, no leak, everything keeps working",
                    "[faults][alloc]", allocation_failures_in_the_constructor)
XNORCL_VARIANT_TEST("allocation failures in run(): OpenCLError, output untouched, the object recovers",
                    "[faults][alloc]", allocation_failures_in_run)
XNORCL_VARIANT_TEST("launch failures in run() (work-group above the kernel's limit): OpenCLError, recovery",
                    "[faults][launch]", launch_failures_in_run)
XNORCL_VARIANT_TEST(
    "launch failures in enqueue() (work-group above the kernel's limit): OpenCLError, recovery",
    "[faults][launch]", launch_failures_in_enqueue)
XNORCL_VARIANT_TEST("transfer failures in run(): OpenCLError, output untouched, recovery",
                    "[faults][transfer]", transfer_failures_in_run)

}  // namespace xnorcl::test
