// SPDX-License-Identifier: Apache-2.0
// Tuning on the device: every candidate configuration computes the default's bits (GEMM tiles on random
// layers against the host reference, each output kind; every candidate of a network's steps against the
// default run); the tuning file is used, ignored and refused as RuntimeOptions say; tune() keeps what it
// measured and a Runtime of another process reads it.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "conv_case.hpp"
#include "device_checks.hpp"
#include "device_support.hpp"
#include "graph/model_access.hpp"
#include "graph_case.hpp"
#include "ops/float_conv_common.hpp"
#include "runtime/device_profile.hpp"
#include "runtime/runtime_state.hpp"

namespace xnorcl::test {
namespace {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char pattern[] = "/tmp/xnorcl-tune-XXXXXX";
    REQUIRE(mkdtemp(pattern) != nullptr);
    path = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string file(const char* name) const { return (path / name).string(); }
};

// A Runtime of its own (the shared ones keep their tables clean), warnings collected.
Runtime runtime_with(Variant variant, std::optional<TuningMode> mode, const std::string& file,
                     std::vector<std::string>* warnings = nullptr) {
  runtime_for(variant);  // fails the test, or skips it, without a device
  RuntimeOptions o;
  o.variant = variant;
  o.tuning = mode;
  if (!file.empty()) o.tuning_file = file;
  o.log = [warnings](const std::string& m) {
    if (warnings && m.rfind("warning: ", 0) == 0) warnings->push_back(m);
  };
  return Runtime::create(o);
}

// A random layer of one of the three GEMM kernels' output kinds: float (xnor_gemm), scale and bias
// (xnor_gemm_fused) and packed (xnor_gemm_bits, or the fused kernel's __local packing on Local).
struct LayerCase {
  ConvCase c;
  BinaryConvolution::Options options;
  std::vector<float> scale, bias;
  std::vector<Threshold> rules;
};

LayerCase random_layer(std::uint64_t seed, int kind) {
  LayerCase l;
  l.c = random_case(seed, 3e6);
  const ConvGeometry g = BinaryConvolution::validate(l.c.attributes, l.c.input, l.c.filter);
  Rng rng(seed + 1);
  if (kind == 1) {
    random_scale_bias(rng, g.output[1], l.scale, l.bias);
    l.options.output = BinaryConvolution::Output::scale_and_bias(l.scale, l.bias);
  } else if (kind == 2) {
    for (std::int64_t o = 0; o < g.output[1]; ++o)
      l.rules.push_back({static_cast<float>(rng.uniform(-20, 20)) + 0.5f, ThresholdMode::Greater});
    l.options.output = BinaryConvolution::Output::packed(l.rules);
  }
  return l;
}

// The layer's output under the tuning table's entry for it, against the reference: "" when bitwise equal.
std::string run_against_reference(Runtime& rt, const LayerCase& l, Plan& plan) {
  BinaryConvolution conv(rt, l.c.attributes, l.c.input, l.c.make_filter(), l.options);
  plan = conv.plan();
  std::vector<float> want = l.c.reference();
  if (!l.scale.empty()) want = reference_scale_bias(want.data(), conv.output_shape(), l.scale, l.bias);
  if (!l.rules.empty()) {
    const std::vector<std::uint32_t> words =
        l.c.uint8_input ? conv.run_packed(l.c.x_u8.data()) : conv.run_packed(l.c.x_f32.data());
    return word_difference(words, pack_activations(want.data(), conv.output_shape(), l.rules));
  }
  return bitwise_difference(run_case(conv, l.c), want, conv.output_shape());
}

// Every configuration of the exhaustive search (a superset of the others), each on a random layer: those of
// one parity of their index (each is a program compile, most of the suite's longest test; two halves let
// CTest run them side by side).
void every_gemm_candidate(Variant variant, std::size_t parity) {
  Runtime rt = runtime_with(variant, TuningMode::Ignore, "");
  const detail::RuntimeState& s = *rt.state();
  const auto candidates =
      detail::gemm_candidates(s.gemm, s.profile, s.work_group_cap, TuneSearch::Exhaustive);
  REQUIRE(candidates.size() > 20);
  for (std::size_t i = parity; i < candidates.size(); i += 2) {
    const LayerCase l = random_layer(7000 + i, static_cast<int>(i % 3));
    const std::string config = detail::to_text(candidates[i]);
    INFO("candidate " << i << " of " << candidates.size() << ": " << config << "; " << describe(l.c));
    Plan plan;
    run_against_reference(rt, l, plan);  // the layer's shape class
    s.tuning.set(plan.shape_class, config);
    const std::string difference = run_against_reference(rt, l, plan);
    s.tuning.erase(plan.shape_class);
    INFO("plan: " << plan.to_string());
    REQUIRE(plan.configuration == config);  // the candidate ran, not the default
    REQUIRE(plan.tuned);
    REQUIRE(difference.empty());
  }
}
void even_gemm_candidates(Variant variant) {
  every_gemm_candidate(variant, 0);
}
void odd_gemm_candidates(Variant variant) {
  every_gemm_candidate(variant, 1);
}
XNORCL_VARIANT_TEST("tuning: every GEMM candidate computes the reference's bits (even-numbered)", "[tuning]",
                    even_gemm_candidates)
XNORCL_VARIANT_TEST("tuning: every GEMM candidate computes the reference's bits (odd-numbered)", "[tuning]",
                    odd_gemm_candidates)

// Random float convolutions, a third with rows wide enough for whole 16-column tiles at strides 1 to 3.
Graph random_convolution(std::mt19937& rng) {
  const auto between = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (;;) {
    const std::int64_t N = between(1, 2), C = between(1, 9), H = between(1, 12),
                       W = between(0, 2) == 0 ? between(40, 90) : between(1, 20), O = between(1, 19);
    const std::int64_t k = between(1, 5), s = between(1, 3), d = between(1, 2), p = between(0, 2);
    if ((k - 1) * d + 1 > H + 2 * p || (k - 1) * d + 1 > W + 2 * p) continue;
    Graph g;
    g.inputs.push_back({"x", {N, C, H, W}});
    g.constants["w"] = random_floats({O, C, k, k}, rng, -1, 1);
    using V = std::vector<std::int64_t>;
    g.outputs = {add_node(
        g, "conv", "Convolution", {"x", "w"},
        {{"strides", V{s, s}}, {"dilations", V{d, d}}, {"pads_begin", V{p, p}}, {"pads_end", V{p, p}}})};
    return g;
  }
}

// Each tuning point's candidates of `search`, one at a time: the outputs equal the default's bit for bit.
// Returns how many candidates ran.
std::size_t candidates_match_default(Runtime& rt, const Graph& g, const std::map<std::string, Tensor>& inputs,
                                     TuneSearch search) {
  const detail::RuntimeState& s = *rt.state();
  Model base(rt, g);
  const auto want = base.run(inputs);
  std::set<std::string> done;
  std::size_t ran = 0;
  for (const auto& step : detail::ModelAccess::tuning_points(base)) {
    for (const detail::TuningPoint& p : step) {
      if (!done.insert(p.shape_class).second) continue;
      for (const std::string& config : p.candidates(search)) {
        INFO(p.shape_class << ": " << config);
        s.tuning.set(p.shape_class, config);
        Model m(rt, g);
        const auto got = m.run(inputs);
        s.tuning.erase(p.shape_class);
        REQUIRE(m.plan().to_string().find("tuned " + config) != std::string::npos);
        for (const auto& [name, t] : want) REQUIRE(compare_tensors(got.at(name), t, true).empty());
        ++ran;
      }
    }
  }
  return ran;
}

void float_convolution_candidates(Variant variant) {
  Runtime rt = runtime_with(variant, TuningMode::Ignore, "");
  std::mt19937 rng(31);
  std::size_t ran = 0, windowed = 0, with_split = 0;
  for (int i = 0; i < 24; ++i) {
    const Graph g = random_convolution(rng);
    const auto& a = g.nodes[0].attributes;
    const bool pads = std::get<std::vector<std::int64_t>>(a.at("pads_begin"))[0] > 0;
    const auto& strides = std::get<std::vector<std::int64_t>>(a.at("strides"));
    const Dims& x = g.inputs[0].dims;
    if (g.constants.at("w").dims[2] > 1 || pads) {
      ++windowed;
      ++with_split;
    } else if (((x[2] - 1) / strides[0] + 1) * ((x[3] - 1) / strides[1] + 1) >= 32) {
      ++with_split;  // a 1x1 window on an output plane of two runs of 16 positions: on the plane or a copy
    }
    INFO("input " << to_string(g.inputs[0].dims) << " weights " << to_string(g.constants.at("w").dims));
    std::map<std::string, Tensor> inputs{{"x", random_input(g.inputs[0].dims, rng)}};
    // The default against the host reference (float: within rounding), then every candidate bitwise.
    const Tensor want = reference_graph(g, inputs).at(g.outputs[0]);
    REQUIRE(compare_tensors(Model(rt, g).run(inputs).at(g.outputs[0]), want, false, 1e-5).empty());
    ran += candidates_match_default(rt, g, inputs, TuneSearch::Exhaustive);
  }
  // Three kernel configurations (tiles of 8 and 16 columns, channels in lanes) at each work-group size, and
  // columns in lanes on the input's phase-split copy (windows other than 1x1 without pads) or positions in
  // lanes (1x1 without pads on an output plane of 32 positions or more: on the plane itself at stride 1, else
  // on a copy of the strided pixels), one or two output rows or runs per work-item.
  const detail::RuntimeState& s = *rt.state();
  const std::size_t sizes =
      detail::linear_work_group_candidates(TuneSearch::Exhaustive,
                                           s.linear_program("convolution.cl").work_group, s.work_group_cap)
          .size();
  CHECK(sizes == 7);
  CHECK(windowed > 12);
  CHECK(ran == (24 * 3 + 2 * with_split) * sizes);
}
XNORCL_VARIANT_TEST("tuning: every float convolution candidate computes the default's values", "[tuning]",
                    float_convolution_candidates)

// A windowed convolution with a 3x3, stride-2 max-pool in its step (pads before 1, 1; random pads after and
// rounding): every candidate of the exhaustive search computes the default's values, the bands of pooled rows
// included where the kernel pools (a device comparing floats exactly, as PoCL).
void pooled_convolution_candidates(Variant variant) {
  Runtime rt = runtime_with(variant, TuningMode::Ignore, "");
  std::mt19937 rng(37);
  const auto between = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::size_t ran = 0, banded = 0;
  for (int i = 0; i < 4; ++i) {
    using V = std::vector<std::int64_t>;
    const std::int64_t H = between(5, 40), W = between(5, 40), k = between(2, 5), pad_end = between(0, 2);
    Graph g;
    g.inputs.push_back({"x", {between(1, 2), between(1, 4), H, W}});
    g.constants["w"] = random_floats({between(1, 13), g.inputs[0].dims[1], k, k}, rng, -1, 1);
    const std::string conv =
        add_node(g, "conv", "Convolution", {"x", "w"}, {{"pads_begin", V{1, 1}}, {"pads_end", V{1, 1}}});
    g.outputs = {add_node(g, "pool", "MaxPool", {conv},
                          {{"kernel", V{3, 3}},
                           {"strides", V{2, 2}},
                           {"pads_begin", V{1, 1}},
                           {"pads_end", V{pad_end, pad_end}},
                           {"rounding_type", std::string(between(0, 1) ? "ceil" : "floor")}})};
    INFO("input " << to_string(g.inputs[0].dims) << " weights " << to_string(g.constants.at("w").dims));
    const Model model(rt, g);
    REQUIRE(model.plan().steps.size() == 1);  // the pool in the convolution's step
    std::map<std::string, Tensor> inputs{{"x", random_input(g.inputs[0].dims, rng)}};
    const Tensor want = reference_graph(g, inputs).at(g.outputs[0]);
    REQUIRE(compare_tensors(Model(rt, g).run(inputs).at(g.outputs[0]), want, false, 1e-5).empty());
    ran += candidates_match_default(rt, g, inputs, TuneSearch::Exhaustive);
    for (const auto& step : detail::ModelAccess::tuning_points(model))
      for (const detail::TuningPoint& p : step)
        for (const std::string& config : p.candidates(TuneSearch::Exhaustive))
          banded += config.find(" band=") != std::string::npos;
  }
  const detail::RuntimeState& s = *rt.state();
  const std::size_t sizes =
      detail::linear_work_group_candidates(TuneSearch::Exhaustive,
                                           s.linear_program("convolution.cl").work_group, s.work_group_cap)
          .size();
  // Per work-group size: tiles of 8 and 16 columns, channels in lanes, split in 1 and 2 rows, and where the
  // kernel pools each of those rows in bands of 1, 2 and 8 pooled rows besides the default's 4.
  const std::size_t bands = detail::max_pool_band_candidates(TuneSearch::Exhaustive).size();
  CHECK(bands == 3);
  CHECK(banded == (s.floats_compare_exactly ? 4 * sizes * 2 * bands : 0));
  CHECK(ran == 4 * sizes * 5 + banded);
}
XNORCL_VARIANT_TEST(
    "tuning: every candidate of a convolution with its max-pool computes the default's values", "[tuning]",
    pooled_convolution_candidates)

// Every op whose work-group size is tuned, on random shapes (odd channel counts, rows of pool runs and
// narrower, batch > 1): elementwise, activation, max and average pools over floats, packing, the binary
// max-pool and fully connected layer, concat, transpose and the depthwise convolution.
Graph work_group_ops(std::mt19937& rng) {
  const auto between = [&](int lo, int hi) {
    return std::int64_t{std::uniform_int_distribution<int>(lo, hi)(rng)};
  };
  const std::int64_t N = between(1, 2), C = 2 * between(0, 20) + 1, H = between(3, 12),
                     W = between(0, 1) ? between(3, 15) : between(32, 60), O = between(1, 40);
  using V = std::vector<std::int64_t>;
  Graph g;
  g.inputs = {{"x", {N, C, H, W}}};
  g.constants["shift"] = random_floats({1, C, 1, 1}, rng, -0.5f, 0.5f);
  g.constants["slope"] = random_floats({C}, rng, 0, 0.5f);
  g.constants["dw"] = random_floats({C, 1, 1, 3, 3}, rng, -1, 1);
  g.constants["fc"] = random_bits({O, C * H * W}, rng);
  std::string a = add_node(g, "shifted", "Add", {"x", "shift"});
  a = add_node(g, "prelu", "PRelu", {a, "slope"});
  const V one{1, 1}, two{2, 2};
  const std::string stride = between(0, 1) ? "1" : "2";
  const V s{std::stoll(stride), std::stoll(stride)};
  const std::string max =
      add_node(g, "max", "MaxPool", {a},
               {{"kernel", V{3, 3}}, {"strides", s}, {"pads_begin", one}, {"pads_end", one}});
  const std::string avg = add_node(g, "avg", "AvgPool", {a},
                                   {{"kernel", two},
                                    {"strides", two},
                                    {"rounding_type", std::string("ceil")},
                                    {"exclude-pad", std::string("true")}});
  const std::string cat = add_node(g, "cat", "Concat", {a, "x"}, {{"axis", std::int64_t{1}}});
  const std::string nhwc = add_node(g, "nhwc", "Transpose", {a}, {{"order", V{0, 2, 3, 1}}});
  const std::string dw =
      add_node(g, "dw", "GroupConvolution", {a, "dw"},
               {{"strides", s}, {"dilations", one}, {"pads_begin", one}, {"pads_end", one}});
  std::vector<float> t(static_cast<std::size_t>(C));
  for (float& v : t) v = std::uniform_real_distribution<float>(-0.5f, 0.5f)(rng);
  const std::string bits = add_sign(g, "sign", "x", t);
  const std::string bits_max = add_node(g, "bits_max", "MaxPool", {bits},
                                        {{"kernel", two},
                                         {"strides", two},
                                         {"pads_begin", V{0, 0}},
                                         {"pads_end", V{0, 0}},
                                         {"rounding_type", std::string("ceil")}});
  const std::string fc = add_node(g, "fc", "BinaryFullyConnected", {bits, "fc"});
  g.outputs = {max, avg, cat, nhwc, dw, bits, bits_max, fc};
  return g;
}

void work_group_candidates(Variant variant) {
  Runtime rt = runtime_with(variant, TuningMode::Ignore, "");
  std::mt19937 rng(41);
  std::set<std::string> kernels;
  std::size_t ran = 0;
  for (int i = 0; i < 6; ++i) {
    const Graph g = work_group_ops(rng);
    INFO("input " << to_string(g.inputs[0].dims));
    const std::map<std::string, Tensor> inputs{{"x", random_input(g.inputs[0].dims, rng)}};
    // The default against the host reference (bitwise but for the averages and the convolution's sums),
    // then every candidate bitwise against the default.
    const Model model(rt, g);
    const auto got = Model(rt, g).run(inputs);
    const auto want = reference_graph(g, inputs);
    for (const std::string& name : g.outputs) {
      INFO(name << "\n" << model.plan().to_string());
      const bool exact = name.rfind("avg", 0) != 0 && name.rfind("dw", 0) != 0;
      REQUIRE(compare_tensors(got.at(name), want.at(name), exact, 1e-5).empty());
    }
    for (const auto& step : detail::ModelAccess::tuning_points(model))
      for (const detail::TuningPoint& p : step)
        if (p.shape_class.rfind("work-group ", 0) == 0)
          kernels.insert(p.shape_class.substr(11, p.shape_class.find(' ', 11) - 11));
    ran += candidates_match_default(rt, g, inputs, TuneSearch::Exhaustive);
  }
  std::string list;
  for (const std::string& k : kernels) list += " " + k;
  INFO("work-group tuned kernels:" << list);
  for (const char* k : {"Add", "activation_f32", "avg_pool_f32", "concat_copy", "transpose_copy",
                        "depthwise_convolution", "threshold_pack", "binary_maxpool", "binary_fc"})
    CHECK(kernels.count(k) == 1);
  CHECK(kernels.count(variant == Variant::Global ? maxpool_runs_kernel(rt) : "maxpool_f32") == 1);
  CHECK(ran > 6 * 9 * 7);
}
XNORCL_VARIANT_TEST("tuning: every work-group size of the one-dimensional ops computes the default's values",
                    "[tuning]", work_group_candidates)

ModelOptions small_network() {
  ModelOptions o;
  o.batch = 2;
  o.height = o.width = 32;
  o.width_divisor = 8;
  o.calibration_size = 32;
  o.seed = 5;
  return o;
}

// The networks' own epilogues (shortcuts, also-packed sums, max-pooled packing) under each candidate. Local
// takes the fast search (each of its programs builds in seconds on PoCL; its every configuration meets the
// reference on random layers above), Global the normal one.
void network_candidates(Variant variant) {
  Runtime rt = runtime_with(variant, TuningMode::Ignore, "");
  const TuneSearch search = variant == Variant::Local ? TuneSearch::Fast : TuneSearch::Normal;
  std::mt19937 rng(3);
  for (const Graph& g : {bireal18(small_network()), resnet18_binary(small_network())}) {
    std::map<std::string, Tensor> inputs{{"input", random_input(g.inputs[0].dims, rng)}};
    CHECK(candidates_match_default(rt, g, inputs, search) > 40);
  }
}
XNORCL_VARIANT_TEST("tuning: every candidate of a network's steps computes the default's bits", "[tuning]",
                    network_candidates)

// A tuned, stored, reloaded model: the tuning file's entries reach a new Runtime; Ignore leaves them.
TEST_CASE("tuning: tune() stores results that a new Runtime uses", "[tuning]") {
  TempDir dir;
  const std::string file = dir.file("tuning.txt");
  const Graph g = bireal18(small_network());
  {
    Runtime rt = runtime_with(Variant::Global, TuningMode::Use, file);
    REQUIRE(tuning_file(rt) == file);
    std::size_t calls = 0;
    TuneOptions o;
    o.repetitions = 2;
    o.progress = [&](const TuneProgress& p) {
      ++calls;
      CHECK(p.done <= p.total);
    };
    const TuneReport r = tune(rt, g, o);
    CHECK(r.file == file);
    CHECK_FALSE(r.stopped);
    CHECK(calls >= 2);
    REQUIRE(r.classes.size() >= 5);
    for (const TunedStep& t : r.classes) {
      CHECK(t.candidates >= 2);
      CHECK_FALSE(t.steps.empty());
      CHECK(t.best_ms <= t.default_ms);
    }
  }
  Runtime rt = runtime_with(Variant::Global, std::nullopt, file);  // Use is the default
  const Model m(rt, g);
  std::size_t tuned = 0;
  for (const GraphPlan::Step& s : m.plan().steps) {
    INFO(s.node << ": " << s.tuning);
    if (!s.tuning.empty()) CHECK(s.tuning.rfind("tuned ", 0) == 0);
    tuned += !s.tuning.empty();
  }
  CHECK(tuned >= 10);
  Runtime ignoring = runtime_with(Variant::Global, TuningMode::Ignore, file);
  const Model defaults(ignoring, g);  // named: a temporary's plan would not outlive the loop's first line
  for (const GraphPlan::Step& s : defaults.plan().steps) {
    INFO(s.node << ": " << s.tuning);
    if (!s.tuning.empty()) CHECK(s.tuning.rfind("default ", 0) == 0);
  }
}

// Each class's candidate 0, the one it keeps where nothing beats it, is the configuration its steps run
// untuned: on a CPU device the float convolutions default to their lanes kernel, which their candidate list
// does not put first.
TEST_CASE("tuning: a class's default is what its steps run untuned", "[tuning]") {
  TempDir dir;
  const std::string file = dir.file("tuning.txt");
  const Graph g = bireal18(small_network());
  std::map<std::string, std::string> untuned;  // node -> its plan's tuning text
  {
    Runtime ignoring = runtime_with(Variant::Global, TuningMode::Ignore, file);
    const Model m(ignoring, g);
    for (const GraphPlan::Step& s : m.plan().steps) untuned[s.node] = s.tuning;
  }
  Runtime rt = runtime_with(Variant::Global, TuningMode::Use, file);
  TuneOptions o;
  o.search = TuneSearch::Fast;
  o.repetitions = 1;
  const TuneReport r = tune(rt, g, o);
  REQUIRE(r.classes.size() >= 5);
  for (const TunedStep& t : r.classes) {
    for (const std::string& node : t.steps) {
      INFO(t.shape_class << ", step " << node << ": " << untuned.at(node));
      CHECK(untuned.at(node).find("default " + t.default_config) != std::string::npos);
    }
  }
}

TEST_CASE("tuning: TuneOnFirstUse tunes a model's new steps once, when it is built", "[tuning]") {
  TempDir dir;
  const std::string file = dir.file("tuning.txt");
  Runtime rt = runtime_with(Variant::Global, TuningMode::TuneOnFirstUse, file);
  const Graph g = resnet18_binary(small_network());
  const Model m(rt, g);
  for (const GraphPlan::Step& s : m.plan().steps)
    if (!s.tuning.empty()) CHECK(s.tuning.rfind("tuned ", 0) == 0);
  REQUIRE(std::filesystem::exists(file));
  const auto written = std::filesystem::last_write_time(file);
  const Model again(rt, g);  // nothing left to tune: the file is not written again
  CHECK(std::filesystem::last_write_time(file) == written);
}

TEST_CASE("tuning: stopping early keeps what was measured and leaves the rest alone", "[tuning]") {
  TempDir dir;
  const std::string file = dir.file("tuning.txt");
  Runtime rt = runtime_with(Variant::Global, TuningMode::Use, file);
  TuneOptions o;
  o.repetitions = 1;
  o.stop_requested = [] { return true; };  // before the first candidate round
  const TuneReport r = tune(rt, bireal18(small_network()), o);
  CHECK(r.stopped);
  for (const TunedStep& t : r.classes) CHECK(t.candidates == 1);  // the defaults alone
  CHECK(r.default_ms > 0);
  CHECK(r.tuned_ms == r.default_ms);  // the same configurations: one measurement, not two draws of noise
  CHECK(r.file.empty());              // nothing complete to store
  CHECK_FALSE(std::filesystem::exists(file));
}

TEST_CASE("tuning: corrupt files and entries this device cannot run fall back to the default", "[tuning]") {
  TempDir dir;
  const std::string file = dir.file("tuning.txt");
  const Graph g = bireal18(small_network());
  std::string shape_class;
  {
    Runtime rt = runtime_with(Variant::Global, TuningMode::Use, file);
    TuneOptions o;
    o.repetitions = 1;
    REQUIRE_FALSE(tune(rt, g, o).file.empty());
    shape_class = tune(rt, g, o).classes.front().shape_class;
  }
  std::string text;
  {
    std::ifstream in(file);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  SECTION("a corrupt file: one warning, every step default") {
    std::ofstream(file) << text.substr(0, text.size() - 3);
    std::vector<std::string> warnings;
    Runtime rt = runtime_with(Variant::Global, TuningMode::Use, file, &warnings);
    REQUIRE(warnings.size() == 1);
    CHECK_THAT(warnings[0], Catch::Contains("is ignored") && Catch::Contains(file));
    const Model m(rt, g);
    for (const GraphPlan::Step& s : m.plan().steps)
      if (!s.tuning.empty()) CHECK(s.tuning.rfind("default ", 0) == 0);
  }
  SECTION(
      "the stem's entry with rows or band outside their ranges, or beside another kernel: the default runs") {
    Runtime probe = runtime_with(Variant::Global, TuningMode::Ignore, "");
    std::string stem;
    for (const auto& step : detail::ModelAccess::tuning_points(Model(probe, g)))
      for (const detail::TuningPoint& p : step)
        if (p.shape_class.find("kernel 7x7") != std::string::npos) stem = p.shape_class;
    REQUIRE_FALSE(stem.empty());
    // A band on a windowed convolution without a pool in its step (its kernel does not pool): refused, where
    // split=16 alone runs.
    {
      std::mt19937 rng(5);
      Graph plain;
      plain.inputs.push_back({"x", {1, 3, 16, 16}});
      plain.constants["w"] = random_floats({5, 3, 3, 3}, rng, -1, 1);
      using V = std::vector<std::int64_t>;
      plain.outputs = {add_node(plain, "conv", "Convolution", {"x", "w"},
                                {{"pads_begin", V{1, 1}}, {"pads_end", V{1, 1}}})};
      std::string shape_class;
      for (const auto& step : detail::ModelAccess::tuning_points(Model(probe, plain)))
        for (const detail::TuningPoint& p : step) shape_class = p.shape_class;
      REQUIRE_FALSE(shape_class.empty());
      for (const std::string config : {"split=16 band=2 wg=64", "split=16 wg=64"}) {
        INFO(shape_class << ": " << config);
        std::vector<std::string> warnings;
        Runtime logged = runtime_with(Variant::Global, TuningMode::Ignore, "", &warnings);
        logged.state()->tuning.set(shape_class, config);
        const bool tuned =
            Model(logged, plain).plan().to_string().find("tuned " + config) != std::string::npos;
        CHECK(tuned == (config == "split=16 wg=64"));  // the second: a control that runs
        CHECK(warnings.empty() == tuned);
      }
    }
    // The stem pools in its kernel where floats compare exactly: there a band of 1 to 8 pooled rows runs.
    const bool bands = probe.state()->floats_compare_exactly;
    for (const std::string config :
         {"split=16 rows=3 wg=64", "cols=8 rows=2 wg=64", "split=16 rows=x wg=64", "split=16 band=0 wg=64",
          "split=16 band=9 wg=64", "split=16 band=x wg=64", "cols=8 band=4 wg=64", "lanes=6 band=2 wg=64",
          "split=16 rows=2 band=3 wg=64", "split=16 rows=2 wg=64"}) {
      INFO(config);
      std::vector<std::string> warnings;
      Runtime logged = runtime_with(Variant::Global, TuningMode::Ignore, "", &warnings);
      logged.state()->tuning.set(stem, config);
      const std::string plan = Model(logged, g).plan().to_string();
      const bool tuned = plan.find("tuned " + config) != std::string::npos;
      // The last two are controls that run (the band one where the stem pools in its kernel).
      CHECK(tuned ==
            (config == "split=16 rows=2 wg=64" || (bands && config == "split=16 rows=2 band=3 wg=64")));
      CHECK(warnings.empty() == tuned);
      if (tuned && bands)
        CHECK(plan.find(config.find("band=3") != std::string::npos
                            ? "in bands of 3 pooled rows"
                            : "in bands of " + std::to_string(ops::kDefaultPoolBand) + " pooled rows") !=
              std::string::npos);
    }
  }
  SECTION("an entry outside the device's limits: a warning naming it, the default runs") {
    Runtime rt = runtime_with(Variant::Global, TuningMode::Ignore, "");
    std::vector<std::string> warnings;
    Runtime logged = runtime_with(Variant::Global, TuningMode::Ignore, "", &warnings);
    logged.state()->tuning.set(shape_class,
                               shape_class.rfind("xnor_gemm", 0) == 0 ? "wg=64 tm=4 tn=4 kt=8" : "cols=12");
    const Model m(logged, g);
    CHECK_FALSE(warnings.empty());
    CHECK_THAT(warnings.front(), Catch::Contains(shape_class) && Catch::Contains("using the default"));
    CHECK(m.plan().to_string().find("tuned") == std::string::npos);
  }
}

TEST_CASE("tuning: bad settings are refused before any device work", "[tuning]") {
  runtime_for(Variant::Global);
  RuntimeOptions o;
  o.tuning_file = "";
  CHECK_THROWS_WITH(Runtime::create(o), Catch::Contains("tuning_file is empty"));
  o.tuning_file.reset();
  o.tuning = static_cast<TuningMode>(7);
  CHECK_THROWS_WITH(Runtime::create(o), Catch::Contains("RuntimeOptions::tuning = 7"));
  o.tuning.reset();
  setenv("XNORCL_TUNING", "sometimes", 1);
  CHECK_THROWS_WITH(Runtime::create(o),
                    Catch::Contains("XNORCL_TUNING = 'sometimes'") && Catch::Contains("use, tune, ignore"));
  unsetenv("XNORCL_TUNING");
  TuneOptions t;
  t.repetitions = -1;
  CHECK_THROWS_WITH(tune(runtime_for(Variant::Global), bireal18(small_network()), t),
                    Catch::Contains("repetitions = -1"));
  t.repetitions = 1001;  // refused before anything runs, not timed 1001 times per candidate
  CHECK_THROWS_WITH(tune(runtime_for(Variant::Global), bireal18(small_network()), t),
                    Catch::Contains("repetitions = 1001") && Catch::Contains("to 1000"));
  Graph broken = bireal18(small_network());
  broken.outputs = {"nowhere"};
  CHECK_THROWS_AS(tune(runtime_for(Variant::Global), broken), InvalidArgument);
}

}  // namespace
}  // namespace xnorcl::test
