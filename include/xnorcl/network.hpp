// SPDX-License-Identifier: Apache-2.0
// Layer chains: the contents of a version-1 network file (a chain of binary layers), their host reference,
// and the graph that runs them (network_graph: a Model runs a chain like any graph); and the vehicle
// classifier of Khan, Huttunen, Boutellier ("Binarized Convolutional Neural Networks for Efficient Inference
// on GPUs", EUSIPCO 2018) as such a chain.
//
// Activations between layers are float32 NCHW or packed bits (xnorcl/packed.hpp). What each layer takes:
//   Convolution     float or packed in (BinaryConvolution; a packed input is read as words, so such a
//                   convolution must have empty input_thresholds) -> float out.
//   Threshold       float in -> packed out (one rule per channel; fold_batch_norm gives the rules of a
//                   batch-norm+sign)
//   ScaleBias       float in -> float out
//   MaxPool         packed in -> packed out (the OR of bits) or float -> float
//   FullyConnected  packed in -> float out [N, O, 1, 1]; weights shape [O, C, H, W] of its input, NCHW
//                   flatten order.
// The chain's input is float32 NCHW.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "xnorcl/binary_convolution.hpp"
#include "xnorcl/filter.hpp"
#include "xnorcl/graph.hpp"
#include "xnorcl/packed.hpp"
#include "xnorcl/pool.hpp"
#include "xnorcl/shape.hpp"

namespace xnorcl {

struct ConvolutionLayer {
  BinaryConvolution::Attributes attributes;
  Filter filter;
};
struct ThresholdLayer {
  std::vector<Threshold> rules;  // one per channel, or empty for Greater 0
};
struct ScaleBiasLayer {
  std::vector<float> scale, bias;
};
struct MaxPoolLayer {
  PoolAttributes attributes;
};
struct FullyConnectedLayer {
  Filter weights;
};
using Layer =
    std::variant<ConvolutionLayer, ThresholdLayer, ScaleBiasLayer, MaxPoolLayer, FullyConnectedLayer>;
std::string layer_name(const Layer& layer);  // "convolution", "threshold", ...

struct NetworkSpec {
  Shape input{};  // float32 NCHW
  std::vector<Layer> layers;
};

// One activation on the host: float values (NCHW) or packed words, of a logical NCHW shape.
struct Activation {
  Shape shape{};
  bool packed = false;
  std::vector<float> values;         // when !packed
  std::vector<std::uint32_t> words;  // when packed
  double ones_fraction() const;      // packed: set bits / (N*C*H*W)
};

// The host reference network: every layer's output in order (the last is the network's output), computed with
// reference_binary_convolution, pack_activations, reference_scale_bias, reference_binary_maxpool,
// reference_maxpool and reference_binary_fully_connected. Validates like network_graph.
std::vector<Activation> reference_network(const NetworkSpec& spec, const float* x);

// What the chain produces, validated on the host (InvalidArgument naming the layer otherwise), without a
// device or any computation: check a loaded file's output here before building or running it.
struct NetworkOutput {
  Shape shape{};
  bool packed = false;
};
NetworkOutput network_output(const NetworkSpec& spec);

// The network file format (docs/weights_format.md). serialize/parse work on bytes; save writes a temporary
// file and renames it; load and parse throw InvalidArgument naming the offset for a malformed file (the layer
// chain itself is validated when network_graph or reference_network uses the spec).
std::string serialize_network(const NetworkSpec& spec);
NetworkSpec parse_network(const std::string& bytes);
void save_network(const NetworkSpec& spec, const std::string& path);
NetworkSpec load_network(const std::string& path);

// The chain as a graph that computes the same bits (xnorcl/graph.hpp; input "input", output "output"), run by
// Model like any graph: Convolution -> BinaryConvolution (input thresholds as a FakeQuantize before it),
// Threshold -> FakeQuantize, ScaleBias -> Multiply + Add, MaxPool -> MaxPool, FullyConnected ->
// BinaryFullyConnected (a float output reshaped to [N, O, 1, 1]). load_graph reads version-1 files this way.
// Floats agree bit for bit except where a ScaleBias that follows no Convolution is rounded twice (Multiply,
// then Add) instead of once (one fma). Validates the chain first: InvalidArgument naming the layer index and
// the problem (a Threshold of packed input, rules or scales not one per channel, a FullyConnected of float
// input or of weights not [O, C, H, W] of its input, and every convolution or pool refusal).
Graph network_graph(const NetworkSpec& spec);

// The paper's vehicle classifier (sections 2-3): input [batch, 3, 96, 96] thresholded per channel (RGB
// thresholding) inside conv1; conv 32@5x5 pad 2 -> threshold -> max-pool 2x2 -> conv 32@5x5 pad 2 ->
// threshold -> max-pool 2x2 -> FC 18432->100 -> threshold -> FC 100->100 -> threshold -> FC 100->4 (float
// logits). Convolutions use pad_value -1 (that paper's zero-initialised shared memory packs pad taps as bit
// 0). Weights are random from `seed`. Thresholds are calibrated on the host reference with a seeded
// calibration batch of `calibration_images` images (pixels 0..255): the input thresholds are each colour
// channel's median, every Threshold layer's rule for a channel is the (lower) median of that channel's values
// over the batch (over N*H*W values for conv outputs, over N values for FC outputs).
struct VehicleClassifier {
  NetworkSpec spec;                      // input [batch, 3, 96, 96]
  std::vector<float> calibration_input;  // [calibration_images, 3, 96, 96]
  Shape calibration_shape{};
};
VehicleClassifier vehicle_classifier(std::uint64_t seed, std::int64_t batch = 1, int calibration_images = 3);

}  // namespace xnorcl
