// SPDX-License-Identifier: Apache-2.0
// Runs xnorcl's kernels (and the canary kernels) under the Oclgrind simulator:
//
//   oclgrind --data-races --uninitialized --check-api xnorcl_oclgrind_runner cases FIRST COUNT
//   oclgrind --data-races --uninitialized --check-api xnorcl_oclgrind_runner io FIRST COUNT
//   oclgrind --data-races --uninitialized --check-api xnorcl_oclgrind_runner tuning FIRST COUNT
//   oclgrind --data-races --uninitialized --check-api xnorcl_oclgrind_runner canary-out-of-bounds
//   oclgrind --data-races --uninitialized --check-api xnorcl_oclgrind_runner canary-local-race
//
// `cases` runs configurations [FIRST, FIRST + COUNT) of the table below through BinaryConvolution on the
// forced variant and requires each to be bitwise equal to the host reference; `io` runs the output choices
// (ScaleBias through xnor_gemm_fused, also with a clamp of the sum; Packed through xnor_gemm_fused on Local,
// xnor_gemm_bits on Global and on a Local GEMM whose tile is under 32 channels; max-pooled through
// xnor_gemm_bits) and packed input (im2col_pack_units, 32- and 64-bit words) on runtimes [FIRST, FIRST +
// COUNT) of its table; CTest fails the test when Oclgrind reports anything (invalid accesses, data races,
// uninitialized values, API errors). `tuning` runs GEMM configurations [FIRST, FIRST + COUNT) of the tuner's
// exhaustive search (Local's, then Global's) on a layer through the tuning table, each bitwise against the
// reference. The canaries run kernels with a known defect; their CTest tests pass
// only when Oclgrind reports it.
//
// The runner asserts that the device is "Oclgrind Simulator" and that Variant::Auto chooses Local there. It
// flushes its output and leaves with std::_Exit: Oclgrind 21.10 aborts at process exit ("corrupted
// double-linked list"), which must not decide the test.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "conv_case.hpp"
#include "runtime/device_profile.hpp"
#include "runtime/runtime_state.hpp"
#include "xnorcl/xnorcl.hpp"

namespace {

using namespace xnorcl;
using namespace xnorcl::test;

[[noreturn]] void leave(int status) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(status);
}

struct OclgrindCase {
  Variant variant;
  std::size_t chunk_budget;  // XNORCL_MAX_CHUNK_BYTES for this case; 0: none
  ConvCase conv;
  int word_bits = 0;  // RuntimeOptions::word_bits; 0: the architecture's (Oclgrind: 32)
  // Channel-packed layouts in vector runs (CPU devices' geometry) rather than Oclgrind's own, a word per
  // work-item (detail::packs_in_vector_runs: Oclgrind reports itself as a GPU too).
  bool vector_runs = false;
  // Float input in vector runs binarized by float compares (channel_pack_f32_native_compare) rather than by
  // order keys (RuntimeState::floats_compare_exactly, set for each case).
  bool float_compares = false;
};

ConvCase make_case(const std::string& name, std::uint64_t seed, Shape x, Shape f,
                   const std::function<void(BinaryConvolution::Attributes&)>& attributes, bool uint8_input,
                   InputKind kind, BitOrder order, bool thresholds) {
  ConvCase c;
  c.name = name;
  c.seed = seed;
  c.input = x;
  c.filter = f;
  attributes(c.attributes);
  c.uint8_input = uint8_input;
  c.kind = kind;
  c.order = order;
  Rng rng(seed);
  if (thresholds) {
    do {
      c.attributes.input_thresholds = random_thresholds(rng, x[1], uint8_input, kind);
    } while (c.attributes.input_thresholds.empty());
  }
  fill_data(c, rng);
  return c;
}

