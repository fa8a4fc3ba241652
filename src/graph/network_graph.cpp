// SPDX-License-Identifier: Apache-2.0
// A version-1 layer chain (NetworkSpec) as a graph, so that one executor (Model) runs both file versions.
// Each layer becomes the graph ops that compute the same bits:
//   Convolution    BinaryConvolution (the chain's input thresholds, when given, a FakeQuantize before it)
//   Threshold      FakeQuantize with one rule per channel (input_low = input_high = the rule's threshold)
//   ScaleBias      Multiply and Add by per-channel constants (fused into a convolution before them, where
//                  the graph runs them as the chain does: one fma)
//   MaxPool        MaxPool (on bits or floats)
//   FullyConnected BinaryFullyConnected ([N, O] in the graph; a float network output is reshaped back to the
//                  chain's [N, O, 1, 1])
// The graph's input is "input", its output "output", as the chain's.
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "xnorcl/error.hpp"
#include "xnorcl/graph.hpp"
#include "xnorcl/network.hpp"

namespace xnorcl {
namespace {

using Ints = std::vector<std::int64_t>;

Ints pair_of(const std::array<int, 2>& a) {
  return {a[0], a[1]};
}

// FakeQuantize (levels 2) constants whose bit is the rule's: with input_low = input_high = t the value is
// output_low for x <= t and output_high above, and the bit is value > 0; NaN gives 0 as every rule does.
struct FakeQuantizeRule {
  float at = 0, low = 0, high = 1;
};
FakeQuantizeRule fake_quantize_rule(const Threshold& r) {
  const float inf = std::numeric_limits<float>::infinity();
  switch (r.mode) {
    case ThresholdMode::Greater:  // x > t
      return {r.value, 0.0f, 1.0f};
    case ThresholdMode::Less:  // x < t: 1 up to the float below t
      if (r.value == -inf) return {0.0f, 0.0f, 0.0f};
      return {std::nextafter(r.value, -inf), 1.0f, 0.0f};
    case ThresholdMode::AlwaysOne:
      return {0.0f, 1.0f, 1.0f};
    case ThresholdMode::AlwaysZero:
      break;
  }
  return {0.0f, 0.0f, 0.0f};
}

class ChainBuilder {
 public:
  explicit ChainBuilder(const NetworkSpec& spec) : spec_(spec) {
    g_.inputs = {{"input", Dims(spec.input.begin(), spec.input.end())}};
  }

  Graph build() {
    const std::vector<Activation> shapes = layer_shapes();
    for (std::size_t i = 0; i < spec_.layers.size(); ++i) {
      const std::string name = std::to_string(i) + ":" + layer_name(spec_.layers[i]);
      std::visit([&](const auto& layer) { add(name, layer, shapes[i]); }, spec_.layers[i]);
    }
    // The chain's float output of a fully connected layer is [N, O, 1, 1].
    if (std::holds_alternative<FullyConnectedLayer>(spec_.layers.back())) {
      const std::string shape =
          constant("output.shape", {4}, {float(out_dims_[0]), float(out_dims_[1]), 1, 1});
      node("output.reshape", "Reshape", {tensor_, shape}, {});
    }
    g_.outputs = {rename_last_output("output")};
    return std::move(g_);
  }

 private:
  // Each layer's input: its channels and whether it is packed (the chain was validated as a whole before;
  // one pass, so a file of many layers costs time in proportion).
  std::vector<Activation> layer_shapes() const {
    std::vector<Activation> in(spec_.layers.size());
    Activation a;
    a.shape = spec_.input;
    for (std::size_t i = 0; i < spec_.layers.size(); ++i) {
      in[i] = a;
      const Layer& layer = spec_.layers[i];
      if (const auto* c = std::get_if<ConvolutionLayer>(&layer)) {
        a.shape[1] = c->filter.shape()[0];
        a.packed = false;
      } else if (const auto* fc = std::get_if<FullyConnectedLayer>(&layer)) {
        a.shape[1] = fc->weights.shape()[0];
        a.packed = false;
      } else if (std::holds_alternative<ThresholdLayer>(layer)) {
        a.packed = true;
      } else if (std::holds_alternative<ScaleBiasLayer>(layer)) {
        a.packed = false;
      }
    }
    return in;
  }

