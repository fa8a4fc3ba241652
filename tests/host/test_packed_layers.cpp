// SPDX-License-Identifier: Apache-2.0
// Host side of the network layers: the packed layout, threshold rules and batch-norm folding, pooling shapes,
// and the references of max-pool and the fully-connected layer against independent formulations.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "conv_case.hpp"
#include "xnorcl/xnorcl.hpp"

using namespace xnorcl;
using xnorcl::test::from_bits;
using xnorcl::test::Rng;

namespace {

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

}  // namespace

TEST_CASE("packed layout: bit c%32 of word c/32 of pixel-major words, tail bits zero", "[packed]") {
  const Shape s{2, 37, 3, 2};  // Cw = 2
  REQUIRE(packed_words_per_pixel(37) == 2);
  REQUIRE(packed_word_count(s) == 2 * 3 * 2 * 2);
  std::vector<float> y(static_cast<std::size_t>(2 * 37 * 3 * 2), 0.0f);
  auto at = [&](int n, int c, int yy, int x) -> float& { return y[((n * 37 + c) * 3 + yy) * 2 + x]; };
  at(1, 33, 2, 1) = 1.0f;
  at(0, 0, 0, 0) = 1.0f;
  at(0, 31, 1, 0) = 1.0f;
  const std::vector<std::uint32_t> w = pack_activations(y.data(), s);
  std::vector<std::uint32_t> want(w.size(), 0u);
  want[((1 * 3 + 2) * 2 + 1) * 2 + 1] = 1u << 1;
  want[0] = 1u;
  want[((0 * 3 + 1) * 2 + 0) * 2 + 0] = 1u << 31;
  REQUIRE(w == want);
  REQUIRE(packed_bit(w.data(), s, 1, 33, 2, 1));
  REQUIRE_FALSE(packed_bit(w.data(), s, 1, 32, 2, 1));

  // All ones: the tail bits of every second word stay zero; unpack gives the 0/1 floats back.
  std::vector<float> ones(y.size(), 5.0f);
  const std::vector<std::uint32_t> full = pack_activations(ones.data(), s);
  for (std::size_t i = 0; i < full.size(); ++i) REQUIRE(full[i] == (i % 2 ? 0x1fu : 0xffffffffu));
  REQUIRE(unpack_activations(full.data(), s) == std::vector<float>(y.size(), 1.0f));
  REQUIRE(unpack_activations(w.data(), s) == y);
}

TEST_CASE("threshold rules: exact comparisons, equality gives 0, NaN gives 0", "[packed]") {
  const float sub = from_bits(0x00000001u);
  for (float t : {0.0f, -0.0f, 1.5f, -3.0f, sub, -sub, kInf, -kInf}) {
    INFO("t = " << t);
    REQUIRE_FALSE(threshold_bit(t, {t, ThresholdMode::Greater}));
    REQUIRE_FALSE(threshold_bit(t, {t, ThresholdMode::Less}));
    for (auto m :
         {ThresholdMode::Greater, ThresholdMode::Less, ThresholdMode::AlwaysZero, ThresholdMode::AlwaysOne})
      REQUIRE_FALSE(threshold_bit(kNaN, {t, m}));
  }
  REQUIRE_FALSE(threshold_bit(-0.0f, {0.0f, ThresholdMode::Greater}));  // -0 == +0
  REQUIRE_FALSE(threshold_bit(0.0f, {-0.0f, ThresholdMode::Less}));
  REQUIRE(threshold_bit(sub, {0.0f, ThresholdMode::Greater}));  // a subnormal counts as itself
  REQUIRE(threshold_bit(-sub, {0.0f, ThresholdMode::Less}));
  REQUIRE(threshold_bit(kInf, {3.0f, ThresholdMode::Greater}));
  REQUIRE(threshold_bit(-kInf, {-3.0f, ThresholdMode::Less}));
  REQUIRE(threshold_bit(-7.0f, {0.0f, ThresholdMode::AlwaysOne}));
  REQUIRE_FALSE(threshold_bit(7.0f, {0.0f, ThresholdMode::AlwaysZero}));
  REQUIRE_THROWS_AS(greater_than({1.0f, kNaN}), InvalidArgument);
  REQUIRE(greater_than({-kInf})[0].value == -kInf);
}