// At most about 10^6 work-item-taps each. C_OUT and K are no multiples of any tile (the first case spans
// several work-groups in both GEMM dimensions); every pad class appears.
std::vector<OclgrindCase> cases() {
  using A = BinaryConvolution::Attributes;
  auto explicit_pads = [](std::array<int, 2> b, std::array<int, 2> e, float v) {
    return [=](A& a) {
      a.pads_begin = b;
      a.pads_end = e;
      a.pad_value = v;
    };
  };
  std::vector<OclgrindCase> t;
  for (Variant v : {Variant::Local, Variant::Global}) {
    const std::string s = v == Variant::Local ? " local" : " global";
    // Symmetric pads, pad fold in the GEMM's border stores (v = 0.5), N = 2, K = 297 (10 words, not a
    // multiple of KT).
    t.push_back(
        {v, 0,
         make_case("pads 1/1 v=0.5 N=2" + s, 11, {2, 33, 9, 10}, {70, 33, 3, 3},
                   explicit_pads({1, 1}, {1, 1}, 0.5f), false, InputKind::Floats, BitOrder::MsbFirst, true)});
    // 3-channel first layer, uint8 input, LsbFirst, v = 0.
    t.push_back({v, 0,
                 make_case("uint8 3ch 5x5 pads 2 v=0 lsb" + s, 12, {1, 3, 9, 8}, {5, 3, 5, 5},
                           explicit_pads({2, 2}, {2, 2}, 0.0f), true, InputKind::SmallInteger,
                           BitOrder::LsbFirst, true)});
    // same_upper with stride and dilation, v = +1 (pad bit 1, two kernels).
    t.push_back({v, 0,
                 make_case(
                     "same_upper s2 d2 v=+1" + s, 13, {1, 5, 9, 10}, {7, 5, 3, 3},
                     [](A& a) {
                       a.auto_pad = AutoPad::SameUpper;
                       a.strides = {2, 2};
                       a.dilations = {2, 2};
                       a.pad_value = 1.0f;
                     },
                     false, InputKind::PlusMinusOne, BitOrder::MsbFirst, false)});
    // same_lower, non-square kernel, v = -1.
    t.push_back({v, 0,
                 make_case(
                     "same_lower 2x3 v=-1 N=2" + s, 14, {2, 2, 7, 6}, {3, 2, 2, 3},
                     [](A& a) {
                       a.auto_pad = AutoPad::SameLower;
                       a.pad_value = -1.0f;
                     },
                     false, InputKind::Binary, BitOrder::LsbFirst, false)});
    // valid (no pad taps): v = 0.1 folds nothing.
    t.push_back({v, 0,
                 make_case(
                     "valid v=0.1 C_IN 65" + s, 15, {1, 65, 5, 6}, {33, 65, 2, 2},
                     [](A& a) {
                       a.auto_pad = AutoPad::Valid;
                       a.pad_value = 0.1f;
                     },
                     false, InputKind::Floats, BitOrder::MsbFirst, true)});
    // Asymmetric pads, stride 3 by 1, v = -0.25.
    t.push_back({v, 0,
                 make_case("asymmetric pads v=-0.25" + s, 16, {1, 4, 8, 7}, {9, 4, 3, 2},
                           explicit_pads({0, 3}, {2, 0}, -0.25f), false, InputKind::SmallInteger,
                           BitOrder::LsbFirst, true)});
    // Empty interior: every output's window touches the pad.
    t.push_back({v, 0,
                 make_case("empty interior 5x5 on 3x4" + s, 17, {2, 1, 3, 4}, {3, 1, 5, 5},
                           explicit_pads({2, 2}, {2, 2}, 0.5f), false, InputKind::Binary, BitOrder::MsbFirst,
                           false)});
    // Forced small chunks: row ranges of each image and run() batch groups.
    t.push_back(
        {v, 600,
         make_case("chunked rows N=2 v=0 C_IN 60" + s, 18, {2, 60, 10, 9}, {6, 60, 3, 3},
                   explicit_pads({1, 1}, {1, 1}, 0.0f), true, InputKind::Binary, BitOrder::MsbFirst, false)});
  }
  // PoCL's 64-bit words (RuntimeOptions::word_bits): both layouts, both variants, a pad fold.
  for (Variant v : {Variant::Local, Variant::Global}) {
    const std::string s = v == Variant::Local ? " local" : " global";
    t.push_back({v, 0,
                 make_case("64-bit words uint8 3ch 5x5 pads 2 v=0" + s, 21, {1, 3, 9, 8}, {5, 3, 5, 5},
                           explicit_pads({2, 2}, {2, 2}, 0.0f), true, InputKind::SmallInteger,
                           BitOrder::LsbFirst, true),
                 64});
    t.push_back(
        {v, 0,
         make_case("64-bit words pads 1/1 v=0.5 C_IN 120" + s, 22, {2, 120, 6, 5}, {9, 120, 3, 3},
                   explicit_pads({1, 1}, {1, 1}, 0.5f), false, InputKind::Floats, BitOrder::MsbFirst, true),
         64});
  }
  // Packing runs: channel_pack_* in runs of 16 pixels (whole runs, one vector store where Cw is 1, then a
  // shorter last run per image); im2col_pack_words and im2col_pack_rows in runs of 16 output columns (whole
  // runs inside the row, across its ends (lanes in the pad), a shorter last run per row, dilation, and the
  // zero columns past P).
  for (const bool float_compares : {false, true})
    t.push_back({Variant::Global, 0,
                 make_case(std::string("channel runs Cw=1 v=0") + (float_compares ? ", float compares" : ""),
                           31, {1, 20, 3, 37}, {5, 20, 3, 3}, explicit_pads({1, 1}, {1, 1}, 0.0f), false,
                           InputKind::Floats, BitOrder::MsbFirst, true),
                 0, true, float_compares});
  t.push_back({Variant::Global, 0,
               make_case("64-bit words channel runs Cw=1 v=0.5 N=2", 32, {2, 40, 3, 20}, {6, 40, 3, 3},
                         explicit_pads({1, 1}, {1, 1}, 0.5f), true, InputKind::SmallInteger,
                         BitOrder::MsbFirst, true),
               64, true});
  for (const bool float_compares : {false, true})
    t.push_back({Variant::Global, 0,
                 make_case(
                     std::string("channel runs Cw=2 d2 v=+1") + (float_compares ? ", float compares" : ""),
                     35, {1, 33, 4, 21}, {4, 33, 2, 3},
                     [](BinaryConvolution::Attributes& a) {
                       a.pads_begin = {1, 2};
                       a.pads_end = {0, 2};
                       a.dilations = {2, 2};
                       a.pad_value = 1.0f;
                     },
                     false, InputKind::Floats, BitOrder::MsbFirst, true),
                 0, true, float_compares});
  t.push_back(
      {Variant::Local, 0,
       make_case("64-bit words channel runs Cw=2 v=-1", 36, {1, 120, 2, 18}, {3, 120, 1, 2},
                 explicit_pads({0, 0}, {0, 0}, -1.0f), false, InputKind::Binary, BitOrder::MsbFirst, false),
       64, true});
  t.push_back(
      {Variant::Local, 0,
       make_case("row runs 3ch 5x5 v=0 N=2", 33, {2, 3, 5, 37}, {4, 3, 5, 5},
                 explicit_pads({2, 2}, {2, 2}, 0.0f), false, InputKind::Floats, BitOrder::MsbFirst, true)});
  t.push_back({Variant::Global, 0,
               make_case("64-bit words row runs 2ch 3x4 v=+1", 34, {1, 2, 4, 35}, {3, 2, 3, 4},
                         explicit_pads({1, 3}, {0, 1}, 1.0f), true, InputKind::SmallInteger,
                         BitOrder::LsbFirst, true),
               64});
  // A word per work-item (channel_pack_pixel_*, im2col_pack_word; the other channel-packed cases above run
  // it too): a partial last channel word, dilation and pads wider than a tap, stride 2, uint8 input, the
  // zero columns past P, N = 2.
  t.push_back({Variant::Global, 0,
               make_case(
                   "word per work-item Cw=2 d2 v=+1", 37, {2, 33, 4, 13}, {5, 33, 2, 3},
                   [](BinaryConvolution::Attributes& a) {
                     a.pads_begin = {1, 3};
                     a.pads_end = {0, 2};
                     a.dilations = {2, 2};
                     a.pad_value = 1.0f;
                   },
                   false, InputKind::Floats, BitOrder::MsbFirst, true)});
  t.push_back({Variant::Local, 0,
               make_case(
                   "uint8 word per work-item Cw=3 s2 v=0", 38, {1, 90, 7, 9}, {6, 90, 3, 3},
                   [](BinaryConvolution::Attributes& a) {
                     a.pads_begin = {1, 1};
                     a.pads_end = {1, 1};
                     a.strides = {2, 2};
                   },
                   true, InputKind::SmallInteger, BitOrder::LsbFirst, true)});
  // Vector runs at stride 2 (channel_pack_* and then im2col_pack_words, since the rows narrow), and runs
  // writing the patches themselves (channel_pack_patches_*) on 7-wide rows: each run of 16 pixels spans
  // three rows, lanes past a row's ends store the pad word, two channel words, row chunks, N = 2.
  t.push_back({Variant::Global, 0,
               make_case(
                   "channel runs Cw=2 s2 v=0", 39, {1, 64, 6, 37}, {5, 64, 3, 3},
                   [](BinaryConvolution::Attributes& a) {
                     a.pads_begin = {1, 1};
                     a.pads_end = {1, 1};
                     a.strides = {2, 2};
                   },
                   false, InputKind::Floats, BitOrder::MsbFirst, true),
               0, true});
  t.push_back(
      {Variant::Global, 1500,
       make_case("64-bit words channel runs to patches Cw=2 W=7 v=0 N=2", 40, {2, 128, 9, 7}, {5, 128, 3, 3},
                 explicit_pads({1, 1}, {1, 1}, 0.0f), false, InputKind::Floats, BitOrder::MsbFirst, true),
       64, true});
  return t;
}

