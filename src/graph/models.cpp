// SPDX-License-Identifier: Apache-2.0
// Bi-Real Net-18 and a binary ResNet-18 as graphs (xnorcl/models.hpp): a small builder that names every
// node after its place in the network, then a calibration pass on the host reference that sets every
// sign's per-channel thresholds to the median of the values it sees.
#include "xnorcl/models.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "xnorcl/error.hpp"

namespace xnorcl {

namespace {

using Ints = std::vector<std::int64_t>;

class Builder {
 public:
  explicit Builder(std::uint64_t seed) : rng_(seed) {}

  Graph graph;

  std::string node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
                   Attributes attributes = {}) {
    graph.nodes.push_back(Node{name, op, std::move(inputs), {name}, std::move(attributes)});
    return name;
  }
  std::string constant(const std::string& name, Constant c) {
    graph.constants[name] = std::move(c);
    return name;
  }
  std::vector<float> uniform(std::size_t n, float lo, float hi) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = d(rng_);
    return v;
  }

  // A folded batch-norm: per-channel scale (random sign on a few channels, as trained networks have) and
  // shift.
  std::string batch_norm(const std::string& name, const std::string& x, std::int64_t channels) {
    std::vector<float> scale = uniform(static_cast<std::size_t>(channels), 0.5f, 1.5f);
    for (std::size_t c = 0; c < scale.size(); c += 7) scale[c] = -scale[c];
    const Dims per_channel{1, channels, 1, 1};
    const std::string m =
        node(name + ".scale", "Multiply", {x, constant(name + ".gamma", Constant::f32(per_channel, scale))});
    return node(
        name + ".shift", "Add",
        {m, constant(name + ".beta", Constant::f32(per_channel, uniform(scale.size(), -0.5f, 0.5f)))});
  }
  std::string sign(const std::string& name, const std::string& x, std::int64_t channels) {
    const Dims per_channel{1, channels, 1, 1};
    const std::string t =
        constant(name + ".threshold", Constant::f32(per_channel, std::vector<float>(channels, 0.0f)));
    const std::string lo = constant(name + ".low", Constant::f32({1}, {-1.0f}));
    const std::string hi = constant(name + ".high", Constant::f32({1}, {1.0f}));
    signs_.push_back(name);
    return node(name, "FakeQuantize", {x, t, t, lo, hi}, {{"levels", std::int64_t{2}}});
  }
  std::string binary_conv(const std::string& name, const std::string& bits, std::int64_t c_in,
                          std::int64_t c_out, std::int64_t stride, double pad_value) {
    const std::int64_t n = c_out * c_in * 9;
    std::vector<std::uint8_t> w(static_cast<std::size_t>((n + 7) / 8));
    for (auto& b : w) b = static_cast<std::uint8_t>(rng_());
    return node(name, "BinaryConvolution",
                {bits, constant(name + ".weights", Constant::u1({c_out, c_in, 3, 3}, w))},
                {{"strides", Ints{stride, stride}},
                 {"pads_begin", Ints{1, 1}},
                 {"pads_end", Ints{1, 1}},
                 {"dilations", Ints{1, 1}},
                 {"mode", std::string("xnor-popcount")},
                 {"pad_value", pad_value}});
  }
  std::string float_conv(const std::string& name, const std::string& x, std::int64_t c_in, std::int64_t c_out,
                         std::int64_t k, std::int64_t stride) {
    const float bound = std::sqrt(3.0f / static_cast<float>(c_in * k * k));  // unit output variance
    const std::int64_t p = k / 2;
    return node(
        name, "Convolution",
        {x, constant(name + ".weights",
                     Constant::f32({c_out, c_in, k, k},
                                   uniform(static_cast<std::size_t>(c_out * c_in * k * k), -bound, bound)))},
        {{"strides", Ints{stride, stride}},
         {"pads_begin", Ints{p, p}},
         {"pads_end", Ints{p, p}},
         {"dilations", Ints{1, 1}}});
  }
  std::string pool(const std::string& name, const std::string& op, const std::string& x, std::int64_t k,
                   std::int64_t stride, std::int64_t pad) {
    Attributes a{{"kernel", Ints{k, k}},
                 {"strides", Ints{stride, stride}},
                 {"pads_begin", Ints{pad, pad}},
                 {"pads_end", Ints{pad, pad}},
                 {"rounding_type", std::string("floor")}};
    if (op == "AvgPool") a["exclude-pad"] = std::int64_t{1};
    return node(name, op, {x}, a);
  }
  std::string stem(const std::string& x, std::int64_t c) {
    const std::string conv = float_conv("stem.conv", x, 3, c, 7, 2);
    return pool("stem.pool", "MaxPool", batch_norm("stem.bn", conv, c), 3, 2, 1);
  }
  std::string head(const std::string& x, std::int64_t c, std::int64_t classes) {
    const std::string mean =
        node("head.pool", "ReduceMean", {x, constant("head.axes", Constant::f32({2}, {2, 3}))},
             {{"keep_dims", std::int64_t{1}}});
    // [N, C, 1, 1] -> [N, C]: 0 keeps the batch axis (special_zero), -1 takes the rest.
    const std::string flat =
        node("head.flatten", "Reshape", {mean, constant("head.shape", Constant::f32({2}, {0, -1}))},
             {{"special_zero", std::int64_t{1}}});
    const float bound = std::sqrt(3.0f / static_cast<float>(c));
    const std::string fc =
        node("head.fc", "MatMul",
             {flat, constant("head.fc.weights",
                             Constant::f32({c, classes},
                                           uniform(static_cast<std::size_t>(c * classes), -bound, bound)))},
             {{"transpose_a", std::int64_t{0}}, {"transpose_b", std::int64_t{0}}});
    return node(
        "logits", "Add",
        {fc, constant("head.fc.bias",
                      Constant::f32({1, classes}, uniform(static_cast<std::size_t>(classes), -0.1f, 0.1f)))});
  }

