// SPDX-License-Identifier: Apache-2.0
// BinaryConvolution on the device against the published OpenVINO cases and against the host reference.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <limits>

#include "conv_case.hpp"
#include "device_checks.hpp"
#include "device_support.hpp"
#include "openvino_cases.hpp"

namespace xnorcl::test {
namespace {

ConvCase from_openvino(const OpenVinoCase& ov, BitOrder order) {
  ConvCase c;
  c.name = "OpenVINO case " + std::to_string(ov.id);
  c.input = ov.input_shape;
  c.filter = ov.filter_shape;
  c.attributes = ov.attributes();
  c.order = order;
  c.filter_bytes =
      order == BitOrder::MsbFirst ? ov.filter_bytes_msb_first : bit_reversed(ov.filter_bytes_msb_first);
  c.x_f32 = ov.input;
  return c;
}

// Runs a case and requires the expected values exactly (and the reference to agree). word_bits 0: the
// architecture's word size, else forced (RuntimeOptions::word_bits).
void check_expected(Variant variant, const ConvCase& c, const std::vector<float>& expected,
                    int word_bits = 0) {
  INFO(describe(c));
  INFO("word_bits " << word_bits);
  BinaryConvolution conv(runtime_for(variant, word_bits), c.attributes, c.input, c.make_filter());
  if (word_bits) REQUIRE(conv.plan().word_bits == word_bits);
  const std::vector<float> y = run_case(conv, c);
  require_kernels_ran(conv, variant, false);
  std::string difference = bitwise_difference(y, expected, conv.output_shape());
  INFO("against the published values: " << difference);
  REQUIRE(difference.empty());
  difference = bitwise_difference(y, c.reference(), conv.output_shape());
  INFO("against the reference: " << difference);
  REQUIRE(difference.empty());
}

void openvino_published_cases(Variant variant) {
  for (int word_bits : {32, 64}) {
    for (const OpenVinoCase& ov : openvino_cases()) {
      for (BitOrder order : {BitOrder::MsbFirst, BitOrder::LsbFirst}) {
        check_expected(variant, from_openvino(ov, order), ov.expected, word_bits);
      }
    }
  }
}

void openvino_derived_cases(Variant variant) {
  // Y is affine in v, so cases 2/3 and 6/7 give these values at v = 0 and 0.5.
  for (int word_bits : {32, 64}) {
    for (const DerivedCase& d : derived_cases()) {
      for (BitOrder order : {BitOrder::MsbFirst, BitOrder::LsbFirst}) {
        ConvCase c = from_openvino(openvino_case(d.id), order);
        c.attributes.pad_value = d.pad_value;
        c.name += " at pad_value " + std::to_string(d.pad_value);
        check_expected(variant, c, d.expected, word_bits);
      }
    }
  }
}

void spec_example_layer(Variant variant) {
  // The README example's layer: X 1x3x224x224, F 64x3x5x5, strides 1, pads 2/2, dilations 1, pad_value 0.
  ConvCase c;
  c.name = "spec example layer";
  c.seed = 224;
  c.input = {1, 3, 224, 224};
  c.filter = {64, 3, 5, 5};
  c.attributes.pads_begin = {2, 2};
  c.attributes.pads_end = {2, 2};
  c.attributes.pad_value = 0.0f;
  Rng rng(c.seed);
  fill_data(c, rng);
  check_case(variant, c);
  BinaryConvolution conv(runtime_for(variant), c.attributes, c.input, c.make_filter());
  REQUIRE(conv.output_shape() == Shape{1, 64, 224, 224});
  REQUIRE(conv.pads_begin() == std::array<int, 2>{2, 2});
  REQUIRE(conv.pads_end() == std::array<int, 2>{2, 2});
}

// Randomized configurations, deterministic by seed: batch b holds seeds 1000*b + 0 .. 31.
constexpr int kCasesPerBatch = 32;
void random_batch(Variant variant, int batch) {
  for (int i = 0; i < kCasesPerBatch; ++i) {
    check_case(variant, random_case(std::uint64_t(1000) * batch + i));
  }
}

// The same randomized configurations with the word size the architecture does not choose (on PoCL: the
// GPUs' 32-bit words). A subset of the batches (kOtherWordBatches of them, each from a distinct batch of
// seeds), each of which must reach both K layouts, every pad class (+-1, 0, other) and both bit orders.
void random_batch_other_word_size(Variant variant, int batch) {
  const int word_bits = other_word_bits(variant);
  Runtime& rt = runtime_for(variant, word_bits);
  bool dense = false, channel_packed = false, pad_bit = false, pad_zero = false, pad_other = false;
  bool msb = false, lsb = false;
  for (int i = 0; i < kCasesPerBatch; ++i) {
    const ConvCase c = random_case(std::uint64_t(1000) * batch + i);
    INFO("word_bits " << word_bits);
    check_case_on(rt, variant, c);
    const Plan plan = BinaryConvolution(rt, c.attributes, c.input, c.make_filter()).plan();
    REQUIRE(plan.word_bits == word_bits);
    (plan.channel_packed ? channel_packed : dense) = true;
    const float v = c.attributes.pad_value;
    (v == 1.0f || v == -1.0f ? pad_bit : v == 0.0f ? pad_zero : pad_other) = true;
    (c.order == BitOrder::MsbFirst ? msb : lsb) = true;
  }
  CHECK(dense);
  CHECK(channel_packed);
  CHECK(pad_bit);
  CHECK(pad_zero);
  CHECK(pad_other);
  CHECK(msb);
  CHECK(lsb);
}

void enqueue_device_buffers(Variant variant) {
  Runtime& rt = runtime_for(variant);
  ConvCase c = random_case(77);
  c.uint8_input = false;
  c.x_u8.clear();
  c.kind = InputKind::Floats;
  Rng rng(77);
  fill_data(c, rng);
  INFO(describe(c));
  BinaryConvolution conv(rt, c.attributes, c.input, c.make_filter());
  const Shape y_shape = conv.output_shape();
  const std::size_t y_count = static_cast<std::size_t>(y_shape[0] * y_shape[1] * y_shape[2] * y_shape[3]);
  cl::CommandQueue queue = rt.queue();
  cl::Buffer in(rt.context(), CL_MEM_READ_ONLY, c.x_f32.size() * sizeof(float));
  cl::Buffer out(rt.context(), CL_MEM_READ_WRITE, y_count * sizeof(float));
  std::vector<cl::Event> wait(1);
  queue.enqueueWriteBuffer(in, CL_FALSE, 0, c.x_f32.size() * sizeof(float), c.x_f32.data(), nullptr,
                           &wait[0]);
  cl::Event done = conv.enqueue(in, out, &wait);
  std::vector<float> y(y_count);
  std::vector<cl::Event> after{done};
  queue.enqueueReadBuffer(out, CL_TRUE, 0, y_count * sizeof(float), y.data(), &after);
  require_kernels_ran(conv, variant, false);
  const std::string difference = bitwise_difference(y, c.reference(), y_shape);
  INFO(difference);
  REQUIRE(difference.empty());

  // The same object again, no wait list, larger buffers than needed.
  cl::Buffer big_in(rt.context(), CL_MEM_READ_ONLY, c.x_f32.size() * sizeof(float) + 64);
  cl::Buffer big_out(rt.context(), CL_MEM_READ_WRITE, y_count * sizeof(float) + 64);
  queue.enqueueWriteBuffer(big_in, CL_TRUE, 0, c.x_f32.size() * sizeof(float), c.x_f32.data());
  conv.enqueue(big_in, big_out).wait();
  std::vector<float> y2(y_count);
  queue.enqueueReadBuffer(big_out, CL_TRUE, 0, y_count * sizeof(float), y2.data());
  REQUIRE(std::memcmp(y.data(), y2.data(), y_count * sizeof(float)) == 0);
}

void enqueue_refuses_small_buffers(Variant variant) {
  Runtime& rt = runtime_for(variant);
  const ConvCase c = random_case(78);
  INFO(describe(c));
  BinaryConvolution conv(rt, c.attributes, c.input, c.make_filter());
  const Shape y_shape = conv.output_shape();
  const std::size_t in_bytes = static_cast<std::size_t>(c.input_size()) * sizeof(float);
  const std::size_t out_bytes =
      static_cast<std::size_t>(y_shape[0] * y_shape[1] * y_shape[2] * y_shape[3]) * 4;
  cl::Buffer in(rt.context(), CL_MEM_READ_ONLY, in_bytes);
  cl::Buffer out(rt.context(), CL_MEM_READ_WRITE, out_bytes);
  cl::Buffer small_in(rt.context(), CL_MEM_READ_ONLY, in_bytes - 4);
  cl::Buffer small_out(rt.context(), CL_MEM_READ_WRITE, out_bytes - 4);
  // A sentinel in the output buffer proves no device work happened.
  std::vector<float> sentinel(out_bytes / 4, -12345.0f);
  rt.queue().enqueueWriteBuffer(out, CL_TRUE, 0, out_bytes, sentinel.data());
  rt.queue().enqueueWriteBuffer(small_out, CL_TRUE, 0, out_bytes - 4, sentinel.data());
  auto expect_refused = [&](const cl::Buffer& i, const cl::Buffer& o, const std::string& need) {
    try {
      conv.enqueue(i, o);
      FAIL("enqueue accepted a buffer smaller than the shapes need");
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      INFO(what);
      CHECK(what.find(need) != std::string::npos);
    }
    // Nothing ran: the object has no events of a run, and the outputs still hold the sentinel.
    CHECK(conv.last_stage_times().empty());
  };
  expect_refused(small_in, out, std::to_string(in_bytes - 4));
  expect_refused(small_in, out, std::to_string(in_bytes));
  expect_refused(in, small_out, std::to_string(out_bytes - 4));
  expect_refused(in, small_out, std::to_string(out_bytes));
  expect_refused(cl::Buffer(), out, "null");
  rt.queue().finish();
  std::vector<float> back(out_bytes / 4);
  rt.queue().enqueueReadBuffer(out, CL_TRUE, 0, out_bytes, back.data());
  REQUIRE(std::memcmp(back.data(), sentinel.data(), out_bytes) == 0);
  rt.queue().enqueueReadBuffer(small_out, CL_TRUE, 0, out_bytes - 4, back.data());
  REQUIRE(std::memcmp(back.data(), sentinel.data(), out_bytes - 4) == 0);
  // The object still works with buffers of the right size.
  const std::vector<float> x = c.uint8_input ? std::vector<float>(c.x_u8.begin(), c.x_u8.end()) : c.x_f32;
  rt.queue().enqueueWriteBuffer(in, CL_TRUE, 0, in_bytes, x.data());
  conv.enqueue(in, out).wait();
  rt.queue().enqueueReadBuffer(out, CL_TRUE, 0, out_bytes, back.data());
  require_kernels_ran(conv, variant, false);
  REQUIRE(bitwise_difference(back, c.reference(), y_shape).empty());
}

void run_leaves_output_untouched_on_error(Variant variant) {
  Runtime& rt = runtime_for(variant);
  const ConvCase c = random_case(79);
  INFO(describe(c));
  BinaryConvolution conv(rt, c.attributes, c.input, c.make_filter());
  const Shape y_shape = conv.output_shape();
  const std::size_t y_count = static_cast<std::size_t>(y_shape[0] * y_shape[1] * y_shape[2] * y_shape[3]);
  std::vector<float> y(y_count, -777.0f);
  const std::vector<float> sentinel = y;
  REQUIRE_THROWS_AS(conv.run(static_cast<const float*>(nullptr), y.data()), InvalidArgument);
  REQUIRE_THROWS_AS(conv.run(static_cast<const std::uint8_t*>(nullptr), y.data()), InvalidArgument);
  REQUIRE_THROWS_AS(conv.run(static_cast<const float*>(nullptr)), InvalidArgument);
  REQUIRE(std::memcmp(y.data(), sentinel.data(), y_count * sizeof(float)) == 0);
  // A null output pointer is refused too; a correct call then fills y.
  if (c.uint8_input) {
    REQUIRE_THROWS_AS(conv.run(c.x_u8.data(), nullptr), InvalidArgument);
    conv.run(c.x_u8.data(), y.data());
  } else {
    REQUIRE_THROWS_AS(conv.run(c.x_f32.data(), nullptr), InvalidArgument);
    conv.run(c.x_f32.data(), y.data());
  }
  require_kernels_ran(conv, variant, c.uint8_input);
  const std::string difference = bitwise_difference(y, c.reference(), y_shape);
  INFO(difference);
  REQUIRE(difference.empty());
}

// A layer at the edges of a packing path: its geometry, input type and the chunk budget that splits it
// into row chunks (0: the default budget).
struct LayerEdge {
  Shape input, filter;
  std::array<int, 2> strides, dilations, pads_begin, pads_end;
  float pad_value;
  bool uint8_input;
  std::size_t chunk_budget;
};

ConvCase edge_case(const LayerEdge& e, const std::string& name, std::uint64_t seed) {
  ConvCase c;
  c.name = name;
  c.seed = seed;
  c.input = e.input;
  c.filter = e.filter;
  c.attributes.strides = e.strides;
  c.attributes.dilations = e.dilations;
  c.attributes.pads_begin = e.pads_begin;
  c.attributes.pads_end = e.pads_end;
  c.attributes.pad_value = e.pad_value;
  c.uint8_input = e.uint8_input;
  return c;
}

// Checks the case against the reference under the edge's chunk budget and returns the plan it ran.
Plan checked_plan(Runtime& rt, Variant variant, const ConvCase& c, std::size_t chunk_budget) {
  if (chunk_budget) ::setenv("XNORCL_MAX_CHUNK_BYTES", std::to_string(chunk_budget).c_str(), 1);
  check_case_on(rt, variant, c);
  const Plan plan = BinaryConvolution(rt, c.attributes, c.input, c.make_filter()).plan();
  ::unsetenv("XNORCL_MAX_CHUNK_BYTES");
  return plan;
}

// Dense packing from bit rows at its edges, with both word sizes: rows of several words, pads wider than a
// word (runs entirely in the pad), strides, dilation_y, KW at and beyond the word size (KW > B packs bit by
// bit), uint8 input, and a layer split into row chunks (each binarizing its own input rows).
void dense_bit_row_edges(Variant variant) {
  const std::vector<LayerEdge> edges = {
      {{1, 3, 9, 150}, {5, 3, 3, 5}, {2, 3}, {1, 1}, {1, 70}, {2, 45}, 1.0f, false, 0},
      {{2, 3, 9, 150}, {5, 3, 3, 5}, {1, 2}, {2, 1}, {0, 66}, {1, 3}, 0.5f, false, 0},
      {{1, 1, 6, 70}, {3, 1, 2, 33}, {1, 1}, {1, 1}, {0, 35}, {1, 2}, -1.0f, false, 0},
      {{1, 5, 20, 40}, {4, 5, 4, 64}, {1, 1}, {2, 1}, {3, 10}, {0, 20}, 1.0f, true, 0},
      {{1, 2, 5, 80}, {2, 2, 3, 65}, {1, 2}, {1, 1}, {1, 1}, {1, 1}, 0.0f, false, 0},
      {{2, 3, 30, 67}, {7, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 0.0f, true, 3000},
  };
  for (int word_bits : {32, 64}) {
    Runtime& rt = runtime_for(variant, word_bits);
    for (std::size_t i = 0; i < edges.size(); ++i) {
      const LayerEdge& e = edges[i];
      ConvCase c = edge_case(e, "dense bit-row edge " + std::to_string(i), 500 + i);
      Rng rng(c.seed);
      fill_data(c, rng);
      INFO("word_bits " << word_bits);
      const Plan plan = checked_plan(rt, variant, c, e.chunk_budget);
      INFO(plan.to_string());
      REQUIRE_FALSE(plan.channel_packed);
      REQUIRE(plan.bit_rows == (e.dilations[1] == 1 && e.filter[3] <= word_bits));
      if (e.chunk_budget) REQUIRE(plan.chunks >= 2);
    }
  }
}

void plan_reports_launches(Variant variant) {
  ConvCase c = random_case(80);
  BinaryConvolution conv(runtime_for(variant), c.attributes, c.input, c.make_filter());
  const Plan& p = conv.plan();
  INFO(p.to_string());
  REQUIRE(p.variant == variant);
  REQUIRE(p.patch_bits == c.input[1] * c.filter[2] * c.filter[3]);
  REQUIRE((p.word_bits == 32 || p.word_bits == 64));
  const std::int64_t C = c.input[1], taps = c.filter[2] * c.filter[3];
  const std::int64_t channel_words = (C + p.word_bits - 1) / p.word_bits;
  // Channel-packed where the channel words waste at most half their bits, unless dense packing from bit rows
  // needs at most 3/4 of the words (src/ops/binary_convolution/conv_layout.hpp, choose_packing).
  const std::int64_t dense_words = (p.patch_bits + p.word_bits - 1) / p.word_bits;
  const bool rows_possible = c.attributes.dilations[1] == 1 && c.filter[3] <= p.word_bits;
  REQUIRE(p.channel_packed == (2 * C >= channel_words * p.word_bits &&
                               !(rows_possible && 4 * dense_words <= 3 * taps * channel_words)));
  REQUIRE(p.words_per_patch ==
          (p.channel_packed ? taps * channel_words : (p.patch_bits + p.word_bits - 1) / p.word_bits));
  const std::vector<std::string> packing = packing_kernels(p, false);
  REQUIRE(p.launches.size() >= packing.size() + 1);
  for (std::size_t i = 0; i < packing.size(); ++i) REQUIRE(p.launches[i].kernel == packing[i]);
  REQUIRE(p.launches[packing.size()].kernel == "xnor_gemm");
  REQUIRE(p.build_options.find(variant == Variant::Local ? "-DLOCAL_VARIANT=1" : "-DLOCAL_VARIANT=0") !=
          std::string::npos);
  for (const auto& l : p.launches) {
    REQUIRE(l.local[0] * l.local[1] >= 1);
    REQUIRE(l.global[0] % l.local[0] == 0);
    REQUIRE(l.global[1] % l.local[1] == 0);
  }
  REQUIRE(p.scratch_bytes > 0);
  REQUIRE(p.to_string().find("xnor_gemm") != std::string::npos);
  run_case(conv, c);
  require_kernels_ran(conv, variant, c.uint8_input);
}

// Channel-packed layouts in both packing geometries (vector runs, a word per work-item) and, in runs, both
// binarizations of floats (float compares, order keys), with both word sizes: runs that end inside and at a
// row's end, 1 to 3 channel words (one vector store, strided stores, a partial last word), pads wider than
// the run, stride 2, dilation, uint8 input, every pad class, a layer split into row chunks, batches. The
// geometry and kernel are the plan's, and the runtime's choice where they are not forced.
void channel_packed_edges(Variant variant) {
  const std::vector<LayerEdge> edges = {
      {{1, 64, 7, 7}, {9, 64, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 0.0f, false, 0},
      {{2, 60, 5, 37}, {6, 60, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1.0f, true, 0},
      {{1, 96, 9, 20}, {5, 96, 3, 2}, {2, 2}, {1, 2}, {2, 18}, {0, 17}, -1.0f, false, 0},
      {{3, 33, 6, 17}, {4, 33, 2, 3}, {1, 1}, {2, 2}, {1, 2}, {0, 2}, 0.5f, false, 0},
      {{2, 120, 11, 16}, {7, 120, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 0.0f, true, 6000},
  };
  for (int word_bits : {32, 64}) {
    for (const char* runtime : {"default", "other packing", "other float compare"}) {
      const bool other = runtime == std::string("other packing");
      const bool other_compare = runtime == std::string("other float compare");
      Runtime& rt = other           ? runtime_with_other_packing(variant, word_bits)
                    : other_compare ? runtime_with_other_float_compare(variant, word_bits)
                                    : runtime_for(variant, word_bits);
      const detail::RuntimeState& s = *rt.state();
      REQUIRE(s.pack_in_runs == (detail::packs_in_vector_runs(s.profile) != other));
      for (std::size_t i = 0; i < edges.size(); ++i) {
        const LayerEdge& e = edges[i];
        ConvCase c = edge_case(e, "channel-packed edge " + std::to_string(i), 600 + i);
        c.kind = InputKind::SmallInteger;
        Rng rng(c.seed);
        c.attributes.input_thresholds = {};
        c.attributes.input_thresholds.resize(static_cast<std::size_t>(e.input[1]));
        for (float& t : c.attributes.input_thresholds) t = static_cast<float>(rng.uniform(-2, 4)) + 0.5f;
        fill_data(c, rng);
        INFO("word_bits " << word_bits << ", " << runtime << " runtime, packing in runs " << s.pack_in_runs);
        const Plan plan = checked_plan(rt, variant, c, e.chunk_budget);
        INFO(plan.to_string());
        REQUIRE(plan.channel_packed);
        // The plan names the float kernel: a run's input type picks the u8 one. In runs, the layers at
        // stride 1 whose rows keep their width (all but edge 2) write the patches in the same launch.
        const bool one_launch = s.pack_in_runs && i != 2;
        REQUIRE(plan.launches.front().kernel == (one_launch ? channel_pack_patches_kernel(rt, other_compare)
                                                 : s.pack_in_runs
                                                     ? channel_pack_runs_kernel(rt, other_compare)
                                                     : "channel_pack_pixel_f32"));
        if (e.chunk_budget) REQUIRE(plan.chunks >= 2);
      }
    }
  }
}

// The random configurations on a runtime of the other packing geometry (the channel-packed ones differ).
void random_batch_other_packing(Variant variant, int batch) {
  Runtime& rt = runtime_with_other_packing(variant);
  bool channel_packed = false;
  for (int i = 0; i < kCasesPerBatch; ++i) {
    const ConvCase c = random_case(std::uint64_t(1000) * batch + i);
    check_case_on(rt, variant, c);
    channel_packed =
        channel_packed || BinaryConvolution(rt, c.attributes, c.input, c.make_filter()).plan().channel_packed;
  }
  CHECK(channel_packed);
}

// The random configurations on a runtime whose channel packing in runs binarizes floats the other way (float
// compares or order keys; a third of the cases hold -0, subnormals, NaN and infinities, and thresholds of
// -0, subnormals and infinities).
void random_batch_other_float_compare(Variant variant, int batch) {
  Runtime& rt = runtime_with_other_float_compare(variant);
  int packed_in_runs = 0;
  for (int i = 0; i < kCasesPerBatch; ++i) {
    const ConvCase c = random_case(std::uint64_t(1000) * batch + i);
    check_case_on(rt, variant, c);
    const Plan plan = BinaryConvolution(rt, c.attributes, c.input, c.make_filter()).plan();
    packed_in_runs += !c.uint8_input && plan.launches.front().kernel == channel_pack_runs_kernel(rt, true);
  }
  // Where the device packs in runs (CPU devices), the kernel it does not choose ran on some of them.
  if (rt.state()->pack_in_runs) CHECK(packed_in_runs >= 3);
}

// Whether a runtime's programs are built with the vector popcount (-DNATIVE_POPCOUNT=1).
bool built_with_native_popcount(const Runtime& rt) {
  return rt.state()->profile.extra_build_options.find("-DNATIVE_POPCOUNT=1") != std::string::npos;
}

// The random configurations with the portable popcount where the device has a vector popcount instruction
// for the kernels (DeviceInfo::native_popcount), which its default runtime then runs. Elsewhere the portable
// code is the default that the other batches run, and asking for the instruction must be refused.
void random_batch_other_popcount(Variant variant, int batch) {
  const Runtime& usual = runtime_for(variant);
  REQUIRE(usual.native_popcount() == built_with_native_popcount(usual));
  if (!usual.device_info().native_popcount) {
    REQUIRE_FALSE(usual.native_popcount());
    RuntimeOptions options;
    options.variant = variant;
    options.native_popcount = true;
    REQUIRE_THROWS_AS(Runtime::create(options), InvalidArgument);
    return;
  }
  Runtime& portable = runtime_with_portable_popcount(variant);
  REQUIRE_FALSE(portable.native_popcount());
  REQUIRE_FALSE(built_with_native_popcount(portable));
  for (int i = 0; i < kCasesPerBatch; ++i)
    check_case_on(portable, variant, random_case(std::uint64_t(1000) * batch + i));
}

}  // namespace

XNORCL_VARIANT_TEST("channel-packed layouts at their edges, in both packing geometries", "[conv][channel]",
                    channel_packed_edges)

// Batch b of the random configurations on a runtime of another choice: `run(variant, b)`.
#define XNORCL_RANDOM_BATCH_OF(run, what, b) \
  static void run##_##b(Variant v) {         \
    run(v, b);                               \
  }                                          \
  XNORCL_VARIANT_TEST("random configurations, " what ", batch " #b, "[conv][random]", run##_##b)
XNORCL_RANDOM_BATCH_OF(random_batch_other_float_compare, "the other float compare", 2)
XNORCL_RANDOM_BATCH_OF(random_batch_other_float_compare, "the other float compare", 5)
XNORCL_RANDOM_BATCH_OF(random_batch_other_packing, "the other packing geometry", 1)
XNORCL_RANDOM_BATCH_OF(random_batch_other_packing, "the other packing geometry", 4)
XNORCL_RANDOM_BATCH_OF(random_batch_other_packing, "the other packing geometry", 7)
XNORCL_RANDOM_BATCH_OF(random_batch_other_popcount, "the other popcount", 3)
XNORCL_RANDOM_BATCH_OF(random_batch_other_popcount, "the other popcount", 8)

XNORCL_VARIANT_TEST("OpenVINO's nine published cases in both bit orders", "[conv][openvino]",
                    openvino_published_cases)
XNORCL_VARIANT_TEST("values derived from OpenVINO cases 2/3 and 6/7", "[conv][openvino]",
                    openvino_derived_cases)
XNORCL_VARIANT_TEST("the spec's example layer 1x3x224x224 * 64x3x5x5", "[conv][example]", spec_example_layer)
XNORCL_VARIANT_TEST("enqueue on device buffers with a wait list", "[conv][enqueue]", enqueue_device_buffers)
XNORCL_VARIANT_TEST("enqueue refuses buffers smaller than the shapes need", "[conv][enqueue]",
                    enqueue_refuses_small_buffers)
XNORCL_VARIANT_TEST("run leaves the caller's output untouched on error", "[conv][run]",
                    run_leaves_output_untouched_on_error)
XNORCL_VARIANT_TEST("plan reports variant, tiles and launches", "[conv][plan]", plan_reports_launches)
XNORCL_VARIANT_TEST("dense packing from bit rows: wide rows and pads, strides, KW up to and past the word",
                    "[conv][dense]", dense_bit_row_edges)

#define XNORCL_RANDOM_BATCH(b)              \
  static void random_batch_##b(Variant v) { \
    random_batch(v, b);                     \
  }                                         \
  XNORCL_VARIANT_TEST("random configurations, batch " #b, "[conv][random]", random_batch_##b)
XNORCL_RANDOM_BATCH(0)
XNORCL_RANDOM_BATCH(1)
XNORCL_RANDOM_BATCH(2)
XNORCL_RANDOM_BATCH(3)
XNORCL_RANDOM_BATCH(4)
XNORCL_RANDOM_BATCH(5)
XNORCL_RANDOM_BATCH(6)
XNORCL_RANDOM_BATCH(7)
XNORCL_RANDOM_BATCH(8)
XNORCL_RANDOM_BATCH(9)

#define XNORCL_RANDOM_BATCH_OTHER_WORDS(b)                                                              \
  static void random_batch_other_words_##b(Variant v) {                                                 \
    random_batch_other_word_size(v, b);                                                                 \
  }                                                                                                     \
  XNORCL_VARIANT_TEST("random configurations, the other word size, batch " #b, "[conv][random][words]", \
                      random_batch_other_words_##b)
XNORCL_RANDOM_BATCH_OTHER_WORDS(0)
XNORCL_RANDOM_BATCH_OTHER_WORDS(3)
XNORCL_RANDOM_BATCH_OTHER_WORDS(6)

}  // namespace xnorcl::test