std::string device_name(const Runtime& rt) {
  return rt.device().getInfo<CL_DEVICE_NAME>();
}

int run_cases(std::size_t first, std::size_t count) {
  const std::vector<OclgrindCase> table = cases();
  RuntimeOptions auto_options;
  auto_options.cache_dir = "off";
  Runtime auto_rt = Runtime::create(auto_options);
  if (device_name(auto_rt) != "Oclgrind Simulator") {
    std::cerr << "FAILED: the device is '" << device_name(auto_rt) << "', not 'Oclgrind Simulator'\n";
    return 1;
  }
  if (auto_rt.variant() != Variant::Local) {
    std::cerr << "FAILED: Auto chose " << to_string(auto_rt.variant())
              << " on Oclgrind (expected local): " << auto_rt.variant_reason() << "\n";
    return 1;
  }
  std::cout << "device " << auto_rt.device_name() << "; Auto chooses local: " << auto_rt.variant_reason()
            << "\n";
  Runtime global_rt = [&] {
    RuntimeOptions o = auto_options;
    o.variant = Variant::Global;
    return Runtime::create(o);
  }();
  std::map<Variant, Runtime> wide_runtimes;  // 64-bit words, created when a case asks for them
  int failures = 0, ran = 0;
  std::vector<std::unique_ptr<BinaryConvolution>> keep_alive;
  for (std::size_t i = first; i < table.size() && i < first + count; ++i) {
    const OclgrindCase& oc = table[i];
    const ConvCase& c = oc.conv;
    Runtime* chosen = oc.variant == Variant::Local ? &auto_rt : &global_rt;
    if (oc.word_bits) {
      auto it = wide_runtimes.find(oc.variant);
      if (it == wide_runtimes.end()) {
        RuntimeOptions o = auto_options;
        o.variant = oc.variant;
        o.word_bits = oc.word_bits;
        it = wide_runtimes.emplace(oc.variant, Runtime::create(o)).first;
      }
      chosen = &it->second;
    }
    Runtime& rt = *chosen;
    // Layers take the geometry when they are made: set for each.
    rt.state()->pack_in_runs = oc.vector_runs || detail::packs_in_vector_runs(rt.state()->profile);
    rt.state()->floats_compare_exactly = oc.float_compares;
    std::cout << "[" << i << "] " << describe(c) << "\n";
    if (oc.chunk_budget) {
      ::setenv("XNORCL_MAX_CHUNK_BYTES", std::to_string(oc.chunk_budget).c_str(), 1);
    } else {
      ::unsetenv("XNORCL_MAX_CHUNK_BYTES");
    }
    // Every object stays alive until the process leaves: Oclgrind 21.10's uninitialized-value shadow of a
    // released buffer is reused, at its old size, by the next buffer given the same address, which reports
    // correct stores beyond that size as uninitialized. Never releasing a buffer avoids the false report.
    keep_alive.push_back(std::make_unique<BinaryConvolution>(rt, c.attributes, c.input, c.make_filter()));
    BinaryConvolution& conv = *keep_alive.back();
    ::unsetenv("XNORCL_MAX_CHUNK_BYTES");
    std::cout << "    plan: " << conv.plan().to_string() << "\n";
    const std::vector<float> y = c.uint8_input ? conv.run(c.x_u8.data()) : conv.run(c.x_f32.data());
    const std::vector<StageTime> stages = conv.last_stage_times();
    // Dense layouts pack with row_pack_<type> and then im2col_pack_rows (from bit rows) or with
    // im2col_pack_<type> (bit by bit, dilation_x > 1); channel-packed ones with channel_pack_<type> and then
    // im2col_pack_words: every packing kernel of the plan's layout must have run.
    // A word per work-item packs the channel-packed layout with channel_pack_pixel_<type> and
    // im2col_pack_word instead.
    // In runs at stride 1 with rows that keep their width, channel_pack_patches_<type> does both.
    const std::string type = c.uint8_input ? "u8" : "f32";
    const bool runs = rt.state()->pack_in_runs;
    const std::string compare = oc.float_compares && !c.uint8_input ? "_native_compare" : "";
    const bool one_launch = conv.plan().launches.front().kernel.rfind("channel_pack_patches_", 0) == 0;
    const std::vector<std::string> packing =
        conv.plan().channel_packed
            ? (one_launch ? std::vector<std::string>{"channel_pack_patches_" + type + compare}
               : runs     ? std::vector<std::string>{"channel_pack_" + type + compare, "im2col_pack_words"}
                          : std::vector<std::string>{"channel_pack_pixel_" + type, "im2col_pack_word"})
        : conv.plan().bit_rows ? std::vector<std::string>{"row_pack_" + type, "im2col_pack_rows"}
                               : std::vector<std::string>{"im2col_pack_" + type};
    bool packed = true, gemm = false;
    for (const std::string& kernel : packing) {
      bool found = false;
      for (const auto& s : stages) found = found || s.kernel == kernel;
      packed = packed && found;
    }
    for (const auto& s : stages) gemm = gemm || s.kernel == "xnor_gemm";
    // Pad taps add work only in the GEMM's border stores: no kernel besides the packing ones and the GEMM.
    gemm = gemm && stages.size() == packing.size() + 1;
    const std::string difference = bitwise_difference(y, c.reference(), conv.output_shape());
    ++ran;
    if (conv.plan().variant != oc.variant || !packed || !gemm || !difference.empty() ||
        (oc.word_bits && conv.plan().word_bits != oc.word_bits) ||
        (oc.chunk_budget && conv.plan().chunks < 2)) {
      ++failures;
      std::cout << "    FAILED: variant " << to_string(conv.plan().variant) << ", packing ran " << packed
                << ", xnor_gemm ran " << gemm << ", chunks " << conv.plan().chunks << ", " << difference
                << "\n";
    } else {
      std::cout << "    bitwise equal to the reference\n";
    }
  }
  std::cout << ran << " configurations, " << failures << " failed\n";
  return failures == 0 && ran > 0 ? 0 : 1;
}

