// SPDX-License-Identifier: Apache-2.0
// Bad arguments beyond shapes: each is refused with an InvalidArgument naming the problem and its values,
// before anything is allocated or enqueued, and the caller's output (host or device) keeps its sentinel.
// Correct calls write exactly their output: guard bytes around it keep theirs.
#include "fault_support.hpp"

namespace xnorcl::test {
namespace {

constexpr float kSentinel = -777.0f;

template <class F>
void require_invalid(F&& call, const std::vector<std::string>& parts) {
  try {
    call();
    FAIL("accepted");
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    INFO(what);
    for (const std::string& part : parts) CHECK_THAT(what, Contains(part));
  }
}

void null_host_pointers(Variant variant) {
  Runtime& rt = runtime_for(variant);
  REQUIRE(intercept::active(rt));
  const ConvCase c = small_case(31);
  BinaryConvolution conv(rt, c.attributes, c.input, c.make_filter());
  std::vector<float> y(element_count(conv.output_shape()), kSentinel);
  const std::vector<float> sentinel = y;
  const std::vector<std::uint8_t> x_u8(c.x_f32.size(), 1);
  const Activity activity;
  const float* no_f32 = nullptr;
  const std::uint8_t* no_u8 = nullptr;
  require_invalid([&] { conv.run(no_f32); }, {"input pointer is null"});
  require_invalid([&] { conv.run(no_u8); }, {"input pointer is null"});
  require_invalid([&] { conv.run(no_f32, y.data()); }, {"input pointer is null"});
  require_invalid([&] { conv.run(no_u8, y.data()); }, {"input pointer is null"});
  require_invalid([&] { conv.run(c.x_f32.data(), nullptr); }, {"output pointer is null"});
  require_invalid([&] { conv.run(x_u8.data(), nullptr); }, {"output pointer is null"});
  require_invalid([&] { conv.run(no_f32, nullptr); }, {"pointer is null"});
  REQUIRE(std::memcmp(y.data(), sentinel.data(), y.size() * sizeof(float)) == 0);
  CHECK(activity.buffers_created() == 0);
  CHECK(activity.commands() == 0);
  CHECK(conv.last_stage_times().empty());  // no run has happened on this object
  require_still_correct(conv, variant, c);
}

void bad_filters(Variant variant) {
  Runtime& rt = runtime_for(variant);
  REQUIRE(intercept::active(rt));
  const Activity activity;
  const Shape shape{6, 5, 3, 3};  // 270 bits, 34 bytes
  const std::vector<std::uint8_t> bytes(34, 0xA5);
  require_invalid([&] { Filter::from_packed(nullptr, 34, shape, BitOrder::MsbFirst); },
                  {"null pointer", "6x5x3x3 needs 34 bytes"});
  require_invalid([&] { Filter::from_packed(bytes.data(), 33, shape, BitOrder::LsbFirst); },
                  {"ceil(270/8) = 34 bytes, got 33"});
  require_invalid([&] { Filter::from_packed(bytes.data(), 0, shape, BitOrder::MsbFirst); }, {"got 0"});
  require_invalid([&] { Filter::from_values(static_cast<const float*>(nullptr), shape); },
                  {"null pointer", "needs 270 floats"});
  // A valid filter whose C_IN is not the input's.
  const ConvCase c = small_case(32);
  const Filter wrong_channels =
      Filter::from_packed(bytes.data(), bytes.size(), {6, 4, 3, 3}, BitOrder::MsbFirst);
  require_invalid([&] { BinaryConvolution(rt, c.attributes, c.input, wrong_channels); },
                  {"C_IN of the input (5) and of the filter (4) differ"});
  CHECK(activity.buffers_created() == 0);
  CHECK(activity.commands() == 0);
}

// enqueue() on buffers that do not fit: nothing is enqueued and the device output keeps its sentinel.
void bad_enqueue_buffers(Variant variant) {
  Runtime& rt = runtime_for(variant);
  REQUIRE(intercept::active(rt));
  const ConvCase c = small_case(33);  // pad_value 0.5 with pad taps: folded into the GEMM's border stores
  BinaryConvolution conv(rt, c.attributes, c.input, c.make_filter());
  const std::size_t in_bytes = c.x_f32.size() * sizeof(float);
  const std::size_t out_bytes = element_count(conv.output_shape()) * sizeof(float);
  const std::vector<float> sentinel(out_bytes / sizeof(float), kSentinel);
  auto output_buffer = [&](cl_mem_flags flags, std::size_t bytes) {
    cl::Buffer b(rt.context(), flags, bytes);
    rt.queue().enqueueWriteBuffer(b, CL_TRUE, 0, std::min(bytes, out_bytes), sentinel.data());
    return b;
  };
  cl::Buffer in(rt.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, in_bytes,
                const_cast<float*>(c.x_f32.data()));
  cl::Buffer out = output_buffer(CL_MEM_READ_WRITE, out_bytes);
  cl::Buffer short_in(rt.context(), CL_MEM_READ_ONLY, in_bytes - 1);
  cl::Buffer short_out = output_buffer(CL_MEM_READ_WRITE, out_bytes - 4);
  cl::Buffer read_only_out = output_buffer(CL_MEM_READ_ONLY, out_bytes);
  cl::Buffer write_only_out = output_buffer(CL_MEM_WRITE_ONLY, out_bytes);
  cl::Buffer write_only_in(rt.context(), CL_MEM_WRITE_ONLY, in_bytes);
  cl::Context other_context(rt.device());
  cl::Buffer foreign_out(other_context, CL_MEM_READ_WRITE, out_bytes);
  // One buffer holding both, overlapping by one float (sub-buffer origins respect the base alignment).
  const std::size_t align = rt.device().getInfo<CL_DEVICE_MEM_BASE_ADDR_ALIGN>() / 8;
  const std::size_t out_origin = (in_bytes - 4) / align * align;
  cl::Buffer shared(rt.context(), CL_MEM_READ_WRITE, out_origin + out_bytes);
  cl_buffer_region region{out_origin, out_bytes};
  cl::Buffer overlapping_out =
      shared.createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region);
  const std::vector<cl::Event> null_event(2);