TEST_CASE("fold_batch_norm: sign(scale*y + bias) as one rule per channel", "[packed]") {
  const std::vector<float> scale{2.0f, -4.0f, 0.0f, -0.0f, 0.0f, 0.5f};
  const std::vector<float> bias{1.0f, 2.0f, 1.0f, 3.0f, -1.0f, 0.0f};
  const std::vector<Threshold> r = fold_batch_norm(scale, bias);
  REQUIRE(r[0].mode == ThresholdMode::Greater);
  REQUIRE(r[0].value == -0.5f);
  REQUIRE(r[1].mode == ThresholdMode::Less);
  REQUIRE(r[1].value == 0.5f);
  REQUIRE(r[2].mode == ThresholdMode::AlwaysOne);
  REQUIRE(r[3].mode == ThresholdMode::AlwaysOne);
  REQUIRE(r[4].mode == ThresholdMode::AlwaysZero);
  REQUIRE(r[5].mode == ThresholdMode::Greater);
  // Where scale*y + bias is exact, the rule is sign(): bit = scale*y + bias > 0, and 0 at equality.
  for (std::size_t c = 0; c < scale.size(); ++c) {
    for (float y = -4.0f; y <= 4.0f; y += 0.25f) {
      INFO("channel " << c << " y " << y);
      REQUIRE(threshold_bit(y, r[c]) == (scale[c] * y + bias[c] > 0.0f));
    }
  }
  REQUIRE_THROWS_AS(fold_batch_norm({1.0f}, {1.0f, 2.0f}), InvalidArgument);
  REQUIRE_THROWS_AS(fold_batch_norm({}, {}), InvalidArgument);
  REQUIRE_THROWS_WITH(fold_batch_norm({1.0f, kNaN}, {0.0f, 0.0f}), Catch::Contains("channel 1"));
  REQUIRE_THROWS_AS(fold_batch_norm({1.0f}, {kInf}), InvalidArgument);
  REQUIRE_THROWS_AS(pack_activations(nullptr, Shape{1, 1, 1, 1}), InvalidArgument);
  const float one = 1.0f;
  REQUIRE_THROWS_WITH(pack_activations(&one, Shape{1, 1, 1, 1}, greater_than({0.0f, 1.0f})),
                      Catch::Contains("2 threshold rules for 1 channels"));
}

TEST_CASE("reference_scale_bias rounds once (fmaf)", "[packed]") {
  const float y[2] = {1.0f + 0x1p-23f, 3.0f};
  const std::vector<float> out =
      reference_scale_bias(y, Shape{1, 2, 1, 1}, {1.0f - 0x1p-23f, 2.0f}, {-1.0f, 0.5f});
  REQUIRE(out[0] == std::fmaf(1.0f - 0x1p-23f, 1.0f + 0x1p-23f, -1.0f));
  REQUIRE(out[0] == -0x1p-46f);  // the unfused product would round to 0
  REQUIRE(out[1] == 6.5f);
}

