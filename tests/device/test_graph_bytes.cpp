// SPDX-License-Identifier: Apache-2.0
// A Model built from a model's bytes in memory computes bit for bit what one built from the same file does,
// on both variants: a graph (binary and float outputs) and a version-1 layer chain.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "device_checks.hpp"
#include "device_support.hpp"
#include "graph_case.hpp"
#include "network_case.hpp"

namespace xnorcl::test {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Every output of the two models on the same inputs, compared bitwise (floats included).
void check_same_outputs(Runtime& rt, const Graph& from_file, const Graph& from_memory,
                        const std::map<std::string, Tensor>& inputs) {
  Model a(rt, from_file);
  Model b(rt, from_memory);
  const auto want = a.run(inputs);
  const auto got = b.run(inputs);
  REQUIRE(got.size() == want.size());
  REQUIRE_FALSE(got.empty());
  for (const auto& [name, tensor] : want) {
    INFO("output " << name);
    REQUIRE(got.count(name) == 1);
    CHECK(compare_tensors(got.at(name), tensor, true) == "");
  }
}

// x -> sign -> conv1 (float) -> sign -> maxpool -> conv2 (float); the packed sign1:0 is an output as well.
void graph_from_bytes(Variant variant) {
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(51);
  Graph g;
  g.inputs.push_back({"x", {2, 6, 9, 7}});
  std::string s = add_sign(g, "sign0", "x", {0.1f, -0.2f, 0.0f, 0.3f, -0.1f, 0.05f});
  s = add_binary_conv(g, "conv1", s, 6, 33, 3, -1.0, rng);
  const std::string bits = add_sign(g, "sign1", s, std::vector<float>(33, 0.5f));
  s = add_node(g, "pool1", "MaxPool", {bits},
               {{"kernel", std::vector<std::int64_t>{2, 2}},
                {"strides", std::vector<std::int64_t>{2, 2}},
                {"rounding_type", std::string("ceil")}});
  s = add_binary_conv(g, "conv2", s, 33, 5, 3, 0.0, rng);
  g.outputs = {s, bits};
  const fs::path path =
      fs::temp_directory_path() / ("xnorcl-graph-bytes-device-" + std::to_string(::getpid()) + ".xnn");
  save_graph(g, path.string());
  const Graph from_file = load_graph(path.string());
  const std::string bytes = read_file(path);
  fs::remove(path);
  const Graph from_memory = load_graph(bytes.data(), bytes.size());
  const std::map<std::string, Tensor> inputs = {{"x", random_input({2, 6, 9, 7}, rng)}};
  check_same_outputs(rt, from_file, from_memory, inputs);
  // Both equal the host reference too, so the comparison above is not of two equally wrong runs.
  const auto want = reference_graph(g, inputs);
  const auto got = Model(rt, from_memory).run(inputs);
  for (const std::string& name : g.outputs) {
    INFO("output " << name);
    CHECK(compare_tensors(got.at(name), want.at(name), true) == "");
  }
}

void chain_from_bytes(Variant variant) {
  Runtime& rt = runtime_for(variant);
  Rng rng(52);
  const NetworkSpec spec = small_network(rng);
  const fs::path path =
      fs::temp_directory_path() / ("xnorcl-chain-bytes-device-" + std::to_string(::getpid()) + ".xnn");
  save_network(spec, path.string());
  const Graph from_file = load_graph(path.string());
  const std::string bytes = read_file(path);
  fs::remove(path);
  const Graph from_memory = load_graph(bytes.data(), bytes.size());
  Tensor input;
  input.dims = Dims(spec.input.begin(), spec.input.end());
  input.values = small_network_input(rng);
  check_same_outputs(rt, from_file, from_memory, {{"input", input}});
  const Activation want = reference_network(spec, input.values.data()).back();
  REQUIRE_FALSE(want.packed);
  const Tensor got = Model(rt, from_memory).run({{"input", input}}).at("output");
  REQUIRE(got.values.size() == want.values.size());
  CHECK(std::memcmp(got.values.data(), want.values.data(), want.values.size() * sizeof(float)) == 0);
}

}  // namespace

XNORCL_VARIANT_TEST("graph bytes: a model from memory runs bit for bit as from its file", "[graph_bytes]",
                    graph_from_bytes)
XNORCL_VARIANT_TEST("graph bytes: a version-1 chain from memory runs bit for bit as from its file",
                    "[graph_bytes]", chain_from_bytes)

}  // namespace xnorcl::test
