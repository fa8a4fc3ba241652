// SPDX-License-Identifier: Apache-2.0
// The float convolution family on the device against the host reference (double, one rounding), on both
// variants: many random shapes and attributes, the fused Multiply / Add / Relu epilogue, and whole graphs
// with those nodes (tagged [needs-elementwise]: Multiply, Add and Relu are registered by their own units).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

#include "device_support.hpp"
#include "graph/model_access.hpp"
#include "graph/node_views.hpp"
#include "graph_case.hpp"
#include "ops/float_conv_common.hpp"
#include "ops/op.hpp"
#include "runtime/runtime_state.hpp"

namespace xnorcl::test {
namespace {

using V = std::vector<std::int64_t>;

int pick(std::mt19937& rng, std::initializer_list<int> values) {
  return *(values.begin() + std::uniform_int_distribution<std::size_t>(0, values.size() - 1)(rng));
}
int between(std::mt19937& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

// A random window: kernel sizes, strides, dilations, asymmetric pads or an auto_pad.
Attributes random_window(std::mt19937& rng) {
  Attributes a;
  a["strides"] = V{pick(rng, {1, 1, 2, 3}), pick(rng, {1, 1, 2, 3})};
  a["dilations"] = V{pick(rng, {1, 1, 1, 2}), pick(rng, {1, 1, 1, 3})};
  a["pads_begin"] = V{between(rng, 0, 3), between(rng, 0, 3)};
  a["pads_end"] = V{between(rng, 0, 3), between(rng, 0, 3)};
  a["auto_pad"] = std::string(pick(rng, {0, 0, 0, 1, 2, 3}) == 0 ? "explicit" : "");
  if (std::get<std::string>(a["auto_pad"]).empty())
    a["auto_pad"] = std::string(pick(rng, {1, 2, 3}) == 1 ? "same_upper"
                                : pick(rng, {0, 1})       ? "same_lower"
                                                          : "valid");
  return a;
}

struct Case {
  Graph graph;
  Tensor x;
  std::string describe() const {
    const Node& n = graph.nodes[0];
    std::string s =
        n.op + " x " + to_string(x.dims) + " w " + to_string(graph.constants.at(n.inputs[1]).dims);
    for (const auto& [name, value] : n.attributes) {
      s += " " + name + "=";
      if (const auto* v = std::get_if<V>(&value)) s += to_string(*v);
      if (const auto* t = std::get_if<std::string>(&value)) s += *t;
    }
    return s;
  }
};

// One node of `op` on a random input; retried until the window fits the padded input.
Case random_case(std::mt19937& rng, const std::string& op) {
  for (;;) {
    // A third of the rows wide enough for whole tiles of 16 columns inside the row at strides 1 to 3 (the
    // Global variant's vector loads), the rest narrow (tiles cut by the row's ends).
    const std::int64_t N = pick(rng, {1, 1, 2, 3}), H = between(rng, 1, 19),
                       W = between(rng, 0, 2) ? between(rng, 1, 23) : between(rng, 40, 90);
    const std::int64_t KH = pick(rng, {1, 1, 3, 3, 5, 7}), KW = pick(rng, {1, 3, 3, 5, 7});
    Case c;
    Graph& g = c.graph;
    Dims w, x;
    if (op == "Convolution") {
      const std::int64_t C = pick(rng, {1, 3, 5, 8, 13}), O = pick(rng, {1, 5, 8, 9, 17, 24});
      x = {N, C, H, W};
      w = {O, C, KH, KW};
    } else {
      const std::int64_t G = pick(rng, {1, 3, 6, 7, 16}), Cg = pick(rng, {1, 1, 2, 3}),
                         Og = pick(rng, {1, 1, 2, 9});
      x = {N, G * Cg, H, W};
      w = {G, Og, Cg, KH, KW};
    }
    g.inputs.push_back({"x", x});
    g.constants["w"] = random_floats(w, rng, -1.0f, 1.0f);
    g.outputs = {add_node(g, "layer", op, {"x", "w"}, random_window(rng))};
    try {
      g.validate();
    } catch (const InvalidArgument&) {
      continue;
    }
    c.x = random_input(x, rng);
    return c;
  }
}

Case matmul_case(std::mt19937& rng, std::int64_t N, std::int64_t K, std::int64_t M, bool transpose_b) {
  Case c;
  c.graph.inputs.push_back({"x", {N, K}});
  c.graph.constants["w"] = random_floats(transpose_b ? Dims{M, K} : Dims{K, M}, rng, -1.0f, 1.0f);
  c.graph.outputs = {add_node(c.graph, "layer", "MatMul", {"x", "w"},
                              {{"transpose_b", std::string(transpose_b ? "true" : "false")}})};
  c.x = random_input({N, K}, rng);
  return c;
}

// Whether the graph's convolution has a 1x1 window without pads (auto pads of a 1x1 window are 0).
bool pointwise_window(const Graph& g) {
  const Node& n = g.nodes[0];
  const Dims& w = g.constants.at(n.inputs[1]).dims;
  if (w[w.size() - 1] != 1 || w[w.size() - 2] != 1) return false;
  const auto auto_pad = n.attributes.find("auto_pad");
  if (auto_pad != n.attributes.end() && std::get<std::string>(auto_pad->second) != "explicit") return true;
  for (const char* name : {"pads_begin", "pads_end"}) {
    const auto pads = n.attributes.find(name);
    if (pads == n.attributes.end()) continue;
    for (std::int64_t p : std::get<V>(pads->second))
      if (p != 0) return false;
  }
  return true;
}

// Whether a float convolution offers the kernels with 6 channels x 16 columns or positions in vector lanes
// (split=16): windows other than 1x1 without pads (on a padded, phase-split copy of the input), and 1x1
// windows without pads whose output plane holds 32 positions or more (on the input plane itself at stride
// 1, else on a copy of the strided pixels).
bool offers_split(const Graph& g) {
  if (!pointwise_window(g)) return true;
  V strides = {1, 1};
  const auto given = g.nodes[0].attributes.find("strides");
  if (given != g.nodes[0].attributes.end()) strides = std::get<V>(given->second);
  const Dims& x = g.inputs[0].dims;
  return ((x[2] - 1) / strides[0] + 1) * ((x[3] - 1) / strides[1] + 1) >= 32;
}

// The convolution tuning classes of a model's steps, added to `classes`; `split` set where one of them
// offers convolution_split.
void add_convolution_classes(const Model& model, std::vector<std::string>& classes, bool& split) {
  for (const auto& step : detail::ModelAccess::tuning_points(model))
    for (const detail::TuningPoint& p : step)
      if (p.shape_class.rfind("convolution ", 0) == 0) {
        classes.push_back(p.shape_class);
        for (const std::string& candidate : p.candidates(TuneSearch::Fast))
          split = split || candidate.rfind("split=", 0) == 0;
      }
}

// Every kernel configuration a float convolution can run (tiles of 8 channels x 8 or 16 columns, 16
// channels in vector lanes x 6 columns, and where offers_split 6 channels x 16 columns or positions in vector
// lanes, one or two output rows or runs per work-item), set through the tuning table, computes the
// default's bits: they all sum an output's taps in the same order. (The tuning tests run every candidate on
// square windows; these add asymmetric pads, rectangular kernels, auto_pad and groups.) Depthwise steps,
// their own kernel, are left as they are.
void check_configurations(Runtime& rt, const Case& c, const Tensor& default_output) {
  std::vector<std::string> classes;
  bool split = false;  // whether the classes offer convolution_split
  add_convolution_classes(Model(rt, c.graph), classes, split);
  if (classes.empty()) return;
  INFO("offers split: " << split);
  CHECK(split == offers_split(c.graph));
  for (const std::string config : {"cols=8", "cols=16", "lanes=6", "split=16 rows=1", "split=16 rows=2"}) {
    INFO(config);
    if (config.rfind("split=", 0) == 0 && !split) continue;
    for (const std::string& shape_class : classes) rt.state()->tuning.set(shape_class, config);
    Model model(rt, c.graph);
    for (const std::string& shape_class : classes) rt.state()->tuning.erase(shape_class);
    REQUIRE(model.plan().steps.size() == 1);
    CHECK(model.plan().steps[0].tuning == "tuned " + config);
    CHECK(compare_tensors(model.run({{"x", c.x}}).at(c.graph.outputs[0]), default_output, true) == "");
  }
}

void check_case(Runtime& rt, const Case& c) {
  INFO(c.describe());
  Model model(rt, c.graph);
  const Tensor want = reference_graph(c.graph, {{"x", c.x}}).at(c.graph.outputs[0]);
  const Tensor got = model.run({{"x", c.x}}).at(c.graph.outputs[0]);
  CHECK(compare_tensors(got, want, false, 1e-5) == "");
  // Identical bits from run to run.
  CHECK(compare_tensors(model.run({{"x", c.x}}).at(c.graph.outputs[0]), got, true) == "");
  check_configurations(rt, c, got);
}

void random_convolutions(Variant variant) {
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(2024);
  for (int i = 0; i < 40; ++i) check_case(rt, random_case(rng, "Convolution"));
}

void random_group_convolutions(Variant variant) {
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(77);
  for (int i = 0; i < 40; ++i) check_case(rt, random_case(rng, "GroupConvolution"));
}

// One convolution node `op` with random weights w on a random input of shape x.
Case conv_case(std::mt19937& rng, const std::string& op, const Dims& x, const Dims& w, Attributes a) {
  Case c;
  c.graph.inputs.push_back({"x", x});
  c.graph.constants["w"] = random_floats(w, rng, -1.0f, 1.0f);
  c.graph.outputs = {add_node(c.graph, "layer", op, {"x", "w"}, std::move(a))};
  c.x = random_input(x, rng);
  return c;
}

// The real networks' shapes, shrunk: a 7x7/2 stem, 1x1 convolutions (the plane as one row, and strided),
// depthwise 3x3 with stride 2, a classifier.
void network_shapes(Variant variant) {
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(5);
  const auto conv = [&](const std::string& op, const Dims& x, const Dims& w, Attributes a) {
    return conv_case(rng, op, x, w, std::move(a));
  };
  const Attributes stem = {{"strides", V{2, 2}}, {"pads_begin", V{3, 3}}, {"pads_end", V{3, 3}}};
  check_case(rt, conv("Convolution", {1, 3, 40, 37}, {64, 3, 7, 7}, stem));
  const Case pointwise = conv("Convolution", {2, 40, 7, 9}, {33, 40, 1, 1}, {});
  check_case(rt, pointwise);
  CHECK_THAT(Model(rt, pointwise.graph).plan().steps[0].description,
             Catch::Matchers::Contains("convolution_1x1"));
  check_case(rt, conv("Convolution", {1, 24, 14, 14}, {48, 24, 1, 1}, {{"strides", V{2, 2}}}));
  // 1x1 windows without pads at a stride, run by default (CPU devices: the positions kernel on a copy of the
  // strided pixels where the output plane holds 32 positions or more, else 16 channels in lanes; GPUs: the
  // pointwise tiles) and in every other configuration (check_case): a tile inside one output row at stride 2
  // reads one run of the input row, the others (across row ends, other strides) gather their pixels; the
  // copy takes rows of 16 or more, 8 to 15 and fewer at column strides 1 to 3, the last vector overlapping;
  // odd and even widths, planes narrower than a tile, groups.
  for (const V& s : {V{2, 2}, V{1, 2}, V{2, 1}, V{3, 2}, V{2, 3}}) {
    for (const std::int64_t W : {7, 14, 28, 9, 50}) {
      const Case c = conv("Convolution", {2, 13, 11, W}, {19, 13, 1, 1}, {{"strides", s}});
      check_case(rt, c);
      CHECK_THAT(Model(rt, c.graph).plan().steps[0].description,
                 Catch::Matchers::Contains("convolution_1x1"));
    }
  }
  check_case(rt, conv("Convolution", {1, 5, 3, 3}, {7, 5, 1, 1}, {{"strides", V{2, 2}}}));
  // The pointwise lanes kernel orders its work-items by what costs more to read again: channel blocks first
  // at a stride where the input plane is larger than the output channels and a group has several channel
  // blocks, position blocks first otherwise (the boundary H * W = output channels included). Each case runs
  // the lanes kernel from the tuning table, whatever the device's default, and must plan the order named.
  const auto planned_with_lanes = [&rt](const Graph& g) {
    const std::string shape_class = detail::ModelAccess::tuning_points(Model(rt, g)).at(0).at(0).shape_class;
    rt.state()->tuning.set(shape_class, "lanes=6");
    const std::string described = Model(rt, g).plan().steps[0].description;
    rt.state()->tuning.erase(shape_class);
    return described;
  };
  const Attributes s2 = {{"strides", V{2, 2}}};
  for (const auto& [op, x, w, a, first] :
       {std::tuple<const char*, Dims, Dims, Attributes, const char*>{
            "Convolution", {2, 9, 8, 8}, {40, 9, 1, 1}, s2, "channel"},
        {"Convolution", {2, 9, 5, 7}, {40, 9, 1, 1}, s2, "position"},
        {"Convolution", {1, 6, 6, 9}, {53, 6, 1, 1}, s2, "channel"},
        {"Convolution", {1, 6, 6, 9}, {54, 6, 1, 1}, s2, "position"},
        {"Convolution", {2, 9, 8, 8}, {40, 9, 1, 1}, {}, "position"},
        {"GroupConvolution", {1, 12, 9, 30}, {3, 5, 4, 1, 1}, s2, "position"},
        {"GroupConvolution", {1, 12, 9, 30}, {3, 20, 4, 1, 1}, s2, "channel"}}) {
    const Case c = conv(op, x, w, a);
    check_case(rt, c);
    CHECK_THAT(planned_with_lanes(c.graph), Catch::Matchers::Contains(std::string(first) + " blocks first"));
  }
  const Attributes dw_s2 = {{"strides", V{2, 2}}, {"pads_begin", V{1, 1}}, {"pads_end", V{1, 1}}};
  const Case depthwise = conv("GroupConvolution", {2, 37, 15, 16}, {37, 1, 1, 3, 3}, dw_s2);
  check_case(rt, depthwise);
  CHECK_THAT(Model(rt, depthwise.graph).plan().steps[0].description, Catch::Matchers::Contains("depthwise"));
  // Wide rows: tiles whose taps all lie inside the row (unit and double strides) beside edge tiles.
  for (const std::int64_t s : {1, 2}) {
    const Attributes a = {{"strides", V{s, s}}, {"pads_begin", V{1, 2}}, {"pads_end", V{1, 2}}};
    check_case(rt, conv("GroupConvolution", {1, 8, 9, 61}, {8, 1, 1, 3, 5}, a));
    check_case(rt, conv("Convolution", {1, 5, 9, 61}, {11, 5, 3, 5}, a));
  }
  // Windows wider than the unrolled taps of the padded-copy kernel (convolution_split: 7), at strides 1 to 3
  // and a dilation: the taps past the 7th step through the copy's phases in a loop.
  for (const std::int64_t s : {1, 2, 3}) {
    const Attributes a = {{"strides", V{1, s}},
                          {"dilations", V{1, s == 2 ? 2 : 1}},
                          {"pads_begin", V{1, 4}},
                          {"pads_end", V{2, 5}}};
    check_case(rt, conv("Convolution", {2, 3, 5, 41}, {8, 3, 2, 11}, a));
  }
  check_case(rt, matmul_case(rng, 1, 512, 1000, false));
  check_case(rt, matmul_case(rng, 3, 512, 1000, true));
}

// 1x1 windows without pads run convolution_1x1_split on CPU devices by default (6 output channels x one or
// two runs of 16 positions in vector lanes) where the output plane holds two runs or more: at stride 1 on the
// input plane itself, at a stride on a copy of the pixels the window reads (pointwise_sample). Planes of
// exactly two runs, one position more (the last block overlapping the one before it), 49 and 100
// positions, output channels around the 6-channel blocks (1, 5, 6, 7, 13), groups, batches of 2. The
// strided ones take every copy path: rows of 16 columns or more (at stride 2 whole and overlapping vectors
// of 16, at a column stride of 1 whole ones), of 8 to 15 (vectors of 8), narrower rows and a column stride
// of 3 (one column at a time), row strides 1 to 3 (network_shapes adds overlapping vectors at a column
// stride of 1). check_case runs every configuration, both run counts included, against the default's bits.
// Planes below two runs keep the other kernels.
void pointwise_split(Variant variant) {
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(31);
  const bool cpu_default = detail::float_conv_lanes_by_default(rt.state()->profile);
  const auto conv = [&](const std::string& op, const Dims& x, const Dims& w, Attributes a) {
    return conv_case(rng, op, x, w, std::move(a));
  };
  const V s1 = {1, 1}, s2 = {2, 2};
  for (const auto& [op, x, w, strides] :
       {std::tuple<const char*, Dims, Dims, V>{"Convolution", {1, 5, 4, 8}, {7, 5, 1, 1}, s1},
        {"Convolution", {2, 3, 3, 11}, {6, 3, 1, 1}, s1},
        {"Convolution", {1, 17, 7, 7}, {13, 17, 1, 1}, s1},
        {"Convolution", {2, 9, 5, 20}, {1, 9, 1, 1}, s1},
        {"Convolution", {1, 1, 8, 4}, {5, 1, 1, 1}, s1},
        {"GroupConvolution", {2, 12, 6, 9}, {3, 5, 4, 1, 1}, s1},
        {"Convolution", {2, 7, 9, 40}, {13, 7, 1, 1}, s2},      // 5 x 20: vectors of 16, the last overlapping
        {"Convolution", {1, 3, 9, 16}, {6, 3, 1, 1}, V{3, 1}},  // 3 x 16: one whole vector per row
        {"Convolution", {1, 6, 13, 29}, {7, 6, 1, 1}, s2},      // 7 x 15: vectors of 8, W = 2 * OW - 1
        {"Convolution", {1, 5, 8, 8}, {7, 5, 1, 1}, V{2, 1}},   // 4 x 8: one vector of 8 per row
        {"Convolution", {1, 5, 8, 8}, {7, 5, 1, 1}, V{1, 2}},   // 8 x 4: one column at a time
        {"Convolution", {1, 5, 14, 14}, {5, 5, 1, 1}, s2},      // 7 x 7, as a ResNet's last shortcut
        {"Convolution", {1, 4, 20, 24}, {6, 4, 1, 1}, V{3, 3}},         // 7 x 8 at a column stride of 3
        {"GroupConvolution", {2, 12, 10, 33}, {3, 5, 4, 1, 1}, s2}}) {  // 5 x 17
    const Case c = conv(op, x, w, {{"strides", strides}});
    check_case(rt, c);
    INFO(c.describe());
    const std::string planned = Model(rt, c.graph).plan().steps[0].description;
    CHECK((planned.find("convolution_1x1_split") != std::string::npos) == cpu_default);
    if (cpu_default) CHECK((planned.find("strided pixels") != std::string::npos) == (strides != s1));
  }
  for (const auto& [x, a] : {std::pair<Dims, Attributes>{{1, 5, 5, 6}, {}},
                             {{1, 5, 8, 8}, {{"strides", s2}}},
                             {{1, 5, 7, 13}, {{"strides", s2}}}}) {
    const Case c = conv("Convolution", x, {7, 5, 1, 1}, a);
    check_case(rt, c);
    INFO(c.describe());
    CHECK(Model(rt, c.graph).plan().steps[0].description.find("convolution_1x1_split") == std::string::npos);
  }
  // An infinite weight: a 1x1 window without pads has no pad taps to skip, so the positions kernel may run it
  // (the windowed kernel on its zero-padded copy may not) and gives every other configuration's bits, the
  // infinities included.
  Case inf = conv("Convolution", {1, 4, 6, 7}, {9, 4, 1, 1}, {});
  inf.graph.constants["w"].values[5] = std::numeric_limits<float>::infinity();
  INFO(inf.describe());
  Model model(rt, inf.graph);
  CHECK((model.plan().steps[0].description.find("convolution_1x1_split") != std::string::npos) ==
        cpu_default);
  const Tensor got = model.run({{"x", inf.x}}).at(inf.graph.outputs[0]);
  CHECK(std::any_of(got.values.begin(), got.values.end(), [](float v) { return std::isinf(v); }));
  check_configurations(rt, inf, got);
}

void random_matmuls(Variant variant) {
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(9);
  for (int i = 0; i < 20; ++i)
    check_case(rt,
               matmul_case(rng, between(rng, 1, 5), between(rng, 1, 70), between(rng, 1, 41), i % 2 == 1));
}

TEST_CASE("float convolution: random shapes and windows (local)", "[local]") {
  random_convolutions(Variant::Local);
}
TEST_CASE("float convolution: random shapes and windows (global)", "[global]") {
  random_convolutions(Variant::Global);
}
TEST_CASE("group convolution: random groupings, depthwise included (local)", "[local]") {
  random_group_convolutions(Variant::Local);
}
TEST_CASE("group convolution: random groupings, depthwise included (global)", "[global]") {
  random_group_convolutions(Variant::Global);
}
TEST_CASE("float convolution family: the networks' layer shapes (local)", "[local]") {
  network_shapes(Variant::Local);
}
TEST_CASE("float convolution family: the networks' layer shapes (global)", "[global]") {
  network_shapes(Variant::Global);
}
TEST_CASE("float convolution: 1x1 with positions in lanes, on the plane or a strided copy (local)",
          "[local]") {
  pointwise_split(Variant::Local);
}
TEST_CASE("float convolution: 1x1 with positions in lanes, on the plane or a strided copy (global)",
          "[global]") {
  pointwise_split(Variant::Global);
}
// An infinite weight: a tap over the pad adds nothing in the reference, but inf * 0 is NaN, so the kernel
// that reads a zero-padded copy of the input may not run it, neither by default nor from the tuning table;
// the outputs whose inf tap lies on the pad stay finite, as the host's.
void infinite_weight(Variant variant) {
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(8);
  Case c;
  c.graph.inputs.push_back({"x", {2, 3, 9, 20}});
  c.graph.constants["w"] = random_floats({5, 3, 3, 3}, rng, -1.0f, 1.0f);
  c.graph.constants["w"].values[4] = std::numeric_limits<float>::infinity();    // channel 0's centre tap
  c.graph.constants["w"].values[27] = -std::numeric_limits<float>::infinity();  // channel 1's corner tap
  const Attributes a = {{"strides", V{1, 2}}, {"pads_begin", V{1, 1}}, {"pads_end", V{1, 1}}};
  c.graph.outputs = {add_node(c.graph, "layer", "Convolution", {"x", "w"}, a)};
  c.x = random_input({2, 3, 9, 20}, rng);
  const Tensor want = reference_graph(c.graph, {{"x", c.x}}).at(c.graph.outputs[0]);
  std::size_t finite = 0, infinite = 0;
  for (float v : want.values) (std::isfinite(v) ? finite : infinite) += 1;
  REQUIRE(finite > 0);
  REQUIRE(infinite > 0);
  const auto check = [&](Model& model) {
    INFO(model.plan().to_string());
    CHECK(model.plan().steps[0].description.find("convolution_split") == std::string::npos);
    const Tensor got = model.run({{"x", c.x}}).at(c.graph.outputs[0]);
    for (std::size_t i = 0; i < want.values.size(); ++i) {
      INFO("value " << i << ": " << got.values[i] << " against " << want.values[i]);
      if (std::isfinite(want.values[i]))
        REQUIRE(std::fabs(got.values[i] - want.values[i]) <= 1e-4f);
      else
        REQUIRE(std::memcmp(&got.values[i], &want.values[i], 4) == 0);
    }
  };
  Model plain(rt, c.graph);
  check(plain);
  std::vector<std::string> classes;
  for (const auto& step : detail::ModelAccess::tuning_points(Model(rt, c.graph)))
    for (const detail::TuningPoint& p : step) classes.push_back(p.shape_class);
  REQUIRE(classes.size() == 1);
  rt.state()->tuning.set(classes[0], "split=16");
  Model forced(rt, c.graph);
  rt.state()->tuning.erase(classes[0]);
  CHECK(forced.plan().steps[0].tuning.rfind("default", 0) == 0);
  check(forced);
}
TEST_CASE("float convolution: an infinite weight over the pad (local)", "[local]") {
  infinite_weight(Variant::Local);
}
TEST_CASE("float convolution: an infinite weight over the pad (global)", "[global]") {
  infinite_weight(Variant::Global);
}

TEST_CASE("MatMul: random sizes, both weight layouts (local)", "[local]") {
  random_matmuls(Variant::Local);
}
TEST_CASE("MatMul: random sizes, both weight layouts (global)", "[global]") {
  random_matmuls(Variant::Global);
}

// ---- The epilogue, driven through the op's own plan with Multiply / Add / Relu nodes as views: it needs no
// registered elementwise op. Expected: the reference output y, then fma(y, s, b) in double, then relu.

struct Tail {
  bool multiply = false, add = false, relu = false;
};

void check_epilogue(Runtime& rt, const Case& c, const Tail& tail, std::mt19937& rng) {
  Graph g = c.graph;
  const std::map<std::string, TensorInfo> base = g.validate();
  const Dims out = base.at(g.outputs[0]).dims;
  const std::int64_t channels = out[1];
  const Dims per_channel = out.size() == 4 ? Dims{1, channels, 1, 1} : Dims{channels};
  g.constants["s"] = random_floats(per_channel, rng, -2.0f, 2.0f);
  g.constants["b"] = random_floats(rng() % 2 ? Dims{1} : per_channel, rng, -1.0f, 1.0f);
  std::vector<Node> nodes;
  if (tail.multiply) nodes.push_back(Node{"scale", "Multiply", {"y", "s"}, {"y"}, {}});
  if (tail.add)
    nodes.push_back(Node{"shift", "Add", {"y", "b"}, {"y"}, {{"auto_broadcast", std::string("numpy")}}});
  if (tail.relu) nodes.push_back(Node{"relu", "Relu", {"y"}, {"y"}, {}});
  std::map<std::string, TensorInfo> infos = base;
  infos["y"] = {out, ElementType::Float32};
  const ops::Op* op = ops::find_op(g.nodes[0].op);
  const ops::NodeView head = detail::view_of(g, g.nodes[0], infos);
  std::vector<ops::NodeView> fused;
  for (const Node& n : nodes) {
    fused.push_back(detail::view_of(g, n, infos));
    REQUIRE(op->can_fuse(head, std::vector<ops::NodeView>(fused.begin(), fused.end() - 1), fused.back()));
  }
  std::unique_ptr<ops::DeviceStep> step = op->plan(rt, head, fused);

  const Tensor y = reference_graph(c.graph, {{"x", c.x}}).at(c.graph.outputs[0]);
  Tensor want = y;
  const std::vector<float>& s = g.constants["s"].values;
  const std::vector<float>& b = g.constants["b"].values;
  const std::int64_t plane = dims_product(out) / out[0] / channels;
  for (std::size_t i = 0; i < want.values.size(); ++i) {
    const std::size_t ch = static_cast<std::size_t>(static_cast<std::int64_t>(i) / plane % channels);
    double v = y.values[i];
    if (tail.multiply) v *= s[ch];
    if (tail.add) v += b[b.size() == 1 ? 0 : ch];
    if (tail.relu) v = v > 0 ? v : 0;
    want.values[i] = static_cast<float>(v);
  }
  Tensor got = want;
  const cl::Context ctx = rt.context();
  cl::Buffer in(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, c.x.values.size() * 4,
                const_cast<float*>(c.x.values.data()));
  cl::Buffer result(ctx, CL_MEM_READ_WRITE, got.values.size() * 4);
  std::vector<cl::Event> done{step->enqueue({&in}, {&result}, {})};
  rt.queue().enqueueReadBuffer(result, CL_TRUE, 0, got.values.size() * 4, got.values.data(), &done);
  INFO(c.describe() << " multiply " << tail.multiply << " add " << tail.add << " relu " << tail.relu);
  CHECK(compare_tensors(got, want, false, 1e-5) == "");
  if (tail.relu) CHECK(std::none_of(got.values.begin(), got.values.end(), [](float v) { return v < 0; }));
}

void epilogues(Variant variant) {
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(31);
  const std::vector<Tail> tails = {{true, true, true},   {true, true, false},  {false, true, true},
                                   {true, false, false}, {false, true, false}, {false, false, true}};
  for (const Tail& t : tails) {
    check_epilogue(rt, random_case(rng, "Convolution"), t, rng);
    check_epilogue(rt, random_case(rng, "GroupConvolution"), t, rng);
    check_epilogue(rt, matmul_case(rng, 2, 37, 19, t.relu), t, rng);
  }
}

// The runtime builds convolution.cl in work-groups of 1 on CPU devices and its other network programs at the
// largest size up to 64 that fits: checked on the device's own runtime.
TEST_CASE("float convolution: work-groups of 1 on CPU devices, the other programs unchanged", "[global]") {
  Runtime& rt = runtime_for(Variant::Global);
  const detail::RuntimeState& s = *rt.state();
  const std::size_t convolution = s.linear_program("convolution.cl").work_group;
  const std::size_t pools = s.linear_program("avg_pool.cl").work_group;
  INFO(rt.device_name() << " (" << rt.device_info().type << "), cap " << s.work_group_cap);
  if (rt.device_info().type != "CPU") {
    SUCCEED("not a CPU device: each program takes the largest size its kernels accept");
    return;
  }
  CHECK(convolution == 1);
  if (s.work_group_cap >= 2) CHECK(pools > convolution);
}

TEST_CASE("float convolution family: fused Multiply, Add, Relu epilogue (local)", "[local]") {
  epilogues(Variant::Local);
}
TEST_CASE("float convolution family: fused Multiply, Add, Relu epilogue (global)", "[global]") {
  epilogues(Variant::Global);
}

// ---- Whole graphs with the elementwise ops (registered by their own units): one step per chain.

void require_elementwise() {
  for (const char* op : {"Multiply", "Add", "Relu"}) {
    if (!ops::find_op(op))
      FAIL("this test needs the elementwise op "
           << op << " registered (src/ops/, from the elementwise ops' branch)");
  }
}

// ---- A max-pool in the convolution's step: 3x3 windows at stride 2 whose pads before are 1, 1

// Convolution -> Multiply -> Add [-> Relu] -> MaxPool, and the same graph with the pool's input also a graph
// output (stored, so the pool is a step of its own). Some channels have scale 0 and bias -0, whose outputs
// are -0 or +0 by the sum's sign: windows full of ties between equal values of different bits.
struct PoolCase {
  Graph fused, separate;
  Tensor x;
  std::string pooled;
  bool fusable = false;  // whether the pool's window is one the convolution's step takes
  std::string describe;
};

PoolCase pool_case(std::mt19937& rng, bool specials) {
  for (;;) {
    const std::int64_t N = pick(rng, {1, 1, 2}), C = pick(rng, {1, 3, 5}), O = pick(rng, {1, 5, 6, 7, 13});
    const std::int64_t H = between(rng, 1, 30),
                       W = between(rng, 0, 1) ? between(rng, 1, 23) : between(rng, 30, 90);
    const std::int64_t KH = pick(rng, {1, 3, 3, 7}), KW = pick(rng, {1, 3, 3, 7});
    PoolCase c;
    Graph g;
    g.inputs.push_back({"x", {N, C, H, W}});
    g.constants["w"] = random_floats({O, C, KH, KW}, rng, -1.0f, 1.0f);
    Constant scale = random_floats({1, O, 1, 1}, rng, -2.0f, 2.0f),
             bias = random_floats({O, 1, 1}, rng, -1.0f, 1.0f);
    for (std::int64_t o = 0; o < O; ++o)
      if (between(rng, 0, 2) == 0) {
        scale.values[static_cast<std::size_t>(o)] = 0.0f;
        bias.values[static_cast<std::size_t>(o)] = -0.0f;
      }
    g.constants["s"] = scale;
    g.constants["b"] = bias;
    std::string t = add_node(g, "conv", "Convolution", {"x", "w"}, random_window(rng));
    t = add_node(g, "scale", "Multiply", {t, "s"});
    t = add_node(g, "bias", "Add", {t, "b"});
    if (between(rng, 0, 2) == 0) t = add_node(g, "relu", "Relu", {t});
    Attributes pool = {{"kernel", V{3, 3}},
                       {"strides", V{2, 2}},
                       {"pads_begin", V{1, 1}},
                       {"pads_end", V{between(rng, 0, 2), between(rng, 0, 2)}},
                       {"rounding_type", std::string(between(rng, 0, 1) ? "ceil" : "floor")}};
    const int kind = between(rng, 0, 5);
    if (kind == 0) pool["auto_pad"] = std::string("same_lower");  // pads before 1 on every axis
    if (kind == 1) pool["pads_begin"] = V{0, 1};  // no fusion: the window starts at its output
    if (kind == 2) pool["kernel"] = V{2, 2};      // no fusion: another window
    c.pooled = add_node(g, "pool", "MaxPool", {t}, pool);
    g.outputs = {c.pooled};
    std::map<std::string, TensorInfo> infos;
    try {
      infos = g.validate();
    } catch (const InvalidArgument&) {
      continue;
    }
    c.fused = g;
    g.outputs.push_back(t);
    c.separate = g;
    const Dims conv_out = infos.at(t).dims;
    c.fusable = kind != 1 && kind != 2;
    c.x = random_input({N, C, H, W}, rng);
    if (specials)  // NaN never wins a window; infinities and their NaN sums
      for (float& v : c.x.values)
        if (between(rng, 0, 40) == 0)
          v = pick(rng, {0, 1, 2}) == 0 ? std::numeric_limits<float>::quiet_NaN()
              : pick(rng, {0, 1})       ? std::numeric_limits<float>::infinity()
                                        : -std::numeric_limits<float>::infinity();
    c.describe = "x " + to_string(c.x.dims) + " w " + to_string(c.fused.constants.at("w").dims) +
                 " conv out " + to_string(conv_out) + (specials ? " with NaN and infinities" : "");
    return c;
  }
}

// The pooled output in every kernel configuration, pool in the step or not, bit for bit the separate pool's.
// Returns how many configurations pooled in the convolution's kernel.
int check_pool_case(Runtime& rt, const PoolCase& c) {
  int pooled_in_kernel = 0;
  INFO(c.describe);
  Model separate(rt, c.separate);
  REQUIRE(separate.plan().steps.size() == 2);
  const Tensor want = separate.run({{"x", c.x}}).at(c.pooled);
  // The convolution's classes in both graphs (a pooled convolution has a class of its own).
  std::vector<std::string> classes;
  bool split = false;
  add_convolution_classes(Model(rt, c.fused), classes, split);
  add_convolution_classes(Model(rt, c.separate), classes, split);
  // Bands of pooled rows (a configuration of the pooled class alone) where the kernel pools.
  bool banded = false;
  if (c.fusable && split) {
    for (const std::string& shape_class : classes) rt.state()->tuning.set(shape_class, "split=16");
    banded = Model(rt, c.fused).plan().steps[0].description.rfind("convolution_split_maxpool", 0) == 0;
    for (const std::string& shape_class : classes) rt.state()->tuning.erase(shape_class);
  }
  for (const std::string config :
       {"", "cols=8", "lanes=6", "split=16 rows=1", "split=16 rows=2", "split=16 rows=1 band=3",
        "split=16 rows=2 band=1", "split=16 rows=2 band=8"}) {
    INFO("configuration '" << config << "'");
    if (config.rfind("split=", 0) == 0 && !split) continue;
    const bool band = config.find("band=") != std::string::npos;
    if (band && !banded) continue;
    for (const std::string& shape_class : classes)
      if (!config.empty() && (!band || shape_class.find(" max-pooled") != std::string::npos))
        rt.state()->tuning.set(shape_class, config);
    Model fused(rt, c.fused), apart(rt, c.separate);
    for (const std::string& shape_class : classes) rt.state()->tuning.erase(shape_class);
    REQUIRE(fused.plan().steps.size() == (c.fusable ? 1u : 2u));
    if (!config.empty()) CHECK(fused.plan().steps[0].tuning == "tuned " + config);
    const std::string& description = fused.plan().steps[0].description;
    INFO(description);
    if (c.fusable) {
      CHECK(fused.plan().steps[0].node.find("+pool") != std::string::npos);
      // In the kernel where it runs convolution_split on a window and compares floats exactly; else the
      // pool's own launch after it.
      const bool in_kernel = description.rfind("convolution_split ", 0) == 0 ||
                             description.rfind("convolution_split_maxpool", 0) == 0;
      if (in_kernel && rt.state()->floats_compare_exactly)
        CHECK(description.rfind("convolution_split_maxpool", 0) == 0);
      else
        CHECK(description.find(", then maxpool_f32") != std::string::npos);
      if (description.rfind("convolution_split_maxpool", 0) == 0) {
        ++pooled_in_kernel;
        // The band the configuration names (else the default's 4), at most the pooled rows.
        const std::size_t at = config.find("band=");
        const std::int64_t band = std::min<std::int64_t>(
            at == std::string::npos ? ops::kDefaultPoolBand : std::stoi(config.substr(at + 5)), want.dims[2]);
        CHECK(description.find("in bands of " + std::to_string(band) + " pooled row") != std::string::npos);
      }
    }
    CHECK(compare_tensors(fused.run({{"x", c.x}}).at(c.pooled), want, true) == "");
    CHECK(compare_tensors(apart.run({{"x", c.x}}).at(c.pooled), want, true) == "");
  }
  return pooled_in_kernel;
}

// Bands of pooled rows: a band whose first convolution row (the one above its first pooled row) lies inside
// the output and is computed again, and one whose first row lies past it (pads after the output give
// pooled rows of pads alone: a 15-row output pools to 9 rows with ceil rounding and pads after of 2).
PoolCase banded_case(std::mt19937& rng, std::int64_t H, const std::string& rounding, std::int64_t pad_end) {
  PoolCase c;
  Graph g;
  g.inputs.push_back({"x", {2, 3, H, 37}});
  g.constants["w"] = random_floats({7, 3, 3, 3}, rng, -1.0f, 1.0f);
  g.constants["s"] = random_floats({7, 1, 1}, rng, -2.0f, 2.0f);
  g.constants["b"] = random_floats({7, 1, 1}, rng, -1.0f, 1.0f);
  std::string t =
      add_node(g, "conv", "Convolution", {"x", "w"}, {{"pads_begin", V{1, 1}}, {"pads_end", V{1, 1}}});
  t = add_node(g, "scale", "Multiply", {t, "s"});
  t = add_node(g, "bias", "Add", {t, "b"});
  c.pooled = add_node(g, "pool", "MaxPool", {t},
                      {{"kernel", V{3, 3}},
                       {"strides", V{2, 2}},
                       {"pads_begin", V{1, 1}},
                       {"pads_end", V{pad_end, 1}},
                       {"rounding_type", rounding}});
  g.outputs = {c.pooled};
  c.fused = g;
  g.outputs.push_back(t);
  c.separate = g;
  c.fusable = true;
  c.x = random_input({2, 3, H, 37}, rng);
  c.describe = "x " + to_string(c.x.dims) + ", pool " + rounding + " pads after " + std::to_string(pad_end);
  return c;
}

// The fused graph against the host reference (numbers only: the reference's NaN need not be the device's).
void check_pool_reference(Runtime& rt, const PoolCase& c) {
  INFO(c.describe);
  const Tensor want = reference_graph(c.fused, {{"x", c.x}}).at(c.pooled);
  CHECK(compare_tensors(Model(rt, c.fused).run({{"x", c.x}}).at(c.pooled), want, false, 1e-5) == "");
}

void pooled_convolutions(Variant variant) {
  require_elementwise();
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(2033);
  for (const auto& [H, rounding, pad_end] :
       {std::tuple<std::int64_t, const char*, std::int64_t>{35, "floor", 1},
        {15, "ceil", 2},
        {15, "floor", 3}}) {
    const PoolCase c = banded_case(rng, H, rounding, pad_end);
    // Both split configurations and the three banded ones pool in the kernel where the device compares floats
    // exactly (PoCL does; the default too where it is a split configuration, as on CPU devices).
    const int pooled_in_kernel = check_pool_case(rt, c);
    if (rt.state()->floats_compare_exactly)
      CHECK(pooled_in_kernel >= 5);
    else
      CHECK(pooled_in_kernel == 0);
    check_pool_reference(rt, c);
  }
  int fusable = 0;
  for (int i = 0; i < 40; ++i) {
    const PoolCase c = pool_case(rng, i % 4 == 3);
    fusable += c.fusable;
    check_pool_case(rt, c);
    if (i % 4 == 3) continue;  // the reference compares numbers
    check_pool_reference(rt, c);
  }
  CHECK(fusable >= 20);
}

TEST_CASE("float convolution: a 3x3/2 max-pool in the same step, every configuration (local)",
          "[local][needs-elementwise]") {
  pooled_convolutions(Variant::Local);
}
TEST_CASE("float convolution: a 3x3/2 max-pool in the same step, every configuration (global)",
          "[global][needs-elementwise]") {
  pooled_convolutions(Variant::Global);
}

void fused_graphs(Variant variant) {
  require_elementwise();
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(8);
  Graph g;
  g.inputs.push_back({"x", {2, 3, 23, 21}});
  g.constants["w1"] = random_floats({16, 3, 7, 7}, rng, -1.0f, 1.0f);
  g.constants["s1"] = random_floats({1, 16, 1, 1}, rng, 0.5f, 2.0f);
  g.constants["b1"] = random_floats({16, 1, 1}, rng, -1.0f, 1.0f);
  g.constants["w2"] = random_floats({16, 1, 1, 3, 3}, rng, -1.0f, 1.0f);
  g.constants["s2"] = random_floats({1, 16, 1, 1}, rng, 0.5f, 2.0f);
  g.constants["b2"] = random_floats({1}, rng, -1.0f, 1.0f);
  g.constants["w3"] = random_floats({10, 16 * 6 * 6}, rng, -1.0f, 1.0f);
  g.constants["b3"] = random_floats({1, 10}, rng, -1.0f, 1.0f);
  std::string t = add_node(g, "stem", "Convolution", {"x", "w1"},
                           {{"strides", V{2, 2}}, {"pads_begin", V{3, 3}}, {"pads_end", V{3, 3}}});
  t = add_node(g, "bn1", "Multiply", {t, "s1"});
  t = add_node(g, "bias1", "Add", {t, "b1"});
  t = add_node(g, "relu1", "Relu", {t});
  t = add_node(g, "dw", "GroupConvolution", {t, "w2"},
               {{"strides", V{2, 2}}, {"auto_pad", std::string("same_upper")}});
  t = add_node(g, "bn2", "Multiply", {t, "s2"});
  t = add_node(g, "bias2", "Add", {t, "b2"});
  t = add_node(g, "relu2", "Relu", {t});
  // The flattening Reshape belongs to the other unit; a 2-D input for the classifier comes as a second graph.
  g.outputs = {t};
  Model model(rt, g);
  REQUIRE(model.plan().steps.size() == 2);
  CHECK(model.plan().steps[0].node == "stem+bn1+bias1+relu1");
  CHECK(model.plan().steps[1].node == "dw+bn2+bias2+relu2");
  const Tensor x = random_input({2, 3, 23, 21}, rng);
  const auto want = reference_graph(g, {{"x", x}});
  CHECK(compare_tensors(model.run({{"x", x}}).at(t), want.at(t), false, 1e-5) == "");

  Graph fc;
  fc.inputs.push_back({"f", {2, 16 * 6 * 6}});
  fc.constants["w3"] = g.constants["w3"];
  fc.constants["b3"] = g.constants["b3"];
  std::string y = add_node(fc, "fc", "MatMul", {"f", "w3"}, {{"transpose_b", std::string("true")}});
  y = add_node(fc, "fc_bias", "Add", {y, "b3"});
  fc.outputs = {y};
  Model classifier(rt, fc);
  REQUIRE(classifier.plan().steps.size() == 1);
  CHECK(classifier.plan().steps[0].node == "fc+fc_bias");
  const Tensor f = random_input({2, 16 * 6 * 6}, rng);
  CHECK(compare_tensors(classifier.run({{"f", f}}).at(y), reference_graph(fc, {{"f", f}}).at(y), false,
                        1e-5) == "");
}

TEST_CASE("float convolution family: graphs with batch-norm and relu fused (local)",
          "[local][needs-elementwise]") {
  fused_graphs(Variant::Local);
}
TEST_CASE("float convolution family: graphs with batch-norm and relu fused (global)",
          "[global][needs-elementwise]") {
  fused_graphs(Variant::Global);
}

}  // namespace
}  // namespace xnorcl::test