// Output choices and packed input (BinaryConvolution::Options) on one runtime configuration each: a layer
// of C_OUT 33 (two 32-channel words, tail bits) with asymmetric pads and the pad fold (v = 0.5), batch 2.
struct IoRuntime {
  Variant variant;
  int word_bits;              // 0: the architecture's (Oclgrind: 32)
  std::size_t max_group;      // RuntimeOptions::max_work_group_size; 0: none
  std::string expect_packed;  // Plan::output of the packed-output layer
};

std::vector<IoRuntime> io_runtimes() {
  return {{Variant::Local, 0, 0, "packed (xnor_gemm_fused)"},
          {Variant::Global, 0, 0, "packed (xnor_gemm_bits)"},
          {Variant::Local, 64, 0, "packed (xnor_gemm_fused)"},
          {Variant::Global, 64, 0, "packed (xnor_gemm_bits)"},
          {Variant::Local, 0, 16, "packed (xnor_gemm_bits)"}};
}

int run_io(std::size_t first, std::size_t count) {
  using A = BinaryConvolution::Attributes;
  using Output = BinaryConvolution::Output;
  const ConvCase c = make_case(
      "io C_OUT 33 pads 1,0/0,2 v=0.5 N=2", 51, {2, 37, 6, 5}, {33, 37, 3, 3},
      [](A& a) {
        a.pads_begin = {1, 0};
        a.pads_end = {0, 2};
        a.pad_value = 0.5f;
      },
      false, InputKind::Floats, BitOrder::LsbFirst, true);
  const std::vector<float> y = c.reference();
  const ConvGeometry g = BinaryConvolution::validate(c.attributes, c.input, c.filter);
  std::vector<float> scale(33), bias(33);
  Rng rng(52);
  for (std::size_t o = 0; o < scale.size(); ++o) {
    scale[o] = o % 5 == 0 ? 0.0f : (rng.unit() * 4.0f - 2.0f);
    bias[o] = static_cast<float>(rng.uniform(-6, 6));
  }
  std::vector<Threshold> rules = fold_batch_norm(scale, bias);
  for (std::size_t o = 0; o < rules.size(); o += 3) {
    rules[o] = {y[(o * 9 + 4) % y.size()], o % 2 ? ThresholdMode::Less : ThresholdMode::Greater};
  }
  const std::vector<float> want_sb = reference_scale_bias(y.data(), g.output, scale, bias);
  const std::vector<float> y_clamped = reference_clamp(y, -3.0f, 4.5f);
  const std::vector<float> want_clamped_sb = reference_scale_bias(y_clamped.data(), g.output, scale, bias);
  const std::vector<std::uint32_t> want_bits = pack_activations(y.data(), g.output, rules);
  PoolAttributes pool;
  pool.kernel = {2, 3};
  pool.strides = {2, 1};
  pool.pads_begin = {1, 0};
  pool.pads_end = {0, 1};
  pool.rounding_type = RoundingType::Ceil;
  const std::vector<std::uint32_t> want_pooled = reference_binary_maxpool(want_bits.data(), g.output, pool);
  const std::vector<std::uint32_t> x_words =
      pack_activations(c.x_f32.data(), c.input, greater_than(c.attributes.input_thresholds));
  A packed_attributes = c.attributes;
  packed_attributes.input_thresholds.clear();

  const std::vector<IoRuntime> table = io_runtimes();
  std::vector<std::unique_ptr<Runtime>> runtimes;  // kept alive: see run_cases
  std::vector<std::unique_ptr<BinaryConvolution>> keep_alive;
  int failures = 0, ran = 0;
  for (std::size_t i = first; i < table.size() && i < first + count; ++i) {
    const IoRuntime& r = table[i];
    RuntimeOptions o;
    o.cache_dir = "off";
    o.variant = r.variant;
    if (r.word_bits) o.word_bits = r.word_bits;
    if (r.max_group) o.max_work_group_size = r.max_group;
    runtimes.push_back(std::make_unique<Runtime>(Runtime::create(o)));
    Runtime& rt = *runtimes.back();
    if (device_name(rt) != "Oclgrind Simulator") {
      std::cerr << "FAILED: the device is '" << device_name(rt) << "', not 'Oclgrind Simulator'\n";
      return 1;
    }
    std::cout << "[io " << i << "] " << to_string(r.variant) << ", word_bits " << r.word_bits
              << ", work-group cap " << r.max_group << ": " << describe(c) << "\n";
    auto make = [&](const A& a, bool packed_in, const Output& out,
                    const std::optional<PoolAttributes>& max_pool = std::nullopt,
                    std::pair<float, float> clamp = {-INFINITY, INFINITY}) -> BinaryConvolution& {
      BinaryConvolution::Options options;
      options.clamp_low = clamp.first;
      options.clamp_high = clamp.second;
      options.input_packed = packed_in;
      options.output = out;
      options.max_pool = max_pool;
      keep_alive.push_back(std::make_unique<BinaryConvolution>(rt, a, c.input, c.make_filter(), options));
      std::cout << "    plan: " << keep_alive.back()->plan().to_string() << "\n";
      return *keep_alive.back();
    };
    auto ran_kernel = [](const BinaryConvolution& conv, const std::string& name) {
      for (const auto& s : conv.last_stage_times())
        if (s.kernel == name) return true;
      return false;
    };
    auto report = [&](const std::string& what, bool ok) {
      ++ran;
      if (!ok) ++failures;
      std::cout << "    " << what << (ok ? ": bitwise equal to the reference\n" : ": FAILED\n");
    };
    {
      BinaryConvolution& conv = make(c.attributes, false, Output::scale_and_bias(scale, bias));
      const std::vector<float> got = conv.run(c.x_f32.data());
      const std::string d = bitwise_difference(got, want_sb, g.output);
      if (!d.empty()) std::cout << "    " << d << "\n";
      report("scale_bias",
             d.empty() && ran_kernel(conv, fused_gemm_kernel(conv)) && conv.plan().variant == r.variant);
    }
    {
      // The sum clamped before the scale and bias (Options::clamp_low/high), the pad fold's fractions
      // included.
      BinaryConvolution& conv = make(c.attributes, false, Output::scale_and_bias(scale, bias), std::nullopt,
                                     std::pair<float, float>(-3.0f, 4.5f));
      const std::vector<float> got = conv.run(c.x_f32.data());
      const std::string d = bitwise_difference(got, want_clamped_sb, g.output);
      if (!d.empty()) std::cout << "    " << d << "\n";
      report("clamped scale_bias", d.empty() && ran_kernel(conv, fused_gemm_kernel(conv)));
    }
    {
      // The sum after the shortcut and its bits in one epilogue (Options::also_packed): whole words from
      // __local memory on Local, a thresholding pass after the GEMM on Global and under the work-group cap.
      BinaryConvolution::Options options;
      options.output = Output::scale_and_bias(scale, bias);
      options.add_shortcut = true;
      options.also_packed = rules;
      keep_alive.push_back(
          std::make_unique<BinaryConvolution>(rt, c.attributes, c.input, c.make_filter(), options));
      BinaryConvolution& conv = *keep_alive.back();
      std::cout << "    plan: " << conv.plan().to_string() << "\n";
      std::vector<float> shortcut(want_sb.size()), want_sum(want_sb.size());
      for (std::size_t k = 0; k < shortcut.size(); ++k) {
        shortcut[k] = static_cast<float>(static_cast<int>(k % 13) - 6) * 0.25f;
        want_sum[k] = want_sb[k] + shortcut[k];
      }
      const std::vector<std::uint32_t> want_sum_bits = pack_activations(want_sum.data(), g.output, rules);
      const std::size_t words = want_sum_bits.size();
      cl::Buffer in(rt.context(), CL_MEM_READ_ONLY, c.x_f32.size() * 4);
      cl::Buffer cut(rt.context(), CL_MEM_READ_ONLY, shortcut.size() * 4);
      cl::Buffer out(rt.context(), CL_MEM_READ_WRITE, want_sum.size() * 4);
      cl::Buffer bits(rt.context(), CL_MEM_READ_WRITE, words * 4);
      rt.queue().enqueueWriteBuffer(in, CL_TRUE, 0, c.x_f32.size() * 4, c.x_f32.data());
      rt.queue().enqueueWriteBuffer(cut, CL_TRUE, 0, shortcut.size() * 4, shortcut.data());
      const std::vector<std::uint32_t> ones(words, 0xffffffffu);
      rt.queue().enqueueWriteBuffer(bits, CL_TRUE, 0, words * 4, ones.data());
      std::vector<cl::Event> done(1, conv.enqueue(in, &cut, out, bits));
      std::vector<float> got(want_sum.size());
      std::vector<std::uint32_t> got_bits(words);
      rt.queue().enqueueReadBuffer(out, CL_TRUE, 0, got.size() * 4, got.data(), &done);
      rt.queue().enqueueReadBuffer(bits, CL_TRUE, 0, words * 4, got_bits.data(), &done);
      const std::string d = bitwise_difference(got, want_sum, g.output);
      if (!d.empty()) std::cout << "    " << d << "\n";
      report("scale_bias+shortcut, also packed",
             d.empty() && got_bits == want_sum_bits && ran_kernel(conv, fused_gemm_kernel(conv)));
    }
    {
      BinaryConvolution& conv = make(c.attributes, false, Output::packed(rules));
      const std::vector<std::uint32_t> got = conv.run_packed(c.x_f32.data());
      report("packed output", got == want_bits && conv.plan().output == r.expect_packed);
    }
    {
      BinaryConvolution& conv = make(packed_attributes, true, Output::float32());
      const std::vector<float> got = conv.run(x_words.data());
      const std::string d = bitwise_difference(got, y, g.output);
      if (!d.empty()) std::cout << "    " << d << "\n";
      report("packed input", d.empty() && ran_kernel(conv, "im2col_pack_units"));
    }
    {
      BinaryConvolution& conv = make(packed_attributes, true, Output::packed(rules));
      report("packed input, packed output", conv.run_packed(x_words.data()) == want_bits);
    }
    {
      // Max-pooled in the GEMM (Options::max_pool): overlapping, padded, ceil-rounded windows.
      BinaryConvolution& conv = make(packed_attributes, true, Output::packed(rules), pool);
      report("packed input, packed and max-pooled output",
             conv.run_packed(x_words.data()) == want_pooled && ran_kernel(conv, "xnor_gemm_bits"));
    }
  }
  std::cout << ran << " io checks, " << failures << " failed\n";
  return failures == 0 && ran > 0 ? 0 : 1;
}

