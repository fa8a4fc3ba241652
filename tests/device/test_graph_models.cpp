// SPDX-License-Identifier: Apache-2.0
// Bi-Real Net-18 and the binary ResNet-18 (reduced: 32x32 inputs, channels / 8, batch 2) on both variants.
// Each step is checked against the host reference computed from the device's own inputs of that step
// (bits bitwise, floats within 1e-5 of the max-norm), so a rounding difference upstream never hides or fakes
// a fault downstream; then the logits end to end (1e-4, same top-1) and the fusions the plan must contain.
#include <catch2/catch.hpp>

#include "device_support.hpp"
#include "graph_case.hpp"

namespace xnorcl::test {
namespace {

void check_steps(const Graph& g, Model& model, const std::map<std::string, Tensor>& inputs) {
  std::map<std::string, Tensor> device = model.run_trace(inputs);
  for (const auto& [name, t] : inputs) device[name] = t;
  std::map<std::string, const Node*> by_name;
  for (const Node& n : g.nodes) by_name[n.name] = &n;
  for (const GraphPlan::Step& step : model.plan().steps) {
    std::map<std::string, Tensor> tensors = device;  // the device's inputs of this step
    for (const std::string& name : step.fused) {
      const Node* node = by_name.at(name);
      std::vector<Tensor> out = reference_node(g, *node, tensors);
      tensors[node->outputs[0]] = std::move(out[0]);
    }
    // Every tensor the step writes: the chain's last output and a side output (a sign packed in the
    // epilogue).
    const Node* last = by_name.at(step.fused.back());
    const bool side = step.node.find('&') != std::string::npos;
    std::vector<std::string> outs{last->outputs[0]};
    if (side) outs.insert(outs.begin(), by_name.at(step.fused[step.fused.size() - 2])->outputs[0]);
    for (const std::string& out : outs) {
      INFO("step " << step.node << ", tensor " << out);
      REQUIRE(device.count(out) == 1);
      CHECK(compare_tensors(device.at(out), tensors.at(out), false, 1e-5) == "");
    }
  }
}

void check_model(Variant variant, const Graph& g, int expected_side_signs, int residual_signs) {
  Runtime& rt = runtime_for(variant);
  Model model(rt, g);
  CHECK(model.plan().variant == variant);
  int convolution_steps = 0, side_signs = 0, packing_signs = 0;
  for (const GraphPlan::Step& s : model.plan().steps) {
    const Node* head = nullptr;
    const Node* last = nullptr;
    for (const Node& n : g.nodes) {
      if (n.name == s.fused[0]) head = &n;
      if (n.name == s.fused.back()) last = &n;
    }
    const bool packing_sign = head->op == "FakeQuantize" && s.fused.size() > 1;
    if (head->op != "BinaryConvolution" && !packing_sign) continue;
    ++convolution_steps;
    INFO("step " << s.node);
    // (the sign before it, in its packing) conv + batch-norm (2) + the residual Add or the next sign; on the
    // Local variant the residual sum's sign as a side output as well (written "&sign").
    const bool side = s.node.find('&') != std::string::npos;
    CHECK(s.fused.size() == 4u + (side ? 1u : 0u) + (packing_sign ? 1u : 0u));
    packing_signs += packing_sign;
    if (side) {
      ++side_signs;
      CHECK(last->op == "FakeQuantize");
    }
  }
  CHECK(convolution_steps == 16);
  // Every residual sum that feeds a sign (all but the last block's) packs it in the Local variant's epilogue;
  // the Global one keeps no sign step of its own either: each sign of a residual sum is the next
  // convolution's packing. (The other signs are the epilogue of the convolution before them.)
  CHECK(side_signs == (variant == Variant::Local ? expected_side_signs : 0));
  CHECK(side_signs + packing_signs == residual_signs);
  std::mt19937 rng(3);
  const std::map<std::string, Tensor> inputs{{"input", random_input({2, 3, 32, 32}, rng)}};
  check_steps(g, model, inputs);
  const Tensor want = reference_graph(g, inputs).at("logits");
  const Tensor got = model.run(inputs).at("logits");
  CHECK(compare_tensors(got, want, false, 1e-4) == "");
  for (std::size_t n = 0; n < 2; ++n) {
    const auto top = [&](const Tensor& t) {
      return std::max_element(t.values.begin() + n * 1000, t.values.begin() + (n + 1) * 1000) -
             t.values.begin();
    };
    CHECK(top(got) == top(want));
  }
  // The thresholds cut the activations: every packed tensor holds between 20% and 80% ones.
  for (const auto& [name, t] : model.run_trace(inputs)) {
    if (t.type != ElementType::Bits) continue;
    INFO(name);
    CHECK(t.ones_fraction() > 0.2);
    CHECK(t.ones_fraction() < 0.8);
  }
}

ModelOptions reduced() {
  ModelOptions o;
  o.batch = 2;
  o.height = o.width = 32;
  o.width_divisor = 8;
  o.calibration_size = 32;
  o.seed = 9;
  return o;
}

TEST_CASE("graph models: Bi-Real Net-18, reduced (local)", "[local]") {
  check_model(Variant::Local, bireal18(reduced()), 15, 16);
}
TEST_CASE("graph models: Bi-Real Net-18, reduced (global)", "[global]") {
  check_model(Variant::Global, bireal18(reduced()), 15, 16);
}
TEST_CASE("graph models: binary ResNet-18, reduced (local)", "[local]") {
  check_model(Variant::Local, resnet18_binary(reduced()), 7, 8);
}
TEST_CASE("graph models: binary ResNet-18, reduced (global)", "[global]") {
  check_model(Variant::Global, resnet18_binary(reduced()), 7, 8);
}

}  // namespace
}  // namespace xnorcl::test