  std::string constant(const std::string& name, Dims dims, std::vector<float> values) {
    g_.constants[name] = Constant::f32(std::move(dims), std::move(values));
    return name;
  }
  void node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
            Attributes attributes) {
    const std::string out = name + ":0";
    g_.nodes.push_back(Node{name, op, std::move(inputs), {out}, std::move(attributes)});
    tensor_ = out;
  }
  std::string rename_last_output(const std::string& name) {
    g_.nodes.back().outputs[0] = name;
    tensor_ = name;
    return name;
  }

  // A FakeQuantize of the current tensor with one rule per channel, or (`rules` empty) Greater 0 for every
  // channel as one-value constants: nothing is sized by a channel count the file merely claims.
  void fake_quantize(const std::string& name, std::vector<Threshold> rules, std::int64_t channels,
                     std::size_t rank) {
    if (rules.empty()) {
      rules.assign(1, Threshold{0.0f, ThresholdMode::Greater});
      channels = 1;
    }
    std::vector<float> at, low, high;
    for (const Threshold& r : rules) {
      const FakeQuantizeRule q = fake_quantize_rule(r);
      at.push_back(q.at);
      low.push_back(q.low);
      high.push_back(q.high);
    }
    Dims dims(rank, 1);
    dims[1] = channels;
    const std::string t = constant(name + ".at", dims, at);
    node(name, "FakeQuantize",
         {tensor_, t, t, constant(name + ".low", dims, low), constant(name + ".high", dims, high)},
         {{"levels", std::int64_t{2}}});
  }

  void add(const std::string& name, const ConvolutionLayer& c, const Activation& in) {
    const BinaryConvolution::Attributes& a = c.attributes;
    if (!a.input_thresholds.empty() && !in.packed) {
      std::vector<Threshold> rules;
      for (float t : a.input_thresholds) rules.push_back({t, ThresholdMode::Greater});
      fake_quantize(name + ".input_sign", rules, in.shape[1], 4);
    }
    const Shape& f = c.filter.shape();
    const auto& bytes = c.filter.msb_first_bytes();
    g_.constants[name + ".filter"] =
        Constant::u1({f[0], f[1], f[2], f[3]}, std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
    node(name, "BinaryConvolution", {tensor_, name + ".filter"},
         {{"strides", pair_of(a.strides)},
          {"pads_begin", pair_of(a.pads_begin)},
          {"pads_end", pair_of(a.pads_end)},
          {"dilations", pair_of(a.dilations)},
          {"mode", a.mode},
          {"pad_value", double(a.pad_value)},
          {"auto_pad", to_string(a.auto_pad)}});
    rank_ = 4;
  }
  void add(const std::string& name, const ThresholdLayer& t, const Activation& in) {
    fake_quantize(name, t.rules, in.shape[1], rank_);
  }
  void add(const std::string& name, const ScaleBiasLayer& s, const Activation& in) {
    Dims dims(rank_, 1);
    dims[1] = in.shape[1];
    node(name + ".scale", "Multiply", {tensor_, constant(name + ".scale", dims, s.scale)}, {});
    node(name, "Add", {tensor_, constant(name + ".bias", dims, s.bias)}, {});
  }
  void add(const std::string& name, const MaxPoolLayer& p, const Activation&) {
    const PoolAttributes& a = p.attributes;
    node(name, "MaxPool", {tensor_},
         {{"kernel", pair_of(a.kernel)},
          {"strides", pair_of(a.strides)},
          {"pads_begin", pair_of(a.pads_begin)},
          {"pads_end", pair_of(a.pads_end)},
          {"auto_pad", to_string(a.auto_pad)},
          {"rounding_type", to_string(a.rounding_type)}});
  }
  void add(const std::string& name, const FullyConnectedLayer& fc, const Activation& in) {
    const Shape& w = fc.weights.shape();
    const auto& bytes = fc.weights.msb_first_bytes();
    g_.constants[name + ".weights"] =
        Constant::u1({w[0], w[1], w[2], w[3]}, std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
    node(name, "BinaryFullyConnected", {tensor_, name + ".weights"}, {});
    rank_ = 2;  // [N, O]
    out_dims_ = {in.shape[0], w[0]};
  }

  const NetworkSpec& spec_;
  Graph g_;
  std::string tensor_ = "input";
  std::size_t rank_ = 4;
  std::array<std::int64_t, 2> out_dims_{};
};

}  // namespace

Graph network_graph(const NetworkSpec& spec) {
  if (spec.layers.empty()) throw InvalidArgument("network_graph: the layer chain is empty");
  (void)network_output(spec);  // validates the chain, naming the layer
  Graph g = ChainBuilder(spec).build();
  g.validate();
  return g;
}

}  // namespace xnorcl