// Every configuration the tuner's exhaustive search offers on Oclgrind, Local's then Global's, each run
// through the tuning table's entry for the layer's shape class. A layer of C_OUT 70 (three 32-channel words,
// tail bits) with asymmetric pads and the pad fold; candidate i takes output kind i % 3 (float, scale and
// bias, packed) and word size 32 or 64 by i % 2, so every kind meets both word sizes.
struct TuningCandidate {
  Variant variant;
  int word_bits;
  std::string config;
};

std::vector<TuningCandidate> tuning_candidates(std::vector<std::unique_ptr<Runtime>>& runtimes) {
  std::vector<TuningCandidate> all;
  for (Variant v : {Variant::Local, Variant::Global}) {
    RuntimeOptions o;
    o.cache_dir = "off";
    o.variant = v;
    o.tuning = TuningMode::Ignore;
    runtimes.push_back(std::make_unique<Runtime>(Runtime::create(o)));
    const detail::RuntimeState& s = *runtimes.back()->state();
    const auto configs = detail::gemm_candidates(s.gemm, s.profile, s.work_group_cap, TuneSearch::Exhaustive);
    for (std::size_t i = 0; i < configs.size(); ++i)
      all.push_back({v, i % 2 ? 64 : 32, detail::to_text(configs[i])});
  }
  return all;
}

