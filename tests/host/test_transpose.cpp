// SPDX-License-Identifier: Apache-2.0
// Transpose (OpenVINO Transpose-1): shape inference for several orders (given as a constant input or as the
// attribute `order`, the empty order reversing the axes), the host reference on cases worked out by hand,
// orders through a .xnn file, and the refusals, each message naming the node, the order and the input's
// dims. No device needed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "graph_case.hpp"
#include "xnorcl/xnorcl.hpp"

using Catch::Contains;

namespace xnorcl::test {
namespace {

using Ints = std::vector<std::int64_t>;

std::vector<float> floats(const Ints& order) {
  return std::vector<float>(order.begin(), order.end());
}

// x -> Transpose -> output, the order as a constant input ("order") or as the attribute.
Graph transpose_graph(const Dims& x, const Ints& order, bool as_input) {
  Graph g;
  g.inputs = {{"x", x}};
  if (as_input) {
    g.constants["order"] = Constant::f32({static_cast<std::int64_t>(order.size())}, floats(order));
    g.outputs = {add_node(g, "t", "Transpose", {"x", "order"})};
  } else {
    g.outputs = {add_node(g, "t", "Transpose", {"x"}, {{"order", order}})};
  }
  return g;
}

TEST_CASE("transpose: output dims are the input's in the given order", "[graph]") {
  struct Case {
    Dims x;
    Ints order;
    Dims out;
  };
  const std::vector<Case> cases = {
      {{2, 5, 7, 3}, {0, 3, 1, 2}, {2, 3, 5, 7}},  // NHWC -> NCHW
      {{2, 3, 5, 7}, {0, 2, 3, 1}, {2, 5, 7, 3}},  // NCHW -> NHWC
      {{2, 3, 5, 7}, {3, 2, 1, 0}, {7, 5, 3, 2}},
      {{2, 3, 5, 7}, {0, 1, 2, 3}, {2, 3, 5, 7}},
      {{4, 9, 6}, {1, 0, 2}, {9, 4, 6}},
      {{4, 9, 6}, {2, 0, 1}, {6, 4, 9}},
      {{4, 9}, {1, 0}, {9, 4}},
      {{11}, {0}, {11}},
  };
  for (const Case& c : cases)
    for (bool as_input : {true, false}) {
      INFO(to_string(c.x) << " order " << Catch::Detail::stringify(c.order)
                          << (as_input ? " input" : " attr"));
      const auto infos = transpose_graph(c.x, c.order, as_input).validate();
      CHECK(infos.at("t:0").dims == c.out);
      CHECK(infos.at("t:0").type == ElementType::Float32);
    }
  // The empty order reverses the axes (OpenVINO's rule).
  CHECK(transpose_graph({2, 3, 5, 7}, {}, false).validate().at("t:0").dims == Dims{7, 5, 3, 2});
  CHECK(transpose_graph({4, 9, 6}, {}, false).validate().at("t:0").dims == Dims{6, 9, 4});
  CHECK(transpose_graph({5}, {}, false).validate().at("t:0").dims == Dims{5});
  CHECK(Graph::supported_ops().end() !=
        std::find(Graph::supported_ops().begin(), Graph::supported_ops().end(), "Transpose"));
}

Tensor iota(const Dims& dims) {
  Tensor t;
  t.dims = dims;
  for (std::int64_t i = 0; i < dims_product(dims); ++i) t.values.push_back(static_cast<float>(i));
  return t;
}

TEST_CASE("transpose: the host reference moves every value to its place", "[graph]") {
  // [2, 3] -> [3, 2].
  CHECK(reference_graph(transpose_graph({2, 3}, {1, 0}, true), {{"x", iota({2, 3})}}).at("t:0").values ==
        std::vector<float>{0, 3, 1, 4, 2, 5});
  // NHWC [1, 2, 2, 3] (values h*6 + w*3 + c) -> NCHW [1, 3, 2, 2]: channel c holds c, 3 + c, 6 + c, 9 + c.
  const Tensor nchw =
      reference_graph(transpose_graph({1, 2, 2, 3}, {0, 3, 1, 2}, false), {{"x", iota({1, 2, 2, 3})}})
          .at("t:0");
  CHECK(nchw.dims == Dims{1, 3, 2, 2});
  CHECK(nchw.values == std::vector<float>{0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11});
  // [2, 3, 4] with order {2, 0, 1}: out[k, i, j] = in[i, j, k] = 12 i + 4 j + k.
  const Tensor t =
      reference_graph(transpose_graph({2, 3, 4}, {2, 0, 1}, true), {{"x", iota({2, 3, 4})}}).at("t:0");
  REQUIRE(t.dims == Dims{4, 2, 3});
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        CHECK(t.values[static_cast<std::size_t>((k * 2 + i) * 3 + j)] == 12 * i + 4 * j + k);
  // Values are copied bitwise: -0, a NaN with a payload, infinity, a denormal.
  std::uint32_t bits[4] = {0x80000000u, 0x7fc01234u, 0x7f800000u, 0x00000003u};
  Tensor special;
  special.dims = {2, 2};
  special.values.resize(4);
  std::memcpy(special.values.data(), bits, sizeof bits);
  const Tensor s = reference_graph(transpose_graph({2, 2}, {1, 0}, false), {{"x", special}}).at("t:0");
  std::uint32_t got[4];
  std::memcpy(got, s.values.data(), sizeof got);
  CHECK(got[0] == bits[0]);
  CHECK(got[1] == bits[2]);
  CHECK(got[2] == bits[1]);
  CHECK(got[3] == bits[3]);
}

TEST_CASE("transpose: orders survive a .xnn file, the empty one included", "[graph]") {
  namespace fs = std::filesystem;
  Graph g;
  g.inputs = {{"x", {2, 3, 5}}};
  g.constants["order"] = Constant::f32({3}, {1, 2, 0});
  const std::string a = add_node(g, "a", "Transpose", {"x", "order"});
  const std::string b = add_node(g, "b", "Transpose", {a}, {{"order", Ints{}}});
  g.outputs = {add_node(g, "c", "Transpose", {b}, {{"order", Ints{0, 2, 1}}})};
  const fs::path path =
      fs::temp_directory_path() / ("xnorcl-transpose-" + std::to_string(::getpid()) + ".xnn");
  save_graph(g, path.string());
  const Graph loaded = load_graph(path.string());
  fs::remove(path);
  const auto infos = loaded.validate();
  CHECK(infos.at("a:0").dims == Dims{3, 5, 2});
  CHECK(infos.at("b:0").dims == Dims{2, 5, 3});
  CHECK(infos.at("c:0").dims == Dims{2, 3, 5});
  const Tensor x = iota({2, 3, 5});
  CHECK(reference_graph(loaded, {{"x", x}}).at("c:0").values ==
        reference_graph(g, {{"x", x}}).at("c:0").values);
}

TEST_CASE("transpose: refusals name the node, the order and the input", "[graph]") {
  for (bool as_input : {true, false}) {
    INFO((as_input ? "order as input 1" : "order as attribute"));
    refused(transpose_graph({2, 3, 4}, {0, 1, 3}, as_input),
            {"node 't' (Transpose)", "order {0, 1, 3}", "[2, 3, 4]", "not a permutation of 0..2",
             "axis 3 is outside 0..2"});
    refused(transpose_graph({2, 3, 4}, {0, -1, 1}, as_input),
            {"node 't' (Transpose)", "order {0, -1, 1}", "[2, 3, 4]", "axis -1 is outside"});
    refused(transpose_graph({2, 3, 4}, {1, 0, 1}, as_input),
            {"node 't' (Transpose)", "order {1, 0, 1}", "[2, 3, 4]", "axis 1 appears more than once"});
    refused(transpose_graph({2, 3, 4, 5}, {1, 0}, as_input),
            {"node 't' (Transpose)", "order {1, 0}", "[2, 3, 4, 5]", "2 values, the input 4 axes"});
    refused(transpose_graph({2, 3}, {1, 0, 2}, as_input),
            {"node 't' (Transpose)", "order {1, 0, 2}", "[2, 3]", "3 values, the input 2 axes"});
  }
  // Not an integer; not 1-D; an activation instead of a constant.
  Graph g = transpose_graph({2, 3}, {1, 0}, true);
  g.constants["order"] = Constant::f32({2}, {1, 0.5f});
  refused(g, {"node 't' (Transpose)", "input 1 ('order')", "0.5", "not an integer"});
  g.constants["order"] = Constant::f32({1, 2}, {1, 0});
  refused(g, {"node 't' (Transpose)", "input 1 ('order')", "scalar or 1-D", "[1, 2]"});
  g.constants.erase("order");
  g.inputs.push_back({"order", {2}});
  refused(g, {"node 't' (Transpose)", "input 1 ('order')", "constant"});
  // Both the input and the attribute; neither; an unknown attribute; three inputs.
  g = transpose_graph({2, 3}, {1, 0}, true);
  g.nodes.back().attributes["order"] = Ints{1, 0};
  refused(g, {"node 't' (Transpose)", "not both"});
  g = transpose_graph({2, 3}, {1, 0}, false);
  g.nodes.back().attributes.clear();
  refused(g, {"node 't' (Transpose)", "the order is required"});
  g.nodes.back().attributes["perm"] = Ints{1, 0};
  refused(g, {"node 't' (Transpose)", "unsupported attribute 'perm'"});
  g = transpose_graph({2, 3}, {1, 0}, true);
  g.nodes.back().inputs.push_back("order");
  refused(g, {"node 't' (Transpose)", "takes 1 to 2 inputs, it has 3"});
  // The attribute as a list of floats, not integers.
  g = transpose_graph({2, 3}, {1, 0}, false);
  g.nodes.back().attributes["order"] = std::vector<double>{1, 0};
  refused(g, {"node 't' (Transpose)", "order"});
}

TEST_CASE("transpose: packed bits are refused", "[graph]") {
  Graph g;
  g.inputs = {{"x", {1, 8, 2, 2}}};
  const std::string s = add_sign(g, "s", "x", std::vector<float>(8, 0.0f));
  g.outputs = {add_node(g, "t", "Transpose", {s}, {{"order", Ints{0, 2, 3, 1}}})};
  refused(g, {"node 't' (Transpose)", "input 0 ('s:0') must be f32, it is bits"});
}

}  // namespace
}  // namespace xnorcl::test
