// SPDX-License-Identifier: Apache-2.0
// The float graph ops' host references on small cases worked out by hand (broadcasting, AvgPool's divisor
// with padding and ceil rounding, Softmax, ReduceMean, Concat, Reshape) and their refusals, each message
// naming the node, its op and the values. No device needed.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "graph_case.hpp"
#include "xnorcl/xnorcl.hpp"

using Catch::Contains;

namespace xnorcl::test {
namespace {

using Ints = std::vector<std::int64_t>;

Tensor tensor(Dims dims, std::vector<float> values) {
  Tensor t;
  t.dims = std::move(dims);
  t.values = std::move(values);
  return t;
}

// A graph of one node `n` reading graph inputs (Tensor) and constants (Constant) in order.
struct OneNode {
  Graph g;
  std::map<std::string, Tensor> inputs;

  OneNode(const std::string& op, const std::vector<std::variant<Tensor, Constant>>& operands,
          Attributes attributes = {}) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < operands.size(); ++i) {
      const std::string name = "in" + std::to_string(i);
      names.push_back(name);
      if (const Tensor* t = std::get_if<Tensor>(&operands[i])) {
        g.inputs.push_back({name, t->dims});
        inputs[name] = *t;
      } else {
        g.constants[name] = std::get<Constant>(operands[i]);
      }
    }
    g.outputs = {add_node(g, "n", op, names, std::move(attributes))};
  }
  Tensor run() const { return reference_graph(g, inputs).at("n:0"); }
};

void check_values(const Tensor& got, const Dims& dims, const std::vector<float>& want) {
  REQUIRE(got.dims == dims);
  REQUIRE(got.values.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("value " << i);
    CHECK(got.values[i] == Approx(want[i]).epsilon(1e-6).margin(1e-7));
  }
}

