// SPDX-License-Identifier: Apache-2.0
// Transpose on the device against the host reference graph, on both variants, bitwise (it is a copy): every
// permutation of 2-, 3- and 4-D inputs of randomized odd sizes (batch > 1), the order given as a constant
// input, as the attribute, or empty (reversed axes); inputs with axes of size 1, whose permutations the step
// may reduce to a byte copy; the NHWC <-> NCHW pair a TFLite converter inserts around a Reshape; and a
// metamorphic check: a Transpose followed by its inverse gives back the device's input, bit for bit, special
// values (NaN payloads, -0, infinities, denormals) included.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "device_support.hpp"
#include "graph_case.hpp"

namespace xnorcl::test {
namespace {

using Ints = std::vector<std::int64_t>;

std::int64_t pick(std::mt19937& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

// Random values with special ones (-0, NaN with a payload, infinities, denormals) spread through them.
Tensor special_input(const Dims& dims, std::mt19937& rng) {
  Tensor t = random_input(dims, rng);
  const std::uint32_t specials[] = {0x80000000u, 0x7fc01234u, 0xffc00001u, 0x7f800000u,
                                    0xff800000u, 0x00000001u, 0x807fffffu};
  for (std::size_t i = 0; i < t.values.size(); i += 5)
    std::memcpy(&t.values[i], &specials[pick(rng, 0, 6)], 4);
  return t;
}

// Runs the graph (trace, then plain run): every tensor bitwise equal to the reference, the runs to each
// other. Returns the plan's text.
std::string check_graph(Runtime& rt, const Graph& g, const std::map<std::string, Tensor>& inputs) {
  Model model(rt, g);
  const auto want = reference_graph(g, inputs);
  const auto trace = model.run_trace(inputs);
  for (const std::string& name : g.outputs) REQUIRE(trace.count(name) == 1);
  for (const auto& [name, got] : trace) {
    INFO("tensor " << name << "\n" << model.plan().to_string());
    CHECK(compare_tensors(got, want.at(name), true) == "");
  }
  const auto out = model.run(inputs);
  for (const std::string& name : g.outputs) CHECK(compare_tensors(out.at(name), trace.at(name), true) == "");
  return model.plan().to_string();
}

std::string order_text(const Ints& order) {
  std::string text;
  for (std::int64_t p : order) text += std::to_string(p);
  return text;
}

// x -> one Transpose per permutation of its axes (order as input, as attribute, alternately) and the empty
// order.
Graph all_permutations(const Dims& dims) {
  Graph g;
  g.inputs = {{"x", dims}};
  Ints order(dims.size());
  std::iota(order.begin(), order.end(), 0);
  int k = 0;
  do {
    const std::string name = "t" + order_text(order);
    if (k++ % 2 == 0) {
      g.constants[name + ".order"] = Constant::f32({static_cast<std::int64_t>(order.size())},
                                                   std::vector<float>(order.begin(), order.end()));
      g.outputs.push_back(add_node(g, name, "Transpose", {"x", name + ".order"}));
    } else {
      g.outputs.push_back(add_node(g, name, "Transpose", {"x"}, {{"order", order}}));
    }
  } while (std::next_permutation(order.begin(), order.end()));
  g.outputs.push_back(add_node(g, "reversed", "Transpose", {"x"}, {{"order", Ints{}}}));
  return g;
}

void permutations_case(Variant variant) {
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(31);
  std::vector<Dims> shapes;
  for (int round = 0; round < 2; ++round) {
    shapes.push_back({2 * pick(rng, 1, 20) + 1, 2 * pick(rng, 1, 20) + 1});
    shapes.push_back({pick(rng, 2, 3), 2 * pick(rng, 1, 6) + 1, pick(rng, 2, 9)});
    shapes.push_back({pick(rng, 2, 3), 2 * pick(rng, 1, 8) + 1, pick(rng, 2, 9), 2 * pick(rng, 1, 5) + 1});
  }
  // Axes of size 1: some permutations keep the row-major order (a byte copy), others do not.
  for (const Dims& d : {Dims{3, 1, 5, 1}, Dims{1, 7, 1, 1}, Dims{2, 1, 3}, Dims{1, 9}, Dims{13}})
    shapes.push_back(d);
  std::string plans;
  for (const Dims& dims : shapes) {
    INFO(to_string(dims));
    plans += check_graph(rt, all_permutations(dims), {{"x", special_input(dims, rng)}});
  }
  CHECK(plans.find("transpose_copy") != std::string::npos);
  CHECK(plans.find("keeps the order") != std::string::npos);
}

TEST_CASE("graph transpose: every permutation of 2-, 3- and 4-D inputs (local)", "[local]") {
  permutations_case(Variant::Local);
}
TEST_CASE("graph transpose: every permutation of 2-, 3- and 4-D inputs (global)", "[global]") {
  permutations_case(Variant::Global);
}

// What a TFLite converter makes of an NHWC model: NHWC -> NCHW at the input, float ops in NCHW, a Reshape
// between Transposes with general orders, and NCHW -> NHWC at the 4-D output.
void converter_case(Variant variant) {
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(32);
  for (int round = 0; round < 3; ++round) {
    const std::int64_t N = pick(rng, 2, 3), H = 2 * pick(rng, 1, 6) + 1, W = pick(rng, 1, 8),
                       C = 2 * pick(rng, 1, 12) + 1;
    INFO("NHWC [" << N << ", " << H << ", " << W << ", " << C << "]");
    Graph g;
    g.inputs = {{"x", {N, H, W, C}}};
    g.constants["to_nchw"] = Constant::f32({4}, {0, 3, 1, 2});
    g.constants["bias"] = random_floats({1, C, 1, 1}, rng, -1, 1);
    g.constants["rows"] = Constant::f32({3}, {0, 0, -1});
    std::string s = add_node(g, "in_nchw", "Transpose", {"x", "to_nchw"});
    s = add_node(g, "biased", "Add", {s, "bias"});
    s = add_node(g, "act", "Relu", {s});
    const std::string out_nhwc = add_node(g, "out_nhwc", "Transpose", {s}, {{"order", Ints{0, 2, 3, 1}}});
    const std::string rows = add_node(g, "rows", "Reshape", {s, "rows"}, {{"special_zero", std::int64_t{1}}});
    const std::string cols = add_node(g, "cols", "Transpose", {rows}, {{"order", Ints{0, 2, 1}}});
    const std::string swapped = add_node(g, "swapped", "Transpose", {cols}, {{"order", Ints{2, 0, 1}}});
    g.outputs = {out_nhwc, swapped};
    check_graph(rt, g, {{"x", random_input({N, H, W, C}, rng)}});
  }
}

TEST_CASE("graph transpose: NHWC in and out around NCHW ops and a Reshape (local)", "[local]") {
  converter_case(Variant::Local);
}
TEST_CASE("graph transpose: NHWC in and out around NCHW ops and a Reshape (global)", "[global]") {
  converter_case(Variant::Global);
}

// Metamorphic: Transpose(order) then Transpose(inverse) is the identity, on the device alone (no reference):
// the output equals the input bitwise.
void inverse_case(Variant variant) {
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(33);
  for (int round = 0; round < 9; ++round) {
    const std::size_t rank = 2 + static_cast<std::size_t>(round % 3);
    Dims dims;
    for (std::size_t k = 0; k < rank; ++k) dims.push_back(pick(rng, 1, 4) * 2 + 1);
    dims[0] = pick(rng, 2, 3);
    Ints order(rank), inverse(rank);
    std::iota(order.begin(), order.end(), 0);
    while (true) {  // anything but the identity
      std::shuffle(order.begin(), order.end(), rng);
      if (!std::is_sorted(order.begin(), order.end())) break;
    }
    for (std::size_t k = 0; k < rank; ++k)
      inverse[static_cast<std::size_t>(order[k])] = static_cast<std::int64_t>(k);
    INFO(to_string(dims) << " order {" << order_text(order) << "} then {" << order_text(inverse) << "}");
    Graph g;
    g.inputs = {{"x", dims}};
    const std::string there = add_node(g, "there", "Transpose", {"x"}, {{"order", order}});
    g.outputs = {add_node(g, "back", "Transpose", {there}, {{"order", inverse}})};
    const Tensor x = special_input(dims, rng);
    Model model(rt, g);
    const Tensor y = model.run({{"x", x}}).at("back:0");
    CHECK(model.plan().to_string().find("transpose_copy") != std::string::npos);
    CHECK(compare_tensors(y, x, true) == "");
  }
}

TEST_CASE("graph transpose: a Transpose then its inverse gives back the input (local)", "[local]") {
  inverse_case(Variant::Local);
}
TEST_CASE("graph transpose: a Transpose then its inverse gives back the input (global)", "[global]") {
  inverse_case(Variant::Global);
}

}  // namespace
}  // namespace xnorcl::test
