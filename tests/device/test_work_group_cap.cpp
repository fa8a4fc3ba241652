// SPDX-License-Identifier: Apache-2.0
// RuntimeOptions::max_work_group_size caps every launch; forced small chunks give bitwise equal results.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <map>
#include <utility>

#include "conv_case.hpp"
#include "device_checks.hpp"
#include "device_support.hpp"

namespace xnorcl::test {
namespace {

Runtime& capped_runtime(Variant variant, std::size_t cap) {
  static std::map<std::pair<Variant, std::size_t>, Runtime> runtimes;
  const auto key = std::make_pair(variant, cap);
  auto it = runtimes.find(key);
  if (it != runtimes.end()) return it->second;
  runtime_for(variant);  // fails (or skips) the test cleanly without a device
  RuntimeOptions options;
  options.variant = variant;
  options.max_work_group_size = cap;
  return runtimes.emplace(key, Runtime::create(options)).first->second;
}

void capped(Variant variant, std::size_t cap, int first_seed) {
  Runtime& rt = capped_runtime(variant, cap);
  REQUIRE(rt.variant() == variant);
  for (int i = 0; i < 12; ++i) {
    const ConvCase c = random_case(std::uint64_t(first_seed + i));
    INFO("max_work_group_size " << cap);
    BinaryConvolution conv(rt, c.attributes, c.input, c.make_filter());
    INFO(conv.plan().to_string());
    for (const Plan::Launch& l : conv.plan().launches) {
      REQUIRE(l.local[0] * l.local[1] <= cap);
      REQUIRE(l.local[0] * l.local[1] >= 1);
    }
    check_case_on(rt, variant, c);
  }
}

void cap_16(Variant variant) {
  capped(variant, 16, 7000);
}
void cap_1(Variant variant) {
  capped(variant, 1, 7100);
}

// Sets XNORCL_MAX_CHUNK_BYTES (the constructor's test hook) for the lifetime of the object.
class ChunkBudget {
 public:
  explicit ChunkBudget(std::size_t bytes) {
    ::setenv("XNORCL_MAX_CHUNK_BYTES", std::to_string(bytes).c_str(), 1);
  }
  ~ChunkBudget() { ::unsetenv("XNORCL_MAX_CHUNK_BYTES"); }
  ChunkBudget(const ChunkBudget&) = delete;
  ChunkBudget& operator=(const ChunkBudget&) = delete;
};

ConvCase chunk_case(bool uint8_input, float pad_value) {
  ConvCase c;
  c.name = "chunked layer";
  c.seed = uint8_input ? 8001 : 8000;
  c.input = {3, 33, 9, 11};
  c.filter = {37, 33, 3, 3};  // K = 297 bits: 10 words, 40 bytes per patch
  c.attributes.pads_begin = {1, 2};
  c.attributes.pads_end = {2, 1};
  c.attributes.strides = {1, 1};
  c.attributes.pad_value = pad_value;
  c.uint8_input = uint8_input;
  c.kind = uint8_input ? InputKind::SmallInteger : InputKind::Floats;
  c.order = BitOrder::LsbFirst;
  Rng rng(c.seed);
  c.attributes.input_thresholds = random_thresholds(rng, 33, uint8_input, c.kind);
  fill_data(c, rng);
  return c;
}

void chunked(Variant variant) {
  Runtime& rt = runtime_for(variant);
  for (bool uint8_input : {false, true}) {
    for (float v : {0.5f, 1.0f}) {
      const ConvCase c = chunk_case(uint8_input, v);
      INFO(describe(c));
      BinaryConvolution whole(rt, c.attributes, c.input, c.make_filter());
      REQUIRE(whole.plan().chunks == 1);
      const std::vector<float> y_whole = run_case(whole, c);
      require_kernels_ran(whole, variant, uint8_input);
      const std::vector<float> want = c.reference();
      REQUIRE(bitwise_difference(y_whole, want, whole.output_shape()).empty());
      // Budgets (one image is 120 patches of 40 bytes) that force: two images per chunk; one image per chunk;
      // row ranges of one image; single rows (below one row). The staging buffers of run() split too.
      for (std::size_t budget :
           {std::size_t(12000), std::size_t(6000), std::size_t(4000), std::size_t(100)}) {
        INFO("XNORCL_MAX_CHUNK_BYTES " << budget);
        std::unique_ptr<BinaryConvolution> conv;
        {
          ChunkBudget hook(budget);
          conv = std::make_unique<BinaryConvolution>(rt, c.attributes, c.input, c.make_filter());
        }
        INFO(conv->plan().to_string());
        REQUIRE(conv->plan().chunks > 1);
        const std::vector<float> y = run_case(*conv, c);
        require_kernels_ran(*conv, variant, uint8_input);
        const std::string difference = bitwise_difference(y, want, conv->output_shape());
        INFO(difference);
        REQUIRE(difference.empty());
        REQUIRE(std::memcmp(y.data(), y_whole.data(), y.size() * sizeof(float)) == 0);
        if (!uint8_input) {
          // enqueue() runs all batches in one go with the same chunks.
          const std::size_t out_bytes = y.size() * sizeof(float);
          cl::Buffer in(rt.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, c.x_f32.size() * sizeof(float),
                        const_cast<float*>(c.x_f32.data()));
          cl::Buffer out(rt.context(), CL_MEM_READ_WRITE, out_bytes);
          conv->enqueue(in, out).wait();
          std::vector<float> y2(y.size());
          rt.queue().enqueueReadBuffer(out, CL_TRUE, 0, out_bytes, y2.data());
          REQUIRE(std::memcmp(y2.data(), y_whole.data(), out_bytes) == 0);
          require_kernels_ran(*conv, variant, false);
        }
      }
    }
  }
}

}  // namespace

XNORCL_VARIANT_TEST("max_work_group_size 16 caps every launch", "[cap]", cap_16)
XNORCL_VARIANT_TEST("max_work_group_size 1 caps every launch", "[cap]", cap_1)
XNORCL_VARIANT_TEST("forced small chunks give bitwise equal results", "[chunks]", chunked)

}  // namespace xnorcl::test
