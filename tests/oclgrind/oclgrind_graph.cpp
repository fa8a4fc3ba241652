// SPDX-License-Identifier: Apache-2.0
// Runs the graph ops' kernels under the Oclgrind simulator, on both variants:
//
//   oclgrind --data-races --uninitialized --check-api xnorcl_oclgrind_graph
//
// A residual binary block (fused steps: conv + batch-norm + shortcut; conv + batch-norm + sign + max-pool)
// and one small graph holding every float op (same-shape, per-channel-row and broadcast arithmetic, Relu,
// Clamp, PRelu, AvgPool, ReduceMean, Softmax, Concat, Reshape, Transpose, MatMul), each tensor compared with
// the host reference (bitwise for the exact ops); CTest fails the test when Oclgrind reports anything (an
// out-of-bounds read, a local-memory race in the reductions). The Models live until the process leaves
// (std::_Exit, as the other runners): Oclgrind 21.10 reuses a released buffer's uninitialized-value shadow at
// its old size. For a like reason every graph input has the largest activation's size: a host write smaller
// than its buffer slot (a [1, 5, 1, 8] input in a slot a later [2, 5, 4, 8] tensor reuses) leaves the rest of
// the slot's shadow uninitialized in Oclgrind 21.10 even after a kernel has stored there, and the next kernel
// reading it is reported (the values are right). Broadcasting between two activations reads a computed
// [2, 5, 1, 1] mean instead.
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "graph_case.hpp"
#include "xnorcl/xnorcl.hpp"

namespace {

using namespace xnorcl;
using namespace xnorcl::test;
using Ints = std::vector<std::int64_t>;

[[noreturn]] void leave(int status) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(status);
}

Graph float_graph(std::mt19937& rng) {
  Graph g;
  g.inputs = {{"x", {2, 5, 4, 8}}, {"y", {2, 5, 4, 8}}};
  g.constants["row"] = random_floats({1, 5, 1, 8}, rng, -1, 1);
  g.constants["scale"] = random_floats({1, 5, 1, 1}, rng, -2, 2);
  g.constants["slope"] = random_floats({5}, rng, 0, 0.5f);
  g.constants["hw"] = Constant::f32({2}, {2, 3});
  g.constants["flat"] = Constant::f32({2}, {0, -1});
  std::string s = add_node(g, "sum", "Add", {"x", "y"});
  s = add_node(g, "scaled", "Multiply", {s, "scale"});
  const std::string mean =
      add_node(g, "mean", "ReduceMean", {"x", "hw"}, {{"keep_dims", std::string("true")}});
  s = add_node(g, "mixed", "Subtract", {mean, s});
  s = add_node(g, "shifted", "Add", {s, "row"});
  const std::string relu = add_node(g, "relu", "Relu", {s});
  const std::string clamp = add_node(g, "clamp", "Clamp", {s}, {{"min", -0.5}, {"max", 0.5}});
  g.constants["step"] = Constant::f32({1}, {0.25f});
  std::string rounded = add_node(g, "rounded", "Round", {s}, {{"mode", std::string("half_away_from_zero")}});
  rounded = add_node(g, "rounded_clamp", "Clamp", {rounded}, {{"min", -1.0}, {"max", 1.0}});
  rounded = add_node(g, "rounded_scaled", "Multiply", {rounded, "step"});  // one step with the Round
  const std::string prelu = add_node(g, "prelu", "PRelu", {s, "slope"});
  const std::string pool = add_node(g, "pool", "AvgPool", {prelu},
                                    {{"kernel", Ints{3, 3}},
                                     {"strides", Ints{2, 2}},
                                     {"pads_begin", Ints{1, 1}},
                                     {"pads_end", Ints{0, 0}},
                                     {"rounding_type", std::string("ceil")},
                                     {"exclude-pad", std::string("false")}});
  const std::string gap = add_node(g, "gap", "ReduceMean", {pool, "hw"});
  const std::string soft = add_node(g, "soft", "Softmax", {gap}, {{"axis", std::int64_t{1}}});
  const std::string joined = add_node(g, "joined", "Concat", {relu, clamp}, {{"axis", std::int64_t{1}}});
  const std::string flat =
      add_node(g, "flat", "Reshape", {joined, "flat"}, {{"special_zero", std::string("true")}});
  g.constants["chw"] = Constant::f32({3}, {1, 2, 3});
  const std::string all = add_node(g, "all", "ReduceMean", {s, "chw"});  // rows of 160: a work-group each
  const std::string nhwc = add_node(g, "nhwc", "Transpose", {joined}, {{"order", Ints{0, 2, 3, 1}}});
  const std::string cols = add_node(g, "cols", "Transpose", {flat}, {{"order", Ints{1, 0}}});
  // Dense layers on the 2 x 320 rows: 21 outputs (tiles of 8, the last cut) and, weights stored [M, K], 13.
  g.constants["dense_w"] = random_floats({320, 21}, rng, -1, 1);
  g.constants["dense_wt"] = random_floats({13, 320}, rng, -1, 1);
  const std::string dense = add_node(g, "dense", "MatMul", {flat, "dense_w"});
  const std::string dense_t =
      add_node(g, "dense_t", "MatMul", {flat, "dense_wt"}, {{"transpose_b", std::string("true")}});
  g.outputs = {soft, flat, all, nhwc, cols, rounded, dense, dense_t};
  return g;
}

