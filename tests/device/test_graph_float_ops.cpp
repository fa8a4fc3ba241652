// SPDX-License-Identifier: Apache-2.0
// The float graph ops on the device against the host reference graph, on both variants, over randomized
// shapes (odd channel counts, batch > 1): every tensor the device computed is compared, bitwise for the exact
// ops (elementwise arithmetic, Relu, Clamp, PRelu, Concat, Reshape), within 1e-5 (max-norm relative) for
// the averaging ones (AvgPool, ReduceMean, Softmax).
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "device_support.hpp"
#include "graph_case.hpp"

namespace xnorcl::test {
namespace {

using Ints = std::vector<std::int64_t>;

// Runs the graph twice (trace, then plain run) and compares with the reference; tensors produced by nodes
// whose op is in `approximate` (or that read such tensors) within 1e-5, the others bitwise. The two runs
// agree bitwise.
void check_graph(Runtime& rt, const Graph& g, const std::map<std::string, Tensor>& inputs,
                 const std::set<std::string>& approximate = {}) {
  Model model(rt, g);
  const auto want = reference_graph(g, inputs);
  const auto trace = model.run_trace(inputs);
  // Exact where the op is exact and so are its inputs. A step that computes several nodes (a convolution's
  // epilogue: scale and shift in one fma) may round once where the nodes each round: within tolerance.
  std::set<std::string> fused;
  for (const GraphPlan::Step& step : model.plan().steps)
    if (step.fused.size() > 1) fused.insert(step.fused.begin(), step.fused.end());
  std::map<std::string, bool> exact;
  for (const Node* n : g.topological_order()) {
    bool e = !approximate.count(n->op) && !fused.count(n->name);
    for (const std::string& in : n->inputs) e = e && (!exact.count(in) || exact.at(in));
    for (const std::string& out : n->outputs) exact[out] = e;
  }
  for (const std::string& name : g.outputs) REQUIRE(trace.count(name) == 1);
  for (const auto& [name, got] : trace) {
    INFO("tensor " << name << "\n" << model.plan().to_string());
    CHECK(compare_tensors(got, want.at(name), exact.at(name)) == "");
  }
  const auto out = model.run(inputs);
  for (const std::string& name : g.outputs) CHECK(compare_tensors(out.at(name), trace.at(name), true) == "");
}

std::int64_t pick(std::mt19937& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

// k / 2 for random k in [-15, 15], a third of them moved one float up or down.
Tensor halves(const Dims& dims, std::mt19937& rng) {
  Tensor t = random_input(dims, rng);
  for (float& v : t.values) {
    v = static_cast<float>(pick(rng, -15, 15)) / 2;
    const std::int64_t move = pick(rng, -1, 1);
    if (move != 0) v = std::nextafter(v, move * 100.0f);
  }
  return t;
}

void elementwise_case(Variant variant) {
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(21);
  std::string plans;
  for (int round = 0; round < 5; ++round) {
    std::int64_t N = pick(rng, 1, 3), C = 2 * pick(rng, 1, 20) + 1, H = pick(rng, 1, 9), W = pick(rng, 1, 9);
    if (round == 4) std::tie(N, C, H, W) = std::make_tuple(2, 5, 8, 16);  // rows of 128 per channel
    INFO("[" << N << ", " << C << ", " << H << ", " << W << "]");
    Graph g;
    g.inputs = {{"x", {N, C, H, W}}, {"y", {N, C, H, W}}, {"z", {1, C, 1, W}}};
    g.constants["scale"] = random_floats({1, C, 1, 1}, rng, -2, 2);
    g.constants["shift"] = random_floats({C, 1, 1}, rng, -1, 1);
    g.constants["one"] = Constant::f32({1}, {0.25f});
    g.constants["slope"] = random_floats({C}, rng, 0, 0.5f);
    g.constants["slope1"] = Constant::f32({1}, {0.125f});
    std::string s = add_node(g, "residual", "Add", {"x", "y"});
    s = add_node(g, "scaled", "Multiply", {s, "scale"});
    s = add_node(g, "shifted", "Add", {"shift", s});
    s = add_node(g, "less", "Subtract", {s, "one"});
    s = add_node(g, "mixed", "Subtract", {"z", s});  // two activations of different shapes
    const std::string relu = add_node(g, "relu", "Relu", {s});
    const std::string clamp = add_node(g, "clamp", "Clamp", {s}, {{"min", -0.5}, {"max", 0.75}});
    const std::string prelu = add_node(g, "prelu", "PRelu", {s, "slope"});
    const std::string prelu1 = add_node(g, "prelu1", "PRelu", {s, "slope1"});
    const std::string square = add_node(g, "square", "Multiply", {relu, relu});
    // Round of `s` and of halves (k / 2, mostly ties) plus the floats just above and below them.
    g.inputs.push_back({"halves", {N, C, H, W}});
    const std::string mixed_halves = add_node(g, "mixed_halves", "Add", {s, "halves"});
    const std::string even = add_node(g, "even", "Round", {mixed_halves});
    const std::string away =
        add_node(g, "away", "Round", {"halves"}, {{"mode", std::string("half_away_from_zero")}});
    // Round -> Clamp -> Multiply by one value runs as one step; by per-channel values it does not fuse.
    const std::string on_grid = add_node(g, "on_grid", "Round", {mixed_halves});
    const std::string clipped = add_node(g, "clipped", "Clamp", {on_grid}, {{"min", -3.0}, {"max", 2.0}});
    const std::string grid_scaled = add_node(g, "grid_scaled", "Multiply", {clipped, "one"});
    const std::string per_channel = add_node(g, "per_channel", "Multiply", {away, "scale"});
    g.outputs = {clamp, prelu, prelu1, square, even, grid_scaled, per_channel};
    check_graph(rt, g,
                {{"x", random_input({N, C, H, W}, rng)},
                 {"y", random_input({N, C, H, W}, rng)},
                 {"z", random_input({1, C, 1, W}, rng)},
                 {"halves", halves({N, C, H, W}, rng)}});
    plans += Model(rt, g).plan().to_string();
  }
  // Same shapes, per-channel rows and element-wise broadcasting each ran.
  for (const char* kernel : {"eltwise_same", "eltwise_rows", "eltwise_broadcast"})
    CHECK(plans.find(kernel) != std::string::npos);
  CHECK(plans.find("activation_f32 Round + Clamp + Multiply") != std::string::npos);
  CHECK(plans.find("activation_f32 Round + Multiply") == std::string::npos);
}

TEST_CASE("graph float ops: elementwise and activations (local)", "[local]") {
  elementwise_case(Variant::Local);
}
TEST_CASE("graph float ops: elementwise and activations (global)", "[global]") {
  elementwise_case(Variant::Global);
}

struct Window {
  Ints kernel, strides, pb, pe;
  std::string rounding, auto_pad;
};

PoolAttributes pool_attributes_of(const Window& w) {
  const auto pair = [](const Ints& v) { return std::array<int, 2>{int(v[0]), int(v[1])}; };
  const std::map<std::string, AutoPad> pads = {{"explicit", AutoPad::Explicit},
                                               {"same_upper", AutoPad::SameUpper},
                                               {"same_lower", AutoPad::SameLower},
                                               {"valid", AutoPad::Valid}};
  return {pair(w.kernel),      pair(w.strides),
          pair(w.pb),          pair(w.pe),
          pads.at(w.auto_pad), w.rounding == "ceil" ? RoundingType::Ceil : RoundingType::Floor};
}

void avg_pool_case(Variant variant) {
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(22);
  const std::vector<Window> windows = {{{3, 3}, {2, 2}, {1, 1}, {1, 1}, "floor", "explicit"},
                                       {{2, 2}, {2, 2}, {0, 0}, {0, 0}, "ceil", "explicit"},
                                       {{3, 2}, {2, 3}, {1, 0}, {0, 1}, "ceil", "explicit"},
                                       {{3, 3}, {1, 1}, {0, 0}, {0, 0}, "floor", "same_upper"},
                                       {{2, 3}, {2, 2}, {0, 0}, {0, 0}, "floor", "same_lower"},
                                       {{7, 7}, {1, 1}, {0, 0}, {0, 0}, "floor", "valid"}};
  int in_runs = 0, narrow_runs = 0;
  const auto check = [&](const Window& w, bool exclude, const Dims& dims) {
    INFO("kernel " << w.kernel[0] << "x" << w.kernel[1] << " " << w.auto_pad << " " << w.rounding
                   << " exclude " << exclude << ", input [" << dims[0] << ", " << dims[1] << ", " << dims[2]
                   << ", " << dims[3] << "]");
    Graph g;
    g.inputs = {{"x", dims}};
    g.outputs = {add_node(g, "pool", "AvgPool", {"x"},
                          {{"kernel", w.kernel},
                           {"strides", w.strides},
                           {"pads_begin", w.pb},
                           {"pads_end", w.pe},
                           {"rounding_type", w.rounding},
                           {"auto_pad", w.auto_pad},
                           {"exclude-pad", std::string(exclude ? "true" : "false")}})};
    const Model model(rt, g);
    const bool runs = expect_pool_runs(variant, pool_attributes_of(w), {dims[0], dims[1], dims[2], dims[3]});
    CHECK(model.plan().steps[0].description.rfind(runs ? "avg_pool_f32_runs " : "avg_pool_f32 ", 0) == 0);
    in_runs += runs;
    narrow_runs += runs && g.validate().at(g.outputs[0]).dims[3] < 16;
    check_graph(rt, g, {{"x", random_input(dims, rng)}}, {"AvgPool"});
  };
  for (const Window& w : windows)
    for (bool exclude : {true, false}) {
      // Narrow rows, and rows of several runs of 16 outputs (the Global variant's vector loads).
      const std::int64_t N = pick(rng, 1, 3), C = 2 * pick(rng, 1, 10) + 1, H = pick(rng, 7, 15),
                         W = pick(rng, 0, 1) ? pick(rng, 7, 15) : pick(rng, 33, 80);
      check(w, exclude, {N, C, H, W});
    }
  // Rows narrower than a run, every window inside the row: one run per row whose spare lanes read on into
  // the next rows, the last rows of the tensor lane by lane (their spare lanes would read past its end).
  check({{2, 2}, {2, 2}, {0, 0}, {0, 0}, "floor", "explicit"}, true, {2, 5, 14, 14});
  check({{3, 3}, {1, 1}, {0, 0}, {0, 0}, "floor", "valid"}, true, {1, 3, 6, 13});
  check({{1, 1}, {1, 1}, {0, 0}, {0, 0}, "floor", "explicit"}, true, {3, 2, 4, 1});
  check({{2, 3}, {2, 2}, {0, 0}, {1, 0}, "ceil", "explicit"}, false, {2, 3, 9, 11});
  if (variant == Variant::Global) {
    CHECK(in_runs >= 6);
    CHECK(narrow_runs >= 4);
  }
}

TEST_CASE("graph float ops: AvgPool (local)", "[local]") {
  avg_pool_case(Variant::Local);
}
TEST_CASE("graph float ops: AvgPool (global)", "[global]") {
  avg_pool_case(Variant::Global);
}

// Global average pooling then a classifier's softmax, and softmax along the channels of a 4-D tensor.
void reduce_softmax_case(Variant variant) {
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(23);
  std::string plans;
  for (const Dims& dims : {Dims{2, 37, 7, 7}, Dims{3, 1001, 1, 1}, Dims{1, 5, 23, 29}, Dims{2, 3, 1, 200}}) {
    INFO(to_string(dims));
    Graph g;
    g.inputs = {{"x", dims}};
    g.constants["hw"] = Constant::f32({2}, {2, 3});
    g.constants["w"] = Constant::f32({1}, {-1});
    const std::string gap = add_node(g, "gap", "ReduceMean", {"x", "hw"});
    const std::string keep =
        add_node(g, "gap_keep", "ReduceMean", {"x", "hw"}, {{"keep_dims", std::string("true")}});
    const std::string rows = add_node(g, "rows", "ReduceMean", {"x", "w"});
    const std::string soft = add_node(g, "soft", "Softmax", {gap}, {{"axis", std::int64_t{1}}});
    const std::string soft4 = add_node(g, "soft4", "Softmax", {"x"}, {{"axis", std::int64_t{1}}});
    const std::string last = add_node(g, "last", "Softmax", {"x"}, {{"axis", std::int64_t{-1}}});
    g.outputs = {soft, keep, rows, soft4, last};
    check_graph(rt, g, {{"x", random_input(dims, rng, -8, 8)}}, {"ReduceMean", "Softmax"});
    plans += Model(rt, g).plan().to_string();
  }
  // Rows of a work-group each and short rows of a work-item each both ran.
  for (const char* kernel : {"reduce_mean_f32", "reduce_mean_rows"})
    CHECK(plans.find(kernel) != std::string::npos);
}

// The float range (docs/graph.md, Precision): where every intermediate sum stays below FLT_MAX the mean is
// the reference's; past it the device's sum is +-inf, never NaN (the compensated sum's carry of an infinite
// sum would be inf - inf). Short rows (a work-item each) and long rows (a work-group each).
void reduce_mean_range_case(Variant variant) {
  Runtime& rt = runtime_for(variant);
  for (std::int64_t count : {4, 300}) {
    INFO(count << " values per row");
    Graph g;
    g.inputs = {{"x", {3, count}}};
    g.constants["last"] = Constant::f32({1}, {-1});
    g.outputs = {add_node(g, "mean", "ReduceMean", {"x", "last"})};
    Tensor x;
    x.dims = {3, count};
    const float inside = 3.0e38f / static_cast<float>(count);  // the row sums to 3e38 < FLT_MAX
    for (std::int64_t i = 0; i < count; ++i) x.values.push_back(inside);
    for (std::int64_t i = 0; i < count; ++i) x.values.push_back(-inside);
    for (std::int64_t i = 0; i < count; ++i) x.values.push_back(3.0e38f);  // sums past FLT_MAX
    Model model(rt, g);
    const Tensor got = model.run({{"x", x}}).at("mean:0");
    const Tensor want = reference_graph(g, {{"x", x}}).at("mean:0");
    REQUIRE(got.values.size() == 3);
    CHECK(compare_tensors(Tensor{{2}, ElementType::Float32, {got.values[0], got.values[1]}, {}, {}},
                          Tensor{{2}, ElementType::Float32, {want.values[0], want.values[1]}, {}, {}}, false,
                          1e-5) == "");
    CHECK(want.values[2] == 3.0e38f);  // the reference, in double, stays finite
    CHECK(std::isinf(got.values[2]));  // the device overflows, as documented, and gives no NaN
    CHECK(got.values[2] > 0);
  }
}

TEST_CASE("graph float ops: ReduceMean's float range (local)", "[local]") {
  reduce_mean_range_case(Variant::Local);
}
TEST_CASE("graph float ops: ReduceMean's float range (global)", "[global]") {
  reduce_mean_range_case(Variant::Global);
}

TEST_CASE("graph float ops: ReduceMean and Softmax (local)", "[local]") {
  reduce_softmax_case(Variant::Local);
}
TEST_CASE("graph float ops: ReduceMean and Softmax (global)", "[global]") {
  reduce_softmax_case(Variant::Global);
}

void concat_reshape_case(Variant variant) {
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(24);
  for (int round = 0; round < 3; ++round) {
    const std::int64_t N = pick(rng, 1, 3), H = pick(rng, 1, 6), W = pick(rng, 1, 6);
    const std::int64_t C1 = 2 * pick(rng, 0, 8) + 1, C2 = 2 * pick(rng, 0, 8) + 1;
    INFO("N " << N << ", H " << H << ", W " << W << ", C " << C1 << " + " << C2);
    Graph g;
    g.inputs = {{"a", {N, C1, H, W}}, {"b", {N, C2, H, W}}, {"p", {N, 32, H, W}}, {"q", {N, C2, H, W}}};
    g.constants["k"] = random_floats({N, 3, H, W}, rng, -1, 1);
    const std::string channels =
        add_node(g, "channels", "Concat", {"a", "k", "b"}, {{"axis", std::int64_t{1}}});
    const std::string cols = add_node(g, "cols", "Concat", {"b", "b", "q"}, {{"axis", std::int64_t{-1}}});
    g.constants["flat"] = Constant::f32({2}, {0, -1});
    const std::string flat =
        add_node(g, "flat", "Reshape", {channels, "flat"}, {{"special_zero", std::int64_t{1}}});
    const std::string back = add_node(g, "back", "Reshape", {flat}, {{"shape", Ints{N, C1 + 3 + C2, H * W}}});
    // Packed bits along the channels: 32 + 32 + C2 channels.
    const std::string sp = add_sign(g, "sp", "p", std::vector<float>(32, 0.0f));
    const std::string sq = add_sign(g, "sq", "q", std::vector<float>(static_cast<std::size_t>(C2), 0.1f));
    const std::string bits = add_node(g, "bits", "Concat", {sp, sp, sq}, {{"axis", std::int64_t{1}}});
    g.outputs = {back, cols, bits};
    check_graph(rt, g,
                {{"a", random_input({N, C1, H, W}, rng)},
                 {"b", random_input({N, C2, H, W}, rng)},
                 {"p", random_input({N, 32, H, W}, rng)},
                 {"q", random_input({N, C2, H, W}, rng)}});
  }
}

TEST_CASE("graph float ops: Concat and Reshape (local)", "[local]") {
  concat_reshape_case(Variant::Local);
}
TEST_CASE("graph float ops: Concat and Reshape (global)", "[global]") {
  concat_reshape_case(Variant::Global);
}

// A Bi-Real Net block and its head: sign -> binary conv (float output) -> per-channel scale and shift ->
// residual Add of the block's float input -> Relu, then a 2x2 average-pooled shortcut, global average
// pooling and the classifier's softmax.
void bireal_block_case(Variant variant) {
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(25);
  const std::int64_t N = 2, C = 19, H = 10, W = 9;
  Graph g;
  g.inputs = {{"x", {N, C, H, W}}};
  g.constants["scale"] = random_floats({1, C, 1, 1}, rng, 0.01f, 0.1f);
  g.constants["shift"] = random_floats({1, C, 1, 1}, rng, -0.5f, 0.5f);
  g.constants["hw"] = Constant::f32({2}, {2, 3});
  std::string s = add_sign(g, "sign", "x", std::vector<float>(static_cast<std::size_t>(C), 0.0f));
  s = add_binary_conv(g, "conv", s, C, C, 3, -1.0, rng);
  s = add_node(g, "bn_scale", "Multiply", {s, "scale"});
  s = add_node(g, "bn_shift", "Add", {s, "shift"});
  s = add_node(g, "residual", "Add", {s, "x"});
  s = add_node(g, "act", "Relu", {s});
  s = add_node(g, "down", "AvgPool", {s},
               {{"kernel", Ints{2, 2}},
                {"strides", Ints{2, 2}},
                {"rounding_type", std::string("ceil")},
                {"exclude-pad", std::string("true")}});
  s = add_node(g, "gap", "ReduceMean", {s, "hw"});
  g.outputs = {add_node(g, "prob", "Softmax", {s}, {{"axis", std::int64_t{1}}})};
  check_graph(rt, g, {{"x", random_input({N, C, H, W}, rng)}}, {"AvgPool", "ReduceMean", "Softmax"});
}

TEST_CASE("graph float ops: a Bi-Real block with its head (local)", "[local]") {
  bireal_block_case(Variant::Local);
}
TEST_CASE("graph float ops: a Bi-Real block with its head (global)", "[global]") {
  bireal_block_case(Variant::Global);
}

}  // namespace
}  // namespace xnorcl::test
