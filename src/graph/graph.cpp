// SPDX-License-Identifier: Apache-2.0
// Graph validation (names, definitions, cycles, each op's shape inference) and the host reference graph.
#include "xnorcl/graph.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <set>

#include "graph/node_views.hpp"
#include "ops/op.hpp"
#include "xnorcl/error.hpp"
#include "xnorcl/packed.hpp"

namespace xnorcl {

std::string to_string(const Dims& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

std::string to_string(ElementType type) {
  return type == ElementType::Bits ? "bits" : type == ElementType::UInt8 ? "u8" : "f32";
}

std::int64_t Tensor::element_count() const {
  return ops::product(dims);
}

double Tensor::ones_fraction() const {
  if (type != ElementType::Bits || element_count() == 0) return 0;
  std::int64_t ones = 0;
  for (std::uint32_t w : words) ones += __builtin_popcount(w);  // tail bits are 0 by the layout's contract
  return static_cast<double>(ones) / static_cast<double>(element_count());
}

Constant Constant::f32(Dims dims, std::vector<float> values) {
  Constant c;
  c.dims = std::move(dims);
  c.values = std::move(values);
  return c;
}

Constant Constant::u1(Dims dims, std::vector<std::uint8_t> msb_first_bits) {
  Constant c;
  c.dims = std::move(dims);
  c.type = ElementType::Bits;
  c.bits = std::move(msb_first_bits);
  return c;
}

namespace {

// Dimensions of an input or constant: 1 to max_rank axes (activations 4, constants 5: GroupConvolution's
// weights), each at least 1, at most 2^31 - 1 elements in all (the kernels index with int).
void check_dims(const Dims& dims, const std::string& what, std::size_t max_rank = 4) {
  if (dims.empty() || dims.size() > max_rank)
    throw InvalidArgument(what + " has " + std::to_string(dims.size()) + " axes " + to_string(dims) +
                          "; it may have 1 to " + std::to_string(max_rank));
  std::int64_t n = 1;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 1 || dims[i] > INT_MAX)
      throw InvalidArgument(what + " " + to_string(dims) + ": axis " + std::to_string(i) + " is " +
                            std::to_string(dims[i]) + ", outside 1.." + std::to_string(INT_MAX));
    if (n > INT_MAX / dims[i])
      throw InvalidArgument(what + " " + to_string(dims) + " holds more than " + std::to_string(INT_MAX) +
                            " elements");
    n *= dims[i];
  }
}

// A name as it can be shown in a message: bytes outside printable ASCII as \xNN.
std::string printable(const std::string& name) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char ch : name) {
    if (ch >= 0x20 && ch < 0x7f) {
      out += static_cast<char>(ch);
    } else {
      out += "\\x";
      out += hex[ch >> 4];
      out += hex[ch & 15];
    }
  }
  return out;
}

// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool valid_utf8(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    int extra = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      extra = 1, cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      extra = 2, cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      extra = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + static_cast<std::size_t>(extra) >= s.size()) return false;
    for (int k = 1; k <= extra; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    static const std::uint32_t smallest[] = {0, 0x80, 0x800, 0x10000};
    if (cp < smallest[extra] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += static_cast<std::size_t>(extra) + 1;
  }
  return true;
}

// Tensor and node names: what Python, the .xnn format and the messages can carry: non-empty UTF-8 without
// control characters (a NUL would cut the name short in C APIs; a name that is not UTF-8 cannot become a
// Python str).
void check_name(const std::string& name, const std::string& what) {
  if (name.empty()) throw InvalidArgument(what + " has an empty name");
  for (std::size_t i = 0; i < name.size(); ++i) {
    const unsigned char ch = static_cast<unsigned char>(name[i]);
    if (ch < 0x20 || ch == 0x7f)
      throw InvalidArgument(what + " '" + printable(name) + "': the name holds the control character \\x" +
                            printable(std::string(1, name[i])).substr(2) + " at byte " + std::to_string(i));
  }
  if (!valid_utf8(name)) throw InvalidArgument(what + " '" + printable(name) + "': the name is not UTF-8");
}

void check_constant(const std::string& name, const Constant& c) {
  const std::string what = "constant '" + name + "'";
  check_dims(c.dims, what, 5);
  const std::int64_t n = ops::product(c.dims);
  if (c.type == ElementType::Float32 && static_cast<std::int64_t>(c.values.size()) != n)
    throw InvalidArgument(what + " " + to_string(c.dims) + " needs " + std::to_string(n) +
                          " values, it has " + std::to_string(c.values.size()));
  if (c.type == ElementType::Bits && static_cast<std::int64_t>(c.bits.size()) != (n + 7) / 8)
    throw InvalidArgument(what + " " + to_string(c.dims) + " needs " + std::to_string((n + 7) / 8) +
                          " bytes of bits, it has " + std::to_string(c.bits.size()));
}

}  // namespace