// A residual binary block: sign -> binary conv (pad_value 0: the pad fold) -> batch-norm -> + x (one fused
// step, the shortcut added in the GEMM's epilogue), then sign -> binary conv (pad_value -1) -> batch-norm ->
// sign -> max-pool (one fused step: the batch-norm folded into the thresholds, the bits pooled in the same
// launch). The residual sum is a graph output too, so both fused steps' results are read back.
Graph residual_graph(std::mt19937& rng) {
  Graph g;
  g.inputs = {{"x", {2, 6, 6, 6}}};
  const std::vector<float> t0 = {0.1f, -0.2f, 0.05f, 0.0f, -0.1f, 0.2f};
  std::string s = add_sign(g, "sign1", "x", t0);
  s = add_binary_conv(g, "conv1", s, 6, 6, 3, 0.0, rng);
  g.constants["gamma1"] = random_floats({1, 6, 1, 1}, rng, 0.05f, 0.2f);
  g.constants["beta1"] = random_floats({1, 6, 1, 1}, rng, -0.5f, 0.5f);
  s = add_node(g, "bn1.scale", "Multiply", {s, "gamma1"});
  s = add_node(g, "bn1.shift", "Add", {s, "beta1"});
  const std::string sum = add_node(g, "residual", "Add", {s, "x"});
  s = add_sign(g, "sign2", sum, t0);
  s = add_binary_conv(g, "conv2", s, 6, 7, 3, -1.0, rng);
  g.constants["gamma2"] = random_floats({1, 7, 1, 1}, rng, -1.0f, 1.0f);
  g.constants["beta2"] = random_floats({1, 7, 1, 1}, rng, -2.0f, 2.0f);
  s = add_node(g, "bn2.scale", "Multiply", {s, "gamma2"});
  s = add_node(g, "bn2.shift", "Add", {s, "beta2"});
  s = add_sign(g, "sign3", s, std::vector<float>(7, 0.25f));
  s = add_node(g, "pool", "MaxPool", {s},
               {{"kernel", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"rounding_type", std::string("ceil")}});
  g.outputs = {sum, s};
  return g;
}