int run_tuning(std::size_t first, std::size_t count) {
  using Output = BinaryConvolution::Output;
  const ConvCase c = make_case(
      "tuning C_OUT 70 pads 1,0/0,2 v=0.5", 61, {1, 33, 5, 6}, {70, 33, 3, 3},
      [](BinaryConvolution::Attributes& a) {
        a.pads_begin = {1, 0};
        a.pads_end = {0, 2};
        a.pad_value = 0.5f;
      },
      false, InputKind::Floats, BitOrder::MsbFirst, true);
  const ConvGeometry g = BinaryConvolution::validate(c.attributes, c.input, c.filter);
  const std::vector<float> y = c.reference();
  std::vector<float> scale, bias;
  Rng rng(62);
  random_scale_bias(rng, g.output[1], scale, bias);
  std::vector<Threshold> rules;
  for (std::int64_t o = 0; o < g.output[1]; ++o)
    rules.push_back({y[static_cast<std::size_t>(o * 7) % y.size()],
                     o % 2 ? ThresholdMode::Less : ThresholdMode::Greater});
  const std::vector<float> want_sb = reference_scale_bias(y.data(), g.output, scale, bias);
  const std::vector<std::uint32_t> want_bits = pack_activations(y.data(), g.output, rules);

  std::vector<std::unique_ptr<Runtime>> runtimes;  // kept alive: see run_cases
  std::vector<std::unique_ptr<BinaryConvolution>> keep_alive;
  const std::vector<TuningCandidate> all = tuning_candidates(runtimes);
  std::map<std::pair<Variant, int>, Runtime*> by_kind;
  std::vector<std::string> warnings;
  int failures = 0, ran = 0, refused = 0;
  for (std::size_t i = first; i < all.size() && i < first + count; ++i) {
    const TuningCandidate& t = all[i];
    Runtime*& rt = by_kind[{t.variant, t.word_bits}];
    if (!rt) {
      RuntimeOptions o;
      o.cache_dir = "off";
      o.variant = t.variant;
      o.word_bits = t.word_bits;
      o.tuning = TuningMode::Ignore;
      o.log = [&warnings](const std::string& m) {
        if (m.rfind("warning: ", 0) == 0) warnings.push_back(m);
      };
      runtimes.push_back(std::make_unique<Runtime>(Runtime::create(o)));
      rt = runtimes.back().get();
    }
    BinaryConvolution::Options options;
    options.output = i % 3 == 0   ? Output::float32()
                     : i % 3 == 1 ? Output::scale_and_bias(scale, bias)
                                  : Output::packed(rules);
    const auto make = [&] {
      keep_alive.push_back(
          std::make_unique<BinaryConvolution>(*rt, c.attributes, c.input, c.make_filter(), options));
      return keep_alive.back().get();
    };
    const std::string shape_class = make()->plan().shape_class;
    rt->state()->tuning.set(shape_class, t.config);
    warnings.clear();
    BinaryConvolution& conv = *make();
    rt->state()->tuning.erase(shape_class);
    // The device's compiler may count more local memory than the tiles (the search's estimate): the
    // runtime then refuses the configuration with a warning naming it, and the default runs.
    const bool was_refused = !conv.plan().tuned && warnings.size() == 1 &&
                             warnings[0].find("'" + t.config + "'") != std::string::npos &&
                             warnings[0].find("local memory limits") != std::string::npos;
    refused += was_refused;
    std::cout << "[tuning " << i << " of " << all.size() << "] " << conv.plan().to_string() << "\n";
    std::string difference;
    if (i % 3 == 2) {
      if (conv.run_packed(c.x_f32.data()) != want_bits) difference = "packed words differ";
    } else {
      difference = bitwise_difference(conv.run(c.x_f32.data()), i % 3 ? want_sb : y, conv.output_shape());
    }
    ++ran;
    if (was_refused) std::cout << "    refused by the device: " << warnings[0] << "\n";
    if ((!was_refused && (!conv.plan().tuned || conv.plan().configuration != t.config)) ||
        !difference.empty()) {
      ++failures;
      std::cout << "    FAILED: configuration " << conv.plan().configuration << " (wanted " << t.config
                << "), " << difference << "\n";
    }
  }
  std::cout << ran << " tuning candidates, " << refused << " refused by the device, " << failures
            << " failed\n";
  return failures == 0 && ran > 0 ? 0 : 1;
}

