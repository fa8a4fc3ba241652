// SPDX-License-Identifier: Apache-2.0
// Models loaded from memory (load_graph(data, size)): the bytes of a file load to the graph the file does,
// version-1 chains included, and every refusal is the file loader's own with "model bytes" in place of the
// path, checked against a file holding the same bytes.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "graph_case.hpp"
#include "network_case.hpp"
#include "xnorcl/xnorcl.hpp"

namespace xnorcl::test {
namespace {

namespace fs = std::filesystem;

fs::path temp_model(const char* tag) {
  return fs::temp_directory_path() /
         ("xnorcl-graph-bytes-" + std::string(tag) + "-" + std::to_string(::getpid()) + ".xnn");
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

template <class F>
std::string refusal(F&& load) {
  try {
    load();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(accepted)";
}

std::string memory_refusal(const void* data, std::size_t size) {
  return refusal([&] { load_graph(data, size); });
}

// What load_graph(path) says of the same bytes in a file, with the path replaced by "model bytes".
std::string file_refusal(const std::string& bytes) {
  const fs::path path = temp_model("refusal");
  write_file(path, bytes);
  std::string message = refusal([&] { load_graph(path.string()); });
  fs::remove(path);
  const std::string prefix = path.string() + ": ";
  if (message.compare(0, prefix.size(), prefix) != 0) return "(no path prefix) " + message;
  return "model bytes: " + message.substr(prefix.size());
}

Graph small_graph(std::mt19937& rng) {
  Graph g;
  g.inputs.push_back({"x", {1, 5, 6, 6}});
  std::string s = add_sign(g, "sign0", "x", {0.1f, -0.2f, 0.0f, 0.3f, -0.1f});
  s = add_binary_conv(g, "conv1", s, 5, 7, 3, 0.5, rng);
  g.nodes.back().attributes["pad_value"] = 0.25;
  g.outputs = {s};
  return g;
}

TEST_CASE("graph bytes: a saved graph's bytes load to the graph the file loads", "[graph]") {
  std::mt19937 rng(41);
  const Graph g = small_graph(rng);
  const fs::path path = temp_model("saved");
  save_graph(g, path.string());
  const Graph from_file = load_graph(path.string());
  // A buffer that is gone once the graph is loaded: the graph owns everything it holds.
  Graph from_memory;
  {
    const std::string bytes = read_file(path);
    REQUIRE(bytes == serialize_graph(g));
    const std::vector<char> buffer(bytes.begin(), bytes.end());
    from_memory = load_graph(buffer.data(), buffer.size());
  }
  fs::remove(path);
  CHECK(serialize_graph(from_memory) == serialize_graph(from_file));
  CHECK(serialize_graph(from_memory) == serialize_graph(g));
  CHECK(from_memory.nodes.at(1).attributes.at("pad_value") == AttributeValue{0.25});
  CHECK(from_memory.constants.at("conv1.w").bits == g.constants.at("conv1.w").bits);
  const Tensor x = random_input({1, 5, 6, 6}, rng);
  CHECK(compare_tensors(reference_graph(from_memory, {{"x", x}}).at("conv1:0"),
                        reference_graph(g, {{"x", x}}).at("conv1:0"), true) == "");
}

TEST_CASE("graph bytes: a version-1 chain's bytes load as the graph that computes it", "[graph]") {
  Rng rng(42);
  const NetworkSpec spec = small_network(rng);
  const std::string bytes = serialize_network(spec);
  const fs::path path = temp_model("chain");
  save_network(spec, path.string());
  const Graph from_file = load_graph(path.string());
  fs::remove(path);
  const Graph from_memory = load_graph(bytes.data(), bytes.size());
  CHECK(serialize_graph(from_memory) == serialize_graph(network_graph(spec)));
  CHECK(serialize_graph(from_memory) == serialize_graph(from_file));
  REQUIRE(from_memory.inputs.size() == 1);
  CHECK(from_memory.inputs[0].name == "input");
  CHECK(from_memory.outputs == std::vector<std::string>{"output"});
  // A damaged chain is refused as the file loader refuses it.
  for (std::size_t cut :
       {std::size_t(12), std::size_t(20), std::size_t(44), bytes.size() / 2, bytes.size() - 1}) {
    INFO("chain truncated to " << cut << " bytes");
    const std::string message = memory_refusal(bytes.data(), cut);
    CHECK_THAT(message, Catch::StartsWith("model bytes: network file, offset "));
    CHECK(message == file_refusal(bytes.substr(0, cut)));
  }
}

TEST_CASE("graph bytes: malformed bytes are refused as the file loader refuses them", "[graph]") {
  std::mt19937 rng(43);
  const std::string bytes = serialize_graph(small_graph(rng));

  SECTION("truncated") {
    for (std::size_t cut : {std::size_t(1), std::size_t(7), std::size_t(8), std::size_t(11), std::size_t(12),
                            std::size_t(17), bytes.size() / 3, bytes.size() / 2, bytes.size() - 1}) {
      INFO("truncated to " << cut << " bytes");
      const std::string message = memory_refusal(bytes.data(), cut);
      CHECK_THAT(message, Catch::StartsWith("model bytes: graph file, offset "));
      CHECK_THAT(message, Catch::Contains(" are left"));
      CHECK(message == file_refusal(bytes.substr(0, cut)));
    }
    CHECK(memory_refusal(bytes.data(), 11) ==
          "model bytes: graph file, offset 8: the version needs 4 bytes, 3 are left");
  }
  SECTION("trailing bytes") {
    const std::string longer = bytes + "xy";
    CHECK(memory_refusal(longer.data(), longer.size()) == "model bytes: graph file, offset " +
                                                              std::to_string(bytes.size()) +
                                                              ": 2 trailing bytes after the graph");
    CHECK(memory_refusal(longer.data(), longer.size()) == file_refusal(longer));
  }
  SECTION("wrong magic") {
    std::string wrong = bytes;
    wrong[3] = 'X';
    CHECK(memory_refusal(wrong.data(), wrong.size()) ==
          "model bytes: graph file, offset 0: not an xnorcl network file (the magic is not XNORNET1)");
    CHECK(memory_refusal(wrong.data(), wrong.size()) == file_refusal(wrong));
  }
  SECTION("an unknown version") {
    std::string unknown = bytes;
    unknown[8] = 99;
    const std::string message = memory_refusal(unknown.data(), unknown.size());
    CHECK_THAT(message, Catch::StartsWith("model bytes: graph file, offset 8: version 99 is not 1, "));
    CHECK(message == file_refusal(unknown));
  }
  SECTION("empty") {
    const std::string empty_message =
        "model bytes: empty (0 bytes): an .xnn model starts with the magic XNORNET1";
    CHECK(memory_refusal(bytes.data(), 0) == empty_message);
    CHECK(memory_refusal(nullptr, 0) == empty_message);
    CHECK(file_refusal("") == empty_message);
  }
  SECTION("null data") {
    CHECK(memory_refusal(nullptr, bytes.size()) ==
          "model bytes: no data (a null pointer) for " + std::to_string(bytes.size()) + " bytes");
    CHECK(memory_refusal(nullptr, 1) == "model bytes: no data (a null pointer) for 1 bytes");
  }
  SECTION("a size above the file loader's limit is refused before a byte is read") {
    if constexpr (sizeof(std::size_t) > 4) {
      // Only the first bytes.size() bytes exist: a loader that read on would run off the buffer.
      const std::size_t claimed = (std::size_t(1) << 32) + 1;
      CHECK(memory_refusal(bytes.data(), claimed) ==
            "model bytes: 4294967297 bytes, more than the 4294967296 a model may hold");
      CHECK_THAT(memory_refusal(bytes.data(), SIZE_MAX), Catch::Contains("more than the 4294967296"));
    }
  }
  SECTION("a count the bytes cannot hold is refused before anything is sized by it") {
    std::string huge = bytes;
    huge[12] = '\xff';
    huge[13] = '\xff';
    huge[14] = '\xff';
    huge[15] = '\x7f';
    const std::string message = memory_refusal(huge.data(), huge.size());
    CHECK_THAT(message, Catch::StartsWith("model bytes: graph file, offset 16: the input count = 2147483647 "
                                          "needs at least 17179869176 bytes"));
    CHECK(message == file_refusal(huge));
  }
  SECTION("a graph that parses but does not validate") {
    Graph g = small_graph(rng);
    g.outputs = {"nowhere:0"};
    const std::string invalid = serialize_graph(g);
    const std::string message = memory_refusal(invalid.data(), invalid.size());
    CHECK_THAT(message, Catch::StartsWith("model bytes: "));
    CHECK_THAT(message, Catch::Contains("nowhere:0"));
    CHECK(message == file_refusal(invalid));
  }
}

}  // namespace
}  // namespace xnorcl::test