namespace detail {

GraphIndex index_graph(const Graph& graph) {
  GraphIndex index;
  std::set<std::string> node_names;
  for (const GraphInput& in : graph.inputs) {
    check_name(in.name, "a graph input");
    check_dims(in.dims, "graph input '" + in.name + "'");
    if (!index.producer.emplace(in.name, -1).second)
      throw InvalidArgument("graph input '" + in.name + "' is declared twice");
    if (in.type == ElementType::Bits)
      throw InvalidArgument("graph input '" + in.name + "' is bits; graph inputs are f32, or u8 images");
    if (in.type == ElementType::UInt8 && in.dims.size() != 4)
      throw InvalidArgument("graph input '" + in.name + "' is a u8 image of dims " + to_string(in.dims) +
                            "; images are [N, H, W, 3 or 4]");
    index.infos[in.name] = {in.dims, in.type};
  }
  for (const auto& [name, c] : graph.constants) {
    check_name(name, "a constant");
    check_constant(name, c);
    if (!index.producer.emplace(name, -2).second)
      throw InvalidArgument("constant '" + name + "' has the name of a graph input");
  }
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    if (n.name.empty())
      throw InvalidArgument("node " + std::to_string(i) + " (" + printable(n.op) + ") has no name");
    check_name(n.name, "node " + std::to_string(i));
    if (!node_names.insert(n.name).second) throw InvalidArgument("two nodes are named '" + n.name + "'");
    if (!ops::find_op(n.op)) {
      std::string known;
      for (const std::string& op : ops::op_names()) known += (known.empty() ? "" : ", ") + op;
      throw InvalidArgument("node '" + n.name + "': unsupported op '" + printable(n.op) + "' (xnorcl has " +
                            known + ")");
    }
    if (n.outputs.empty()) throw InvalidArgument("node '" + n.name + "' (" + n.op + ") defines no output");
    for (const std::string& out : n.outputs) {
      check_name(out, "an output of node '" + n.name + "'");
      const auto [it, fresh] = index.producer.emplace(out, static_cast<int>(i));
      if (!fresh) {
        const std::string by = it->second == -1 ? "a graph input"
                               : it->second == -2
                                   ? "a constant"
                                   : "node '" + graph.nodes[static_cast<std::size_t>(it->second)].name + "'";
        throw InvalidArgument("node '" + n.name + "' (" + n.op + "): its output '" + out +
                              "' is already defined by " + by);
      }
    }
  }
  for (const Node& n : graph.nodes)
    for (const std::string& in : n.inputs)
      if (!index.producer.count(in))
        throw InvalidArgument("node '" + n.name + "' (" + n.op + "): input '" + in +
                              "' is no graph input, constant or node output");
  return index;
}

std::vector<std::size_t> topological(const Graph& graph, const GraphIndex& index) {
  // Kahn's algorithm, taking ready nodes in their declaration order so the order is deterministic.
  std::vector<int> waiting(graph.nodes.size(), 0);
  std::vector<std::vector<std::size_t>> readers(graph.nodes.size());
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const std::string& in : graph.nodes[i].inputs) {
      const int p = index.producer.at(in);
      if (p >= 0) {
        ++waiting[i];
        readers[static_cast<std::size_t>(p)].push_back(i);
      }
    }
  }
  std::set<std::size_t> ready;
  for (std::size_t i = 0; i < waiting.size(); ++i)
    if (waiting[i] == 0) ready.insert(i);
  std::vector<std::size_t> order;
  while (!ready.empty()) {
    const std::size_t i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (std::size_t r : readers[i])
      if (--waiting[r] == 0) ready.insert(r);
  }
  if (order.size() != graph.nodes.size()) {
    std::string cycle;
    for (std::size_t i = 0; i < waiting.size(); ++i)
      if (waiting[i] > 0) cycle += (cycle.empty() ? "'" : ", '") + graph.nodes[i].name + "'";
    throw InvalidArgument("the graph has a cycle through nodes " + cycle);
  }
  return order;
}

ops::NodeView view_of(const Graph& graph, const Node& node, const std::map<std::string, TensorInfo>& infos) {
  ops::NodeView v;
  v.node = &node;
  for (const std::string& in : node.inputs) {
    const auto c = graph.constants.find(in);
    if (c != graph.constants.end()) {
      v.inputs.push_back({c->second.dims, c->second.type});
      v.constants.push_back(&c->second);
    } else {
      v.inputs.push_back(infos.at(in));
      v.constants.push_back(nullptr);
    }
  }
  return v;
}