  const std::vector<std::string>& signs() const { return signs_; }

 private:
  std::mt19937_64 rng_;
  std::vector<std::string> signs_;
};

std::vector<std::int64_t> stage_widths(int divisor) {
  if (divisor < 1 || 64 % divisor != 0)
    throw InvalidArgument("ModelOptions::width_divisor " + std::to_string(divisor) + " must divide 64");
  return {64 / divisor, 128 / divisor, 256 / divisor, 512 / divisor};
}

void check_options(const ModelOptions& o) {
  if (o.batch < 1 || o.height < 32 || o.width < 32 || o.classes < 1 || o.calibration_size < 32)
    throw InvalidArgument("ModelOptions: batch " + std::to_string(o.batch) + ", height " +
                          std::to_string(o.height) + ", width " + std::to_string(o.width) + ", classes " +
                          std::to_string(o.classes) + ", calibration_size " +
                          std::to_string(o.calibration_size) +
                          ": batch and classes must be at least 1, the sizes at least 32");
}

// Runs the reference node by node on a seeded calibration image and sets each sign's thresholds to the
// per-channel lower median of its input, before the nodes after it run.
void calibrate(Graph& g, const std::vector<std::string>& signs, std::int64_t size, std::uint64_t seed) {
  Graph c = g;
  c.inputs[0].dims = {1, 3, size, size};
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  std::uniform_real_distribution<float> pixel(-1.0f, 1.0f);
  Tensor x;
  x.dims = c.inputs[0].dims;
  x.values.resize(static_cast<std::size_t>(3 * size * size));
  for (float& v : x.values) v = pixel(rng);
  std::map<std::string, Tensor> tensors{{c.inputs[0].name, x}};
  for (const Node* node : c.topological_order()) {
    if (std::find(signs.begin(), signs.end(), node->name) != signs.end()) {
      const Tensor& in = tensors.at(node->inputs[0]);
      const std::int64_t channels = in.dims[1], plane = in.dims[2] * in.dims[3];
      std::vector<float>& t = c.constants[node->inputs[1]].values;
      for (std::int64_t ch = 0; ch < channels; ++ch) {
        std::vector<float> v(in.values.begin() + ch * plane, in.values.begin() + (ch + 1) * plane);
        std::nth_element(v.begin(), v.begin() + (plane - 1) / 2, v.end());
        t[static_cast<std::size_t>(ch)] = v[static_cast<std::size_t>((plane - 1) / 2)];
      }
      g.constants[node->inputs[1]].values = t;
    }
    std::vector<Tensor> out = reference_node(c, *node, tensors);
    tensors[node->outputs[0]] = std::move(out[0]);
  }
}