int run_canary(const std::string& which) {
  std::ifstream file(XNORCL_CANARY_SOURCE);
  std::stringstream source;
  source << file.rdbuf();
  cl::Context context(CL_DEVICE_TYPE_ALL);
  cl::Device device = context.getInfo<CL_CONTEXT_DEVICES>().front();
  if (device.getInfo<CL_DEVICE_NAME>() != "Oclgrind Simulator") {
    std::cerr << "FAILED: the device is '" << device.getInfo<CL_DEVICE_NAME>()
              << "', not 'Oclgrind Simulator'\n";
    return 1;
  }
  cl::CommandQueue queue(context, device);
  cl::Program program(context, source.str());
  program.build(std::vector<cl::Device>{device}, "-cl-std=CL1.2");
  const int n = 16;
  cl::Buffer in(context, CL_MEM_READ_WRITE, n * sizeof(float));
  cl::Buffer out(context, CL_MEM_READ_WRITE, n * sizeof(float));
  const std::vector<float> zeros(n, 0.0f);
  queue.enqueueWriteBuffer(in, CL_TRUE, 0, n * sizeof(float), zeros.data());
  if (which == "canary-out-of-bounds") {
    cl::Kernel k(program, "canary_out_of_bounds");
    k.setArg(0, in);
    k.setArg(1, out);
    k.setArg(2, n);
    queue.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(n), cl::NDRange(n));
  } else if (which == "canary-local-race") {
    cl::Kernel k(program, "canary_local_race");
    k.setArg(0, out);
    queue.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(n), cl::NDRange(n));
  } else {
    std::cerr << "unknown canary " << which << "\n";
    return 2;
  }
  queue.finish();
  std::cout << which << " ran; Oclgrind's report above decides the test\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int status = 2;
  try {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "cases") {
      const std::size_t first = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 0;
      const std::size_t count = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 1000;
      status = run_cases(first, count);
    } else if (mode == "io") {
      const std::size_t first = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 0;
      const std::size_t count = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 1000;
      status = run_io(first, count);
    } else if (mode == "tuning") {
      const std::size_t first = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 0;
      const std::size_t count = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 1000;
      status = run_tuning(first, count);
    } else if (mode.rfind("canary-", 0) == 0) {
      status = run_canary(mode);
    } else if (mode == "count") {
      std::cout << cases().size() << "\n";
      status = 0;
    } else {
      std::cerr << "usage: " << argv[0]
                << " cases [FIRST COUNT] | io [FIRST COUNT] | tuning [FIRST COUNT] | canary-out-of-bounds | "
                   "canary-local-race\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "FAILED: " << e.what() << "\n";
    status = 1;
  }
  leave(status);
}