TEST_CASE("validate_pool: OpenVINO MaxPool-1 output sizes and pads", "[pool]") {
  PoolAttributes a;
  REQUIRE(validate_pool(a, Shape{1, 3, 96, 96}).output == Shape{1, 3, 48, 48});
  REQUIRE(validate_pool(a, Shape{1, 3, 5, 7}).output == Shape{1, 3, 2, 3});
  a.rounding_type = RoundingType::Ceil;
  REQUIRE(validate_pool(a, Shape{1, 3, 5, 7}).output == Shape{1, 3, 3, 4});
  a.kernel = {3, 3};
  a.strides = {2, 2};
  a.pads_begin = {1, 0};
  a.pads_end = {1, 2};
  REQUIRE(validate_pool(a, Shape{1, 1, 6, 6}).output == Shape{1, 1, 4, 4});  // ceil(5/2)+1, ceil(5/2)+1
  a.rounding_type = RoundingType::Floor;
  REQUIRE(validate_pool(a, Shape{1, 1, 6, 6}).output == Shape{1, 1, 3, 3});
  a.auto_pad = AutoPad::SameUpper;
  PoolGeometry g = validate_pool(a, Shape{1, 1, 6, 7});
  REQUIRE(g.output == Shape{1, 1, 3, 4});
  REQUIRE(g.pads_begin == std::array<int, 2>{0, 1});
  REQUIRE(g.pads_end == std::array<int, 2>{1, 1});
  a.auto_pad = AutoPad::SameLower;
  g = validate_pool(a, Shape{1, 1, 6, 7});
  REQUIRE(g.pads_begin == std::array<int, 2>{1, 1});
  REQUIRE(g.pads_end == std::array<int, 2>{0, 1});
  a.auto_pad = AutoPad::Valid;
  g = validate_pool(a, Shape{1, 1, 6, 7});
  REQUIRE(g.output == Shape{1, 1, 2, 3});
  REQUIRE(g.pads_begin == std::array<int, 2>{0, 0});

  PoolAttributes bad;
  bad.kernel = {0, 2};
  REQUIRE_THROWS_WITH(validate_pool(bad, Shape{1, 1, 4, 4}), Catch::Contains("kernel 0"));
  bad = PoolAttributes{};
  bad.strides = {1, -1};
  REQUIRE_THROWS_WITH(validate_pool(bad, Shape{1, 1, 4, 4}), Catch::Contains("stride -1"));
  bad = PoolAttributes{};
  bad.pads_end = {-1, 0};
  REQUIRE_THROWS_AS(validate_pool(bad, Shape{1, 1, 4, 4}), InvalidArgument);
  bad = PoolAttributes{};
  bad.kernel = {7, 2};
  REQUIRE_THROWS_WITH(validate_pool(bad, Shape{1, 1, 5, 4}),
                      Catch::Contains("(dim: 7) larger than the data shape after padding (dim: 5)"));
  REQUIRE_THROWS_AS(validate_pool(PoolAttributes{}, Shape{1, 0, 4, 4}), InvalidArgument);
}

TEST_CASE("binary max-pool of thresholded bits is the threshold of the float max-pool", "[pool]") {
  Rng rng(77);
  for (int trial = 0; trial < 30; ++trial) {
    const Shape s{rng.uniform(1, 2), rng.uniform(1, 70), rng.uniform(1, 9), rng.uniform(1, 9)};
    PoolAttributes a;
    a.kernel = {rng.uniform(1, 3), rng.uniform(1, 3)};
    a.strides = {rng.uniform(1, 3), rng.uniform(1, 3)};
    a.pads_begin = {rng.uniform(0, 2), rng.uniform(0, 2)};
    a.pads_end = {rng.uniform(0, 2), rng.uniform(0, 2)};
    a.rounding_type = rng.chance(50) ? RoundingType::Ceil : RoundingType::Floor;
    a.auto_pad = rng.pick(std::vector<AutoPad>{AutoPad::Explicit, AutoPad::Explicit, AutoPad::SameUpper,
                                               AutoPad::SameLower, AutoPad::Valid});
    PoolGeometry g;
    try {
      g = validate_pool(a, s);
    } catch (const InvalidArgument&) {
      continue;
    }
    std::vector<float> y(static_cast<std::size_t>(s[0] * s[1] * s[2] * s[3]));
    for (float& v : y) v = static_cast<float>(rng.uniform(-4, 4));
    std::vector<float> t(static_cast<std::size_t>(s[1]));
    for (float& v : t) v = static_cast<float>(rng.uniform(-3, 3)) + 0.5f;
    const std::vector<Threshold> rules = greater_than(t);
    const std::vector<std::uint32_t> packed = pack_activations(y.data(), s, rules);
    const std::vector<float> pooled = reference_maxpool(y.data(), s, a);
    INFO("trial " << trial << " " << to_string(s) << " -> " << to_string(g.output));
    REQUIRE(reference_binary_maxpool(packed.data(), s, a) ==
            pack_activations(pooled.data(), g.output, rules));
  }
}

