// SPDX-License-Identifier: Apache-2.0
// Network: the layers of a NetworkSpec on one queue, chained by events, with device buffers between them; the
// host reference network; the paper's vehicle classifier with calibrated thresholds.
#include "xnorcl/network.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>

#include "ops/layer_common.hpp"
#include "xnorcl/error.hpp"
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
  return "Network layer " + std::to_string(index) + " (" + layer_name(layer) + ")";
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
  detail::check_layer_shape(spec.input, "Network input");
  if (spec.layers.empty()) throw InvalidArgument("Network: the spec has no layers");
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

// ---- the device network
// ------------------------------------------------------------------------------------

namespace {

using EnqueueFn =
    std::function<cl::Event(const cl::Buffer&, const cl::Buffer&, const std::vector<cl::Event>*)>;

struct Stage {
  std::string name;           // "<layer index>:<layer> <what>"
  std::size_t layer = 0;      // index of the spec layer it belongs to
  bool layer_output = false;  // its output is the layer's output
  Flow out;
  EnqueueFn enqueue;
  std::function<std::vector<StageTime>()> stage_times;  // for stages with several kernels (convolution)
  cl::Buffer buffer;  // its output, except for the last stage (the caller's buffer)
  // A convolution fused with the layers after it (Threshold: packed output; ScaleBias: scale and bias in the
  // GEMM's epilogue; Threshold then a MaxPool of its bits: packed, max-pooled output) produces the last
  // fused layer's output; the outputs of the layers before it exist only for run_trace, which computes them
  // with twins of the convolution (float output, then packed output without the pool), made on first use.
  struct Twin {
    std::function<std::unique_ptr<BinaryConvolution>()> make;
    std::shared_ptr<BinaryConvolution> conv;
    Flow out;
  };
  std::vector<Twin> twins;
};

std::uint64_t flow_bytes(const Flow& f) {
  return 4 * std::uint64_t(f.packed ? packed_word_count(f.shape) : detail::element_count(f.shape));
}

}  // namespace

struct Network::Impl {
  explicit Impl(const Runtime& r) : runtime(r) {}
  Runtime runtime;
  NetworkSpec spec;
  std::vector<Stage> stages;
  std::vector<std::pair<std::size_t, cl::Event>> last_events;  // stage index, its event
};

