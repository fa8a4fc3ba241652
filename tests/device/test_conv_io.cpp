// SPDX-License-Identifier: Apache-2.0
// BinaryConvolution's output choices (Float, ScaleBias, Packed through the GEMM's epilogue) and packed input
// on the device against host references built from reference_binary_convolution and the
// packed.hpp helpers (reference_scale_bias, pack_activations, unpack_activations), bitwise.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "conv_case.hpp"
#include "device_checks.hpp"
#include "device_support.hpp"

namespace xnorcl::test {
namespace {

using Output = BinaryConvolution::Output;
using Options = BinaryConvolution::Options;

std::string word_difference(const std::vector<std::uint32_t>& got, const std::vector<std::uint32_t>& want,
                            const Shape& shape) {
  if (got.size() != want.size()) {
    return "sizes differ: " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
  }
  const std::int64_t cw = packed_words_per_pixel(shape[1]);
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) {
      const std::int64_t pixel = static_cast<std::int64_t>(i) / cw;
      char buf[160];
      std::snprintf(buf, sizeof buf, "word %zu (pixel %lld, channels %lld..) differs: got %08x, want %08x", i,
                    static_cast<long long>(pixel),
                    static_cast<long long>((static_cast<std::int64_t>(i) % cw) * 32), got[i], want[i]);
      return buf;
    }
  }
  return "";
}

// Rules per output channel: folded batch-norms (Greater, Less for a negative scale, AlwaysZero/AlwaysOne for
// a zero scale), and Greater/Less thresholds equal to a value the layer really outputs in that channel
// (y == t must give 0), and +-inf thresholds.
std::vector<Threshold> random_rules(Rng& rng, const std::vector<float>& y, const Shape& y_shape) {
  std::vector<float> scale, bias;
  random_scale_bias(rng, y_shape[1], scale, bias);
  std::vector<Threshold> rules = fold_batch_norm(scale, bias);
  const std::int64_t plane = y_shape[2] * y_shape[3];
  for (std::int64_t o = 0; o < y_shape[1]; ++o) {
    const int r = rng.uniform(0, 9);
    Threshold& rule = rules[static_cast<std::size_t>(o)];
    if (r < 4) {
      const std::int64_t n = rng.uniform(0, static_cast<int>(y_shape[0] - 1));
      const std::int64_t at = rng.uniform(0, static_cast<int>(plane - 1));
      rule.value = y[static_cast<std::size_t>((n * y_shape[1] + o) * plane + at)];
      rule.mode = r < 2 ? ThresholdMode::Greater : ThresholdMode::Less;
    } else if (r == 4) {
      rule.value =
          rng.chance(50) ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
      rule.mode = rng.chance(50) ? ThresholdMode::Greater : ThresholdMode::Less;
    }
  }
  return rules;
}

// Random max-pool windows valid on `shape` (OpenVINO MaxPool): kernels 1..3, strides 1..3, pads below the
// kernel, every auto_pad and rounding type; overlapping windows (stride < kernel), windows cut by the edges,
// and empty windows (ceil rounding) all occur.
PoolAttributes random_pool(Rng& rng, const Shape& shape) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    PoolAttributes p;
    for (int i = 0; i < 2; ++i) {
      p.kernel[static_cast<std::size_t>(i)] = rng.uniform(1, 3);
      p.strides[static_cast<std::size_t>(i)] = rng.uniform(1, 3);
      p.pads_begin[static_cast<std::size_t>(i)] = rng.uniform(0, p.kernel[static_cast<std::size_t>(i)] - 1);
      p.pads_end[static_cast<std::size_t>(i)] = rng.uniform(0, p.kernel[static_cast<std::size_t>(i)] - 1);
    }
    p.auto_pad = rng.pick(std::vector<AutoPad>{AutoPad::Explicit, AutoPad::Explicit, AutoPad::Valid,
                                               AutoPad::SameUpper, AutoPad::SameLower});
    p.rounding_type = rng.chance(50) ? RoundingType::Ceil : RoundingType::Floor;
    try {
      validate_pool(p, shape);
      return p;
    } catch (const InvalidArgument&) {
    }
  }
  PoolAttributes one;
  one.kernel = {1, 1};
  one.strides = {1, 1};
  return one;
}

