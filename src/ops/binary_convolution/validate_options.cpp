// SPDX-License-Identifier: Apache-2.0
#include "ops/binary_convolution/validate_options.hpp"

#include <cmath>
#include <sstream>
#include <string>

#include "ops/layer_common.hpp"
#include "xnorcl/error.hpp"

namespace xnorcl::detail {
namespace {

std::string value_text(float value) {
  std::ostringstream o;
  o.precision(9);
  o << value;
  return o.str();
}

// One rule per output channel, each of a known mode, a Greater or Less rule with a number (+-inf allowed).
void check_rules(const std::string& what, const std::vector<Threshold>& rules, std::int64_t c_out) {
  if (static_cast<std::int64_t>(rules.size()) != c_out) {
    throw InvalidArgument(what + " has " + std::to_string(rules.size()) +
                          " threshold rules for C_OUT = " + std::to_string(c_out) +
                          " output channels; give exactly one rule per output channel");
  }
  for (std::int64_t c = 0; c < c_out; ++c) {
    const Threshold& r = rules[static_cast<std::size_t>(c)];
    const auto mode = static_cast<unsigned>(r.mode);
    if (mode > static_cast<unsigned>(ThresholdMode::AlwaysOne)) {
      throw InvalidArgument(what + ": the rule of output channel " + std::to_string(c) +
                            " has an unknown mode " + std::to_string(mode));
    }
    if ((r.mode == ThresholdMode::Greater || r.mode == ThresholdMode::Less) && float_is_nan(r.value)) {
      throw InvalidArgument(what + ": the threshold of output channel " + std::to_string(c) + " is NaN (a " +
                            (r.mode == ThresholdMode::Greater ? "Greater" : "Less") +
                            " rule needs a number; +-inf is allowed)");
    }
  }
}

}  // namespace

void validate_options(const BinaryConvolution::Attributes& a, const BinaryConvolution::Options& o,
                      std::int64_t c_out) {
  const std::string where = "BinaryConvolution: ";
  if (o.input_packed && !a.input_thresholds.empty()) {
    throw InvalidArgument(where +
                          "the input is packed bits (Options::input_packed), so input_thresholds must be " +
                          "empty (" + std::to_string(a.input_thresholds.size()) +
                          " given): the bits were thresholded when they were packed");
  }
  using Kind = BinaryConvolution::Output::Kind;
  const BinaryConvolution::Output& out = o.output;
  if (out.kind == Kind::ScaleBias) {
    if (static_cast<std::int64_t>(out.scale.size()) != c_out ||
        static_cast<std::int64_t>(out.bias.size()) != c_out) {
      throw InvalidArgument(where + "Output::ScaleBias has " + std::to_string(out.scale.size()) +
                            " scales and " + std::to_string(out.bias.size()) + " biases for C_OUT = " +
                            std::to_string(c_out) + " output channels; give exactly C_OUT of each");
    }
    for (std::int64_t c = 0; c < c_out; ++c) {
      const float sc = out.scale[static_cast<std::size_t>(c)], b = out.bias[static_cast<std::size_t>(c)];
      if (!std::isfinite(sc) || !std::isfinite(b)) {
        throw InvalidArgument(where + "Output::ScaleBias of output channel " + std::to_string(c) +
                              " has scale " + value_text(sc) + " and bias " + value_text(b) +
                              "; both must be finite (not NaN or infinite)");
      }
    }
  } else if (out.kind == Kind::Packed) {
    check_rules(where + "Output::Packed", out.thresholds, c_out);
  } else if (out.kind != Kind::Float) {
    throw InvalidArgument(where + "unknown Output::Kind " + std::to_string(static_cast<int>(out.kind)));
  }
  if (o.add_shortcut && out.kind != Kind::ScaleBias) {
    throw InvalidArgument(where +
                          "Options::add_shortcut needs Output::ScaleBias (the shortcut is added after the "
                          "scale and bias; use scale 1 and bias 0 for none); the output is " +
                          (out.kind == Kind::Float ? "Float" : "Packed"));
  }
  if (float_is_nan(o.clamp_low) || float_is_nan(o.clamp_high) || !(o.clamp_low <= o.clamp_high)) {
    throw InvalidArgument(where + "Options::clamp_low " + value_text(o.clamp_low) + " and clamp_high " +
                          value_text(o.clamp_high) +
                          " must be numbers (+-inf allowed) with clamp_low <= clamp_high");
  }
  if (!o.also_packed.empty()) {
    if (out.kind == Kind::Packed || o.max_pool) {
      throw InvalidArgument(where +
                            "Options::also_packed needs Output::Float or ScaleBias without max_pool (it "
                            "packs the float values the layer stores); the output is " +
                            (out.kind == Kind::Packed ? "Packed" : "max-pooled"));
    }
    check_rules(where + "Options::also_packed", o.also_packed, c_out);
  }
  if (o.max_pool && out.kind != Kind::Packed) {
    throw InvalidArgument(where +
                          "Options::max_pool needs Output::Packed (it pools thresholded bits); the "
                          "output is " +
                          (out.kind == Kind::Float ? "Float" : "ScaleBias"));
  }
}

}  // namespace xnorcl::detail