// Every step's output against the host reference computed from the device's own inputs of that step.
int run_residual(const Runtime& rt, std::vector<std::unique_ptr<Model>>& kept) {
  std::mt19937 rng(47);
  const Graph g = residual_graph(rng);
  const std::map<std::string, Tensor> inputs = {{"x", random_input({2, 6, 6, 6}, rng)}};
  kept.push_back(std::make_unique<Model>(rt, g));
  const Model& model = *kept.back();
  std::cout << model.plan().to_string();
  std::map<std::string, Tensor> device = kept.back()->run_trace(inputs);
  device.insert(inputs.begin(), inputs.end());
  std::map<std::string, const Node*> by_name;
  for (const Node& n : g.nodes) by_name[n.name] = &n;
  // Global: sign1+conv1+bn1+residual, sign2+conv2+...+pool (each sign in its convolution's packing).
  // Local: sign2 is packed in conv1's epilogue (sign1+conv1+bn1+residual&sign2), which then writes the sum
  // and its bits; conv2 reads them.
  const std::size_t steps = 2;
  int failures = model.plan().steps.size() == steps ? 0 : 1;
  if (failures) std::cout << "FAILED: " << model.plan().steps.size() << " steps, not " << steps << "\n";
  for (const GraphPlan::Step& step : model.plan().steps) {
    std::map<std::string, Tensor> tensors = device;
    for (const std::string& name : step.fused) {
      const Node* node = by_name.at(name);
      tensors[node->outputs[0]] = reference_node(g, *node, tensors)[0];
    }
    // Every tensor the step writes (a side output too).
    for (const std::string& name : step.fused) {
      const std::string& out = by_name.at(name)->outputs[0];
      if (!device.count(out) || inputs.count(out)) continue;
      const std::string diff = compare_tensors(device.at(out), tensors.at(out), false, 1e-5);
      std::cout << to_string(rt.variant()) << ": step " << step.node << ", tensor " << out << " "
                << (diff.empty() ? "equal" : "FAILED " + diff) << "\n";
      failures += diff.empty() ? 0 : 1;
    }
  }
  return failures;
}

int run(Variant variant, std::vector<std::unique_ptr<Model>>& kept) {
  RuntimeOptions o;
  o.cache_dir = "off";
  o.variant = variant;
  const Runtime rt = Runtime::create(o);
  if (rt.device().getInfo<CL_DEVICE_NAME>() != "Oclgrind Simulator") {
    std::cerr << "FAILED: the device is '" << rt.device_name() << "', not the Oclgrind Simulator\n";
    return 1;
  }
  std::mt19937 rng(31);
  const int residual_failures = run_residual(rt, kept);
  const Graph g = float_graph(rng);
  const std::map<std::string, Tensor> inputs = {{"x", random_input({2, 5, 4, 8}, rng)},
                                                {"y", random_input({2, 5, 4, 8}, rng)}};
  const std::set<std::string> approximate = {"AvgPool", "ReduceMean", "Softmax", "MatMul"};
  kept.push_back(std::make_unique<Model>(rt, g));
  std::cout << kept.back()->plan().to_string();
  const auto want = reference_graph(g, inputs);
  const auto got = kept.back()->run_trace(inputs);
  // Exact where the op is exact and so are its inputs (the averaging ops round differently than the host).
  std::map<std::string, bool> exact;
  for (const Node* n : g.topological_order()) {
    bool e = !approximate.count(n->op);
    for (const std::string& in : n->inputs) e = e && (!exact.count(in) || exact.at(in));
    exact[n->outputs[0]] = e;
  }
  int failures = 0;
  std::set<std::string> fused;
  for (const Node& n : g.nodes) {
    if (!got.count(n.outputs[0])) {  // inside a fused step (checked through the step's output)
      fused.insert(n.name);
      continue;
    }
    const std::string diff =
        compare_tensors(got.at(n.outputs[0]), want.at(n.outputs[0]), exact.at(n.outputs[0]));
    std::cout << to_string(variant) << ": " << n.name << " (" << n.op << ") "
              << (diff.empty() ? "equal" : "FAILED " + diff) << "\n";
    failures += diff.empty() ? 0 : 1;
  }
  if (fused != std::set<std::string>{"rounded", "rounded_clamp"}) {
    std::cout << "FAILED: not the nodes expected inside fused steps\n";
    ++failures;
  }
  return failures + residual_failures;
}

}  // namespace

int main() {
  int status = 1;
  try {
    static std::vector<std::unique_ptr<Model>> kept;  // never released (see above)
    const int failures = run(Variant::Local, kept) + run(Variant::Global, kept);
    std::cout << failures << " failed\n";
    status = failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "FAILED: " << e.what() << "\n";
  }
  leave(status);
}
