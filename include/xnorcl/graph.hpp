// SPDX-License-Identifier: Apache-2.0
// Graphs: networks of operations over named tensors (several inputs and outputs, branches, residual Add,
// Concat), validated and shape-inferred when built, run whole on one device by a Model.
//
// A Graph is a plain description (a value type: build it in code, or load it from a .xnn file). Operations
// are named and behave as OpenVINO's opset operations of the same name; see docs/graph.md for each op's
// inputs, attributes and the few ways in which xnorcl is stricter. Tensors carry one of two element types:
//   Float32  float values, row-major (NCHW for 4-D activations);
//   Bits     packed binary activations (the layout of xnorcl/packed.hpp: a logical [N, C, H, W] shape stored
//            as 32-bit words [N][H][W][ceil(C/32)], bit 1 is +1). FakeQuantize with levels 2 produces them;
//            BinaryConvolution, MaxPool and BinaryFullyConnected read them.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "xnorcl/binary_convolution.hpp"
#include "xnorcl/opencl.hpp"
#include "xnorcl/runtime.hpp"

namespace xnorcl {

using Dims = std::vector<std::int64_t>;
std::string to_string(const Dims& dims);  // "[1, 64, 56, 56]"

// UInt8: interleaved image bytes, only as a graph input read by ImageToTensor (with_image_input below).
enum class ElementType : std::uint8_t { Float32, Bits, UInt8 };
std::string to_string(ElementType type);  // "f32", "bits", "u8"

struct TensorInfo {
  Dims dims;
  ElementType type = ElementType::Float32;
};

// A tensor's content on the host: float values, or packed 32-bit words (xnorcl/packed.hpp) of a 4-D logical
// shape ([N, C] counts as [N, C, 1, 1]).
struct Tensor {
  Dims dims;
  ElementType type = ElementType::Float32;
  std::vector<float> values;         // Float32: product(dims) values
  std::vector<std::uint32_t> words;  // Bits: packed_word_count(shape) words
  std::vector<std::uint8_t> bytes;   // UInt8: product(dims) bytes
  std::int64_t element_count() const;
  double ones_fraction() const;  // Bits: set bits / element_count() (how well a threshold cuts its input)
};

// A constant input of a node (weights, per-channel parameters). Float32 values, or binary weights as bits
// in flat row-major order, most significant bit first (element i is bit 7 - i%8 of byte i/8, as
// ov::element::u1).
struct Constant {
  Dims dims;
  ElementType type = ElementType::Float32;
  std::vector<float> values;       // Float32
  std::vector<std::uint8_t> bits;  // Bits: ceil(product(dims) / 8) bytes
  static Constant f32(Dims dims, std::vector<float> values);
  static Constant u1(Dims dims, std::vector<std::uint8_t> msb_first_bits);
};

// Attribute values as in OpenVINO IR: integers, floats, strings and lists of them.
using AttributeValue =
    std::variant<std::int64_t, double, std::string, std::vector<std::int64_t>, std::vector<double>>;
using Attributes = std::map<std::string, AttributeValue>;

struct Node {
  std::string name;                  // unique within the graph; names the node in errors and timings
  std::string op;                    // "BinaryConvolution", "Add", ... (Graph::supported_ops())
  std::vector<std::string> inputs;   // tensor names: graph inputs, constants or other nodes' outputs
  std::vector<std::string> outputs;  // tensor names this node defines (one per op output)
  Attributes attributes;
};

struct GraphInput {
  std::string name;
  Dims dims;
  ElementType type = ElementType::Float32;  // or UInt8: an image's bytes [N, H, W, 3 or 4]
};

class Graph {
 public:
  std::vector<GraphInput> inputs;
  std::map<std::string, Constant> constants;
  std::vector<Node> nodes;           // any order; the graph is sorted when validated
  std::vector<std::string> outputs;  // tensor names

  // Checks the whole graph and infers every tensor's shape and type: unique names, known ops, every input
  // defined exactly once, no cycle, each op's attributes and input shapes and types. Throws InvalidArgument
  // naming the node, its op and the values. Needs no device.
  std::map<std::string, TensorInfo> validate() const;
  // The nodes in an order where every node comes after the nodes it reads (validates first).
  std::vector<const Node*> topological_order() const;