// The GEMM kernel that writes packed output: xnor_gemm_fused (__local words) on the Local variant when its
// tile of output channels covers whole words, else xnor_gemm_bits (32 channels per work-item).
std::string packed_gemm_kernel(const BinaryConvolution& conv) {
  return conv.plan().variant == Variant::Local && conv.plan().tile_m % 32 == 0 ? "xnor_gemm_fused"
                                                                               : "xnor_gemm_bits";
}

// The kernels of this run: the packing kernels of the plan's layout (im2col_pack_units alone for a packed
// input), then the GEMM kernel of the output choice; nothing else (the output choice adds no launch).
void require_io_kernels_ran(const BinaryConvolution& conv, Variant variant, bool uint8_input) {
  REQUIRE(conv.plan().variant == variant);
  const std::vector<StageTime> stages = conv.last_stage_times();
  INFO("plan: " << conv.plan().to_string());
  INFO("stages of the last run: " << stage_list(stages));
  std::vector<std::string> want;
  if (conv.input_packed()) {
    REQUIRE(conv.plan().channel_packed);
    want = {"im2col_pack_units"};
  } else {
    want = packing_kernels(conv.plan(), uint8_input);
  }
  const std::string& out = conv.plan().output;
  if (out == "float32") {
    want.push_back("xnor_gemm");
  } else if (out.rfind("scale_bias", 0) == 0) {
    REQUIRE(out == "scale_bias (" + fused_gemm_kernel(conv) + ")");
    want.push_back(fused_gemm_kernel(conv));
  } else if (conv.options().max_pool) {
    REQUIRE(out == "packed, max-pooled (xnor_gemm_bits)");
    want.push_back("xnor_gemm_bits");
  } else {
    REQUIRE(out == "packed (" + packed_gemm_kernel(conv) + ")");
    want.push_back(packed_gemm_kernel(conv));
  }
  for (const std::string& kernel : want) {
    INFO(kernel);
    REQUIRE(has_stage(stages, kernel));
  }
  // A layer in chunks of output rows runs the other fused GEMM too where a chunk's rows end mid-block.
  const bool both_fused = conv.plan().chunks > 1 && has_stage(stages, "xnor_gemm_fused") &&
                          has_stage(stages, "xnor_gemm_fused_runs");
  REQUIRE(stages.size() == want.size() + (both_fused ? 1 : 0));
  REQUIRE(conv.plan().launches.size() == want.size());
  REQUIRE(conv.plan().launches.back().kernel == want.back());
}