// The op's shape inference; a refusal that does not name the node yet (the layer classes' own checks, shared
// with their direct users, start with "BinaryConvolution: ...") gets the node's name in front.
std::vector<TensorInfo> infer_naming_the_node(const ops::NodeView& v) {
  // Image bytes are read by ImageToTensor alone: the other ops size their buffers as floats or words.
  if (v.node->op != "ImageToTensor")
    for (std::size_t i = 0; i < v.inputs.size(); ++i)
      if (v.inputs[i].type == ElementType::UInt8)
        throw InvalidArgument(v.where() + ": input " + std::to_string(i) + " ('" + v.node->inputs[i] +
                              "') is a u8 image; only ImageToTensor reads images (see with_image_input)");
  try {
    return ops::find_op(v.node->op)->infer(v);
  } catch (const InvalidArgument& e) {
    const std::string message = e.what();
    if (message.rfind(v.where(), 0) == 0) throw;
    throw InvalidArgument(v.where() + ": " + message);
  }
}

ValidatedGraph validate_graph(const Graph& graph) {
  ValidatedGraph g;
  GraphIndex index = index_graph(graph);
  g.order = topological(graph, index);
  for (std::size_t i : g.order) {
    const Node& node = graph.nodes[i];
    const ops::NodeView v = view_of(graph, node, index.infos);
    std::vector<TensorInfo> outs = infer_naming_the_node(v);
    if (outs.size() != node.outputs.size())
      throw InvalidArgument(v.where() + ": defines " + std::to_string(node.outputs.size()) +
                            " outputs, the op has " + std::to_string(outs.size()));
    for (std::size_t k = 0; k < outs.size(); ++k) index.infos[node.outputs[k]] = std::move(outs[k]);
  }
  if (graph.outputs.empty()) throw InvalidArgument("the graph has no output");
  for (const std::string& out : graph.outputs) {
    if (!index.infos.count(out) || graph.constants.count(out))
      throw InvalidArgument("graph output '" + printable(out) + "' is no graph input or node output");
  }
  g.infos = std::move(index.infos);
  g.producer = std::move(index.producer);
  return g;
}

}  // namespace detail

std::map<std::string, TensorInfo> Graph::validate() const {
  return detail::validate_graph(*this).infos;
}

std::vector<const Node*> Graph::topological_order() const {
  std::vector<const Node*> nodes;
  for (std::size_t i : detail::validate_graph(*this).order) nodes.push_back(&this->nodes[i]);
  return nodes;
}

std::vector<std::string> Graph::supported_ops() {
  return ops::op_names();
}

namespace detail {

void check_graph_inputs(const Graph& graph, const std::map<std::string, Tensor>& inputs) {
  for (const auto& entry : inputs) {
    const std::string& name = entry.first;  // a named variable: C++17 lambdas cannot capture bindings
    const Tensor& t = entry.second;
    const auto it = std::find_if(graph.inputs.begin(), graph.inputs.end(),
                                 [&](const GraphInput& in) { return in.name == name; });
    if (it == graph.inputs.end()) throw InvalidArgument("'" + name + "' is no input of the graph");
    const bool image = it->type == ElementType::UInt8;
    const std::size_t count = image ? t.bytes.size() : t.values.size();
    if (t.type != it->type || t.dims != it->dims ||
        static_cast<std::int64_t>(count) != ops::product(it->dims))
      throw InvalidArgument("graph input '" + name + "' must be " + to_string(it->type) + " " +
                            to_string(it->dims) + " (" + std::to_string(ops::product(it->dims)) +
                            (image ? " bytes" : " values") + "); it is " + to_string(t.type) + " " +
                            to_string(t.dims) + " with " + std::to_string(count) +
                            (image ? " bytes" : " values"));
  }
  for (const GraphInput& in : graph.inputs)
    if (!inputs.count(in.name)) throw InvalidArgument("graph input '" + in.name + "' is not given");
}

}  // namespace detail

std::string to_string(PixelFormat format) {
  const char* names[] = {"rgb", "rgba", "bgr", "bgra"};
  return names[static_cast<int>(format)];
}

std::string to_string(ChannelOrder order) {
  return order == ChannelOrder::RGB ? "rgb" : "bgr";
}

PixelFormat parse_pixel_format(const std::string& text) {
  for (PixelFormat f : {PixelFormat::RGB, PixelFormat::RGBA, PixelFormat::BGR, PixelFormat::BGRA})
    if (text == to_string(f)) return f;
  throw InvalidArgument("format '" + text + "' is none of rgb, rgba, bgr, bgra");
}

ChannelOrder parse_channel_order(const std::string& text) {
  for (ChannelOrder o : {ChannelOrder::RGB, ChannelOrder::BGR})
    if (text == to_string(o)) return o;
  throw InvalidArgument("order '" + text + "' is neither rgb nor bgr");
}

