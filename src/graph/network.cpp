// SPDX-License-Identifier: Apache-2.0
// Layer chains: their validation, the host reference network, and the paper's vehicle classifier with
// calibrated thresholds. A Model runs a chain as the graph network_graph makes of it.
#include "xnorcl/network.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>

#include "ops/layer_common.hpp"
#include "xnorcl/error.hpp"
#include "xnorcl/layers.hpp"
#include "xnorcl/reference.hpp"

namespace xnorcl {

namespace {

template <class... Ts>
struct overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
overloaded(Ts...) -> overloaded<Ts...>;

std::string where(std::size_t index, const Layer& layer) {
  return "layer " + std::to_string(index) + " (" + layer_name(layer) + ")";
}

// What flows between layers, as the chain is validated.
struct Flow {
  Shape shape{};
  bool packed = false;
};

// Checks that the layer accepts the flow and returns what it produces (shapes only; the layer objects
// validate their own attributes).
Flow next_flow(std::size_t index, const Layer& layer, const Flow& in) {
  const std::string at = where(index, layer);
  return std::visit(
      overloaded{
          [&](const ConvolutionLayer& c) -> Flow {
            if (in.packed && !c.attributes.input_thresholds.empty()) {
              throw InvalidArgument(at +
                                    ": its input is packed bits, so its input_thresholds must be empty (" +
                                    std::to_string(c.attributes.input_thresholds.size()) +
                                    " given); thresholds belong to the Threshold layer before it");
            }
            const ConvGeometry g = BinaryConvolution::validate(c.attributes, in.shape, c.filter.shape());
            return {g.output, false};
          },
          [&](const ThresholdLayer& t) -> Flow {
            if (in.packed)
              throw InvalidArgument(at + ": its input " + to_string(in.shape) + " is already packed");
            if (!t.rules.empty() && static_cast<std::int64_t>(t.rules.size()) != in.shape[1]) {
              throw InvalidArgument(at + ": " + std::to_string(t.rules.size()) + " rules for " +
                                    std::to_string(in.shape[1]) + " channels");
            }
            return {in.shape, true};
          },
          [&](const ScaleBiasLayer& s) -> Flow {
            if (in.packed)
              throw InvalidArgument(at + ": its input " + to_string(in.shape) + " is packed, not float");
            if (static_cast<std::int64_t>(s.scale.size()) != in.shape[1]) {
              throw InvalidArgument(at + ": " + std::to_string(s.scale.size()) + " scales for " +
                                    std::to_string(in.shape[1]) + " channels");
            }
            return {in.shape, false};
          },
          [&](const MaxPoolLayer& p) -> Flow {
            return {validate_pool(p.attributes, in.shape).output, in.packed};
          },
          [&](const FullyConnectedLayer& f) -> Flow {
            if (!in.packed) {
              throw InvalidArgument(at + ": needs packed input; add a Threshold layer before it (its input " +
                                    to_string(in.shape) + " is float)");
            }
            const Shape& w = f.weights.shape();
            if (w[1] != in.shape[1] || w[2] != in.shape[2] || w[3] != in.shape[3]) {
              throw InvalidArgument(at + ": weights " + to_string(w) + " must be [O, C, H, W] of its input " +
                                    to_string(in.shape));
            }
            return {Shape{in.shape[0], w[0], 1, 1}, false};
          }},
      layer);
}

// The median rule of the calibration: the lower median of the values.
float lower_median(std::vector<float> v) {
  const std::size_t mid = (v.size() - 1) / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  return v[mid];
}

// Per-channel lower medians of a float NCHW activation.
std::vector<float> channel_medians(const Activation& a) {
  const std::int64_t N = a.shape[0], C = a.shape[1], HW = a.shape[2] * a.shape[3];
  std::vector<float> medians(static_cast<std::size_t>(C));
  std::vector<float> values;
  for (std::int64_t c = 0; c < C; ++c) {
    values.clear();
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t i = 0; i < HW; ++i)
        values.push_back(a.values[static_cast<std::size_t>((n * C + c) * HW + i)]);
    medians[static_cast<std::size_t>(c)] = lower_median(values);
  }
  return medians;
}

Activation reference_layer(const Layer& layer, const Activation& in) {
  return std::visit(
      overloaded{[&](const ConvolutionLayer& c) {
                   Activation out;
                   if (in.packed) {
                     const std::vector<float> x = unpack_activations(in.words.data(), in.shape);
                     out.values = reference_binary_convolution(x.data(), in.shape, c.filter, c.attributes);
                   } else {
                     out.values =
                         reference_binary_convolution(in.values.data(), in.shape, c.filter, c.attributes);
                   }
                   out.shape = BinaryConvolution::validate(c.attributes, in.shape, c.filter.shape()).output;
                   return out;
                 },
                 [&](const ThresholdLayer& t) {
                   Activation out;
                   out.shape = in.shape;
                   out.packed = true;
                   out.words = pack_activations(in.values.data(), in.shape, t.rules);
                   return out;
                 },
                 [&](const ScaleBiasLayer& s) {
                   Activation out;
                   out.shape = in.shape;
                   out.values = reference_scale_bias(in.values.data(), in.shape, s.scale, s.bias);
                   return out;
                 },
                 [&](const MaxPoolLayer& p) {
                   Activation out;
                   out.shape = validate_pool(p.attributes, in.shape).output;
                   out.packed = in.packed;
                   if (in.packed) {
                     out.words = reference_binary_maxpool(in.words.data(), in.shape, p.attributes);
                   } else {
                     out.values = reference_maxpool(in.values.data(), in.shape, p.attributes);
                   }
                   return out;
                 },
                 [&](const FullyConnectedLayer& f) {
                   Activation out;
                   out.shape = Shape{in.shape[0], f.weights.shape()[0], 1, 1};
                   out.values = reference_binary_fully_connected(in.words.data(), in.shape, f.weights);
                   return out;
                 }},
      layer);
}

Flow validate_spec(const NetworkSpec& spec) {
  detail::check_layer_shape(spec.input, "the layer chain's input");
  if (spec.layers.empty()) throw InvalidArgument("the layer chain has no layers");
  Flow flow{spec.input, false};
  for (std::size_t i = 0; i < spec.layers.size(); ++i) flow = next_flow(i, spec.layers[i], flow);
  return flow;
}

}  // namespace