TEST_CASE("float max-pool: NaN never wins, empty windows give -FLT_MAX, first of -0/+0 wins", "[pool]") {
  PoolAttributes a;
  a.rounding_type = RoundingType::Ceil;
  a.pads_end = {1, 0};
  // 1x1x3x2 input, 2x2 windows stride 2, ceil with pads_end 1: rows {0,1} and {2}, plus nothing else.
  const float x[6] = {kNaN, -0.0f, 0.0f, kNaN, -kInf, kNaN};
  const std::vector<float> y = reference_maxpool(x, Shape{1, 1, 3, 2}, a);
  REQUIRE(y.size() == 2);
  REQUIRE(std::signbit(y[0]));  // -0.0 comes first and +0.0 does not beat it
  REQUIRE(y[0] == 0.0f);
  REQUIRE(y[1] == -kInf);
  a.pads_end = {3, 0};  // a window entirely in the end pad
  const std::vector<float> z = reference_maxpool(x, Shape{1, 1, 3, 2}, a);
  REQUIRE(z.size() == 3);
  REQUIRE(z[2] == std::numeric_limits<float>::lowest());
  const std::uint32_t words[3] = {1u, 0u, 2u};
  a.kernel = {2, 1};
  a.strides = {2, 1};
  const std::vector<std::uint32_t> b = reference_binary_maxpool(words, Shape{1, 2, 3, 1}, a);
  REQUIRE(b == std::vector<std::uint32_t>{1u, 2u, 0u});
}

TEST_CASE("fully-connected reference: 2P - K equals the real dot product of +-1 vectors", "[fc]") {
  Rng rng(5);
  const Shape in{2, 35, 3, 2};
  const std::int64_t K = 35 * 3 * 2, O = 7;
  std::vector<float> y(static_cast<std::size_t>(2 * K));
  for (float& v : y) v = rng.chance(50) ? 1.0f : -1.0f;
  const std::vector<std::uint32_t> x = pack_activations(y.data(), in);
  std::vector<float> w(static_cast<std::size_t>(O * K));
  for (float& v : w) v = rng.chance(50) ? 1.0f : -1.0f;
  const Filter f = Filter::from_values(w.data(), Shape{O, 35, 3, 2});
  const std::vector<float> out = reference_binary_fully_connected(x.data(), in, f);
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t o = 0; o < O; ++o) {
      double dot = 0;
      for (std::int64_t k = 0; k < K; ++k) dot += double(y[n * K + k]) * double(w[o * K + k] > 0 ? 1 : -1);
      REQUIRE(out[n * O + o] == static_cast<float>(dot));
    }
  const Filter wrong = Filter::from_values(w.data(), Shape{O, 35, 2, 3});
  REQUIRE_THROWS_WITH(reference_binary_fully_connected(x.data(), in, wrong), Catch::Contains("[O, C, H, W]"));
}

TEST_CASE("network specs are validated layer by layer", "[network]") {
  std::vector<std::uint8_t> bits(64, 0x5a);
  NetworkSpec s;
  s.input = {1, 3, 4, 4};
  s.layers.push_back(FullyConnectedLayer{
      Filter::from_packed(bits.data(), bits.size(), Shape{2, 3, 4, 4}, BitOrder::MsbFirst)});
  const std::vector<float> x(48, 1.0f);
  REQUIRE_THROWS_WITH(reference_network(s, x.data()),
                      Catch::Contains("layer 0 (fully_connected): needs packed"));
  s.layers.clear();
  s.layers.push_back(ThresholdLayer{});
  s.layers.push_back(ThresholdLayer{});
  REQUIRE_THROWS_WITH(reference_network(s, x.data()), Catch::Contains("layer 1 (threshold)"));
  s.layers.pop_back();
  BinaryConvolution::Attributes a;
  a.input_thresholds = {0.0f, 0.0f, 0.0f};
  s.layers.push_back(ConvolutionLayer{
      a, Filter::from_packed(bits.data(), bits.size(), Shape{2, 3, 3, 3}, BitOrder::MsbFirst)});
  REQUIRE_THROWS_WITH(reference_network(s, x.data()), Catch::Contains("input_thresholds must be empty"));
  s.layers.back() =
      ConvolutionLayer{BinaryConvolution::Attributes{},
                       Filter::from_packed(bits.data(), bits.size(), Shape{2, 3, 3, 3}, BitOrder::MsbFirst)};
  const std::vector<Activation> out = reference_network(s, x.data());
  REQUIRE(out.size() == 2);
  REQUIRE(out[0].packed);
  REQUIRE(out[1].shape == Shape{1, 2, 2, 2});
}

