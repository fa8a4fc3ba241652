// Whole networks on the device against the host reference network, layer by layer and bitwise, on both
// variants: a small network with every layer kind, and the paper's vehicle classifier.
#include <catch2/catch.hpp>

#include <cstring>

#include "conv_case.hpp"
#include "device_checks.hpp"
#include "device_support.hpp"

namespace xnorcl::test {
namespace {

std::string compare(const Activation& got, const Activation& want) {
  if (got.shape != want.shape) return "shape " + to_string(got.shape) + " != " + to_string(want.shape);
  if (got.packed != want.packed) return "packed differs";
  if (got.packed) {
    for (std::size_t i = 0; i < want.words.size(); ++i) {
      if (got.words[i] != want.words[i]) {
        return "word " + std::to_string(i) + ": " + std::to_string(got.words[i]) +
               " != " + std::to_string(want.words[i]);
      }
    }
    return got.words.size() == want.words.size() ? "" : "word count differs";
  }
  if (got.values.size() != want.values.size()) return "value count differs";
  for (std::size_t i = 0; i < want.values.size(); ++i) {
    if (std::memcmp(&got.values[i], &want.values[i], sizeof(float)) != 0) {
      return "value " + std::to_string(i) + ": " + float_text(got.values[i]) +
             " != " + float_text(want.values[i]);
    }
  }
  return "";
}

void require_same_trace(const NetworkSpec& spec, const std::vector<Activation>& got,
                        const std::vector<Activation>& want) {
  REQUIRE(got.size() == spec.layers.size());
  REQUIRE(want.size() == spec.layers.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("layer " << i << " (" << layer_name(spec.layers[i]) << ") " << to_string(want[i].shape)
                  << (want[i].packed ? " packed" : " float"));
    const std::string difference = compare(got[i], want[i]);
    INFO(difference);
    REQUIRE(difference.empty());
  }
}

Filter random_filter(Rng& rng, const Shape& shape) {
  std::vector<std::uint8_t> bytes(
      static_cast<std::size_t>((shape[0] * shape[1] * shape[2] * shape[3] + 7) / 8));
  for (auto& b : bytes) b = static_cast<std::uint8_t>(rng.next() >> 56);
  return Filter::from_packed(bytes.data(), bytes.size(), shape, BitOrder::MsbFirst);
}

// Every layer kind and both pool kinds; a convolution fed by packed bits (the unpack path); odd channels.
NetworkSpec small_network(Rng& rng) {
  NetworkSpec s;
  s.input = {2, 5, 9, 8};
  BinaryConvolution::Attributes c1;
  c1.pads_begin = {1, 1};
  c1.pads_end = {1, 1};
  c1.pad_value = 0.5f;
  c1.input_thresholds = {0.0f, 0.5f, -1.0f, 2.0f, 0.25f};
  s.layers.push_back(ConvolutionLayer{c1, random_filter(rng, Shape{37, 5, 3, 3})});
  std::vector<float> scale(37), bias(37);
  for (int c = 0; c < 37; ++c) {
    scale[c] = c % 7 == 0 ? 0.0f : static_cast<float>(rng.uniform(-4, 4)) * 0.5f;
    bias[c] = static_cast<float>(rng.uniform(-6, 6));
  }
  s.layers.push_back(ScaleBiasLayer{scale, bias});
  s.layers.push_back(ThresholdLayer{fold_batch_norm(scale, bias)});
  PoolAttributes p;
  p.kernel = {3, 3};
  p.strides = {2, 2};
  p.rounding_type = RoundingType::Ceil;
  s.layers.push_back(MaxPoolLayer{p});  // 4x4
  BinaryConvolution::Attributes c2;
  c2.auto_pad = AutoPad::SameUpper;
  c2.pad_value = -1.0f;
  s.layers.push_back(ConvolutionLayer{c2, random_filter(rng, Shape{33, 37, 3, 3})});
  PoolAttributes fp;
  fp.auto_pad = AutoPad::SameLower;
  s.layers.push_back(MaxPoolLayer{fp});  // float 2x2
  s.layers.push_back(ThresholdLayer{greater_than(std::vector<float>(33, 1.0f))});
  s.layers.push_back(FullyConnectedLayer{random_filter(rng, Shape{10, 33, 2, 2})});
  s.layers.push_back(ThresholdLayer{});
  s.layers.push_back(FullyConnectedLayer{random_filter(rng, Shape{3, 10, 1, 1})});
  return s;
}

void small_network_is_bitwise_equal(Variant variant) {
  Runtime& rt = runtime_for(variant);
  Rng rng(900);
  const NetworkSpec spec = small_network(rng);
  std::vector<float> x(static_cast<std::size_t>(2 * 5 * 9 * 8));
  for (float& v : x) v = static_cast<float>(rng.uniform(-4, 4)) * 0.5f;
  const std::vector<Activation> want = reference_network(spec, x.data());
  Network net(rt, spec);
  REQUIRE(net.output_shape() == Shape{2, 3, 1, 1});
  REQUIRE_FALSE(net.output_packed());
  require_same_trace(spec, net.run_trace(x.data()), want);
  REQUIRE(compare(net.run(x.data()), want.back()).empty());
  const std::vector<StageTime> stages = net.last_stage_times();
  INFO(stage_list(stages));
  for (const char* kernel :
       {"0:convolution binary_convolution xnor_gemm", "1:scale_bias scale_bias", "2:threshold threshold_pack",
        "3:max_pool binary_maxpool", "4:convolution unpack_bits", "5:max_pool maxpool_f32",
        "7:fully_connected binary_fc"}) {
    INFO(kernel);
    REQUIRE(has_stage(stages, kernel));
  }

  // Device-resident, chained after the caller's own event, into the caller's buffer.
  cl::Buffer in(rt.context(), CL_MEM_READ_ONLY, x.size() * 4);
  cl::Buffer out(rt.context(), CL_MEM_READ_WRITE, net.output_bytes());
  std::vector<cl::Event> written(1);
  rt.queue().enqueueWriteBuffer(in, CL_FALSE, 0, x.size() * 4, x.data(), nullptr, &written[0]);
  std::vector<cl::Event> done(1, net.enqueue(in, out, &written));
  std::vector<float> y(6);
  rt.queue().enqueueReadBuffer(out, CL_TRUE, 0, 24, y.data(), &done);
  REQUIRE(std::memcmp(y.data(), want.back().values.data(), 24) == 0);
  cl::Buffer small(rt.context(), CL_MEM_READ_WRITE, 20);
  REQUIRE_THROWS_WITH(net.enqueue(in, small), Catch::Contains("holds 20 bytes, it needs 24"));
}

void vehicle_classifier_is_bitwise_equal(Variant variant) {
  Runtime& rt = runtime_for(variant);
  const VehicleClassifier v = vehicle_classifier(2024, 3, 3);
  REQUIRE(v.spec.layers.size() == 11);
  REQUIRE(v.spec.input == v.calibration_shape);
  const std::vector<Activation> want = reference_network(v.spec, v.calibration_input.data());
  REQUIRE(want.back().shape == Shape{3, 4, 1, 1});
  // Every packed layer holds 10-90% ones on the seeded input.
  int packed_layers = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (!want[i].packed) continue;
    ++packed_layers;
    INFO("layer " << i << " (" << layer_name(v.spec.layers[i]) << ") ones " << want[i].ones_fraction());
    REQUIRE(want[i].ones_fraction() >= 0.10);
    REQUIRE(want[i].ones_fraction() <= 0.90);
  }
  REQUIRE(packed_layers == 6);
  Network net(rt, v.spec);
  require_same_trace(v.spec, net.run_trace(v.calibration_input.data()), want);
}

}  // namespace

XNORCL_VARIANT_TEST("a network of every layer kind equals the reference network", "[network]",
                    small_network_is_bitwise_equal)
XNORCL_VARIANT_TEST("the paper's vehicle classifier equals the reference network", "[network]",
                    vehicle_classifier_is_bitwise_equal)

}  // namespace xnorcl::test