// One random configuration: Float, ScaleBias and Packed output from its own input, then the same layer on
// packed input (the case's input binarized by its thresholds) with each output choice. Returns the fused GEMM
// kernel the ScaleBias layer ran.
std::string check_io_case(Runtime& rt, Variant variant, const ConvCase& c) {
  INFO(describe(c));
  Rng rng(c.seed * 7 + 3);
  const std::vector<float> y_ref = c.reference();
  const ConvGeometry g = BinaryConvolution::validate(c.attributes, c.input, c.filter);
  const Filter f = c.make_filter();

  // ScaleBias.
  std::string fused_kernel;
  {
    std::vector<float> scale, bias;
    random_scale_bias(rng, c.filter[0], scale, bias);
    Options o;
    o.output = Output::scale_and_bias(scale, bias);
    BinaryConvolution conv(rt, c.attributes, c.input, f, o);
    const std::vector<float> got = c.uint8_input ? conv.run(c.x_u8.data()) : conv.run(c.x_f32.data());
    require_io_kernels_ran(conv, variant, c.uint8_input);
    fused_kernel = fused_gemm_kernel(conv);
    const std::vector<float> want = reference_scale_bias(y_ref.data(), g.output, scale, bias);
    const std::string difference = bitwise_difference(got, want, g.output);
    INFO("scale_bias: " << difference);
    REQUIRE(difference.empty());
  }
  // Packed.
  const std::vector<Threshold> rules = random_rules(rng, y_ref, g.output);
  const std::vector<std::uint32_t> want_words = pack_activations(y_ref.data(), g.output, rules);
  {
    Options o;
    o.output = Output::packed(rules);
    BinaryConvolution conv(rt, c.attributes, c.input, f, o);
    REQUIRE(conv.output_packed());
    REQUIRE(conv.output_bytes() == static_cast<std::size_t>(packed_word_count(g.output)) * 4);
    const std::vector<std::uint32_t> got =
        c.uint8_input ? conv.run_packed(c.x_u8.data()) : conv.run_packed(c.x_f32.data());
    require_io_kernels_ran(conv, variant, c.uint8_input);
    const std::string difference = word_difference(got, want_words, g.output);
    INFO("packed: " << difference);
    REQUIRE(difference.empty());
  }
  // Packed and max-pooled in the same launch (Options::max_pool): the reference max-pool of the packed bits.
  const PoolAttributes pool = random_pool(rng, g.output);
  const Shape pooled = validate_pool(pool, g.output).output;
  const std::vector<std::uint32_t> want_pooled = reference_binary_maxpool(want_words.data(), g.output, pool);
  INFO("max_pool kernel " << pool.kernel[0] << "x" << pool.kernel[1] << " strides " << pool.strides[0] << ","
                          << pool.strides[1] << " pads " << pool.pads_begin[0] << "," << pool.pads_begin[1]
                          << " / " << pool.pads_end[0] << "," << pool.pads_end[1] << " auto_pad "
                          << static_cast<int>(pool.auto_pad) << " " << to_string(pool.rounding_type) << " -> "
                          << to_string(pooled));
  {
    Options o;
    o.output = Output::packed(rules);
    o.max_pool = pool;
    BinaryConvolution conv(rt, c.attributes, c.input, f, o);
    REQUIRE(conv.output_shape() == pooled);
    REQUIRE(conv.output_bytes() == want_pooled.size() * 4);
    std::vector<std::uint32_t> got(want_pooled.size(), 0xdeadbeefu);
    if (c.uint8_input) {
      conv.run_packed(c.x_u8.data(), got.data());
    } else {
      conv.run_packed(c.x_f32.data(), got.data());
    }
    require_io_kernels_ran(conv, variant, c.uint8_input);
    const std::string difference = word_difference(got, want_pooled, pooled);
    INFO("packed, max-pooled: " << difference);
    REQUIRE(difference.empty());
  }
  // Packed input: the case's input binarized with its thresholds (the packed contract), tail bits 0.
  std::vector<float> x01;
  if (c.uint8_input) {
    x01.assign(c.x_u8.begin(), c.x_u8.end());
  } else {
    x01 = c.x_f32;
  }
  const std::vector<std::uint32_t> words =
      pack_activations(x01.data(), c.input,
                       c.attributes.input_thresholds.empty() ? std::vector<Threshold>{}
                                                             : greater_than(c.attributes.input_thresholds));
  BinaryConvolution::Attributes a = c.attributes;
  a.input_thresholds.clear();
  const std::vector<float> x_bits = unpack_activations(words.data(), c.input);
  const std::vector<float> y_packed_in = reference_binary_convolution(x_bits.data(), c.input, f, a);
  // The binarization is the same, so the reference on the unpacked bits equals the case's own reference.
  REQUIRE(bitwise_difference(y_packed_in, y_ref, g.output).empty());
  {
    Options o;
    o.input_packed = true;
    BinaryConvolution conv(rt, a, c.input, f, o);
    REQUIRE(conv.input_packed());
    REQUIRE(conv.input_bytes() == words.size() * 4);
    const std::vector<float> got = conv.run(words.data());
    require_io_kernels_ran(conv, variant, false);
    const std::string difference = bitwise_difference(got, y_ref, g.output);
    INFO("packed input, float output: " << difference);
    REQUIRE(difference.empty());
  }
  {
    Options o;
    o.input_packed = true;
    o.output = Output::packed(rules);
    BinaryConvolution conv(rt, a, c.input, f, o);
    std::vector<std::uint32_t> got(want_words.size(), 0xdeadbeefu);
    conv.run_packed(words.data(), got.data());
    require_io_kernels_ran(conv, variant, false);
    const std::string difference = word_difference(got, want_words, g.output);
    INFO("packed input, packed output: " << difference);
    REQUIRE(difference.empty());
  }
  {
    Options o;
    o.input_packed = true;
    o.output = Output::packed(rules);
    o.max_pool = pool;
    BinaryConvolution conv(rt, a, c.input, f, o);
    const std::vector<std::uint32_t> got = conv.run_packed(words.data());
    require_io_kernels_ran(conv, variant, false);
    const std::string difference = word_difference(got, want_pooled, pooled);
    INFO("packed input, packed and max-pooled output: " << difference);
    REQUIRE(difference.empty());
  }
  return fused_kernel;
}

