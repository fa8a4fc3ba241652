// SPDX-License-Identifier: Apache-2.0
// Whole networks on the device against the host reference network, layer by layer and bitwise, on both
// variants: a small network with every layer kind, and the paper's vehicle classifier.
#include <catch2/catch.hpp>

#include <cstring>

#include "conv_case.hpp"
#include "device_checks.hpp"
#include "device_support.hpp"
#include "network_case.hpp"

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

void small_network_is_bitwise_equal(Variant variant) {
  Runtime& rt = runtime_for(variant);
  Rng rng(900);
  const NetworkSpec spec = small_network(rng);
  const std::vector<float> x = small_network_input(rng);
  const std::vector<Activation> want = reference_network(spec, x.data());
  Network net(rt, spec);
  REQUIRE(net.output_shape() == Shape{2, 3, 1, 1});
  REQUIRE_FALSE(net.output_packed());
  require_same_trace(spec, net.run_trace(x.data()), want);
  REQUIRE(compare(net.run(x.data()), want.back()).empty());
  const std::vector<StageTime> stages = net.last_stage_times();
  INFO(stage_list(stages));
  // The convolution takes the ScaleBias after it as its output choice (fused into its GEMM), and the
  // convolution of packed input reads the words directly (no unpack_bits launch).
  for (const char* kernel :
       {"0:convolution binary_convolution+scale_bias xnor_gemm_fused", "2:threshold threshold_pack",
        "3:max_pool binary_maxpool", "4:convolution binary_convolution im2col_pack_units",
        "5:max_pool maxpool_f32", "7:fully_connected binary_fc"}) {
    INFO(kernel);
    REQUIRE(has_stage(stages, kernel));
  }
  for (const StageTime& s : stages) {
    INFO(s.kernel);
    REQUIRE(s.kernel.find("unpack_bits") == std::string::npos);
    REQUIRE(s.kernel.find("1:scale_bias") == std::string::npos);
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
  REQUIRE_THROWS_WITH(net.enqueue(in, small),
                      Catch::Contains("output buffer holds 20 bytes") && Catch::Contains("needs 24"));
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
  // Each convolution writes the max-pooled packed bits of the Threshold and MaxPool after it (fused epilogue,
  // xnor_gemm_bits on both variants), and the second one reads them directly: no threshold_pack,
  // binary_maxpool or unpack_bits launch before the first FC.
  const std::vector<StageTime> stages = net.last_stage_times();
  INFO(stage_list(stages));
  for (const char* kernel : {"0:convolution binary_convolution+threshold+max_pool xnor_gemm_bits",
                             "3:convolution binary_convolution+threshold+max_pool im2col_pack_units",
                             "3:convolution binary_convolution+threshold+max_pool xnor_gemm_bits"}) {
    INFO(kernel);
    REQUIRE(has_stage(stages, kernel));
  }
  for (const StageTime& s : stages) {
    INFO(s.kernel);
    REQUIRE(s.kernel.find("unpack_bits") == std::string::npos);
    REQUIRE(s.kernel.find("binary_maxpool") == std::string::npos);
    REQUIRE(s.kernel.find("1:threshold") == std::string::npos);
    REQUIRE(s.kernel.find("4:threshold") == std::string::npos);
  }
  REQUIRE(compare(net.run(v.calibration_input.data()), want.back()).empty());
}

}  // namespace

XNORCL_VARIANT_TEST("a network of every layer kind equals the reference network", "[network]",
                    small_network_is_bitwise_equal)
XNORCL_VARIANT_TEST("the paper's vehicle classifier equals the reference network", "[network]",
                    vehicle_classifier_is_bitwise_equal)

}  // namespace xnorcl::test