TEST_CASE("network files: save, load and parse round-trip; malformed files are refused", "[network]") {
  Rng rng(31);
  std::vector<std::uint8_t> bits(200);
  for (auto& b : bits) b = static_cast<std::uint8_t>(rng.next() >> 56);
  NetworkSpec s;
  s.input = {1, 3, 6, 5};
  BinaryConvolution::Attributes a;
  a.strides = {1, 2};
  a.pads_begin = {1, 0};
  a.pads_end = {0, 1};
  a.auto_pad = AutoPad::SameLower;
  a.pad_value = 0.5f;
  a.input_thresholds = {1.0f, -2.0f, 0.25f};
  s.layers.push_back(ConvolutionLayer{
      a, Filter::from_packed(bits.data(), bits.size(), Shape{7, 3, 3, 2}, BitOrder::LsbFirst)});
  s.layers.push_back(ScaleBiasLayer{std::vector<float>(7, 2.0f), std::vector<float>(7, -1.0f)});
  s.layers.push_back(ThresholdLayer{fold_batch_norm({1, -1, 0, 2, 3, 4, 5}, {0, 1, 1, 2, 3, 4, 5})});
  PoolAttributes p;
  p.rounding_type = RoundingType::Ceil;
  p.pads_end = {1, 0};
  s.layers.push_back(MaxPoolLayer{p});
  const Shape pooled =
      validate_pool(p, BinaryConvolution::validate(a, s.input, Shape{7, 3, 3, 2}).output).output;
  s.layers.push_back(FullyConnectedLayer{
      Filter::from_packed(bits.data(), bits.size(), Shape{4, 7, pooled[2], pooled[3]}, BitOrder::MsbFirst)});

  const std::string bytes = serialize_network(s);
  const NetworkSpec back = parse_network(bytes);
  REQUIRE(serialize_network(back) == bytes);
  std::vector<float> x(90);
  for (float& v : x) v = static_cast<float>(rng.uniform(-3, 3));
  const std::vector<Activation> want = reference_network(s, x.data()),
                                got = reference_network(back, x.data());
  REQUIRE(got.back().values == want.back().values);

  const std::string path = "xnorcl_test_network.xnn";
  save_network(s, path);
  REQUIRE(serialize_network(load_network(path)) == bytes);
  std::remove(path.c_str());
  REQUIRE_THROWS_WITH(load_network("no/such/file.xnn"), Catch::Contains("cannot open"));

  REQUIRE_THROWS_WITH(parse_network("XNORNET2"), Catch::Contains("magic"));
  REQUIRE_THROWS_WITH(parse_network(bytes.substr(0, bytes.size() - 3)), Catch::Contains("are left"));
  REQUIRE_THROWS_WITH(parse_network(bytes + "x"), Catch::Contains("1 trailing bytes"));
  std::string bad = bytes;
  bad[8] = 2;  // version
  REQUIRE_THROWS_WITH(parse_network(bad), Catch::Contains("version 2"));
  bad = bytes;
  bad[48] = 9;  // the first layer's kind
  REQUIRE_THROWS_WITH(parse_network(bad), Catch::Contains("offset 52: a layer kind = 9"));
  bad = bytes;
  bad[12 + 7] = static_cast<char>(0x80);  // the input's N negative
  REQUIRE_THROWS_AS(parse_network(bad), InvalidArgument);
}

TEST_CASE("enumerations out of their domain are refused, naming what is valid", "[packed]") {
  const Shape s{1, 2, 2, 2};
  const std::vector<float> y(8, 1.0f);
  const std::vector<Threshold> rules = {{0.0f, ThresholdMode::Greater},
                                        {0.0f, static_cast<ThresholdMode>(4)}};
  REQUIRE_THROWS_WITH(pack_activations(y.data(), s, rules),
                      Catch::Contains("channel 1 is 4, not a ThresholdMode") && Catch::Contains("AlwaysOne"));
  PoolAttributes a;
  a.rounding_type = static_cast<RoundingType>(5);
  REQUIRE_THROWS_WITH(validate_pool(a, Shape{1, 2, 4, 4}),
                      Catch::Contains("rounding_type = 5") && Catch::Contains("RoundingType::Ceil"));
}
