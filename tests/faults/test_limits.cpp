// SPDX-License-Identifier: Apache-2.0
// Limits: layers whose sizes overflow, or that no split keeps under CL_DEVICE_MAX_MEM_ALLOC_SIZE, are
// refused with an xnorcl::Error before any device allocation; attributes near INT_MAX on tiny tensors give
// the reference's answer.
#include <climits>

#include "fault_support.hpp"

namespace xnorcl::test {
namespace {

constexpr std::int64_t kMaxPatchBits = std::int64_t{1} << 24;

// A filter of the shape, all bits 0 (no data is needed to be refused).
Filter zero_filter(const Shape& shape) {
  const std::int64_t bits = shape[0] * shape[1] * shape[2] * shape[3];
  const std::vector<std::uint8_t> bytes(static_cast<std::size_t>((bits + 7) / 8), 0);
  return Filter::from_packed(bytes.data(), bytes.size(), shape, BitOrder::MsbFirst);
}

// Constructs the layer and requires a refusal of type E whose message holds every `parts`, made before the
// library created any buffer or enqueued anything; then the runtime still runs a layer correctly.
template <class E>
void require_refused(Variant variant, const BinaryConvolution::Attributes& a, const Shape& input,
                     const Shape& filter_shape, const std::vector<std::string>& parts) {
  Runtime& rt = runtime_for(variant);
  REQUIRE(intercept::active(rt));
  const Filter filter = zero_filter(filter_shape);
  INFO("input " << to_string(input) << ", filter " << to_string(filter_shape));
  const Activity activity;
  try {
    BinaryConvolution conv(rt, a, input, filter);
    FAIL("accepted; plan: " << conv.plan().to_string());
  } catch (const OpenCLError& e) {
    FAIL("refused by the driver, not before allocating: " << e.what());
  } catch (const E& e) {
    const std::string what = e.what();
    INFO(what);
    for (const std::string& part : parts) CHECK_THAT(what, Contains(part));
  }
  CHECK(activity.buffers_created() == 0);
  CHECK(activity.commands() == 0);
  const ConvCase c = small_case(21);
  BinaryConvolution conv(rt, c.attributes, c.input, c.make_filter());
  require_still_correct(conv, variant, c);
}

// One output row of patches (OW patches of C_IN*KH*KW = 2^24 bits, 2 MiB each) is the smallest piece the
// layer splits into; here it exceeds CL_DEVICE_MAX_MEM_ALLOC_SIZE.
void row_of_patches_above_max_alloc(Variant variant) {
  const std::uint64_t max_alloc = runtime_for(variant).device_info().max_mem_alloc_size;
  const std::int64_t patch_bytes = kMaxPatchBits / 8;
  const std::int64_t ow = static_cast<std::int64_t>(max_alloc / patch_bytes) + 1;
  REQUIRE(ow < INT_MAX);
  require_refused<Error>(variant, {}, {1, kMaxPatchBits, 1, ow}, {1, kMaxPatchBits, 1, 1},
                         {"one output row", std::to_string(ow) + " patches", "CL_DEVICE_MAX_MEM_ALLOC_SIZE",
                          std::to_string(max_alloc)});
}

// One image (and its output) needs more than CL_DEVICE_MAX_MEM_ALLOC_SIZE, while one row of patches is
// small: the patch matrix splits, but no buffer can hold the image.
void image_above_max_alloc(Variant variant) {
  const std::uint64_t max_alloc = runtime_for(variant).device_info().max_mem_alloc_size;
  const std::int64_t w = 1 << 16;
  const std::int64_t h = static_cast<std::int64_t>(max_alloc / (4 * w)) + 1;
  REQUIRE(h < INT_MAX);
  require_refused<Error>(variant, {}, {1, 1, h, w}, {1, 1, 1, 1},
                         {"one image", std::to_string(h * w * 4) + " bytes", "CL_DEVICE_MAX_MEM_ALLOC_SIZE",
                          std::to_string(max_alloc)});
}

void sizes_that_overflow(Variant variant) {
  const std::int64_t big = std::int64_t{1} << 31;
  const BinaryConvolution::Attributes plain;
  SECTION("element count above int64") {
    require_refused<InvalidArgument>(variant, plain, {big, 1, big, big}, {1, 1, 1, 1},
                                     {"element count", "overflows 64-bit arithmetic"});
  }
  SECTION("size in bytes above int64") {
    require_refused<InvalidArgument>(variant, plain, {big - 1, 1, big - 1, 2}, {1, 1, 1, 1},
                                     {"size in bytes", "overflows 64-bit arithmetic"});
  }
  SECTION("output element count above int64 (padding 2^31-1 on every side of a 1x1 image)") {
    BinaryConvolution::Attributes a;
    a.pads_begin = {INT_MAX, INT_MAX};
    a.pads_end = {INT_MAX, INT_MAX};
    require_refused<InvalidArgument>(variant, a, {4, 1, 1, 1}, {1, 1, 1, 1},
                                     {"output shape", "overflows 64-bit arithmetic"});
  }
  SECTION("a dimension above the kernels' 32-bit indices") {
    require_refused<InvalidArgument>(variant, plain, {1, 1, 1, big}, {1, 1, 1, 1},
                                     {"W = 2147483648", "32-bit"});
    require_refused<InvalidArgument>(variant, plain, {big, 1, 1, 1}, {1, 1, 1, 1},
                                     {"N = 2147483648", "32-bit"});
  }
  SECTION("an output dimension above the kernels' 32-bit indices") {
    BinaryConvolution::Attributes a;
    a.pads_begin = {INT_MAX, 0};
    a.pads_end = {INT_MAX, 0};
    require_refused<InvalidArgument>(variant, a, {1, 1, 1, 1}, {1, 1, 1, 1}, {"OH = 4294967295", "32-bit"});
  }
  SECTION("a patch above 2^24 bits") {
    require_refused<InvalidArgument>(variant, plain, {1, 4096, 65, 65}, {1, 4096, 65, 65},
                                     {"C_IN*KH*KW = 17305600", "2^24"});
  }
}

// Strides, dilations and pads near INT_MAX on tiny tensors: the kernels' 32-bit position arithmetic must
// still give the reference's answer (the outputs are few, almost every tap is a pad tap).
void attributes_near_int_max(Variant variant) {
  Runtime& rt = runtime_for(variant);
  const int M = INT_MAX;
  struct Extreme {
    Shape input, filter;
    std::array<int, 2> strides, dilations, pads_begin, pads_end;
    float pad_value;
  };
  const std::vector<Extreme> cases = {
      {{1, 1, 2, 2}, {1, 1, 1, 1}, {M, M}, {1, 1}, {M, M}, {M, M}, 0.5f},
      {{1, 1, 2, 2}, {1, 1, 1, 1}, {M / 2, M / 2}, {1, 1}, {M / 2, M / 2}, {M / 2, M / 2}, 0.5f},
      {{1, 1, 2, 2}, {1, 1, 2, 2}, {M, M}, {M, M}, {M, M}, {M, M}, 0.5f},
      {{1, 1, 3, 3}, {1, 1, 2, 2}, {M / 3, M / 3}, {M / 2, M / 2}, {M - 1, M - 1}, {M, M}, 1.0f},
      {{1, 1, 3, 3}, {1, 1, 2, 2}, {1 << 30, 1 << 30}, {1 << 30, 1 << 30}, {1 << 30, 1 << 30}, {M, M}, -1.0f},
      {{1, 2, 3, 3}, {2, 2, 2, 2}, {1 << 30, 1 << 30}, {1 << 30, 1 << 30}, {M, M}, {M, M}, 0.0f},
      {{2, 3, 4, 3}, {3, 3, 2, 3}, {M, 1}, {M - 2, 1}, {M, 1}, {3, 1}, -0.25f},
      // Channel-packed at stride 1 with rows that keep their width: a tap's shift of 2^26 rows of 64 is 2^32
      // positions (the packing that writes the patches itself must not wrap it to 0).
      {{1, 64, 2, 64}, {4, 64, 2, 1}, {1, 1}, {1 << 26, 1}, {1 << 26, 0}, {0, 0}, 0.5f},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Extreme& e = cases[i];
    ConvCase c;
    c.name = "attributes near INT_MAX " + std::to_string(i);
    c.seed = 300 + i;
    c.input = e.input;
    c.filter = e.filter;
    c.attributes.strides = e.strides;
    c.attributes.dilations = e.dilations;
    c.attributes.pads_begin = e.pads_begin;
    c.attributes.pads_end = e.pads_end;
    c.attributes.pad_value = e.pad_value;
    c.kind = InputKind::Binary;
    Rng rng(c.seed);
    fill_data(c, rng);
    check_case_on(rt, variant, c);
  }
}

// CL_DEVICE_MAX_MEM_ALLOC_SIZE reported as 1 MiB: limits apply to the buffers a layer really uses.
void limits_checked_against_the_buffers_used(Variant variant) {
  runtime_for(variant);  // fails the test without a device
  const intercept::ReportedMaxAlloc one_mib(std::uint64_t(1) << 20);
  RuntimeOptions options;
  options.variant = variant;
  Runtime rt = Runtime::create(options);
  REQUIRE(rt.device_info().max_mem_alloc_size == (std::size_t(1) << 20));
  REQUIRE(intercept::active(rt));
  SECTION("the vehicle classifier as a graph: no buffer above 1 MiB") {
    const VehicleClassifier v = vehicle_classifier(7);
    Model model(rt, network_graph(v.spec));
    Tensor x;
    x.dims = {1, 3, 96, 96};
    x.values.resize(3 * 96 * 96);
    for (std::size_t i = 0; i < x.values.size(); ++i) x.values[i] = static_cast<float>((i * 37) % 256);
    CHECK(model.run({{"input", x}}).at("output").values ==
          reference_network(v.spec, x.values.data()).back().values);
  }
  SECTION("a packed layer is made; run() refuses its float32 staging before any device work") {
    BinaryConvolution::Options o;
    o.input_packed = true;
    o.output = BinaryConvolution::Output::packed(greater_than(std::vector<float>(32, 0.0f)));
    const Shape input{1, 32, 96, 96};  // 1.2 MB as float32, 36 KB packed
    BinaryConvolution conv(rt, {}, input, zero_filter({32, 32, 1, 1}), o);
    const std::vector<std::uint32_t> x(96 * 96, 0x5555u);
    std::vector<std::uint32_t> y(96 * 96, 7u);
    const Activity activity;
    try {
      conv.run_packed(x.data(), y.data());
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK_THAT(e.what(), Contains("1179648 bytes of staging buffer") &&
                               Contains("CL_DEVICE_MAX_MEM_ALLOC_SIZE (1048576)"));
    }
    CHECK(activity.buffers_created() == 0);
    CHECK(activity.commands() == 0);
    CHECK(y == std::vector<std::uint32_t>(96 * 96, 7u));
  }
  SECTION("fully-connected weights above the limit are refused before allocating") {
    const Activity activity;
    const Shape input{1, 1024, 16, 16};  // K = 2^18 bits: 32 KB of weights per output
    try {
      BinaryFullyConnected fc(rt, input, zero_filter({40, 1024, 16, 16}));
      FAIL("accepted");
    } catch (const OpenCLError& e) {
      FAIL("refused by the driver, not before allocating: " << e.what());
    } catch (const InvalidArgument& e) {
      CHECK_THAT(e.what(), Contains("1310720 bytes") && Contains("CL_DEVICE_MAX_MEM_ALLOC_SIZE (1048576)"));
    }
    CHECK(activity.buffers_created() == 0);
  }
}

}  // namespace

XNORCL_VARIANT_TEST(
    "limits are checked against the buffers a layer uses (CL_DEVICE_MAX_MEM_ALLOC_SIZE 1 MiB)",
    "[faults][limits]", limits_checked_against_the_buffers_used)
XNORCL_VARIANT_TEST("one row of patches above CL_DEVICE_MAX_MEM_ALLOC_SIZE is refused before allocating",
                    "[faults][limits]", row_of_patches_above_max_alloc)
XNORCL_VARIANT_TEST("one image above CL_DEVICE_MAX_MEM_ALLOC_SIZE is refused before allocating",
                    "[faults][limits]", image_above_max_alloc)
XNORCL_VARIANT_TEST("sizes that overflow are refused before allocating", "[faults][limits]",
                    sizes_that_overflow)
XNORCL_VARIANT_TEST("strides, dilations and pads near INT_MAX give the reference's answer",
                    "[faults][limits]", attributes_near_int_max)

}  // namespace xnorcl::test