Graph with_image_input(Graph graph, const std::string& input, const ImageInput& image) {
  const auto it = std::find_if(graph.inputs.begin(), graph.inputs.end(),
                               [&](const GraphInput& in) { return in.name == input; });
  if (it == graph.inputs.end()) throw InvalidArgument("with_image_input: '" + input + "' is no graph input");
  const Dims d = it->dims;
  // NCHW [N, 3, H, W]; else NHWC [N, H, W, 3], as models converted from TensorFlow take their images.
  const bool nhwc = d.size() == 4 && d[1] != 3 && d[3] == 3;
  if (it->type != ElementType::Float32 || d.size() != 4 || (d[1] != 3 && !nhwc))
    throw InvalidArgument("with_image_input: graph input '" + input + "' is " + to_string(it->type) + " " +
                          to_string(d) + "; an image becomes f32 [N, 3, H, W] or [N, H, W, 3]");
  for (std::size_t c = 0; c < 3; ++c)
    if (!std::isfinite(image.mean[c]) || !std::isfinite(image.scale[c]))
      throw InvalidArgument("with_image_input: mean[" + std::to_string(c) +
                            "] = " + std::to_string(image.mean[c]) + ", scale[" + std::to_string(c) +
                            "] = " + std::to_string(image.scale[c]) + "; both must be finite");
  // The converted tensor takes a name no tensor or node has yet; every reader of the input reads it instead.
  std::set<std::string> taken;
  for (const GraphInput& in : graph.inputs) taken.insert(in.name);
  for (const auto& entry : graph.constants) taken.insert(entry.first);
  for (const Node& n : graph.nodes) {
    taken.insert(n.name);
    taken.insert(n.outputs.begin(), n.outputs.end());
  }
  std::string converted = input + "/image";
  for (int k = 2; taken.count(converted); ++k) converted = input + "/image" + std::to_string(k);
  for (Node& n : graph.nodes) std::replace(n.inputs.begin(), n.inputs.end(), input, converted);
  std::replace(graph.outputs.begin(), graph.outputs.end(), input, converted);
  const bool four = image.format == PixelFormat::RGBA || image.format == PixelFormat::BGRA;
  Attributes a;
  a["format"] = to_string(image.format);
  a["order"] = to_string(image.order);
  a["mean"] = std::vector<double>(image.mean.begin(), image.mean.end());
  a["scale"] = std::vector<double>(image.scale.begin(), image.scale.end());
  if (nhwc) a["layout"] = std::string("nhwc");
  graph.nodes.push_back(Node{converted, "ImageToTensor", {input}, {converted}, std::move(a)});
  it->dims = nhwc ? Dims{d[0], d[1], d[2], four ? 4 : 3} : Dims{d[0], d[2], d[3], four ? 4 : 3};
  it->type = ElementType::UInt8;
  return graph;
}

std::vector<Tensor> reference_node(const Graph& graph, const Node& node,
                                   const std::map<std::string, Tensor>& tensors) {
  // The node's own inputs only: a graph's reference stays linear in its node count.
  std::map<std::string, TensorInfo> infos;
  for (const std::string& in : node.inputs) {
    const auto t = tensors.find(in);
    if (t != tensors.end())
      infos[in] = {t->second.dims, t->second.type};
    else if (!graph.constants.count(in))
      throw InvalidArgument("node '" + node.name + "' (" + node.op + "): input '" + in + "' is not given");
  }
  const ops::Op* op = ops::find_op(node.op);
  if (!op) throw InvalidArgument("node '" + node.name + "': unsupported op '" + node.op + "'");
  const ops::NodeView v = detail::view_of(graph, node, infos);
  detail::infer_naming_the_node(v);  // validates
  std::vector<const Tensor*> in;
  for (std::size_t i = 0; i < node.inputs.size(); ++i)
    in.push_back(v.constants[i] ? nullptr : &tensors.at(node.inputs[i]));
  return op->reference(v, in);
}

std::map<std::string, Tensor> reference_graph(const Graph& graph,
                                              const std::map<std::string, Tensor>& inputs) {
  const detail::ValidatedGraph g = detail::validate_graph(graph);
  detail::check_graph_inputs(graph, inputs);
  std::map<std::string, Tensor> tensors = inputs;
  for (std::size_t i : g.order) {
    const Node& node = graph.nodes[i];
    std::vector<Tensor> outs = reference_node(graph, node, tensors);
    for (std::size_t k = 0; k < outs.size(); ++k) tensors[node.outputs[k]] = std::move(outs[k]);
  }
  return tensors;
}

}  // namespace xnorcl
