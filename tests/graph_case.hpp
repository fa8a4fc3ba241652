// SPDX-License-Identifier: Apache-2.0
// Building blocks of graph tests: nodes with seeded constants, random inputs, and tensor comparisons
// (bitwise for bits and integer-valued floats, max-norm relative for float tensors).
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "xnorcl/xnorcl.hpp"

namespace xnorcl::test {

inline std::int64_t dims_product(const Dims& d) {
  std::int64_t n = 1;
  for (std::int64_t v : d) n *= v;
  return n;
}

inline Constant random_bits(const Dims& dims, std::mt19937& rng) {
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>((dims_product(dims) + 7) / 8));
  for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
  return Constant::u1(dims, bytes);
}

inline Constant random_floats(const Dims& dims, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(dims_product(dims)));
  for (float& x : v) x = d(rng);
  return Constant::f32(dims, v);
}

inline Tensor random_input(const Dims& dims, std::mt19937& rng, float lo = -1.0f, float hi = 1.0f) {
  Tensor t;
  t.dims = dims;
  t.values = random_floats(dims, rng, lo, hi).values;
  return t;
}

// Adds a node and returns its (first) output's name, "<name>:0".
inline std::string add_node(Graph& g, const std::string& name, const std::string& op,
                            std::vector<std::string> inputs, Attributes attributes = {}) {
  g.nodes.push_back(Node{name, op, std::move(inputs), {name + ":0"}, std::move(attributes)});
  return name + ":0";
}

// FakeQuantize levels 2 with per-channel thresholds (input_low = input_high = t[c]) and outputs {-1, +1}.
inline std::string add_sign(Graph& g, const std::string& name, const std::string& input,
                            const std::vector<float>& t) {
  const Dims per_channel{1, static_cast<std::int64_t>(t.size()), 1, 1};
  g.constants[name + ".t"] = Constant::f32(per_channel, t);
  g.constants[name + ".lo"] = Constant::f32({1}, {-1.0f});
  g.constants[name + ".hi"] = Constant::f32({1}, {1.0f});
  return add_node(g, name, "FakeQuantize", {input, name + ".t", name + ".t", name + ".lo", name + ".hi"},
                  {{"levels", std::int64_t{2}}});
}

inline std::string add_binary_conv(Graph& g, const std::string& name, const std::string& input,
                                   std::int64_t c_in, std::int64_t c_out, std::int64_t k, double pad_value,
                                   std::mt19937& rng, std::int64_t stride = 1) {
  g.constants[name + ".w"] = random_bits({c_out, c_in, k, k}, rng);
  const std::int64_t p = k / 2;
  return add_node(g, name, "BinaryConvolution", {input, name + ".w"},
                  {{"strides", std::vector<std::int64_t>{stride, stride}},
                   {"pads_begin", std::vector<std::int64_t>{p, p}},
                   {"pads_end", std::vector<std::int64_t>{p, p}},
                   {"dilations", std::vector<std::int64_t>{1, 1}},
                   {"mode", std::string("xnor-popcount")},
                   {"pad_value", pad_value}});
}

// "" when equal: bits and words bitwise; floats bitwise when `exact`, else within rel * max|want|.
inline std::string compare_tensors(const Tensor& got, const Tensor& want, bool exact, double rel = 1e-5) {
  if (got.dims != want.dims) return "dims " + to_string(got.dims) + " != " + to_string(want.dims);
  if (got.type != want.type) return "type " + to_string(got.type) + " != " + to_string(want.type);
  if (got.type == ElementType::Bits) {
    for (std::size_t i = 0; i < want.words.size(); ++i)
      if (got.words.at(i) != want.words[i])
        return "word " + std::to_string(i) + ": " + std::to_string(got.words[i]) +
               " != " + std::to_string(want.words[i]);
    return "";
  }
  double scale = 0;
  for (float v : want.values) scale = std::max(scale, std::fabs(static_cast<double>(v)));
  for (std::size_t i = 0; i < want.values.size(); ++i) {
    const float a = got.values.at(i), b = want.values[i];
    const bool same = exact ? std::memcmp(&a, &b, 4) == 0 : std::fabs(double(a) - double(b)) <= rel * scale;
    if (!same) return "value " + std::to_string(i) + ": " + std::to_string(a) + " != " + std::to_string(b);
  }
  return "";
}

// Validation throws InvalidArgument whose message holds every fragment.
inline void refused(const Graph& g, const std::vector<std::string>& fragments) {
  try {
    g.validate();
    FAIL("validate() accepted the graph");
  } catch (const InvalidArgument& e) {
    const std::string message = e.what();
    INFO(message);
    for (const std::string& f : fragments) CHECK_THAT(message, Catch::Contains(f));
  }
}

}  // namespace xnorcl::test