TEST_CASE("float ops: Add, Subtract, Multiply broadcast as numpy", "[graph]") {
  // [2, 3, 1, 2] + [3, 1, 1]: the constant adds 10, 20, 30 per channel.
  const Tensor x = tensor({2, 3, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  check_values(OneNode("Add", {x, Constant::f32({3, 1, 1}, {10, 20, 30})}).run(), {2, 3, 1, 2},
               {11, 12, 23, 24, 35, 36, 17, 18, 29, 30, 41, 42});
  // Two activations [2, 1] and [1, 3] make [2, 3].
  const Tensor a = tensor({2, 1}, {1, 2}), b = tensor({1, 3}, {10, 20, 30});
  check_values(OneNode("Subtract", {a, b}).run(), {2, 3}, {-9, -19, -29, -8, -18, -28});
  check_values(OneNode("Multiply", {b, a}).run(), {2, 3}, {10, 20, 30, 20, 40, 60});
  // A one-value constant and one with more axes than the activation.
  check_values(OneNode("Multiply", {Constant::f32({1}, {0.5f}), a}).run(), {2, 1}, {0.5f, 1});
  check_values(OneNode("Add", {a, Constant::f32({1, 1, 2}, {100, 200})}).run(), {1, 2, 2},
               {101, 201, 102, 202});
  // auto_broadcast none with equal shapes.
  check_values(OneNode("Add", {a, a}, {{"auto_broadcast", std::string("none")}}).run(), {2, 1}, {2, 4});
}

TEST_CASE("float ops: Relu, Clamp, PRelu", "[graph]") {
  const Tensor x = tensor({1, 2, 1, 3}, {-2, -0.5f, 0, 0.5f, 2, -1});
  check_values(OneNode("Relu", {x}).run(), x.dims, {0, 0, 0, 0.5f, 2, 0});
  check_values(OneNode("Clamp", {x}, {{"min", -1.0}, {"max", std::int64_t{1}}}).run(), x.dims,
               {-1, -0.5f, 0, 0.5f, 1, -1});
  // Per-channel slopes 0.1 and 3; a single slope 0.5.
  check_values(OneNode("PRelu", {x, Constant::f32({2}, {0.1f, 3})}).run(), x.dims,
               {-0.2f, -0.05f, 0, 0.5f, 2, -3});
  check_values(OneNode("PRelu", {x, Constant::f32({1}, {0.5f})}).run(), x.dims,
               {-1, -0.25f, 0, 0.5f, 2, -0.5f});
  // Relu of -0 is +0, as OpenVINO's x > 0 ? x : 0.
  const Tensor zero = OneNode("Relu", {tensor({1}, {-0.0f})}).run();
  CHECK_FALSE(std::signbit(zero.values[0]));
}

TEST_CASE("float ops: Round, ties to even and away from zero", "[graph]") {
  // Ties at +-0.5, 1.5, 2.5; the floats next to a tie; a value above 2^23 (already an integer).
  const float below = std::nextafter(2.5f, 0.0f), above = std::nextafter(2.5f, 3.0f);
  const Tensor x = tensor({1, 1, 2, 6},
                          {-2.5f, -0.5f, 0.5f, 1.5f, 2.5f, below, above, -1.25f, 0.75f, 1e8f, -3.5f, 127.5f});
  const std::vector<float> even = {-2, -0.0f, 0, 2, 2, 2, 3, -1, 1, 1e8f, -4, 128};
  const std::vector<float> away = {-3, -1, 1, 2, 3, 2, 3, -1, 1, 1e8f, -4, 128};
  const Tensor by_default = OneNode("Round", {x}).run();
  const Tensor to_even = OneNode("Round", {x}, {{"mode", std::string("half_to_even")}}).run();
  const Tensor away_from_zero = OneNode("Round", {x}, {{"mode", std::string("half_away_from_zero")}}).run();
  CHECK(by_default.values == even);
  CHECK(to_even.values == even);
  CHECK(away_from_zero.values == away);
  CHECK(std::signbit(to_even.values[1]));  // -0.5 rounds to -0
  refused(OneNode("Round", {x}, {{"mode", std::string("up")}}).g,
          {"node 'n' (Round)", "mode 'up'", "half_to_even or half_away_from_zero"});
  refused(OneNode("Round", {x}, {{"min", 1.0}}).g, {"node 'n' (Round)", "min"});
}

Attributes pool(Ints kernel, Ints strides, Ints pb, Ints pe, const std::string& rounding, bool exclude) {
  return {{"kernel", kernel},          {"strides", strides},
          {"pads_begin", pb},          {"pads_end", pe},
          {"rounding_type", rounding}, {"exclude-pad", std::string(exclude ? "true" : "false")}};
}

TEST_CASE("float ops: AvgPool divisors with padding and ceil rounding", "[graph]") {
  const Tensor x = tensor({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  // 2x2/2 with pads_begin 1: windows {1}, {2, 3}, {4, 7}, {5, 6, 8, 9}.
  check_values(OneNode("AvgPool", {x}, pool({2, 2}, {2, 2}, {1, 1}, {0, 0}, "floor", true)).run(),
               {1, 1, 2, 2}, {1, 2.5f, 5.5f, 7});
  check_values(OneNode("AvgPool", {x}, pool({2, 2}, {2, 2}, {1, 1}, {0, 0}, "floor", false)).run(),
               {1, 1, 2, 2}, {0.25f, 1.25f, 2.75f, 7});
  // Ceil rounding without any pad: the edge windows reach past the input and average their taps only, with
  // exclude-pad false as well (no padding: OpenVINO counts the taps).
  for (bool exclude : {true, false})
    check_values(OneNode("AvgPool", {x}, pool({2, 2}, {2, 2}, {0, 0}, {0, 0}, "ceil", exclude)).run(),
                 {1, 1, 2, 2}, {3, 4.5f, 7.5f, 9});
  // [1, 2, 3, 4] with kernel 2, stride 2, pads_begin 1, ceil: windows {1}, {2, 3}, {4} (the last reaches past
  // the padded input). exclude-pad false with padding divides by the whole kernel, 2.
  const Tensor row = tensor({1, 1, 1, 4}, {1, 2, 3, 4});
  check_values(OneNode("AvgPool", {row}, pool({1, 2}, {1, 2}, {0, 1}, {0, 0}, "ceil", true)).run(),
               {1, 1, 1, 3}, {1, 2.5f, 4});
  check_values(OneNode("AvgPool", {row}, pool({1, 2}, {1, 2}, {0, 1}, {0, 0}, "ceil", false)).run(),
               {1, 1, 1, 3}, {0.5f, 2.5f, 2});
  // [1, 2] with pads_end 1 and ceil: the second window holds only the pad and beyond: 0.
  const Tensor two = tensor({1, 1, 1, 2}, {1, 2});
  for (bool exclude : {true, false})
    check_values(OneNode("AvgPool", {two}, pool({1, 2}, {1, 2}, {0, 0}, {0, 1}, "ceil", exclude)).run(),
                 {1, 1, 1, 2}, {1.5f, 0});
  // same_upper on 3x3 with a 2x2/1 window: pads end 1; integer exclude-pad 1.
  Attributes same = pool({2, 2}, {1, 1}, {0, 0}, {0, 0}, "floor", true);
  same["auto_pad"] = std::string("same_upper");
  same["exclude-pad"] = std::int64_t{1};
  check_values(OneNode("AvgPool", {x}, same).run(), {1, 1, 3, 3}, {3, 4, 4.5f, 6, 7, 7.5f, 7.5f, 8.5f, 9});
}

TEST_CASE("float ops: ReduceMean over the last axes", "[graph]") {
  const Tensor x = tensor({1, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 41});
  check_values(
      OneNode("ReduceMean", {x, Constant::f32({2}, {2, 3})}, {{"keep_dims", std::string("true")}}).run(),
      {1, 2, 1, 1}, {2.5f, 25.25f});
  check_values(OneNode("ReduceMean", {x, Constant::f32({2}, {-1, -2})}).run(), {1, 2}, {2.5f, 25.25f});
  check_values(OneNode("ReduceMean", {x, Constant::f32({1}, {3})}, {{"keep_dims", std::int64_t{1}}}).run(),
               {1, 2, 2, 1}, {1.5f, 3.5f, 15, 35.5f});
  check_values(OneNode("ReduceMean", {x, Constant::f32({3}, {1, 2, 3})}).run(), {1}, {13.875f});
}

TEST_CASE("float ops: Softmax rows sum to 1", "[graph]") {
  const Tensor x = tensor({2, 3}, {0, 0, 0, 1, 2, 3});
  const Tensor y = OneNode("Softmax", {x}, {{"axis", std::int64_t{1}}}).run();
  const double s = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  check_values(y, {2, 3},
               {1.0f / 3, 1.0f / 3, 1.0f / 3, float(std::exp(1.0) / s), float(std::exp(2.0) / s),
                float(std::exp(3.0) / s)});
  // Along axis 1 of [2, 3, 2, 1] (a line per (n, h, w)); large values do not overflow (max subtracted).
  std::mt19937 rng(3);
  const Tensor t = random_input({2, 3, 2, 1}, rng, -100, 100);
  const Tensor z = OneNode("Softmax", {t}, {{"axis", std::int64_t{-3}}}).run();
  for (int n = 0; n < 2; ++n)
    for (int h = 0; h < 2; ++h) {
      double sum = 0;
      for (int c = 0; c < 3; ++c) sum += z.values[static_cast<std::size_t>((n * 3 + c) * 2 + h)];
      CHECK(sum == Approx(1.0).epsilon(1e-6));
    }
}

TEST_CASE("float ops: Concat and Reshape", "[graph]") {
  const Tensor a = tensor({1, 2, 2}, {1, 2, 3, 4}), b = tensor({1, 1, 2}, {5, 6});
  check_values(OneNode("Concat", {a, b, Constant::f32({1, 1, 2}, {7, 8})}, {{"axis", std::int64_t{1}}}).run(),
               {1, 4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  check_values(OneNode("Concat", {a, a}, {{"axis", std::int64_t{-1}}}).run(), {1, 2, 4},
               {1, 2, 1, 2, 3, 4, 3, 4});
  const Tensor x = tensor({2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(OneNode("Reshape", {x, Constant::f32({2}, {0, -1})}, {{"special_zero", std::string("true")}})
            .run()
            .dims == Dims{2, 6});
  CHECK(OneNode("Reshape", {x, Constant::f32({3}, {3, 1, -1})}).run().dims == Dims{3, 1, 4});
  const Tensor r = OneNode("Reshape", {x}, {{"shape", Ints{12}}}).run();
  CHECK(r.values == x.values);
}

TEST_CASE("float ops: Concat of packed bits along the channels", "[graph]") {
  std::mt19937 rng(5);
  Graph g;
  g.inputs = {{"x", {2, 32, 3, 2}}, {"y", {2, 7, 3, 2}}};
  const std::string sx = add_sign(g, "sx", "x", std::vector<float>(32, 0.0f));
  const std::string sy = add_sign(g, "sy", "y", std::vector<float>(7, 0.0f));
  g.outputs = {add_node(g, "n", "Concat", {sx, sy}, {{"axis", std::int64_t{1}}})};
  const Tensor x = random_input({2, 32, 3, 2}, rng), y = random_input({2, 7, 3, 2}, rng);
  const Tensor out = reference_graph(g, {{"x", x}, {"y", y}}).at("n:0");
  REQUIRE(out.dims == Dims{2, 39, 3, 2});
  const Shape s{2, 39, 3, 2};
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 39; ++c)
      for (int h = 0; h < 3; ++h)
        for (int w = 0; w < 2; ++w) {
          const Tensor& src = c < 32 ? x : y;
          const int cs = c < 32 ? c : c - 32, C = c < 32 ? 32 : 7;
          const bool want = src.values[static_cast<std::size_t>(((n * C + cs) * 3 + h) * 2 + w)] > 0;
          CHECK(packed_bit(out.words.data(), s, n, c, h, w) == want);
        }
}

TEST_CASE("float ops: refusals name the node, the op and the values", "[graph]") {
  const Tensor x4 = tensor({1, 3, 2, 2}, std::vector<float>(12, 1.0f));
  const Tensor x2 = tensor({2, 3}, std::vector<float>(6, 1.0f));
  refused(OneNode("Add", {x2, tensor({4}, {1, 2, 3, 4})}).g,
          {"node 'n' (Add)", "[2, 3] and [4]", "do not broadcast", "3 against 4"});
  refused(OneNode("Multiply", {x2, Constant::f32({2, 1, 1, 1, 1}, {1, 2})}).g,
          {"node 'n' (Multiply)", "more than 4"});
  refused(OneNode("Add", {x2, x2}, {{"auto_broadcast", std::string("pdpd")}}).g,
          {"node 'n' (Add)", "auto_broadcast 'pdpd'"});
  refused(OneNode("Subtract", {x2, tensor({1, 3}, {1, 2, 3})}, {{"auto_broadcast", std::string("none")}}).g,
          {"node 'n' (Subtract)", "[2, 3] and [1, 3]"});
  refused(OneNode("Clamp", {x2}, {{"min", 2.0}, {"max", 1.0}}).g, {"node 'n' (Clamp)", "min 2", "max 1"});
  refused(OneNode("Clamp", {x2}, {{"min", 0.0}}).g, {"node 'n' (Clamp)", "'max' is required"});
  refused(OneNode("PRelu", {x4, Constant::f32({2}, {1, 2})}).g,
          {"node 'n' (PRelu)", "[2]", "(3)", "[1, 3, 2, 2]"});
  refused(OneNode("Relu", {x2}, {{"alpha", 1.0}}).g, {"node 'n' (Relu)", "unsupported attribute 'alpha'"});
  refused(OneNode("AvgPool", {x4}, {{"kernel", Ints{2, 2}}}).g,
          {"node 'n' (AvgPool)", "'exclude-pad' is required"});
  refused(OneNode("AvgPool", {x4}, {{"kernel", Ints{2, 2}}, {"exclude-pad", std::string("yes")}}).g,
          {"node 'n' (AvgPool)", "exclude-pad must be"});
  refused(OneNode("AvgPool", {x4}, {{"kernel", Ints{3, 3}}, {"exclude-pad", std::int64_t{0}}}).g,
          {"node 'n' (AvgPool)", "kernel has size (dim: 3)", "(dim: 2)"});
  refused(OneNode("AvgPool", {x2}, {{"kernel", Ints{1, 1}}, {"exclude-pad", std::int64_t{0}}}).g,
          {"node 'n' (AvgPool)", "must be 4-D", "[2, 3]"});
  refused(OneNode("ReduceMean", {x4, Constant::f32({1}, {1})}).g,
          {"node 'n' (ReduceMean)", "axes {1}", "[1, 3, 2, 2]", "last axes"});
  refused(OneNode("ReduceMean", {x4, Constant::f32({2}, {3, -1})}).g,
          {"node 'n' (ReduceMean)", "axes {3, -1}", "twice"});
  refused(OneNode("ReduceMean", {x4, Constant::f32({1}, {4})}).g,
          {"node 'n' (ReduceMean)", "axis 4", "[-4, 3]"});
  refused(OneNode("ReduceMean", {x4, Constant::f32({1}, {2.5f})}).g,
          {"node 'n' (ReduceMean)", "2.5", "not an integer"});
  refused(OneNode("ReduceMean", {x4, x2}).g, {"node 'n' (ReduceMean)", "must be a constant"});
  refused(OneNode("Softmax", {x2}, {{"axis", std::int64_t{2}}}).g,
          {"node 'n' (Softmax)", "axis 2", "[-2, 1]"});
  refused(OneNode("Concat", {x2, x4}, {{"axis", std::int64_t{1}}}).g,
          {"node 'n' (Concat)", "input 1", "[1, 3, 2, 2]", "[2, 3]"});
  refused(OneNode("Concat", {x2}, {}).g, {"node 'n' (Concat)", "'axis' is required"});
  refused(OneNode("Reshape", {x2, Constant::f32({2}, {-1, -1})}).g,
          {"node 'n' (Reshape)", "{-1, -1}", "more than once"});
  refused(OneNode("Reshape", {x2, Constant::f32({2}, {4, 2})}).g, {"node 'n' (Reshape)", "{4, 2}", "[2, 3]"});
  refused(OneNode("Reshape", {x2, Constant::f32({2}, {0, 3})}).g,
          {"node 'n' (Reshape)", "is 0 without special_zero"});
  refused(OneNode("Reshape", {x2, Constant::f32({2}, {-1, 4})}).g,
          {"node 'n' (Reshape)", "-1 cannot take up 6"});
}

TEST_CASE("float ops: packed bits are refused where only floats go", "[graph]") {
  // sign(x) is packed bits: every float op refuses it, Concat of bits needs whole words before the last.
  for (const std::string op : {"Add", "Relu", "Softmax", "AvgPool", "Reshape", "ReduceMean"}) {
    Graph g;
    g.inputs = {{"x", {1, 8, 2, 2}}};
    const std::string s = add_sign(g, "s", "x", std::vector<float>(8, 0.0f));
    std::vector<std::string> in{s};
    Attributes a;
    if (op == "Add") in.push_back("x");
    if (op == "AvgPool") a = {{"kernel", Ints{1, 1}}, {"exclude-pad", std::int64_t{1}}};
    if (op == "Reshape") a = {{"shape", Ints{-1}}};
    if (op == "ReduceMean") {
      g.constants["axes"] = Constant::f32({1}, {3});
      in.push_back("axes");
    }
    g.outputs = {add_node(g, "n", op, in, a)};
    INFO(op);
    refused(g, {"node 'n' (" + op + ")", "input 0 ('s:0') must be f32, it is bits"});
  }
  Graph g;
  g.inputs = {{"x", {1, 8, 2, 2}}};
  const std::string s = add_sign(g, "s", "x", std::vector<float>(8, 0.0f));
  g.outputs = {add_node(g, "n", "Concat", {s, s}, {{"axis", std::int64_t{1}}})};
  refused(g, {"node 'n' (Concat)", "packed input 0 ('s:0') has 8 channels", "multiple of 32"});
  g.nodes.back().attributes["axis"] = std::int64_t{2};
  refused(g, {"node 'n' (Concat)", "channels only", "not axis 2"});
  g.nodes.back().inputs = {s, "x"};
  g.nodes.back().attributes["axis"] = std::int64_t{1};
  refused(g, {"node 'n' (Concat)", "input 1 ('x') must be bits, it is f32"});
}

}  // namespace
}  // namespace xnorcl::test