NetworkOutput network_output(const NetworkSpec& spec) {
  const Flow out = validate_spec(spec);
  return {out.shape, out.packed};
}

std::string layer_name(const Layer& layer) {
  return std::visit(overloaded{[](const ConvolutionLayer&) { return "convolution"; },
                               [](const ThresholdLayer&) { return "threshold"; },
                               [](const ScaleBiasLayer&) { return "scale_bias"; },
                               [](const MaxPoolLayer&) { return "max_pool"; },
                               [](const FullyConnectedLayer&) { return "fully_connected"; }},
                    layer);
}

double Activation::ones_fraction() const {
  if (!packed) return 0.0;
  std::int64_t ones = 0;
  for (std::uint32_t w : words) {
    for (; w; w &= w - 1) ++ones;
  }
  return static_cast<double>(ones) / static_cast<double>(shape[0] * shape[1] * shape[2] * shape[3]);
}

std::vector<Activation> reference_network(const NetworkSpec& spec, const float* x) {
  if (!x) throw InvalidArgument("reference_network: the input pointer is null");
  validate_spec(spec);
  std::vector<Activation> outs;
  Activation in;
  in.shape = spec.input;
  in.values.assign(x, x + detail::element_count(spec.input));
  for (const Layer& layer : spec.layers) {
    outs.push_back(reference_layer(layer, outs.empty() ? in : outs.back()));
  }
  return outs;
}

// ---- the paper's vehicle classifier
// --------------------------------------------------------------------------

namespace {

// splitmix64: the same sequence on every platform.
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_;
};

