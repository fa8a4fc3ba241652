// SPDX-License-Identifier: Apache-2.0
// The float convolution family's host side: references against hand-computed cases (padding, dilation,
// auto_pad, groups, depthwise, matrix products), refusals naming the node, op and values, and which
// following nodes the epilogue absorbs.
#include <catch2/catch.hpp>

#include "graph/node_views.hpp"
#include "graph_case.hpp"
#include "ops/op.hpp"

namespace xnorcl::test {
namespace {

using V = std::vector<std::int64_t>;

// 1..9 in a 3x3 plane, and the 2x2 kernel [[1, 2], [3, 4]].
const std::vector<float> kPlane = {1, 2, 3, 4, 5, 6, 7, 8, 9};
const std::vector<float> kKernel = {1, 2, 3, 4};

std::vector<float> run_one(const Graph& g, const std::string& input, const Tensor& x) {
  const auto tensors = reference_graph(g, {{input, x}});
  return tensors.at(g.outputs[0]).values;
}

Tensor tensor(const Dims& dims, std::vector<float> values) {
  Tensor t;
  t.dims = dims;
  t.values = std::move(values);
  return t;
}

std::vector<float> conv_3x3(const Attributes& attributes) {
  Graph g;
  g.inputs.push_back({"x", {1, 1, 3, 3}});
  g.constants["w"] = Constant::f32({1, 1, 2, 2}, kKernel);
  g.outputs = {add_node(g, "conv", "Convolution", {"x", "w"}, attributes)};
  return run_one(g, "x", tensor({1, 1, 3, 3}, kPlane));
}

TEST_CASE("float convolution reference: hand-computed windows", "[float_conv]") {
  SECTION("no padding") {
    CHECK(conv_3x3({}) == std::vector<float>{37, 47, 67, 77});
  }
  SECTION("asymmetric pads: one row above, one column right") {
    CHECK(conv_3x3({{"pads_begin", V{1, 0}}, {"pads_end", V{0, 1}}}) ==
          std::vector<float>{11, 18, 9, 37, 47, 21, 67, 77, 33});
  }
  SECTION("dilation 2: the four corners") {
    CHECK(conv_3x3({{"dilations", V{2, 2}}}) == std::vector<float>{1 * 1 + 3 * 2 + 7 * 3 + 9 * 4});
  }
  SECTION("same_upper, stride 2: the extra pad after") {
    CHECK(conv_3x3({{"strides", V{2, 2}}, {"auto_pad", std::string("same_upper")}}) ==
          std::vector<float>{37, 21, 23, 9});
  }
  SECTION("same_lower, stride 2: the extra pad before") {
    CHECK(conv_3x3({{"strides", V{2, 2}}, {"auto_pad", std::string("same_lower")}}) ==
          std::vector<float>{4, 18, 36, 77});
  }
  SECTION("valid ignores explicit pads") {
    CHECK(conv_3x3({{"pads_begin", V{1, 1}}, {"auto_pad", std::string("valid")}}) ==
          std::vector<float>{37, 47, 67, 77});
  }
}

// Channel 0 is 1..9, channel 1 is 10..90; the second kernel is [[1, 0], [0, 1]].
Tensor two_channels() {
  std::vector<float> v = kPlane;
  for (float p : kPlane) v.push_back(10 * p);
  return tensor({1, 2, 3, 3}, v);
}

TEST_CASE("float convolution reference: channels sum, groups do not", "[float_conv]") {
  std::vector<float> w = kKernel;
  w.insert(w.end(), {1, 0, 0, 1});
  SECTION("Convolution sums both channels") {
    Graph g;
    g.inputs.push_back({"x", {1, 2, 3, 3}});
    g.constants["w"] = Constant::f32({1, 2, 2, 2}, w);
    g.outputs = {add_node(g, "conv", "Convolution", {"x", "w"})};
    CHECK(run_one(g, "x", two_channels()) == std::vector<float>{37 + 60, 47 + 80, 67 + 120, 77 + 140});
  }
  SECTION("depthwise GroupConvolution keeps them apart") {
    Graph g;
    g.inputs.push_back({"x", {1, 2, 3, 3}});
    g.constants["w"] = Constant::f32({2, 1, 1, 2, 2}, w);
    g.outputs = {add_node(g, "dw", "GroupConvolution", {"x", "w"})};
    CHECK(run_one(g, "x", two_channels()) == std::vector<float>{37, 47, 67, 77, 60, 80, 120, 140});
  }
  SECTION("two groups of one input and two output channels") {
    Graph g;
    g.inputs.push_back({"x", {1, 2, 3, 3}});
    std::vector<float> w4 = w;  // group 0: kKernel, [[1,0],[0,1]]; group 1: the same
    w4.insert(w4.end(), w.begin(), w.end());
    g.constants["w"] = Constant::f32({2, 2, 1, 2, 2}, w4);
    g.outputs = {add_node(g, "gc", "GroupConvolution", {"x", "w"})};
    CHECK(run_one(g, "x", two_channels()) ==
          std::vector<float>{37, 47, 67, 77, 6, 8, 12, 14, 370, 470, 670, 770, 60, 80, 120, 140});
  }
}

TEST_CASE("MatMul reference: both weight layouts, one rounding", "[float_conv]") {
  const Tensor x = tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  SECTION("[K, M]") {
    Graph g;
    g.inputs.push_back({"x", {2, 3}});
    g.constants["w"] = Constant::f32({3, 2}, {1, 0, 0, 1, 1, 1});
    g.outputs = {add_node(g, "fc", "MatMul", {"x", "w"})};
    CHECK(run_one(g, "x", x) == std::vector<float>{4, 5, 10, 11});
  }
  SECTION("[M, K] with transpose_b") {
    Graph g;
    g.inputs.push_back({"x", {2, 3}});
    g.constants["w"] = Constant::f32({2, 3}, {1, 0, 1, 0, 1, 1});
    g.outputs = {add_node(g, "fc", "MatMul", {"x", "w"}, {{"transpose_b", std::string("true")}})};
    CHECK(run_one(g, "x", x) == std::vector<float>{4, 5, 10, 11});
  }
  SECTION("accumulated in double: 1e8 + 1 - 1e8 is 1, not 0 as in float") {
    Graph g;
    g.inputs.push_back({"x", {1, 3}});
    g.constants["w"] = Constant::f32({3, 1}, {1, 1, 1});
    g.outputs = {add_node(g, "fc", "MatMul", {"x", "w"}, {{"transpose_b", std::int64_t{0}}})};
    CHECK(run_one(g, "x", tensor({1, 3}, {1e8f, 1, -1e8f})) == std::vector<float>{1});
  }
}

// ---- Refusals

Graph conv_graph(const std::string& op, const Dims& x, const Dims& w, Attributes attributes = {}) {
  Graph g;
  g.inputs.push_back({"x", x});
  g.constants["w"] = Constant::f32(w, std::vector<float>(static_cast<std::size_t>(dims_product(w)), 1.0f));
  g.outputs = {add_node(g, "layer7", op, {"x", "w"}, std::move(attributes))};
  return g;
}

// Refused, the message naming the node of conv_graph.
void check_refused(const Graph& g, std::vector<std::string> parts) {
  parts.push_back("node 'layer7'");
  refused(g, parts);
}

TEST_CASE("Convolution refusals name the node, op and values", "[float_conv]") {
  check_refused(conv_graph("Convolution", {1, 3, 8, 8}, {4, 5, 3, 3}),
                {"(Convolution)", "channel count (3)", "(5)", "[4, 5, 3, 3]"});
  check_refused(conv_graph("Convolution", {1, 3, 8, 8}, {4, 3, 3}), {"(Convolution)", "4-D", "[4, 3, 3]"});
  check_refused(conv_graph("Convolution", {1, 3, 8, 8}, {4, 3, 3, 3}, {{"strides", V{0, 1}}}),
                {"(Convolution)", "strides must be at least 1, got 0,1"});
  check_refused(conv_graph("Convolution", {1, 3, 8, 8}, {4, 3, 3, 3}, {{"dilations", V{1, -2}}}),
                {"(Convolution)", "dilations", "1,-2"});
  check_refused(conv_graph("Convolution", {1, 3, 8, 8}, {4, 3, 3, 3}, {{"pads_end", V{-1, 0}}}),
                {"(Convolution)", "pads_end must not be negative, got -1,0"});
  check_refused(conv_graph("Convolution", {1, 3, 8, 8}, {4, 3, 3, 3}, {{"auto_pad", std::string("same")}}),
                {"(Convolution)", "auto_pad 'same'"});
  check_refused(conv_graph("Convolution", {1, 3, 4, 4}, {4, 3, 3, 3}, {{"dilations", V{2, 2}}}),
                {"(Convolution)", "Kernel after dilation has size (dim: 5)", "(dim: 4)"});
  check_refused(conv_graph("Convolution", {1, 3, 8, 8}, {4, 3, 3, 3}, {{"group", std::int64_t{2}}}),
                {"(Convolution)", "unsupported attribute 'group'"});
  check_refused(conv_graph("Convolution", {1, 3, 8, 8}, {4, 3, 3, 3}, {{"strides", V{1, 1, 1}}}),
                {"(Convolution)", "strides must hold 2 values", "3"});
}

TEST_CASE("float convolution family: outputs beyond int indexing are refused", "[float_conv]") {
  check_refused(conv_graph("Convolution", {1, 1, 40000, 40000}, {2, 1, 1, 1}),
                {"(Convolution)", "the output [1, 2, 40000, 40000] holds 3200000000 elements"});
  check_refused(conv_graph("MatMul", {50000, 1}, {1, 50000}),
                {"(MatMul)", "the output [50000, 50000] holds 2500000000 elements"});
}

TEST_CASE("GroupConvolution refusals name the node, op and values", "[float_conv]") {
  // 6 input channels, weights for 4 groups of 2: C is not G * C/G.
  check_refused(conv_graph("GroupConvolution", {1, 6, 8, 8}, {4, 1, 2, 3, 3}),
                {"(GroupConvolution)", "(6)", "groups (4)", "input channels (2)", "[4, 1, 2, 3, 3]"});
  check_refused(conv_graph("GroupConvolution", {1, 6, 8, 8}, {6, 1, 3, 3}),
                {"(GroupConvolution)", "5-D", "[6, 1, 3, 3]"});
  check_refused(conv_graph("GroupConvolution", {1, 6, 8, 8}, {6, 1, 1, 3, 3}, {{"strides", V{1, 0}}}),
                {"(GroupConvolution)", "strides must be at least 1, got 1,0"});
  check_refused(conv_graph("GroupConvolution", {1, 6, 2, 8}, {6, 1, 1, 3, 3}),
                {"(GroupConvolution)", "Kernel after dilation has size (dim: 3)", "(dim: 2) at axis 0"});
}

TEST_CASE("MatMul refusals name the node, op and values", "[float_conv]") {
  check_refused(conv_graph("MatMul", {2, 512}, {500, 1000}), {"(MatMul)", "K = 512", "[500, 1000]"});
  check_refused(conv_graph("MatMul", {2, 512}, {512, 1000}, {{"transpose_b", std::string("true")}}),
                {"(MatMul)", "K = 512", "[512, 1000]", "transpose_b true"});
  check_refused(conv_graph("MatMul", {2, 512}, {512, 1000}, {{"transpose_a", std::string("True")}}),
                {"(MatMul)", "transpose_a true is not supported", "[2, 512]"});
  check_refused(conv_graph("MatMul", {2, 512}, {512, 1000}, {{"transpose_b", std::string("yes")}}),
                {"(MatMul)", "transpose_b 'yes'"});
  check_refused(conv_graph("MatMul", {2, 512}, {512, 1000}, {{"transpose_b", std::int64_t{2}}}),
                {"(MatMul)", "transpose_b 2"});
  check_refused(conv_graph("MatMul", {1, 2, 512}, {512, 1000}), {"(MatMul)", "2-D", "[1, 2, 512]"});
  check_refused(conv_graph("MatMul", {2, 512}, {1, 512, 1000}), {"(MatMul)", "2-D", "[1, 512, 1000]"});
}

// ---- What the epilogue absorbs (can_fuse needs no registered Multiply, Add or Relu: views are enough)

// Whether each node of `tail` (in order) is absorbed after the ones before it, into a Convolution of
// output [2, 5, 6, 6] or a MatMul of output [2, 5].
std::vector<bool> absorbed(const std::string& head_op, const std::vector<Node>& tail,
                           const std::map<std::string, Constant>& constants) {
  Graph g = head_op == "MatMul" ? conv_graph("MatMul", {2, 3}, {3, 5})
                                : conv_graph(head_op, {2, 5, 8, 8}, {5, 1, 1, 3, 3});
  if (head_op == "Convolution") g = conv_graph(head_op, {2, 3, 8, 8}, {5, 3, 3, 3});
  for (const auto& [name, c] : constants) g.constants[name] = c;
  std::map<std::string, TensorInfo> infos = g.validate();
  infos["y"] = infos.at(g.outputs[0]);
  const ops::Op* op = ops::find_op(head_op);
  const ops::NodeView head = detail::view_of(g, g.nodes[0], infos);
  std::vector<ops::NodeView> fused;
  std::vector<bool> result;
  for (const Node& n : tail) {
    const ops::NodeView next = detail::view_of(g, n, infos);
    result.push_back(op->can_fuse(head, fused, next));
    if (result.back()) fused.push_back(next);
  }
  return result;
}

Node tail_node(const std::string& op, const std::string& other = "") {
  return Node{op,
              op,
              other.empty() ? std::vector<std::string>{"y"} : std::vector<std::string>{"y", other},
              {op + ":0"},
              {}};
}

TEST_CASE("float convolutions absorb Multiply, Add, Relu by per-channel constants", "[float_conv]") {
  const std::map<std::string, Constant> c = {
      {"s", Constant::f32({1, 5, 1, 1}, {1, 2, 3, 4, 5})},
      {"b", Constant::f32({5, 1, 1}, {1, 2, 3, 4, 5})},
      {"one", Constant::f32({1}, {0.5f})},
      {"row", Constant::f32({1, 5}, {1, 2, 3, 4, 5})},
      {"v", Constant::f32({5}, {1, 2, 3, 4, 5})},
      {"wide", Constant::f32({1, 5, 6, 1}, std::vector<float>(30, 1.0f))},
      {"hw", Constant::f32({6, 6}, std::vector<float>(36, 1.0f))}};
  for (const std::string op : {"Convolution", "GroupConvolution"}) {
    INFO(op);
    CHECK(absorbed(op, {tail_node("Multiply", "s"), tail_node("Add", "b"), tail_node("Relu")}, c) ==
          std::vector<bool>{true, true, true});
    CHECK(absorbed(op, {tail_node("Add", "one"), tail_node("Relu")}, c) == std::vector<bool>{true, true});
    CHECK(absorbed(op, {tail_node("Relu")}, c) == std::vector<bool>{true});
    // Out of order, twice, per-pixel constants, computed operands, other ops: left to their own steps.
    CHECK(absorbed(op, {tail_node("Add", "b"), tail_node("Multiply", "s")}, c) ==
          std::vector<bool>{true, false});
    CHECK(absorbed(op, {tail_node("Relu"), tail_node("Add", "b")}, c) == std::vector<bool>{true, false});
    CHECK(absorbed(op, {tail_node("Multiply", "s"), tail_node("Multiply", "s")}, c) ==
          std::vector<bool>{true, false});
    CHECK(absorbed(op, {tail_node("Add", "wide")}, c) == std::vector<bool>{false});
    CHECK(absorbed(op, {tail_node("Add", "hw")}, c) == std::vector<bool>{false});
    CHECK(absorbed(op, {tail_node("Add", "v")}, c) == std::vector<bool>{false});  // [5] is axis 3 here
    CHECK(absorbed(op, {tail_node("Add", "x")}, c) == std::vector<bool>{false});
    CHECK(absorbed(op, {tail_node("Clamp")}, c) == std::vector<bool>{false});
  }
  CHECK(absorbed("MatMul", {tail_node("Multiply", "row"), tail_node("Add", "v"), tail_node("Relu")}, c) ==
        std::vector<bool>{true, true, true});
  CHECK(absorbed("MatMul", {tail_node("Add", "s")}, c) == std::vector<bool>{false});  // 4-D onto 2-D
}

}  // namespace
}  // namespace xnorcl::test
