// SPDX-License-Identifier: Apache-2.0
// Every enqueue of the library, not only BinaryConvolution's, refuses the buffers and wait lists it cannot
// use before anything is enqueued: one buffer as input and output, a CL_MEM_READ_ONLY output, an input of
// another OpenCL context and a null event. The output keeps its sentinel.
#include <functional>

#include "fault_support.hpp"

namespace xnorcl::test {
namespace {

constexpr std::uint32_t kSentinel = 0xdeadbeefu;

struct Enqueuer {
  const char* name;  // how its messages start
  std::size_t in_bytes, out_bytes;
  std::function<void(const cl::Buffer&, const cl::Buffer&, const std::vector<cl::Event>*)> enqueue;
};

template <class T>
Enqueuer of(const char* name, T& layer, std::size_t in_bytes, std::size_t out_bytes) {
  return {name, in_bytes, out_bytes, [&layer](const cl::Buffer& in, const cl::Buffer& out, const auto* wait) {
            layer.enqueue(in, out, wait);
          }};
}

void refuses_hostile_buffers(Runtime& rt, const Enqueuer& e) {
  INFO(e.name);
  const std::size_t both = std::max(e.in_bytes, e.out_bytes);
  const std::vector<std::uint32_t> sentinel(both / 4, kSentinel);
  auto filled = [&](cl_mem_flags flags) {
    return cl::Buffer(rt.context(), flags | CL_MEM_COPY_HOST_PTR, both,
                      const_cast<std::uint32_t*>(sentinel.data()));
  };
  const cl::Buffer in = filled(CL_MEM_READ_WRITE), out = filled(CL_MEM_READ_WRITE);
  const cl::Buffer read_only_out = filled(CL_MEM_READ_ONLY), shared = filled(CL_MEM_READ_WRITE);
  cl::Context other_context(rt.device());
  const cl::Buffer foreign_in(other_context, CL_MEM_READ_WRITE, both);
  const std::vector<cl::Event> null_event(1);

  const Activity activity;
  auto refused = [&](const cl::Buffer& i, const cl::Buffer& o, const std::vector<cl::Event>* wait,
                     const std::vector<std::string>& parts) {
    try {
      e.enqueue(i, o, wait);
      FAIL_CHECK("accepted");
    } catch (const InvalidArgument& error) {
      const std::string what = error.what();
      INFO(what);
      CHECK_THAT(what, Catch::Matchers::StartsWith(std::string(e.name) + ": "));
      for (const std::string& part : parts) CHECK_THAT(what, Contains(part));
    }
  };
  refused(shared, shared, nullptr, {"overlap"});
  refused(in, read_only_out, nullptr, {"output buffer", "CL_MEM_READ_ONLY"});
  refused(foreign_in, out, nullptr, {"input buffer", "another OpenCL context"});
  refused(in, out, &null_event, {"entry 0 of the wait list (1 events)", "null"});
  CHECK(activity.commands() == 0);
  for (const cl::Buffer* b : {&out, &read_only_out, &shared}) {
    std::vector<std::uint32_t> back(both / 4);
    rt.queue().enqueueReadBuffer(*b, CL_TRUE, 0, both, back.data());
    CHECK(back == sentinel);
  }
}

void every_enqueue_refuses_hostile_buffers(Variant variant) {
  Runtime& rt = runtime_for(variant);
  REQUIRE(intercept::active(rt));
  const Shape s{1, 8, 4, 4};
  const std::size_t floats = 8 * 16 * 4, words = static_cast<std::size_t>(packed_word_count(s)) * 4;
  std::vector<std::uint8_t> bits(64, 0xa5);
  const Filter weights = Filter::from_packed(bits.data(), bits.size(), Shape{3, 8, 4, 4}, BitOrder::MsbFirst);
  ThresholdPack threshold(rt, s, {});
  PoolAttributes pool;
  pool.kernel = {1, 1};  // output shape = input shape: both buffers the same size
  pool.strides = {1, 1};
  MaxPool max_pool(rt, pool, s);
  BinaryMaxPool binary_max_pool(rt, pool, s);
  BinaryFullyConnected fc(rt, s, weights);
  for (const Enqueuer& e : {of("ThresholdPack::enqueue", threshold, floats, words),
                            of("MaxPool::enqueue", max_pool, floats, floats),
                            of("BinaryMaxPool::enqueue", binary_max_pool, words, words),
                            of("BinaryFullyConnected::enqueue", fc, words, 3 * 4)}) {
    refuses_hostile_buffers(rt, e);
  }
}

}  // namespace

XNORCL_VARIANT_TEST("every layer's enqueue refuses shared, read-only, foreign buffers and null events",
                    "[faults][bad_input]", every_enqueue_refuses_hostile_buffers)

}  // namespace xnorcl::test