Filter random_filter(Random& rng, const Shape& shape) {
  const std::int64_t n = shape[0] * shape[1] * shape[2] * shape[3];
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>((n + 7) / 8));
  for (auto& b : bytes) b = static_cast<std::uint8_t>(rng.next() >> 56);
  return Filter::from_packed(bytes.data(), bytes.size(), shape, BitOrder::MsbFirst);
}

}  // namespace

VehicleClassifier vehicle_classifier(std::uint64_t seed, std::int64_t batch, int calibration_images) {
  if (batch < 1) throw InvalidArgument("vehicle_classifier: batch " + std::to_string(batch) + " is below 1");
  if (calibration_images < 1) {
    throw InvalidArgument("vehicle_classifier: calibration_images " + std::to_string(calibration_images) +
                          " is below 1");
  }
  Random rng(seed);
  VehicleClassifier v;
  v.calibration_shape = {calibration_images, 3, 96, 96};
  v.calibration_input.resize(static_cast<std::size_t>(detail::element_count(v.calibration_shape)));
  // Image-like calibration pictures: a random 13x13 grid per channel, bilinearly upsampled, plus a little
  // noise, as integers 0..255. (Independent random pixels would make neighbouring convolution outputs nearly
  // independent, so that a 2x2 max-pool of median-thresholded bits held about 90% ones.)
  {
    constexpr int G = 13, S = 96;
    std::vector<float> grid(G * G);
    std::size_t at = 0;
    for (int plane = 0; plane < calibration_images * 3; ++plane) {
      for (float& g : grid) g = static_cast<float>(rng.next() % 256);
      for (int y = 0; y < S; ++y) {
        const float fy = static_cast<float>(y) * (G - 1) / (S - 1);
        const int y0 = std::min(static_cast<int>(fy), G - 2);
        const float ty = fy - static_cast<float>(y0);
        for (int x = 0; x < S; ++x, ++at) {
          const float fx = static_cast<float>(x) * (G - 1) / (S - 1);
          const int x0 = std::min(static_cast<int>(fx), G - 2);
          const float tx = fx - static_cast<float>(x0);
          const float top = grid[y0 * G + x0] * (1 - tx) + grid[y0 * G + x0 + 1] * tx;
          const float bottom = grid[(y0 + 1) * G + x0] * (1 - tx) + grid[(y0 + 1) * G + x0 + 1] * tx;
          const float noise = static_cast<float>(static_cast<int>(rng.next() % 17) - 8);
          v.calibration_input[at] =
              std::clamp(std::round(top * (1 - ty) + bottom * ty + noise), 0.0f, 255.0f);
        }
      }
    }
  }

  // Input (RGB) thresholds: each colour channel's median over the calibration batch.
  Activation current;
  current.shape = v.calibration_shape;
  current.values = v.calibration_input;
  const std::vector<float> rgb = channel_medians(current);

  std::vector<Layer> layers;
  auto push = [&](Layer layer) {
    current = reference_layer(layer, current);
    layers.push_back(std::move(layer));
  };
  auto conv = [&](std::int64_t c_in, std::vector<float> input_thresholds) {
    BinaryConvolution::Attributes a;
    a.pads_begin = {2, 2};
    a.pads_end = {2, 2};
    a.pad_value = -1.0f;
    a.input_thresholds = std::move(input_thresholds);
    push(ConvolutionLayer{a, random_filter(rng, Shape{32, c_in, 5, 5})});
  };
  auto threshold_at_medians = [&] { push(ThresholdLayer{greater_than(channel_medians(current))}); };
  auto pool = [&] { push(MaxPoolLayer{PoolAttributes{}}); };
  auto fc = [&](std::int64_t outputs) {
    Shape w = current.shape;
    w[0] = outputs;
    push(FullyConnectedLayer{random_filter(rng, w)});
  };

  conv(3, rgb);
  threshold_at_medians();
  pool();
  conv(32, {});
  threshold_at_medians();
  pool();
  fc(100);
  threshold_at_medians();
  fc(100);
  threshold_at_medians();
  fc(4);

  v.spec.input = {batch, 3, 96, 96};
  v.spec.layers = std::move(layers);
  return v;
}

}  // namespace xnorcl
