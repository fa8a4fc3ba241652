// SPDX-License-Identifier: Apache-2.0
// A version-1 layer chain as a graph (network_graph, and load_graph of a version-1 file): run by Model on
// both variants, bit for bit the chain's own reference network (reference_network): a small network of
// every layer kind, the paper's vehicle classifier (with the fusions that make it a few launches), and
// every threshold rule kind at its edges.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "conv_case.hpp"
#include "device_checks.hpp"
#include "device_support.hpp"
#include "network_case.hpp"

namespace xnorcl::test {
namespace {

// The graph's output and the chain's last activation, bit for bit.
std::string difference(const Tensor& got, const Activation& want) {
  if (want.packed) {
    if (got.words.size() != want.words.size()) return "word count differs";
    for (std::size_t i = 0; i < want.words.size(); ++i)
      if (got.words[i] != want.words[i])
        return "word " + std::to_string(i) + ": " + std::to_string(got.words[i]) +
               " != " + std::to_string(want.words[i]);
    return "";
  }
  if (got.values.size() != want.values.size()) return "value count differs";
  for (std::size_t i = 0; i < want.values.size(); ++i)
    if (std::memcmp(&got.values[i], &want.values[i], sizeof(float)) != 0)
      return "value " + std::to_string(i) + ": " + std::to_string(got.values[i]) +
             " != " + std::to_string(want.values[i]);
  return "";
}

// Runs the chain as a graph and compares its output with the reference network's; returns the plan.
GraphPlan check_chain(Variant variant, const NetworkSpec& spec, const std::vector<float>& x) {
  Runtime& rt = runtime_for(variant);
  const std::vector<Activation> want = reference_network(spec, x.data());
  const Graph g = network_graph(spec);
  REQUIRE(g.inputs.size() == 1);
  REQUIRE(g.inputs[0].name == "input");
  REQUIRE(g.outputs == std::vector<std::string>{"output"});
  Model model(rt, g);
  INFO(model.plan().to_string());
  CHECK(model.plan().variant == variant);
  Tensor input;
  input.dims = Dims(spec.input.begin(), spec.input.end());
  input.values = x;
  const Tensor got = model.run({{"input", input}}).at("output");
  CHECK(got.dims == Dims(want.back().shape.begin(), want.back().shape.end()));
  CHECK(difference(got, want.back()) == "");
  return model.plan();
}

void small_network_as_a_graph(Variant variant) {
  Rng rng(71);
  const NetworkSpec spec = small_network(rng);
  check_chain(variant, spec, small_network_input(rng));
}

void vehicle_classifier_as_a_graph(Variant variant) {
  const VehicleClassifier v = vehicle_classifier(2024, 3, 3);
  REQUIRE(v.spec.layers.size() == 11);
  REQUIRE(v.spec.input == v.calibration_shape);
  // Every packed layer holds 10-90% ones on the calibration pictures: the thresholds cut.
  const std::vector<Activation> want = reference_network(v.spec, v.calibration_input.data());
  int packed_layers = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (!want[i].packed) continue;
    ++packed_layers;
    INFO("layer " << i << " (" << layer_name(v.spec.layers[i]) << ") ones " << want[i].ones_fraction());
    CHECK(want[i].ones_fraction() >= 0.10);
    CHECK(want[i].ones_fraction() <= 0.90);
  }
  CHECK(packed_layers == 6);
  const GraphPlan plan = check_chain(variant, v.spec, v.calibration_input);
  // Each convolution is one step: the RGB thresholds in its packing, the Threshold and MaxPool after it in
  // its GEMM's epilogue; each fully-connected layer takes the Threshold after it.
  std::vector<std::string> steps;
  for (const GraphPlan::Step& s : plan.steps) steps.push_back(s.node);
  CHECK(steps == std::vector<std::string>{"0:convolution.input_sign+0:convolution+1:threshold+2:max_pool",
                                          "3:convolution+4:threshold+5:max_pool",
                                          "6:fully_connected+7:threshold", "8:fully_connected+9:threshold",
                                          "10:fully_connected", "output.reshape"});
  CHECK(plan.steps[0].description.find("xnor_gemm_bits") != std::string::npos);
  CHECK(plan.steps[1].description.find("im2col_pack_units") != std::string::npos);
}

// Every rule kind, at the values where its bit changes: Greater/Less at -inf, a negative, -0, +0, a
// subnormal, +inf; AlwaysOne, AlwaysZero; inputs at those values, NaN and the floats beside them.
void threshold_rules_as_a_graph(Variant variant) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> at = {-inf, -2.5f, -0.0f, 0.0f, std::numeric_limits<float>::denorm_min(),
                                 1.0f, inf};
  std::vector<Threshold> rules;
  for (float t : at) {
    rules.push_back({t, ThresholdMode::Greater});
    rules.push_back({t, ThresholdMode::Less});
  }
  rules.push_back({0.0f, ThresholdMode::AlwaysOne});
  rules.push_back({0.0f, ThresholdMode::AlwaysZero});
  const std::int64_t channels = static_cast<std::int64_t>(rules.size());
  std::vector<float> values = {std::nanf("")};
  for (float t : at) {
    values.push_back(t);
    values.push_back(std::nextafter(t, -inf));
    values.push_back(std::nextafter(t, inf));
  }
  NetworkSpec spec;
  spec.input = {1, channels, 1, static_cast<std::int64_t>(values.size())};
  ScaleBiasLayer identity{std::vector<float>(static_cast<std::size_t>(channels), 1.0f),
                          std::vector<float>(static_cast<std::size_t>(channels), 0.0f)};
  spec.layers = {identity, ThresholdLayer{rules}};
  std::vector<float> x;
  for (std::int64_t c = 0; c < channels; ++c) x.insert(x.end(), values.begin(), values.end());
  check_chain(variant, spec, x);
}

void version_1_files_load_as_graphs(Variant variant) {
  Rng rng(72);
  const NetworkSpec spec = small_network(rng);
  const std::string path = "network_graph_test_v1.xnn";
  save_network(spec, path);
  CHECK(network_file_version(path) == 1);
  const Graph g = load_graph(path);
  std::remove(path.c_str());
  CHECK(serialize_graph(g) == serialize_graph(network_graph(spec)));
  const std::vector<float> x = small_network_input(rng);
  Model model(runtime_for(variant), g);
  Tensor input;
  input.dims = Dims(spec.input.begin(), spec.input.end());
  input.values = x;
  CHECK(difference(model.run({{"input", input}}).at("output"), reference_network(spec, x.data()).back()) ==
        "");
}

}  // namespace

XNORCL_VARIANT_TEST("layer chain as a graph: every layer kind, bit for bit", "[network_graph]",
                    small_network_as_a_graph)
XNORCL_VARIANT_TEST("layer chain as a graph: the vehicle classifier, bit for bit", "[network_graph]",
                    vehicle_classifier_as_a_graph)
XNORCL_VARIANT_TEST("layer chain as a graph: every threshold rule at its edges", "[network_graph]",
                    threshold_rules_as_a_graph)
XNORCL_VARIANT_TEST("layer chain as a graph: version-1 files load as graphs", "[network_graph]",
                    version_1_files_load_as_graphs)

}  // namespace xnorcl::test