// Random configurations (tests/conv_case.hpp: C_OUT 1..130 incl. 33, 63, 65, 129; kernels 1..7; strides,
// dilations, every auto_pad and pad_value class, batch 1..3, float and uint8 inputs), with the
// architecture's word size and the other one.
void random_io_cases(Variant variant) {
  for (int word_bits : {0, other_word_bits(variant)}) {
    Runtime& rt = runtime_for(variant, word_bits);
    INFO("word_bits " << word_bits);
    for (int i = 0; i < 12; ++i) {
      const ConvCase c = random_case(std::uint64_t(7000) + std::uint64_t(word_bits) * 100 + i, 4e6);
      check_io_case(rt, variant, c);
    }
  }
}

// Hand-picked shapes the issue names: C_OUT 33 and 45, 1x1 and 7x7 kernels, strides, dilations, asymmetric
// pads, every pad_value class, batch > 1.
ConvCase named_case(std::uint64_t seed, Shape x, Shape f, std::array<int, 2> strides,
                    std::array<int, 2> dilations, std::array<int, 2> pb, std::array<int, 2> pe, float v,
                    bool uint8_input, bool thresholds) {
  ConvCase c;
  c.name = "named " + std::to_string(seed);
  c.seed = seed;
  c.input = x;
  c.filter = f;
  c.attributes.strides = strides;
  c.attributes.dilations = dilations;
  c.attributes.pads_begin = pb;
  c.attributes.pads_end = pe;
  c.attributes.pad_value = v;
  c.uint8_input = uint8_input;
  c.kind = uint8_input ? InputKind::SmallInteger : InputKind::Floats;
  c.order = seed % 2 ? BitOrder::LsbFirst : BitOrder::MsbFirst;
  Rng rng(seed);
  if (thresholds) {
    do {
      c.attributes.input_thresholds = random_thresholds(rng, x[1], uint8_input, c.kind);
    } while (c.attributes.input_thresholds.empty());
  }
  fill_data(c, rng);
  return c;
}

