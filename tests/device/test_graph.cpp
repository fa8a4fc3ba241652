// SPDX-License-Identifier: Apache-2.0
// Graphs on the device against the host reference graph, on both variants: binary chains with the
// FakeQuantize -> conv -> FakeQuantize -> MaxPool fusion and the conv -> Relu/Clamp -> batch-norm -> residual
// Add or FakeQuantize fusion, every tensor the device computed compared.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "device_checks.hpp"
#include "device_support.hpp"
#include "graph_case.hpp"

namespace xnorcl::test {
namespace {

// x -> sign -> conv1 -> sign -> maxpool -> conv2 (packed input) -> output; pad values vary.
Graph binary_chain(std::mt19937& rng, std::int64_t c_in, std::int64_t c_mid, double pad_value) {
  Graph g;
  g.inputs.push_back({"x", {2, c_in, 11, 9}});
  std::uniform_real_distribution<float> t(-0.3f, 0.3f);
  std::vector<float> t_in(static_cast<std::size_t>(c_in)), t_mid(static_cast<std::size_t>(c_mid));
  for (float& v : t_in) v = t(rng);
  for (float& v : t_mid) v = std::round(t(rng) * 10) + 0.5f;  // between the integer conv outputs
  std::string s = add_sign(g, "sign0", "x", t_in);
  s = add_binary_conv(g, "conv1", s, c_in, c_mid, 3, pad_value, rng);
  s = add_sign(g, "sign1", s, t_mid);
  s = add_node(g, "pool1", "MaxPool", {s},
               {{"kernel", std::vector<std::int64_t>{2, 2}},
                {"strides", std::vector<std::int64_t>{2, 2}},
                {"rounding_type", std::string("ceil")}});
  s = add_binary_conv(g, "conv2", s, c_mid, 5, 3, -1.0, rng);
  g.outputs = {s};
  return g;
}

void check_graph(Runtime& rt, const Graph& g, const std::map<std::string, Tensor>& inputs) {
  Model model(rt, g);
  const auto want = reference_graph(g, inputs);
  const auto trace = model.run_trace(inputs);
  for (const auto& [name, got] : trace) {
    INFO("tensor " << name);
    CHECK(compare_tensors(got, want.at(name), true) == "");
  }
  const auto out = model.run(inputs);
  for (const std::string& name : g.outputs) CHECK(compare_tensors(out.at(name), want.at(name), true) == "");
}

void binary_chain_case(Variant variant) {
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(11);
  for (double pad_value : {0.0, -1.0, 1.0, 0.5}) {
    for (std::int64_t c_in : {3, 40}) {
      INFO("pad_value " << pad_value << ", c_in " << c_in);
      const Graph g = binary_chain(rng, c_in, 37, pad_value);
      Model model(rt, g);
      // sign0 is conv1's packing (its input thresholds); sign1 and pool1 are its GEMM's epilogue.
      REQUIRE(model.plan().steps.size() == 2);
      CHECK(model.plan().steps[0].node == "sign0+conv1+sign1+pool1");
      CHECK(model.plan().variant == variant);
      check_graph(rt, g, {{"x", random_input({2, c_in, 11, 9}, rng)}});
    }
  }
}

XNORCL_VARIANT_TEST("graph: binary chain with fused sign and max-pool", "", binary_chain_case)

// A FakeQuantize before a binary convolution becomes the convolution's input thresholds only where its
// bits are x > t per channel and the convolution alone reads them: falling levels (bit x < t), a second
// reader and a graph output keep the thresholding step. Every threshold kind at the edges of the float
// order: -inf, -0 and +0, subnormals, +inf (no bit set), and inputs NaN, +-inf, +-0 and the neighbours.
void input_threshold_fusion_case(Variant variant) {
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(12);
  const float inf = std::numeric_limits<float>::infinity(), tiny = std::numeric_limits<float>::denorm_min();
  const std::vector<float> t = {-inf, -0.0f, 0.0f, tiny, -tiny, 0.25f, inf};
  const std::int64_t c = static_cast<std::int64_t>(t.size());
  std::vector<float> edges = {std::nanf(""),
                              -inf,
                              inf,
                              -0.0f,
                              0.0f,
                              tiny,
                              -tiny,
                              0.25f,
                              std::nextafter(0.25f, 1.0f),
                              std::nextafter(0.25f, 0.0f),
                              -1e30f,
                              1e30f};
  Tensor x = random_input({2, c, 6, 5}, rng);
  for (std::size_t i = 0; i < x.values.size(); i += 3) x.values[i] = edges[(i / 3) % edges.size()];
  struct Form {
    const char* name;
    bool falling, second_reader, graph_output;
    std::size_t steps;
  };
  for (const Form& s :
       {Form{"rising", false, false, false, 1}, Form{"falling", true, false, false, 2},
        Form{"second reader", false, true, false, 3}, Form{"graph output", false, false, true, 2}}) {
    INFO(s.name);
    Graph g;
    g.inputs.push_back({"x", {2, c, 6, 5}});
    std::string bits = add_sign(g, "sign", "x", t);
    if (s.falling) std::swap(g.constants["sign.lo"], g.constants["sign.hi"]);
    const std::string y = add_binary_conv(g, "conv", bits, c, 9, 3, 0.5, rng);
    g.outputs = {y};
    if (s.second_reader) g.outputs.push_back(add_binary_conv(g, "conv_b", bits, c, 4, 1, -1.0, rng));
    if (s.graph_output) g.outputs.push_back(bits);
    Model model(rt, g);
    INFO(model.plan().to_string());
    CHECK(model.plan().steps.size() == s.steps);
    CHECK((model.plan().steps[0].node == "sign+conv") == (s.steps == 1));
    check_graph(rt, g, {{"x", x}});
  }
}

XNORCL_VARIANT_TEST("graph: a FakeQuantize before a binary conv is its packing, where the rule allows", "",
                    input_threshold_fusion_case)

// Per-channel constants [1, c, 1, 1] of multiples of `step` in [-limit, limit]: products and sums with the
// convolution's integer (or half-integer, pad_value 0.5) results are exact, so the fused fmaf and the
// separate Multiply and Add agree bit for bit and the comparison can be bitwise.
std::string add_exact_constant(Graph& g, const std::string& name, std::int64_t c, float step, int limit,
                               std::mt19937& rng) {
  std::uniform_int_distribution<int> k(-limit, limit);
  std::vector<float> v(static_cast<std::size_t>(c));
  for (float& x : v) x = static_cast<float>(k(rng)) * step;
  g.constants[name] = Constant::f32({1, c, 1, 1}, v);
  return name;
}

Tensor exact_input(const Dims& dims, std::mt19937& rng) {
  Tensor t;
  t.dims = dims;
  std::uniform_int_distribution<int> k(-64, 64);
  t.values.resize(static_cast<std::size_t>(dims_product(dims)));
  for (float& x : t.values) x = static_cast<float>(k(rng)) * 0.0625f;
  return t;
}

// x -> sign0 -> conv1 -> act (Relu, Clamp, or none) -> Multiply -> Add -> then either a residual Add of the
// input `skip` (tail 'R') or a sign and conv2 on the packed bits (tail 'Q'). With `second_reader`, the
// activation's output is also read by another node, so it must be stored: the activation still fuses into
// the convolution (whose own output has one reader), the Multiply and what follows do not.
Graph activation_chain(std::mt19937& rng, const std::string& act, char tail, bool second_reader,
                       std::int64_t c_in, std::int64_t c_out, double pad_value) {
  Graph g;
  const Dims y_dims{2, c_out, 9, 7};
  g.inputs.push_back({"x", {2, c_in, 9, 7}});
  g.inputs.push_back({"skip", y_dims});
  std::uniform_real_distribution<float> t(-0.3f, 0.3f);
  std::vector<float> t_in(static_cast<std::size_t>(c_in));
  for (float& v : t_in) v = t(rng);
  std::string s = add_sign(g, "sign0", "x", t_in);
  s = add_binary_conv(g, "conv1", s, c_in, c_out, 3, pad_value, rng);
  const std::string a = act == "Relu"    ? add_node(g, "act1", "Relu", {s})
                        : act == "Clamp" ? add_node(g, "act1", "Clamp", {s}, {{"min", -2.0}, {"max", 3.5}})
                                         : s;
  s = add_node(g, "bn1.scale", "Multiply", {a, add_exact_constant(g, "bn1.s", c_out, 0.125f, 16, rng)});
  s = add_node(g, "bn1.shift", "Add", {s, add_exact_constant(g, "bn1.b", c_out, 0.25f, 12, rng)});
  if (tail == 'R') {
    s = add_node(g, "res1", "Add", {s, "skip"});
  } else {
    std::vector<float> t_mid(static_cast<std::size_t>(c_out));
    for (float& v : t_mid) v = std::round(t(rng) * 10) * 0.125f;
    s = add_sign(g, "sign1", s, t_mid);
    s = add_binary_conv(g, "conv2", s, c_out, 5, 3, -1.0, rng);
  }
  g.outputs = {s};
  if (second_reader) g.outputs.push_back(add_node(g, "other", "Multiply", {a, "skip"}));
  return g;
}

void activation_fusion_case(Variant variant) {
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(23);
  for (double pad_value : {0.0, -1.0, 1.0, 0.5}) {
    for (const std::string act : {"Relu", "Clamp", "none"}) {
      for (char tail : {'R', 'Q'}) {
        for (std::int64_t c_in : {3, 40}) {
          const std::int64_t c_out = c_in == 3 ? 37 : 33;
          INFO("pad_value " << pad_value << ", " << act << ", tail " << tail << ", c_in " << c_in);
          const Graph g = activation_chain(rng, act, tail, false, c_in, c_out, pad_value);
          Model model(rt, g);
          INFO(model.plan().to_string());
          CHECK(model.plan().variant == variant);
          // The whole chain is one step: sign (the packing) -> conv -> clamp -> scale, bias -> shortcut
          // or sign. (Without the activation: the batch-norm before the sign has zero scales in some
          // channels, whose rule is a constant bit.)
          const std::string head = act == "none" ? "sign0+conv1" : "sign0+conv1+act1";
          if (tail == 'R') {
            REQUIRE(model.plan().steps.size() == 1);
            CHECK(model.plan().steps[0].node == head + "+bn1.scale+bn1.shift+res1");
          } else {
            REQUIRE(model.plan().steps.size() == 2);
            CHECK(model.plan().steps[0].node == head + "+bn1.scale+bn1.shift+sign1");
          }
          check_graph(
              rt, g,
              {{"x", random_input({2, c_in, 9, 7}, rng)}, {"skip", exact_input({2, c_out, 9, 7}, rng)}});
        }
      }
    }
  }
  // The activation's output has a second reader: it is stored (the clamped Float output of the
  // convolution's step), and the Multiply, Add and residual Add run as their own steps.
  for (const std::string act : {"Relu", "Clamp"}) {
    INFO(act << " with a second reader");
    const Graph g = activation_chain(rng, act, 'R', true, 40, 33, 0.5);
    Model model(rt, g);
    INFO(model.plan().to_string());
    bool conv_act = false, scale_alone = false;
    for (const auto& step : model.plan().steps) {
      conv_act = conv_act || step.node == "sign0+conv1+act1";
      scale_alone = scale_alone || step.node == "bn1.scale";
    }
    CHECK(conv_act);
    CHECK(scale_alone);
    CHECK(model.plan().steps.size() == 5);
    check_graph(rt, g, {{"x", random_input({2, 40, 9, 7}, rng)}, {"skip", exact_input({2, 33, 9, 7}, rng)}});
  }
}

XNORCL_VARIANT_TEST("graph: Relu/Clamp, batch-norm and residual Add or sign fused after a binary conv", "",
                    activation_fusion_case)

// Planning is near-linear in the node count: 48,000 nodes (a chain of Multiply by -1 and Relu, with every
// 100th Relu's output also read by a node 50 steps later, so that buffers are shared across more than
// neighbours) plan and run as the reference says. Registered as its own CTest test with a time limit
// (tests/process_tests.cmake): buffer assignment that compares every pair of tensors took minutes here.
TEST_CASE("graph: a 48,000-node graph plans and runs", "[.][planning_scale]") {
  Runtime& rt = runtime_for(Variant::Global);
  Graph g;
  g.inputs = {{"x", {1, 8}}};
  g.constants["minus"] = Constant::f32({1}, {-1.0f});
  std::string s = "x";
  std::vector<std::string> kept;
  for (int i = 0; i < 24000; ++i) {
    s = add_node(g, "neg" + std::to_string(i), "Multiply", {s, "minus"});
    s = add_node(g, "relu" + std::to_string(i), "Relu", {s});
    if (i % 100 == 0) kept.push_back(s);
    if (i % 100 == 50) s = add_node(g, "join" + std::to_string(i), "Add", {s, kept.back()});
  }
  g.outputs = {s};
  INFO(g.nodes.size() << " nodes");
  REQUIRE(g.nodes.size() >= 48000);
  Model model(rt, g);
  std::mt19937 rng(5);
  const std::map<std::string, Tensor> inputs = {{"x", random_input({1, 8}, rng)}};
  CHECK(compare_tensors(model.run(inputs).at(s), reference_graph(g, inputs).at(s), true, 0) == "");
  // Chained steps share a few buffers: far fewer than the tensors.
  CHECK(model.plan().activation_bytes <= 8 * 4 * 8);
}

}  // namespace
}  // namespace xnorcl::test