Network::Network(const Runtime& runtime, const NetworkSpec& spec) {
  const auto& state = detail::runtime_state(runtime, "Network");
  validate_spec(spec);
  auto m = std::make_unique<Impl>(runtime);
  m->spec = spec;
  Flow flow{spec.input, false};
  for (std::size_t i = 0; i < spec.layers.size(); ++i) {
    const Layer& layer = spec.layers[i];
    const Flow out = next_flow(i, layer, flow);
    std::size_t skip = 0;  // layers after this convolution fused into it
    Flow flow_after = out;
    const std::string prefix = std::to_string(i) + ":" + layer_name(layer);
    auto add = [&](const std::string& what, const Flow& produced, EnqueueFn fn, bool layer_output) {
      Stage s;
      s.name = prefix + " " + what;
      s.layer = i;
      s.layer_output = layer_output;
      s.out = produced;
      s.enqueue = std::move(fn);
      m->stages.push_back(std::move(s));
    };
    // A packed input is read directly (Options::input_packed); a Threshold or ScaleBias right after the
    // convolution becomes its output choice (one launch fewer, no float tensor between them), and a MaxPool
    // right after that Threshold the output's max_pool (one more launch fewer, no unpooled bits stored).
    auto add_convolution = [&](const ConvolutionLayer& c) {
      BinaryConvolution::Options options;
      options.input_packed = flow.packed;
      auto layer_at = [&](std::size_t k) { return k < spec.layers.size() ? &spec.layers[k] : nullptr; };
      std::string fused_with;
      std::vector<BinaryConvolution::Options> twin_options(1);  // the float twin's
      twin_options[0].input_packed = options.input_packed;
      if (const auto* t = layer_at(i + 1) ? std::get_if<ThresholdLayer>(layer_at(i + 1)) : nullptr) {
        options.output = BinaryConvolution::Output::packed(
            t->rules.empty() ? std::vector<Threshold>(static_cast<std::size_t>(out.shape[1])) : t->rules);
        fused_with = "threshold";
        skip = 1;
        if (const auto* p = layer_at(i + 2) ? std::get_if<MaxPoolLayer>(layer_at(i + 2)) : nullptr) {
          twin_options.push_back(options);  // the packed twin's: the threshold layer's output
          options.max_pool = p->attributes;
          fused_with = "threshold+max_pool";
          skip = 2;
        }
      } else if (const auto* sb = layer_at(i + 1) ? std::get_if<ScaleBiasLayer>(layer_at(i + 1)) : nullptr) {
        options.output = BinaryConvolution::Output::scale_and_bias(sb->scale, sb->bias);
        fused_with = "scale_bias";
        skip = 1;
      }
      const Shape in_shape = flow.shape;
      auto conv = std::make_shared<BinaryConvolution>(runtime, c.attributes, in_shape, c.filter, options);
      // The flows of the fused layers: the convolution's, then each fused layer's.
      std::vector<Flow> flows(1, out);
      for (std::size_t k = 1; k <= skip; ++k)
        flows.push_back(next_flow(i + k, spec.layers[i + k], flows.back()));
      add(
          fused_with.empty() ? "binary_convolution" : "binary_convolution+" + fused_with, flows.back(),
          [conv](const cl::Buffer& a, const cl::Buffer& b, const std::vector<cl::Event>* w) {
            return conv->enqueue(a, b, w);
          },
          true);
      Stage& st = m->stages.back();
      st.layer = i + skip;
      st.stage_times = [conv] { return conv->last_stage_times(); };
      for (std::size_t k = 0; k < skip; ++k) {
        const BinaryConvolution::Options o = twin_options[k];
        st.twins.push_back({[runtime, c, in_shape, o] {
                              return std::make_unique<BinaryConvolution>(runtime, c.attributes, in_shape,
                                                                         c.filter, o);
                            },
                            nullptr, flows[k]});
      }
      flow_after = flows.back();
    };
    // A layer object of layers.hpp as the next stage (its enqueue, run after the previous stage).
    auto add_layer = [&](const char* kernel, auto layer) {
      add(
          kernel, out,
          [layer](const cl::Buffer& a, const cl::Buffer& b, const std::vector<cl::Event>* w) {
            return layer->enqueue(a, b, w);
          },
          true);
    };
    std::visit(
        overloaded{
            [&](const ConvolutionLayer& c) { add_convolution(c); },
            [&](const ThresholdLayer& t) {
              add_layer("threshold_pack", std::make_shared<ThresholdPack>(runtime, flow.shape, t.rules));
            },
            [&](const ScaleBiasLayer& s) {
              add_layer("scale_bias", std::make_shared<ScaleBias>(runtime, flow.shape, s.scale, s.bias));
            },
            [&](const MaxPoolLayer& p) {
              if (flow.packed) {
                add_layer("binary_maxpool",
                          std::make_shared<BinaryMaxPool>(runtime, p.attributes, flow.shape));
              } else {
                add_layer("maxpool_f32", std::make_shared<MaxPool>(runtime, p.attributes, flow.shape));
              }
            },
            [&](const FullyConnectedLayer& f) {
              add_layer("binary_fc", std::make_shared<BinaryFullyConnected>(runtime, flow.shape, f.weights));
            }},
        layer);
    flow = flow_after;
    i += skip;
  }
  detail::cl_call(
      [&] {
        for (std::size_t i = 0; i + 1 < m->stages.size(); ++i) {
          m->stages[i].buffer = cl::Buffer(state->context, CL_MEM_READ_WRITE,
                                           static_cast<std::size_t>(flow_bytes(m->stages[i].out)));
        }
      },
      "allocating the activations of a Network");
  impl_ = std::move(m);
}

Network::~Network() = default;
Network::Network(Network&&) noexcept = default;
Network& Network::operator=(Network&&) noexcept = default;

const NetworkSpec& Network::spec() const {
  return impl_->spec;
}
Shape Network::output_shape() const {
  return impl_->stages.back().out.shape;
}
bool Network::output_packed() const {
  return impl_->stages.back().out.packed;
}
std::size_t Network::output_bytes() const {
  return static_cast<std::size_t>(flow_bytes(impl_->stages.back().out));
}