Graph finish(Builder& b, const std::string& x, std::int64_t channels, const ModelOptions& o) {
  b.head(x, channels, o.classes);
  b.graph.outputs = {"logits"};
  calibrate(b.graph, b.signs(), o.calibration_size, o.seed);
  return std::move(b.graph);
}

// The stem, four stages of `units` residual units each (the first unit of stages 2-4 halves the resolution),
// and the head. unit(b, name, x, c_in, c_out, stride) adds one unit and returns its output.
template <typename Unit>
Graph residual_network(const ModelOptions& o, int units, const std::string& unit_name, const Unit& unit) {
  check_options(o);
  const std::vector<std::int64_t> widths = stage_widths(o.width_divisor);
  Builder b(o.seed);
  b.graph.inputs.push_back({"input", {o.batch, 3, o.height, o.width}});
  std::string x = b.stem("input", widths[0]);
  std::int64_t c_in = widths[0];
  for (int stage = 0; stage < 4; ++stage) {
    for (int u = 0; u < units; ++u) {
      const std::string name = "stage" + std::to_string(stage + 1) + "." + unit_name + std::to_string(u + 1);
      const std::int64_t c_out = widths[static_cast<std::size_t>(stage)];
      x = unit(b, name, x, c_in, c_out, stage > 0 && u == 0 ? 2 : 1);
      c_in = c_out;
    }
  }
  return finish(b, x, c_in, o);
}

}  // namespace

// Bi-Real Net: a real-valued shortcut around every binary convolution; downsampling shortcuts average-pool,
// then a float 1x1 convolution.
Graph bireal18(const ModelOptions& o) {
  return residual_network(
      o, 4, "conv",
      [](Builder& b, const std::string& name, const std::string& x, std::int64_t c_in, std::int64_t c_out,
         std::int64_t stride) {
        std::string shortcut = x;
        if (stride == 2) {
          shortcut = b.pool(name + ".down.pool", "AvgPool", x, 2, 2, 0);
          shortcut = b.batch_norm(name + ".down.bn",
                                  b.float_conv(name + ".down.conv", shortcut, c_in, c_out, 1, 1), c_out);
        }
        const std::string bits = b.sign(name + ".sign", x, c_in);
        const std::string y =
            b.batch_norm(name + ".bn", b.binary_conv(name, bits, c_in, c_out, stride, 0.0), c_out);
        return b.node(name + ".add", "Add", {y, shortcut});
      });
}

// Binary ResNet-18: basic blocks of two binary convolutions; downsampling shortcuts are a strided float 1x1
// convolution.
Graph resnet18_binary(const ModelOptions& o) {
  return residual_network(
      o, 2, "block",
      [](Builder& b, const std::string& name, const std::string& x, std::int64_t c_in, std::int64_t c_out,
         std::int64_t stride) {
        std::string shortcut = x;
        if (stride == 2)
          shortcut =
              b.batch_norm(name + ".down.bn", b.float_conv(name + ".down.conv", x, c_in, c_out, 1, 2), c_out);
        std::string h = b.sign(name + ".sign1", x, c_in);
        h = b.batch_norm(name + ".bn1", b.binary_conv(name + ".conv1", h, c_in, c_out, stride, -1.0), c_out);
        h = b.sign(name + ".sign2", h, c_out);
        h = b.batch_norm(name + ".bn2", b.binary_conv(name + ".conv2", h, c_out, c_out, 1, -1.0), c_out);
        return b.node(name + ".add", "Add", {h, shortcut});
      });
}

}  // namespace xnorcl
