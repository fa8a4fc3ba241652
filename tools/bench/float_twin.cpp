// SPDX-License-Identifier: Apache-2.0
// The float32 twin of a binary graph: the same layers and shapes with float ops, run by xnorcl::Model like
// any graph, so that `xnorcl-bench network` times what a float32 network of that architecture costs on the
// same device and queue.
#include <cstdint>
#include <string>

#include "bench.hpp"
#include "xnorcl/xnorcl.hpp"

namespace xnorcl_bench {

namespace {

// Binary weights as +-1 floats: bit 1 is +1 (MSB-first bytes, as Constant::u1).
xnorcl::Constant signed_floats(const xnorcl::Constant& bits, xnorcl::Dims dims) {
  std::int64_t count = 1;
  for (std::int64_t d : bits.dims) count *= d;
  std::vector<float> values(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = (bits.bits[i / 8] >> (7 - i % 8)) & 1u ? 1.0f : -1.0f;
  return xnorcl::Constant::f32(std::move(dims), std::move(values));
}

}  // namespace

xnorcl::Graph float_twin(const xnorcl::Graph& binary) {
  const auto infos = binary.validate();
  xnorcl::Graph g;
  g.inputs = binary.inputs;
  g.outputs = binary.outputs;
  g.constants = binary.constants;
  for (const xnorcl::Node& n : binary.nodes) {
    if (n.op == "BinaryConvolution") {
      // Zero padding, as float convolutions pad; mode and pad_value have no float meaning.
      xnorcl::Node conv{n.name, "Convolution", n.inputs, n.outputs, {}};
      for (const char* a : {"strides", "pads_begin", "pads_end", "dilations", "auto_pad"})
        if (n.attributes.count(a)) conv.attributes[a] = n.attributes.at(a);
      conv.inputs[1] = n.inputs[1] + ".f32";
      const xnorcl::Constant& w = binary.constants.at(n.inputs[1]);
      g.constants[conv.inputs[1]] = signed_floats(w, w.dims);
      g.nodes.push_back(conv);
    } else if (n.op == "FakeQuantize") {
      // The float network's batch-norm shift and activation: x - input_low, then a Relu (what a float
      // convolution before it runs in its epilogue).
      const std::string shifted = n.name + ".shift", shift = n.inputs[1] + ".negated";
      xnorcl::Constant negated = binary.constants.at(n.inputs[1]);
      for (float& v : negated.values) v = -v;
      g.constants[shift] = negated;
      g.nodes.push_back({shifted, "Add", {n.inputs[0], shift}, {shifted}, {}});
      g.nodes.push_back({n.name, "Relu", {shifted}, n.outputs, {}});
    } else if (n.op == "BinaryFullyConnected") {
      // A MatMul of [N, K] by the +-1 weights [O, K] (transposed), after a Reshape of a 4-D input.
      const xnorcl::Dims& in = infos.at(n.inputs[0]).dims;
      const xnorcl::Constant& w = binary.constants.at(n.inputs[1]);
      const std::int64_t outputs = w.dims[0], k = in.size() == 4 ? in[1] * in[2] * in[3] : in[1];
      std::string x = n.inputs[0];
      if (in.size() == 4) {
        x = n.name + ".flat";
        g.nodes.push_back(
            {x, "Reshape", {n.inputs[0]}, {x}, {{"shape", std::vector<std::int64_t>{in[0], k}}}});
      }
      g.constants[n.inputs[1] + ".f32"] = signed_floats(w, {outputs, k});
      g.nodes.push_back(
          {n.name, "MatMul", {x, n.inputs[1] + ".f32"}, n.outputs, {{"transpose_b", std::int64_t{1}}}});
    } else {
      g.nodes.push_back(n);  // float ops, and MaxPool (of floats now)
    }
  }
  for (auto it = g.constants.begin(); it != g.constants.end();)  // the bits constants are not read any more
    it = it->second.type == xnorcl::ElementType::Bits ? g.constants.erase(it) : std::next(it);
  return g;
}

}  // namespace xnorcl_bench
