// SPDX-License-Identifier: Apache-2.0
// Graphs on the device against the host reference graph, on both variants: binary chains with the
// conv -> FakeQuantize -> MaxPool fusion, every tensor the device computed compared.
#include <catch2/catch.hpp>

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
      // conv1, sign1 and pool1 run as one step: conv -> threshold -> max-pool in the GEMM's epilogue.
      REQUIRE(model.plan().steps.size() == 3);
      CHECK(model.plan().steps[1].node == "conv1+sign1+pool1");
      CHECK(model.plan().variant == variant);
      check_graph(rt, g, {{"x", random_input({2, c_in, 11, 9}, rng)}});
    }
  }
}

TEST_CASE("graph: binary chain with fused sign and max-pool (local)", "[local]") {
  binary_chain_case(Variant::Local);
}
TEST_CASE("graph: binary chain with fused sign and max-pool (global)", "[global]") {
  binary_chain_case(Variant::Global);
}

}  // namespace
}  // namespace xnorcl::test