cl::Event Network::enqueue(const cl::Buffer& input, const cl::Buffer& output,
                           const std::vector<cl::Event>* wait) {
  Impl& m = *impl_;
  detail::check_enqueue_arguments(
      "Network::enqueue", m.runtime.state()->context,
      {input, 4 * std::uint64_t(detail::element_count(m.spec.input)), m.spec.input, false},
      {output, output_bytes(), output_shape(), output_packed()}, false, wait);
  m.last_events.clear();
  std::vector<cl::Event> previous;
  const std::vector<cl::Event>* wait_list = wait;
  const cl::Buffer* in = &input;
  cl::Event last;
  for (std::size_t i = 0; i < m.stages.size(); ++i) {
    Stage& s = m.stages[i];
    const cl::Buffer& out = i + 1 == m.stages.size() ? output : s.buffer;
    last = s.enqueue(*in, out, wait_list);
    m.last_events.emplace_back(i, last);
    previous.assign(1, last);
    wait_list = &previous;
    in = &s.buffer;
  }
  return last;
}

namespace {

Activation read_activation(const cl::CommandQueue& queue, const cl::Buffer& buffer, const Flow& f,
                           const std::vector<cl::Event>* wait) {
  Activation a;
  a.shape = f.shape;
  a.packed = f.packed;
  if (f.packed) {
    a.words.resize(static_cast<std::size_t>(packed_word_count(f.shape)));
    queue.enqueueReadBuffer(buffer, CL_TRUE, 0, a.words.size() * 4, a.words.data(), wait);
  } else {
    a.values.resize(static_cast<std::size_t>(detail::element_count(f.shape)));
    queue.enqueueReadBuffer(buffer, CL_TRUE, 0, a.values.size() * 4, a.values.data(), wait);
  }
  return a;
}

}  // namespace

std::vector<Activation> Network::run_trace(const float* x) {
  if (!x) throw InvalidArgument("Network::run_trace: the input pointer is null");
  Impl& m = *impl_;
  const auto& state = m.runtime.state();
  std::vector<Activation> outs;
  detail::cl_call(
      [&] {
        cl::Buffer input(state->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                         static_cast<std::size_t>(detail::element_count(m.spec.input) * 4),
                         const_cast<float*>(x));
        cl::Buffer output(state->context, CL_MEM_READ_WRITE, output_bytes());
        std::vector<cl::Event> done(1, enqueue(input, output));
        for (std::size_t i = 0; i < m.stages.size(); ++i) {
          Stage& s = m.stages[i];
          for (Stage::Twin& t : s.twins) {
            // The outputs of the layers fused into the convolution, from its twins on the same input (every
            // stage's input buffer still holds what the network's run left there).
            if (!t.conv) t.conv = t.make();
            cl::Buffer twin_output(state->context, CL_MEM_READ_WRITE,
                                   static_cast<std::size_t>(flow_bytes(t.out)));
            std::vector<cl::Event> twin_done(
                1, t.conv->enqueue(i == 0 ? input : m.stages[i - 1].buffer, twin_output, &done));
            outs.push_back(read_activation(state->queue, twin_output, t.out, &twin_done));
          }
          if (!s.layer_output) continue;
          outs.push_back(
              read_activation(state->queue, i + 1 == m.stages.size() ? output : s.buffer, s.out, &done));
        }
      },
      "Network::run_trace");
  return outs;
}

Activation Network::run(const float* x) {
  if (!x) throw InvalidArgument("Network::run: the input pointer is null");
  Impl& m = *impl_;
  const auto& state = m.runtime.state();
  Activation out;
  detail::cl_call(
      [&] {
        cl::Buffer input(state->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                         static_cast<std::size_t>(detail::element_count(m.spec.input) * 4),
                         const_cast<float*>(x));
        cl::Buffer output(state->context, CL_MEM_READ_WRITE, output_bytes());
        std::vector<cl::Event> done(1, enqueue(input, output));
        out = read_activation(state->queue, output, m.stages.back().out, &done);
      },
      "Network::run");
  state->after_first_host_run();  // the program cache, on drivers that add code at first launch
  return out;
}

std::vector<StageTime> Network::last_stage_times() const {
  std::vector<StageTime> out;
  const Impl& m = *impl_;
  if (!m.runtime.state()->profiling) return out;
  detail::cl_call(
      [&] {
        for (const auto& [index, event] : m.last_events) {
          const Stage& s = m.stages[index];
          if (s.stage_times) {
            for (const StageTime& t : s.stage_times())
              out.push_back({s.name + " " + t.kernel, t.milliseconds});
            continue;
          }
          event.wait();
          const cl_ulong start = event.getProfilingInfo<CL_PROFILING_COMMAND_START>();
          const cl_ulong end = event.getProfilingInfo<CL_PROFILING_COMMAND_END>();
          out.push_back({s.name, double(end - start) * 1e-6});
        }
      },
      "reading the profiling events of a Network");
  return out;
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