  static std::vector<std::string> supported_ops();
};

// Camera frames in: how the bytes of an interleaved uint8 image become a model's float input.
enum class PixelFormat { RGB, RGBA, BGR, BGRA };  // the bytes of one pixel; RGBA's and BGRA's 4th is dropped
enum class ChannelOrder { RGB, BGR };             // the model's channels
// As ImageToTensor's attributes spell them: "rgb", "rgba", "bgr", "bgra"; "rgb", "bgr".
std::string to_string(PixelFormat format);
std::string to_string(ChannelOrder order);
// The format or order a text names; InvalidArgument naming the text and the choices otherwise.
PixelFormat parse_pixel_format(const std::string& text);
ChannelOrder parse_channel_order(const std::string& text);
struct ImageInput {
  PixelFormat format = PixelFormat::RGBA;
  ChannelOrder order = ChannelOrder::RGB;
  std::array<float, 3> mean{0.0f, 0.0f, 0.0f};   // per model channel, subtracted from the byte value
  std::array<float, 3> scale{1.0f, 1.0f, 1.0f};  // per model channel, multiplied after the subtraction
};
// `graph` with its Float32 input `input` [N, 3, H, W] (or NHWC [N, H, W, 3], as models converted from
// TensorFlow take images) taken as an image instead: the input keeps its name
// and becomes UInt8 [N, H, W, 3 or 4] (NHWC, as cameras and bitmaps hold pixels), and an ImageToTensor node
// converts it on the device, value = (byte - mean[c]) * scale[c] in the model's channel order. No resizing:
// frames must have the model's height and width. Throws InvalidArgument for an unknown input, one that is
// not Float32 [N, 3, H, W] or [N, H, W, 3], or a mean or scale that is not finite. The same conversion can be
// written into a graph as an ImageToTensor node (docs/graph.md), and saved with it.
Graph with_image_input(Graph graph, const std::string& input, const ImageInput& image);

// The host reference: every tensor of the graph (inputs, constants excluded, every node output) computed
// on the host. Binary ops count exactly as the device does (bitwise equal); float ops accumulate in double
// and round once to float per tensor. `inputs` maps each graph input name to its Float32 tensor.
std::map<std::string, Tensor> reference_graph(const Graph& graph,
                                              const std::map<std::string, Tensor>& inputs);
// One node's reference from given input tensors (the executor's own inputs, say): its outputs in order.
std::vector<Tensor> reference_node(const Graph& graph, const Node& node,
                                   const std::map<std::string, Tensor>& tensors);

// What a Model runs: one entry per launch group, in order.
struct GraphPlan {
  struct Step {
    std::string node;                // the node, or "conv3+bn3+sign4" for fused nodes
    std::vector<std::string> fused;  // every node it computes
    std::string description;         // kernels and sizes
    // Its tunable kernel's configuration (docs/tuning.md): "tuned <config>", "default <config>", or "" where
    // nothing in the step is tuned.
    std::string tuning;
  };
  Variant variant = Variant::Global;
  std::vector<Step> steps;
  std::size_t activation_bytes = 0;  // device bytes of the activation buffers (after reuse by liveness)
  std::size_t weight_bytes = 0;      // device bytes of weights and per-node tables
  std::size_t largest_live_pair_bytes = 0;  // the largest sum of two tensors live at the same time
  std::string to_string() const;
};

namespace detail {
struct ModelAccess;
}

// A Graph on a Runtime's device: every node's kernels built, weights uploaded, activation buffers
// allocated and reused by liveness. Runs whole on the device: inputs are written once, outputs read once.
// Each step runs its tuned configuration where the runtime's tuning file has one (RuntimeOptions::tuning;
// with TuningMode::TuneOnFirstUse, the constructor first tunes the steps the file lacks).
// Thread safety as BinaryConvolution: one Model from one thread at a time.
class Model {
 public:
  Model(const Runtime& runtime, Graph graph);
  ~Model();
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;

  const Graph& graph() const;
  std::vector<std::pair<std::string, Dims>> input_dims() const;
  std::vector<std::pair<std::string, TensorInfo>> input_infos() const;  // with each input's type
  std::vector<std::pair<std::string, TensorInfo>> output_infos() const;
  const GraphPlan& plan() const;

  // Host in, host out: one tensor per graph input (by name; Float32, or UInt8 bytes for an image input);
  // returns every graph output by name.
  // Refused before any device work: a missing or unknown input name, dims or type other than declared.
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs);
  // Every tensor the device computed (fused intermediates excluded), read back after one run: for tests.
  std::map<std::string, Tensor> run_trace(const std::map<std::string, Tensor>& inputs);
  // Device time per launch of the last run, named "<node> <kernel>".
  std::vector<StageTime> last_stage_times() const;

 private:
  friend struct detail::ModelAccess;  // the tuner's view of the steps
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace xnorcl