std::vector<ConvCase> named_cases() {
  return {
      named_case(1, {2, 45, 7, 6}, {33, 45, 1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, 0.0f, false, true),
      named_case(2, {1, 33, 11, 9}, {45, 33, 7, 7}, {1, 1}, {1, 1}, {3, 2}, {1, 3}, 0.5f, false, false),
      named_case(3, {3, 20, 9, 10}, {45, 20, 3, 3}, {2, 1}, {1, 2}, {1, 0}, {2, 2}, -1.0f, true, true),
      named_case(4, {2, 70, 8, 8}, {33, 70, 3, 2}, {1, 2}, {2, 1}, {2, 1}, {0, 2}, 1.0f, false, true),
      named_case(5, {2, 3, 12, 11}, {65, 3, 5, 5}, {1, 1}, {1, 1}, {2, 2}, {2, 2}, -0.25f, true, false),
      named_case(6, {1, 64, 6, 7}, {32, 64, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 0.1f, false, false),
      // Rows wider than a packing run of 16 columns, an even number of channel words (64-bit words read a
      // tap's two channel words in one load): adjacent words at stride 1; every second word (100 and 128
      // channels: 4 channel words per pixel), at stride 2 and with a dilation; tail channels.
      named_case(7, {1, 64, 5, 40}, {16, 64, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 0.0f, false, false),
      named_case(8, {2, 100, 4, 45}, {20, 100, 3, 3}, {1, 2}, {1, 1}, {1, 1}, {0, 1}, -1.0f, false, true),
      named_case(9, {1, 128, 3, 38}, {8, 128, 1, 3}, {1, 1}, {1, 2}, {0, 2}, {0, 1}, 0.5f, false, false),
  };
}

// On the Global variant the named shapes run both fused GEMMs: xnor_gemm_fused_runs where every block of
// columns is a run of one image's positions (case 2: 9x8 outputs) and xnor_gemm_fused where a block crosses
// into the next image or ends past the last column (case 1: 7x6 outputs per image, batch 2).
void named_io_cases(Variant variant) {
  std::set<std::string> fused_kernels;
  for (int word_bits : {0, other_word_bits(variant)}) {
    Runtime& rt = runtime_for(variant, word_bits);
    INFO("word_bits " << word_bits);
    for (const ConvCase& c : named_cases()) fused_kernels.insert(check_io_case(rt, variant, c));
  }
  const std::set<std::string> want = variant == Variant::Global
                                         ? std::set<std::string>{"xnor_gemm_fused", "xnor_gemm_fused_runs"}
                                         : std::set<std::string>{"xnor_gemm_fused"};
  REQUIRE(fused_kernels == want);
}

// A GEMM whose tile of output channels is not a multiple of 32 (a work-group cap of 16 work-items: 4x4
// work-groups, 16 channels per tile): packed output through xnor_gemm_bits on both variants (M_pad rounded
// to whole words), same bits.
void packing_after_the_gemm(Variant variant) {
  runtime_for(
      variant);  // without a device: fails, or exits 77 where XNORCL_EXPECT_NO_DEVICE=1, as every test
  static std::map<Variant, Runtime> capped;
  auto it = capped.find(variant);
  if (it == capped.end()) {
    RuntimeOptions o;
    o.variant = variant;
    o.max_work_group_size = 16;
    it = capped.emplace(variant, Runtime::create(o)).first;
  }
  for (const ConvCase& c : named_cases()) {
    BinaryConvolution::Options o;
    o.output = Output::packed(std::vector<Threshold>(static_cast<std::size_t>(c.filter[0])));
    const BinaryConvolution probe(it->second, c.attributes, c.input, c.make_filter(), o);
    REQUIRE(probe.plan().tile_m % 32 != 0);
    REQUIRE(probe.plan().output == "packed (xnor_gemm_bits)");
    check_io_case(it->second, variant, c);
  }
}

// A layer split into chunks (XNORCL_MAX_CHUNK_BYTES, the constructor's test hook: row ranges of each image,
// run() in batch groups): every output choice and the packed input write and read the right words.
void chunked_layers(Variant variant) {
  struct Budget {
    explicit Budget(const char* bytes) { ::setenv("XNORCL_MAX_CHUNK_BYTES", bytes, 1); }
    ~Budget() { ::unsetenv("XNORCL_MAX_CHUNK_BYTES"); }
  };
  for (int word_bits : {0, other_word_bits(variant)}) {
    Runtime& rt = runtime_for(variant, word_bits);
    INFO("word_bits " << word_bits);
    for (const ConvCase& c :
         {named_case(51, {3, 45, 9, 11}, {33, 45, 3, 3}, {1, 1}, {1, 1}, {1, 2}, {2, 1}, 0.5f, false, true),
          named_case(52, {2, 40, 10, 7}, {45, 40, 3, 2}, {2, 1}, {1, 1}, {1, 0}, {1, 1}, -1.0f, true,
                     false)}) {
      const Budget budget("400");
      BinaryConvolution::Attributes a = c.attributes;
      a.input_thresholds.clear();
      BinaryConvolution probe(rt, a, c.input, c.make_filter(),
                              Options{true, Output::float32(), std::nullopt});
      INFO(probe.plan().to_string());
      REQUIRE(probe.plan().chunks >= 2);
      check_io_case(rt, variant, c);
    }
  }
}

// Exact edges, checked independently of pack_activations: at y == t the bit is 0 under Greater and Less; a
// zero scale gives a constant bit; a negative scale flips the comparison.
void threshold_edges(Variant variant) {
  Runtime& rt = runtime_for(variant);
  const ConvCase c =
      named_case(11, {2, 45, 6, 5}, {45, 45, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 0.0f, false, false);
  const ConvGeometry g = BinaryConvolution::validate(c.attributes, c.input, c.filter);
  const std::vector<float> y = c.reference();
  const std::int64_t C = g.output[1], plane = g.output[2] * g.output[3], N = g.output[0];
  auto at = [&](std::int64_t n, std::int64_t o, std::int64_t i) {
    return y[static_cast<std::size_t>((n * C + o) * plane + i)];
  };
  std::vector<float> scale(static_cast<std::size_t>(C)), bias(static_cast<std::size_t>(C));
  for (std::int64_t o = 0; o < C; ++o) {
    const float t = at(o % N, o, (o * 7) % plane);  // a value the layer outputs
    // scale*y + bias > 0 with bias = -scale*t: threshold t exactly (fold_batch_norm: -bias/scale == t for
    // these small integers and powers of two).
    const int kind = static_cast<int>(o % 5);
    scale[o] = kind == 0 ? 2.0f : kind == 1 ? -0.5f : kind == 2 ? 0.0f : kind == 3 ? -0.0f : 1.0f;
    bias[o] = kind == 2 ? 1.0f : kind == 3 ? -1.0f : -scale[o] * t;
  }
  const std::vector<Threshold> rules = fold_batch_norm(scale, bias);
  Options o;
  o.output = Output::packed(rules);
  BinaryConvolution conv(rt, c.attributes, c.input, c.make_filter(), o);
  const std::vector<std::uint32_t> words = conv.run_packed(c.x_f32.data());
  require_io_kernels_ran(conv, variant, false);
  int equal_seen = 0;
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t ch = 0; ch < C; ++ch) {
      const int kind = static_cast<int>(ch % 5);
      const float t = at(ch % N, ch, (ch * 7) % plane);
      for (std::int64_t i = 0; i < plane; ++i) {
        const float v = at(n, ch, i);
        bool want;
        if (kind == 2) {
          want = true;  // zero scale, positive bias: always 1
        } else if (kind == 3) {
          want = false;  // zero scale, negative bias: always 0
        } else if (kind == 1) {
          want = v < t;  // negative scale: flipped
        } else {
          want = v > t;
        }
        if (v == t && kind != 2 && kind != 3) ++equal_seen;
        const bool got = packed_bit(words.data(), g.output, n, ch, i / g.output[3], i % g.output[3]);
        INFO("n " << n << " o " << ch << " i " << i << " y " << v << " t " << t << " kind " << kind);
        REQUIRE(got == want);
      }
    }
  }
  REQUIRE(equal_seen >= C * 3 / 5);  // every non-constant channel has at least one y == t
  // Tail bits (channels 45..63 of the second word) are 0.
  const std::int64_t cw = packed_words_per_pixel(C);
  for (std::size_t w = 1; w < words.size(); w += static_cast<std::size_t>(cw))
    REQUIRE((words[w] >> 13) == 0u);
  // ScaleBias of the same layer: fmaf of the float result, bitwise.
  Options sb;
  sb.output = Output::scale_and_bias(scale, bias);
  BinaryConvolution conv_sb(rt, c.attributes, c.input, c.make_filter(), sb);
  const std::vector<float> got = conv_sb.run(c.x_f32.data());
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t ch = 0; ch < C; ++ch)
      for (std::int64_t i = 0; i < plane; ++i) {
        const float want = std::fmaf(scale[ch], at(n, ch, i), bias[ch]);
        const float have = got[static_cast<std::size_t>((n * C + ch) * plane + i)];
        REQUIRE(std::memcmp(&want, &have, 4) == 0);
      }
}

// Garbage in the tail bits of a packed input does not change the result (the packing stage clears them).
void packed_input_ignores_tail_bits(Variant variant) {
  for (int word_bits : {0, other_word_bits(variant)}) {
    Runtime& rt = runtime_for(variant, word_bits);
    ConvCase c =
        named_case(21, {2, 37, 5, 6}, {33, 37, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 0.5f, false, false);
    c.kind = InputKind::Binary;
    Rng rng(5);
    fill_data(c, rng);
    std::vector<std::uint32_t> words = pack_activations(c.x_f32.data(), c.input);
    for (std::size_t w = 1; w < words.size(); w += 2) words[w] |= 0xffffffe0u;  // channels 37..63
    Options o;
    o.input_packed = true;
    BinaryConvolution conv(rt, c.attributes, c.input, c.make_filter(), o);
    REQUIRE(bitwise_difference(conv.run(words.data()), c.reference(), conv.output_shape()).empty());
  }
}

// Device-resident chain: conv1 writes packed words that conv2 reads directly (no unpacking), on the queue.
void device_resident_chain(Variant variant) {
  Runtime& rt = runtime_for(variant);
  const ConvCase c =
      named_case(31, {2, 45, 9, 8}, {33, 45, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 0.0f, false, true);
  Rng rng(31);
  const Shape f2_shape{45, 33, 3, 3};
  std::vector<bool> bits(static_cast<std::size_t>(45 * 33 * 9));
  for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = rng.chance(50);
  const std::vector<std::uint8_t> f2_bytes = pack_bits(bits, BitOrder::LsbFirst);
  const Filter f2 = Filter::from_packed(f2_bytes.data(), f2_bytes.size(), f2_shape, BitOrder::LsbFirst);
  const std::vector<float> y1 = c.reference();
  const ConvGeometry g1 = BinaryConvolution::validate(c.attributes, c.input, c.filter);
  const std::vector<Threshold> rules = random_rules(rng, y1, g1.output);
  BinaryConvolution::Attributes a2;
  a2.auto_pad = AutoPad::SameUpper;
  a2.pad_value = -1.0f;
  std::vector<float> scale, bias;
  random_scale_bias(rng, 45, scale, bias);
  // The host reference of the chain.
  const std::vector<std::uint32_t> w1 = pack_activations(y1.data(), g1.output, rules);
  const std::vector<float> x2 = unpack_activations(w1.data(), g1.output);
  const std::vector<float> y2 = reference_binary_convolution(x2.data(), g1.output, f2, a2);
  const ConvGeometry g2 = BinaryConvolution::validate(a2, g1.output, f2_shape);
  const std::vector<float> want = reference_scale_bias(y2.data(), g2.output, scale, bias);

  Options o1;
  o1.output = Output::packed(rules);
  BinaryConvolution conv1(rt, c.attributes, c.input, c.make_filter(), o1);
  Options o2;
  o2.input_packed = true;
  o2.output = Output::scale_and_bias(scale, bias);
  BinaryConvolution conv2(rt, a2, g1.output, f2, o2);
  REQUIRE(conv1.output_bytes() == conv2.input_bytes());
  cl::Buffer in(rt.context(), CL_MEM_READ_ONLY, c.x_f32.size() * 4);
  cl::Buffer mid(rt.context(), CL_MEM_READ_WRITE, conv1.output_bytes());
  cl::Buffer out(rt.context(), CL_MEM_READ_WRITE, conv2.output_bytes());
  std::vector<cl::Event> wait(1);
  rt.queue().enqueueWriteBuffer(in, CL_FALSE, 0, c.x_f32.size() * 4, c.x_f32.data(), nullptr, &wait[0]);
  wait[0] = conv1.enqueue(in, mid, &wait);
  std::vector<cl::Event> done(1, conv2.enqueue(mid, out, &wait));
  std::vector<float> got(want.size());
  rt.queue().enqueueReadBuffer(out, CL_TRUE, 0, got.size() * 4, got.data(), &done);
  REQUIRE(bitwise_difference(got, want, g2.output).empty());
  // The packed intermediate itself.
  std::vector<std::uint32_t> mid_words(w1.size());
  rt.queue().enqueueReadBuffer(mid, CL_TRUE, 0, mid_words.size() * 4, mid_words.data());
  REQUIRE(word_difference(mid_words, w1, g1.output).empty());
  // Too small a packed output buffer is refused, naming the packed size.
  cl::Buffer small(rt.context(), CL_MEM_READ_WRITE, conv1.output_bytes() - 4);
  REQUIRE_THROWS_WITH(conv1.enqueue(in, small),
                      Catch::Contains("(packed words) needs " + std::to_string(conv1.output_bytes())));
}

// Refusals: up front, naming the problem and the values; the caller's output untouched.
void refusals(Variant variant) {
  Runtime& rt = runtime_for(variant);
  const ConvCase c =
      named_case(41, {1, 5, 6, 6}, {33, 5, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 0.0f, false, true);
  const Filter f = c.make_filter();
  auto refused = [&](const Options& o, const std::string& message) {
    INFO(message);
    REQUIRE_THROWS_AS(BinaryConvolution(rt, c.attributes, c.input, f, o), InvalidArgument);
    REQUIRE_THROWS_WITH(BinaryConvolution(rt, c.attributes, c.input, f, o), Catch::Contains(message));
  };
  const std::vector<float> ones(33, 1.0f);
  refused({false, Output::scale_and_bias(std::vector<float>(3, 1.0f), ones), std::nullopt},
          "Output::ScaleBias has 3 scales and 33 biases for C_OUT = 33");
  refused({false, Output::scale_and_bias(ones, std::vector<float>(34, 0.0f)), std::nullopt},
          "Output::ScaleBias has 33 scales and 34 biases for C_OUT = 33");
  std::vector<float> bad = ones;
  bad[7] = std::numeric_limits<float>::quiet_NaN();
  refused({false, Output::scale_and_bias(bad, ones), std::nullopt},
          "output channel 7 has scale nan and bias 1");
  bad[7] = 1.0f;
  bad[32] = -std::numeric_limits<float>::infinity();
  refused({false, Output::scale_and_bias(ones, bad), std::nullopt},
          "output channel 32 has scale 1 and bias -inf");
  refused({false, Output::packed(std::vector<Threshold>(32)), std::nullopt},
          "Output::Packed has 32 threshold rules for C_OUT = 33");
  refused({false, Output::packed({}), std::nullopt}, "Output::Packed has 0 threshold rules for C_OUT = 33");
  std::vector<Threshold> rules(33);
  rules[5].value = std::numeric_limits<float>::quiet_NaN();
  rules[5].mode = ThresholdMode::Less;
  refused({false, Output::packed(rules), std::nullopt},
          "the threshold of output channel 5 is NaN (a Less rule");
  rules[5].mode = ThresholdMode::AlwaysOne;  // the value is ignored: accepted
  REQUIRE_NOTHROW(
      BinaryConvolution(rt, c.attributes, c.input, f, Options{false, Output::packed(rules), std::nullopt}));
  rules[5].mode = static_cast<ThresholdMode>(9);
  refused({false, Output::packed(rules), std::nullopt}, "output channel 5 has an unknown mode 9");
  refused({true, Output::float32(), std::nullopt}, "input_thresholds must be empty (5 given)");
  refused({false, Output::float32(), PoolAttributes{}},
          "Options::max_pool needs Output::Packed (it pools thresholded bits); the output is Float");
  refused({false, Output::scale_and_bias(ones, ones), PoolAttributes{}}, "the output is ScaleBias");
  PoolAttributes too_big;
  too_big.kernel = {9, 2};
  refused({false, Output::packed(std::vector<Threshold>(33)), too_big},
          "BinaryConvolution: Options::max_pool on the output 1x33x6x6: MaxPool: kernel has size (dim: 9)");

  // Wrong input or output type for the layer: refused before any device work, the output untouched.
  BinaryConvolution packed_out(rt, c.attributes, c.input, f,
                               Options{false, Output::packed(std::vector<Threshold>(33)), std::nullopt});
  std::vector<float> y(static_cast<std::size_t>(33 * 36), 42.0f);
  REQUIRE_THROWS_WITH(packed_out.run(c.x_f32.data(), y.data()),
                      Catch::Contains("writes packed words (Output::Packed): use run_packed()"));
  for (float v : y) REQUIRE(v == 42.0f);
  BinaryConvolution float_out(rt, c.attributes, c.input, f);
  std::vector<std::uint32_t> words(72, 0x5a5a5a5au);
  REQUIRE_THROWS_WITH(float_out.run_packed(c.x_f32.data(), words.data()),
                      Catch::Contains("writes float32 values"));
  REQUIRE_THROWS_WITH(float_out.run(words.data(), y.data()), Catch::Contains("need Options::input_packed"));
  for (std::uint32_t w : words) REQUIRE(w == 0x5a5a5a5au);
  for (float v : y) REQUIRE(v == 42.0f);
  BinaryConvolution::Attributes a = c.attributes;
  a.input_thresholds.clear();
  BinaryConvolution packed_in(rt, a, c.input, f, Options{true, Output::float32(), std::nullopt});
  REQUIRE_THROWS_WITH(packed_in.run(c.x_f32.data(), y.data()),
                      Catch::Contains("reads packed input (Options::input_packed)"));
  for (float v : y) REQUIRE(v == 42.0f);
}

}  // namespace

XNORCL_VARIANT_TEST("output choices and packed input equal the host references on random layers", "[conv_io]",
                    random_io_cases)
XNORCL_VARIANT_TEST("output choices and packed input on C_OUT 33/45, 1x1 and 7x7 kernels", "[conv_io]",
                    named_io_cases)
XNORCL_VARIANT_TEST("packed output with a GEMM tile below 32 channels", "[conv_io]", packing_after_the_gemm)
XNORCL_VARIANT_TEST("packed output: y == t gives 0, zero scale a constant bit, negative scale flips",
                    "[conv_io]", threshold_edges)
XNORCL_VARIANT_TEST("packed input: tail bits are ignored", "[conv_io]", packed_input_ignores_tail_bits)
XNORCL_VARIANT_TEST("output choices and packed input on layers split into chunks", "[conv_io]",
                    chunked_layers)
XNORCL_VARIANT_TEST("packed output feeds packed input on the device", "[conv_io]", device_resident_chain)
XNORCL_VARIANT_TEST("output choices and packed input: refusals", "[conv_io]", refusals)

}  // namespace xnorcl::test
