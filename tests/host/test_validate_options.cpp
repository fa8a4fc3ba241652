// SPDX-License-Identifier: Apache-2.0
// validate_options: each refusal of BinaryConvolution::Options, with the message that names the values, and
// the options it accepts.
#include <catch2/catch.hpp>

#include <limits>

#include "ops/binary_convolution/validate_options.hpp"
#include "xnorcl/xnorcl.hpp"

using namespace xnorcl;
using Kind = BinaryConvolution::Output::Kind;

TEST_CASE("validate_options: refusals name the problem and the values", "[validate_options]") {
  BinaryConvolution::Attributes a;
  BinaryConvolution::Options o;
  CHECK_NOTHROW(detail::validate_options(a, o, 3));

  o.input_packed = true;
  a.input_thresholds = {0.5f, 0.5f};
  CHECK_THROWS_WITH(
      detail::validate_options(a, o, 3),
      "BinaryConvolution: the input is packed bits (Options::input_packed), so input_thresholds "
      "must be empty (2 given): the bits were thresholded when they were packed");
  a.input_thresholds.clear();
  CHECK_NOTHROW(detail::validate_options(a, o, 3));

  o.output.kind = Kind::ScaleBias;
  o.output.scale = {1.0f, 2.0f};
  o.output.bias = {0.0f, 0.0f, 0.0f};
  CHECK_THROWS_WITH(
      detail::validate_options(a, o, 3),
      "BinaryConvolution: Output::ScaleBias has 2 scales and 3 biases for C_OUT = 3 output channels; "
      "give exactly C_OUT of each");
  o.output.scale = {1.0f, std::numeric_limits<float>::infinity(), 2.0f};
  CHECK_THROWS_WITH(
      detail::validate_options(a, o, 3),
      "BinaryConvolution: Output::ScaleBias of output channel 1 has scale inf and bias 0; both must "
      "be finite (not NaN or infinite)");
  o.output.scale = {1.0f, 2.0f, 3.0f};
  CHECK_NOTHROW(detail::validate_options(a, o, 3));
  o.max_pool = PoolAttributes{};
  CHECK_THROWS_WITH(
      detail::validate_options(a, o, 3),
      "BinaryConvolution: Options::max_pool needs Output::Packed (it pools thresholded bits); the "
      "output is ScaleBias");

  o.output = {};
  o.output.kind = Kind::Packed;
  o.output.thresholds = {{0.0f, ThresholdMode::Greater}};
  CHECK_THROWS_WITH(
      detail::validate_options(a, o, 3),
      "BinaryConvolution: Output::Packed has 1 threshold rules for C_OUT = 3 output channels; give "
      "exactly one rule per output channel");
  o.output.thresholds = {{0.0f, ThresholdMode::Greater},
                         {std::numeric_limits<float>::quiet_NaN(), ThresholdMode::Less},
                         {0.0f, ThresholdMode::AlwaysOne}};
  CHECK_THROWS_WITH(
      detail::validate_options(a, o, 3),
      "BinaryConvolution: Output::Packed: the threshold of output channel 1 is NaN (a Less rule needs "
      "a number; +-inf is allowed)");
  o.output.thresholds[1] = {std::numeric_limits<float>::quiet_NaN(), ThresholdMode::AlwaysZero};
  CHECK_NOTHROW(detail::validate_options(a, o, 3));  // the value of an Always rule is not read
  o.output.thresholds[2].mode = static_cast<ThresholdMode>(7);
  CHECK_THROWS_WITH(detail::validate_options(a, o, 3),
                    "BinaryConvolution: Output::Packed: the rule of output channel 2 has an unknown mode 7");

  o.output = {};
  o.output.kind = static_cast<Kind>(5);
  o.max_pool.reset();
  CHECK_THROWS_WITH(detail::validate_options(a, o, 3), "BinaryConvolution: unknown Output::Kind 5");
}

TEST_CASE("validate_options: the clamp bounds are numbers with low <= high", "[validate_options]") {
  BinaryConvolution::Attributes a;
  BinaryConvolution::Options o;
  const float inf = std::numeric_limits<float>::infinity();
  CHECK_FALSE(o.clamped());
  o.clamp_low = 0.0f;
  CHECK(o.clamped());
  CHECK_NOTHROW(detail::validate_options(a, o, 3));  // Relu
  o.clamp_low = o.clamp_high = 2.5f;                 // a single point is a clamp too
  CHECK_NOTHROW(detail::validate_options(a, o, 3));
  o.clamp_low = 3.0f;
  CHECK_THROWS_WITH(
      detail::validate_options(a, o, 3),
      "BinaryConvolution: Options::clamp_low 3 and clamp_high 2.5 must be numbers (+-inf allowed) "
      "with clamp_low <= clamp_high");
  o.clamp_low = std::numeric_limits<float>::quiet_NaN();
  CHECK_THROWS_WITH(detail::validate_options(a, o, 3), Catch::Contains("clamp_low nan and clamp_high 2.5"));
  o.clamp_low = -inf;
  o.clamp_high = std::numeric_limits<float>::quiet_NaN();
  CHECK_THROWS_WITH(detail::validate_options(a, o, 3), Catch::Contains("clamp_low -inf and clamp_high nan"));
  o.clamp_low = inf;
  o.clamp_high = -inf;
  CHECK_THROWS_WITH(detail::validate_options(a, o, 3), Catch::Contains("clamp_low inf and clamp_high -inf"));
  // Every output kind takes a clamp (Packed composes it into its rules).
  o.clamp_low = -1.0f;
  o.clamp_high = 1.0f;
  o.output = BinaryConvolution::Output::packed(std::vector<Threshold>(3));
  CHECK_NOTHROW(detail::validate_options(a, o, 3));
  o.output = BinaryConvolution::Output::scale_and_bias({1, 1, 1}, {0, 0, 0});
  o.add_shortcut = true;
  CHECK_NOTHROW(detail::validate_options(a, o, 3));
}
