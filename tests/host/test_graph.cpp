// SPDX-License-Identifier: Apache-2.0
// Graphs on the host: validation and its refusals, FakeQuantize's threshold rules against OpenVINO's float
// formula (ties included), and the .xnn version 2 file (round trip, every truncation and corruption refused
// with an offset).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "graph_case.hpp"
#include "ops/fake_quantize.hpp"
#include "xnorcl/xnorcl.hpp"

namespace xnorcl::test {
namespace {

Graph small_graph(std::mt19937& rng) {
  Graph g;
  g.inputs.push_back({"x", {1, 5, 6, 6}});
  std::string s = add_sign(g, "sign0", "x", {0.1f, -0.2f, 0.0f, 0.3f, -0.1f});
  s = add_binary_conv(g, "conv1", s, 5, 7, 3, 0.0, rng);
  g.outputs = {s};
  return g;
}

std::string refusal(const Graph& g) {
  try {
    g.validate();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST_CASE("graph: validation infers shapes and types", "[graph]") {
  std::mt19937 rng(1);
  const Graph g = small_graph(rng);
  const auto infos = g.validate();
  CHECK(infos.at("sign0:0").type == ElementType::Bits);
  CHECK(infos.at("sign0:0").dims == Dims{1, 5, 6, 6});
  CHECK(infos.at("conv1:0").type == ElementType::Float32);
  CHECK(infos.at("conv1:0").dims == Dims{1, 7, 6, 6});
  REQUIRE(g.topological_order().size() == 2);
  CHECK(g.topological_order()[0]->name == "sign0");
}

TEST_CASE("graph: refusals name the node, its op and the values", "[graph]") {
  std::mt19937 rng(2);
  SECTION("unknown tensor") {
    Graph g = small_graph(rng);
    g.nodes[1].inputs[0] = "nowhere";
    CHECK_THAT(refusal(g), Catch::Contains("node 'conv1' (BinaryConvolution): input 'nowhere'"));
  }
  SECTION("cycle") {
    Graph g = small_graph(rng);
    g.nodes[0].inputs[0] = "conv1:0";
    g.inputs.clear();
    CHECK_THAT(refusal(g), Catch::Contains("cycle through nodes 'sign0', 'conv1'"));
  }
  SECTION("unknown op") {
    Graph g = small_graph(rng);
    g.nodes[1].op = "Frobnicate";
    CHECK_THAT(refusal(g), Catch::Contains("node 'conv1': unsupported op 'Frobnicate'"));
  }
  SECTION("unsupported attribute") {
    Graph g = small_graph(rng);
    g.nodes[1].attributes["groups"] = std::int64_t{2};
    CHECK_THAT(refusal(g),
               Catch::Contains("node 'conv1' (BinaryConvolution): unsupported attribute 'groups'"));
  }
  SECTION("attribute of the wrong kind") {
    Graph g = small_graph(rng);
    g.nodes[1].attributes["strides"] = std::string("2,2");
    CHECK_THAT(refusal(g),
               Catch::Contains("the attribute 'strides' must be a list of integers, it is a string"));
  }
  SECTION("type mismatch: float where bits are needed") {
    Graph g = small_graph(rng);
    g.nodes.push_back(
        Node{"pool", "MaxPool", {"sign0:0"}, {"pool:0"}, {{"kernel", std::vector<std::int64_t>{2, 2}}}});
    g.nodes.push_back(Node{"fq",
                           "FakeQuantize",
                           {"pool:0", "sign0.t", "sign0.t", "sign0.lo", "sign0.hi"},
                           {"fq:0"},
                           {{"levels", std::int64_t{2}}}});
    CHECK_THAT(refusal(g),
               Catch::Contains("node 'fq' (FakeQuantize): input 0 ('pool:0') must be f32, it is bits"));
  }
  SECTION("shape mismatch") {
    Graph g = small_graph(rng);
    g.constants["conv1.w"] = random_bits({7, 4, 3, 3}, rng);
    CHECK_THAT(refusal(g), Catch::Contains("C_IN"));
  }
  SECTION("output defined twice") {
    Graph g = small_graph(rng);
    g.nodes[1].outputs[0] = "sign0:0";
    CHECK_THAT(refusal(g), Catch::Contains("its output 'sign0:0' is already defined by node 'sign0'"));
  }
  SECTION("levels other than 2") {
    Graph g = small_graph(rng);
    g.nodes[0].attributes["levels"] = std::int64_t{256};
    CHECK_THAT(refusal(g), Catch::Contains("node 'sign0' (FakeQuantize): levels 256 is not supported"));
  }
  SECTION("every refusal of a BinaryConvolution or MaxPool attribute starts with the node") {
    using Ints = std::vector<std::int64_t>;
    const std::vector<std::pair<std::string, AttributeValue>> conv_attributes = {
        {"strides", Ints{0, 1}},       {"strides", Ints{1}},      {"pads_begin", Ints{-1, 0}},
        {"pads_end", Ints{0, -2}},     {"dilations", Ints{0, 1}}, {"dilations", Ints{1, 1, 1}},
        {"pad_value", std::nan("")},   {"pad_value", 1e300},      {"mode", std::string("xor")},
        {"auto_pad", std::string("x")}};
    for (const auto& [name, value] : conv_attributes) {
      Graph g = small_graph(rng);
      g.nodes[1].attributes[name] = value;
      const std::string message = refusal(g);
      INFO(name << ": " << message);
      CHECK(message.rfind("node 'conv1' (BinaryConvolution): ", 0) == 0);
    }
    const std::vector<std::pair<std::string, AttributeValue>> pool_attributes = {
        {"kernel", Ints{0, 2}},         {"kernel", Ints{2}},       {"strides", Ints{0, 1}},
        {"pads_begin", Ints{-1, 0}},    {"pads_end", Ints{0, -1}}, {"rounding_type", std::string("round")},
        {"auto_pad", std::string("x")}, {"kernel", Ints{100, 100}}};
    for (const auto& [name, value] : pool_attributes) {
      Graph g = small_graph(rng);
      g.nodes.push_back(Node{"pool", "MaxPool", {"sign0:0"}, {"pool:0"}, {{"kernel", Ints{2, 2}}}});
      g.nodes.back().attributes[name] = value;
      g.outputs = {"pool:0"};
      const std::string message = refusal(g);
      INFO(name << ": " << message);
      CHECK(message.rfind("node 'pool' (MaxPool): ", 0) == 0);
    }
  }
  SECTION("names that are not UTF-8 or hold control characters") {
    Graph g = small_graph(rng);
    g.inputs[0].name = std::string("x\0y", 3);
    CHECK_THAT(refusal(g), Catch::Contains("a graph input 'x\\x00y': the name holds the control character "
                                           "\\x00 at byte 1"));
    g = small_graph(rng);
    g.nodes[1].outputs[0] = "conv\xff";
    g.outputs = {"conv\xff"};
    CHECK_THAT(refusal(g), Catch::Contains("an output of node 'conv1' 'conv\\xff': the name is not UTF-8"));
    g = small_graph(rng);
    g.nodes[0].name = "\xc0\xaf";  // an overlong '/'
    CHECK_THAT(refusal(g), Catch::Contains("node 0 '\\xc0\\xaf': the name is not UTF-8"));
    g = small_graph(rng);
    g.nodes[0].name = "sign\xe2\x80";  // cut short
    CHECK_THAT(refusal(g), Catch::Contains("the name is not UTF-8"));
    g = small_graph(rng);
    g.nodes[0].name = "s\xc3\xa9gn \xe2\x82\xac \xf0\x9f\x98\x80";  // accents, a euro sign, an emoji
    CHECK(refusal(g) == "(accepted)");
  }
  SECTION("a path with a NUL byte is refused, not cut short") {
    CHECK_THROWS_WITH(load_graph(std::string("model.xnn\0.txt", 14)),
                      Catch::Contains("holds a NUL byte at offset 9"));
    CHECK_THROWS_WITH(network_file_version(std::string("a\0b", 3)), Catch::Contains("NUL byte at offset 1"));
  }
  SECTION("graph input of the wrong dims when run on the host") {
    const Graph g = small_graph(rng);
    CHECK_THROWS_WITH(reference_graph(g, {{"x", random_input({1, 5, 6, 7}, rng)}}),
                      Catch::Contains("graph input 'x' must be f32 [1, 5, 6, 6]"));
  }
}

// OpenVINO's reference FakeQuantize, levels 2, in float.
float openvino_fake_quantize(float x, float il, float ih, float ol, float oh) {
  if (x <= std::min(il, ih)) return ol;
  if (x > std::max(il, ih)) return oh;
  return std::nearbyint((x - il) / (ih - il)) * (oh - ol) + ol;
}

TEST_CASE("graph: FakeQuantize rules give OpenVINO's sign, ties included", "[graph]") {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  for (int trial = 0; trial < 300; ++trial) {
    float il = u(rng), ih = u(rng);
    if (il > ih) std::swap(il, ih);
    if (trial % 5 == 0) ih = il;  // Model Optimizer's form
    const float levels[][2] = {{-1, 1}, {0, 1}, {1, -1}, {0.5f, 2}, {-2, -1}};
    const float ol = levels[trial % 5][0], oh = levels[trial % 5][1];
    Graph g;
    g.inputs.push_back({"x", {1, 1, 1, 1}});
    g.constants["il"] = Constant::f32({1}, {il});
    g.constants["ih"] = Constant::f32({1}, {ih});
    g.constants["ol"] = Constant::f32({1}, {ol});
    g.constants["oh"] = Constant::f32({1}, {oh});
    g.nodes.push_back(
        Node{"fq", "FakeQuantize", {"x", "il", "ih", "ol", "oh"}, {"fq:0"}, {{"levels", std::int64_t{2}}}});
    ops::NodeView v;
    v.node = &g.nodes[0];
    v.inputs = {{{1, 1, 1, 1}, ElementType::Float32}};
    v.constants = {nullptr};
    for (const char* name : {"il", "ih", "ol", "oh"}) {
      v.inputs.push_back({{1}, ElementType::Float32});
      v.constants.push_back(&g.constants.at(name));
    }
    const Threshold rule = ops::fake_quantize_rules(v).at(0);
    // Probe around the band's ends and midpoint (one float either side) and at random.
    std::vector<float> probes = {il,
                                 ih,
                                 (il + ih) / 2,
                                 -0.0f,
                                 0.0f,
                                 std::numeric_limits<float>::infinity(),
                                 -std::numeric_limits<float>::infinity()};
    for (float p : std::vector<float>(probes)) {
      probes.push_back(std::nextafter(p, 10.0f));
      probes.push_back(std::nextafter(p, -10.0f));
    }
    for (int i = 0; i < 50; ++i) probes.push_back(u(rng));
    for (float x : probes) {
      INFO("il " << il << " ih " << ih << " ol " << ol << " oh " << oh << " x " << x);
      CHECK(threshold_bit(x, rule) == (openvino_fake_quantize(x, il, ih, ol, oh) > 0));
    }
    CHECK_FALSE(threshold_bit(std::numeric_limits<float>::quiet_NaN(), rule));
  }
}

TEST_CASE("graph: the .xnn version 2 file round-trips and refuses damage with an offset", "[graph]") {
  std::mt19937 rng(4);
  Graph g = small_graph(rng);
  g.nodes[1].attributes["pad_value"] = 0.25;
  const std::string bytes = serialize_graph(g);
  const Graph back = parse_graph(bytes);
  CHECK(serialize_graph(back) == bytes);
  CHECK(back.nodes[1].attributes.at("pad_value") == AttributeValue{0.25});
  CHECK(back.constants.at("conv1.w").bits == g.constants.at("conv1.w").bits);
  const auto x = random_input({1, 5, 6, 6}, rng);
  CHECK(compare_tensors(reference_graph(back, {{"x", x}}).at("conv1:0"),
                        reference_graph(g, {{"x", x}}).at("conv1:0"), true) == "");

  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    INFO("truncated to " << cut << " bytes");
    CHECK_THROWS_WITH(parse_graph(bytes.substr(0, cut)), Catch::Contains("graph file, offset"));
  }
  CHECK_THROWS_WITH(parse_graph(bytes + "x"), Catch::Contains("1 trailing bytes"));
  std::string v1 = bytes;
  v1[8] = 1;
  // Version 1 is a layer chain, read as the graph it computes: a graph's bytes under that version are a
  // malformed chain.
  CHECK_THROWS_WITH(parse_graph(v1), Catch::Contains("network file, offset 20: the input shape"));
  std::string v4 = bytes;
  v4[8] = 4;
  CHECK_THROWS_WITH(parse_graph(v4), Catch::Contains("offset 8: version 4 is not 1, 2 or 3"));
  // Version 3 reads a type before each input's dims: a version-2 graph's bytes under it are malformed.
  std::string v3 = bytes;
  v3[8] = 3;
  CHECK_THROWS_WITH(parse_graph(v3), Catch::Contains("graph file, offset"));
  // A huge count with nothing behind it is refused before anything is allocated.
  std::string huge = bytes;
  huge[12] = '\xff';
  huge[13] = '\xff';
  huge[14] = '\xff';
  huge[15] = '\x7f';
  CHECK_THROWS_WITH(parse_graph(huge),
                    Catch::Contains("offset 16: the input count = 2147483647 needs at least"));
  // Every single-byte change either parses or is refused as InvalidArgument (never another exception).
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::string m = bytes;
    m[i] = static_cast<char>(m[i] ^ 0x5a);
    try {
      parse_graph(m).validate();
    } catch (const InvalidArgument&) {
    }
  }
}

}  // namespace
}  // namespace xnorcl::test