  const Activity activity;
  const std::string in_need = std::to_string(in_bytes), out_need = std::to_string(out_bytes);
  const std::string in_shape = to_string(c.input), out_shape = to_string(conv.output_shape());
  require_invalid([&] { conv.enqueue(cl::Buffer(), out); }, {"input buffer is null"});
  require_invalid([&] { conv.enqueue(in, cl::Buffer()); }, {"output buffer is null"});
  require_invalid(
      [&] { conv.enqueue(short_in, out); },
      {"input buffer holds " + std::to_string(in_bytes - 1) + " bytes", in_shape, "needs " + in_need});
  require_invalid(
      [&] { conv.enqueue(in, short_out); },
      {"output buffer holds " + std::to_string(out_bytes - 4) + " bytes", out_shape, "needs " + out_need});
  require_invalid([&] { conv.enqueue(in, read_only_out); }, {"output buffer", "CL_MEM_READ_ONLY"});
  require_invalid([&] { conv.enqueue(write_only_in, out); }, {"input buffer", "CL_MEM_WRITE_ONLY"});
  require_invalid([&] { conv.enqueue(in, foreign_out); }, {"output buffer", "another OpenCL context"});
  require_invalid([&] { conv.enqueue(shared, overlapping_out); }, {"overlap", "bytes 0 to " + in_need});
  require_invalid([&] { conv.enqueue(out, out); }, {"overlap"});
  require_invalid([&] { conv.enqueue(in, out, &null_event); },
                  {"entry 0 of the wait list (2 events)", "null"});
  CHECK(activity.buffers_created() == 0);
  CHECK(activity.commands() == 0);
  CHECK(conv.last_stage_times().empty());
  rt.queue().finish();
  for (const cl::Buffer* b : {&out, &short_out, &read_only_out}) {
    const std::size_t bytes = b->getInfo<CL_MEM_SIZE>();
    std::vector<float> back(bytes / sizeof(float));
    rt.queue().enqueueReadBuffer(*b, CL_TRUE, 0, bytes, back.data());
    REQUIRE(std::memcmp(back.data(), sentinel.data(), bytes) == 0);
  }
  require_still_correct(conv, variant, c);
  // The kernels only write the output (no pass reads it back, pad taps included): CL_MEM_WRITE_ONLY is
  // accepted and gives the result run() gives.
  conv.enqueue(in, write_only_out);
  std::vector<float> back(out_bytes / sizeof(float));
  rt.queue().enqueueReadBuffer(write_only_out, CL_TRUE, 0, out_bytes, back.data());
  const std::vector<float> want = conv.run(c.x_f32.data());
  REQUIRE(std::memcmp(back.data(), want.data(), out_bytes) == 0);
}

// A moved-from object is the caller's mistake: an Error, not a crash.
void moved_from_objects(Variant variant) {
  Runtime& rt = runtime_for(variant);
  const ConvCase c = small_case(34);
  BinaryConvolution conv(rt, c.attributes, c.input, c.make_filter());
  BinaryConvolution moved = std::move(conv);
  std::vector<float> y(element_count(moved.output_shape()), kSentinel);
  REQUIRE_THROWS_AS(conv.run(c.x_f32.data(), y.data()), Error);
  REQUIRE_THROWS_AS(conv.output_shape(), Error);
  REQUIRE_THROWS_AS(conv.plan(), Error);
  REQUIRE_THROWS_AS(conv.last_stage_times(), Error);
  REQUIRE(std::count(y.begin(), y.end(), kSentinel) == static_cast<std::ptrdiff_t>(y.size()));
  Runtime copy = rt;
  Runtime moved_runtime = std::move(copy);
  REQUIRE_THROWS_AS(copy.device_name(), Error);
  REQUIRE_THROWS_AS(copy.queue(), Error);
  REQUIRE_THROWS_AS(BinaryConvolution(copy, c.attributes, c.input, c.make_filter()), InvalidArgument);
  require_still_correct(moved, variant, c);
  REQUIRE(moved_runtime.device_name() == rt.device_name());
}

// Correct calls write their output and nothing around it: guards before and after the output, in host
// memory (run) and in one device buffer holding input, output and guards (enqueue on sub-buffers).
void writes_exactly_the_output(Variant variant) {
  Runtime& rt = runtime_for(variant);
  for (float v : {0.5f, 1.0f}) {
    const ConvCase c = small_case(35, v);
    INFO(describe(c));
    BinaryConvolution conv(rt, c.attributes, c.input, c.make_filter());
    const std::vector<float> want = c.reference();
    const std::size_t n = want.size(), guard = 64;
    std::vector<float> y(n + 2 * guard, kSentinel);
    conv.run(c.x_f32.data(), y.data() + guard);
    REQUIRE(bitwise_difference(std::vector<float>(y.begin() + guard, y.begin() + guard + n), want,
                               conv.output_shape())
                .empty());
    REQUIRE(std::count(y.begin(), y.begin() + guard, kSentinel) == std::ptrdiff_t(guard));
    REQUIRE(std::count(y.end() - guard, y.end(), kSentinel) == std::ptrdiff_t(guard));

    // [guard | input | guard | output | guard], each region aligned for a sub-buffer.
    const std::size_t align = rt.device().getInfo<CL_DEVICE_MEM_BASE_ADDR_ALIGN>() / 8;
    auto aligned = [&](std::size_t bytes) { return (bytes + align - 1) / align * align; };
    const std::size_t in_bytes = c.x_f32.size() * sizeof(float), out_bytes = n * sizeof(float);
    const std::size_t in_at = aligned(guard * sizeof(float));
    const std::size_t out_at = aligned(in_at + in_bytes + guard * sizeof(float));
    const std::size_t total = aligned(out_at + out_bytes + guard * sizeof(float));
    std::vector<float> image(total / sizeof(float), kSentinel);
    std::memcpy(reinterpret_cast<char*>(image.data()) + in_at, c.x_f32.data(), in_bytes);
    cl::Buffer whole(rt.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, total, image.data());
    cl_buffer_region in_region{in_at, in_bytes}, out_region{out_at, out_bytes};
    cl::Buffer in = whole.createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &in_region);
    cl::Buffer out = whole.createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &out_region);
    conv.enqueue(in, out).wait();
    std::vector<float> back(image.size());
    rt.queue().enqueueReadBuffer(whole, CL_TRUE, 0, total, back.data());
    const std::vector<float> got(back.begin() + out_at / 4, back.begin() + out_at / 4 + n);
    REQUIRE(bitwise_difference(got, want, conv.output_shape()).empty());
    // Everything but the output is as it was: guards and input alike.
    std::memcpy(reinterpret_cast<char*>(image.data()) + out_at, want.data(), out_bytes);
    REQUIRE(std::memcmp(back.data(), image.data(), total) == 0);
  }
}

}  // namespace

XNORCL_VARIANT_TEST("null host pointers are refused, the output keeps its sentinel, nothing is enqueued",
                    "[faults][bad_input]", null_host_pointers)
XNORCL_VARIANT_TEST("null and short filters, and a filter of another C_IN, are refused",
                    "[faults][bad_input]", bad_filters)
XNORCL_VARIANT_TEST("enqueue refuses null, short, foreign, misflagged and overlapping buffers",
                    "[faults][bad_input]", bad_enqueue_buffers)
XNORCL_VARIANT_TEST("moved-from objects throw instead of crashing", "[faults][bad_input]", moved_from_objects)
XNORCL_VARIANT_TEST("run and enqueue write exactly the output, nothing around it", "[faults][bad_input]",
                    writes_exactly_the_output)

}  // namespace xnorcl::test
