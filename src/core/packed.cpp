// SPDX-License-Identifier: Apache-2.0
// Host side of the packed activation layout (xnorcl/packed.hpp): threshold rules, batch-norm folding, packing
// and unpacking, and the float scale-and-bias reference. Computed exactly as the kernels compute.
#include "xnorcl/packed.hpp"

#include <cmath>
#include <string>

#include "core/float_bits.hpp"
#include "xnorcl/error.hpp"

namespace xnorcl {
namespace {

using detail::float_is_nan;
using detail::float_order_key;

std::string value_text(float v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  return buf;
}

void check_shape(const Shape& shape, const char* what) {
  for (int i = 0; i < 4; ++i) {
    if (shape[i] <= 0) {
      throw InvalidArgument(std::string(what) + ": shape " + to_string(shape) + " has a dimension below 1");
    }
  }
}

void check_affine(const std::vector<float>& scale, const std::vector<float>& bias, const char* what) {
  if (scale.empty() || scale.size() != bias.size()) {
    throw InvalidArgument(std::string(what) + ": scale has " + std::to_string(scale.size()) +
                          " values and bias " + std::to_string(bias.size()) +
                          "; they need one value per channel each");
  }
  for (std::size_t c = 0; c < scale.size(); ++c) {
    if (!std::isfinite(scale[c]) || !std::isfinite(bias[c])) {
      throw InvalidArgument(std::string(what) + ": channel " + std::to_string(c) + " has scale " +
                            value_text(scale[c]) + " and bias " + value_text(bias[c]) +
                            "; both must be finite");
    }
  }
}

}  // namespace

void detail::check_threshold_mode(ThresholdMode mode, const char* what, std::size_t channel) {
  const auto m = static_cast<unsigned>(mode);
  if (m > static_cast<unsigned>(ThresholdMode::AlwaysOne)) {
    throw InvalidArgument(std::string(what) + ": the threshold mode of channel " + std::to_string(channel) +
                          " is " + std::to_string(m) +
                          ", not a ThresholdMode; use Greater, Less, AlwaysZero or AlwaysOne");
  }
}

bool threshold_bit(float y, const Threshold& rule) noexcept {
  if (float_is_nan(y)) return false;
  switch (rule.mode) {
    case ThresholdMode::Greater:
      return float_order_key(y) > float_order_key(rule.value);
    case ThresholdMode::Less:
      return float_order_key(y) < float_order_key(rule.value);
    case ThresholdMode::AlwaysZero:
      return false;
    case ThresholdMode::AlwaysOne:
      return true;
  }
  return false;
}

std::vector<Threshold> greater_than(const std::vector<float>& t) {
  std::vector<Threshold> rules(t.size());
  for (std::size_t c = 0; c < t.size(); ++c) {
    if (float_is_nan(t[c])) {
      throw InvalidArgument("threshold of channel " + std::to_string(c) + " is NaN");
    }
    rules[c] = {t[c], ThresholdMode::Greater};
  }
  return rules;
}

std::vector<Threshold> fold_batch_norm(const std::vector<float>& scale, const std::vector<float>& bias) {
  check_affine(scale, bias, "fold_batch_norm");
  std::vector<Threshold> rules(scale.size());
  for (std::size_t c = 0; c < scale.size(); ++c) {
    if (scale[c] > 0.0f) {
      rules[c] = {-bias[c] / scale[c], ThresholdMode::Greater};
    } else if (scale[c] < 0.0f) {
      rules[c] = {-bias[c] / scale[c], ThresholdMode::Less};
    } else {
      rules[c] = {0.0f, bias[c] > 0.0f ? ThresholdMode::AlwaysOne : ThresholdMode::AlwaysZero};
    }
  }
  return rules;
}

std::vector<std::uint32_t> pack_activations(const float* y, const Shape& shape,
                                            const std::vector<Threshold>& rules) {
  if (!y) throw InvalidArgument("pack_activations: the input pointer is null");
  check_shape(shape, "pack_activations");
  const std::int64_t N = shape[0], C = shape[1], H = shape[2], W = shape[3];
  if (!rules.empty() && static_cast<std::int64_t>(rules.size()) != C) {
    throw InvalidArgument("pack_activations: " + std::to_string(rules.size()) + " threshold rules for " +
                          std::to_string(C) + " channels (shape " + to_string(shape) + "); give 0 or C");
  }
  for (std::size_t c = 0; c < rules.size(); ++c) {
    const Threshold& r = rules[c];
    detail::check_threshold_mode(r.mode, "pack_activations", c);
    if ((r.mode == ThresholdMode::Greater || r.mode == ThresholdMode::Less) && float_is_nan(r.value))
      throw InvalidArgument("pack_activations: a threshold is NaN");
  }
  const std::int64_t Cw = packed_words_per_pixel(C);
  std::vector<std::uint32_t> words(static_cast<std::size_t>(packed_word_count(shape)), 0u);
  const Threshold zero{};
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t c = 0; c < C; ++c) {
      const Threshold& rule = rules.empty() ? zero : rules[static_cast<std::size_t>(c)];
      for (std::int64_t i = 0; i < H * W; ++i) {
        if (threshold_bit(y[(n * C + c) * H * W + i], rule)) {
          words[static_cast<std::size_t>((n * H * W + i) * Cw + c / 32)] |= 1u << (c % 32);
        }
      }
    }
  }
  return words;
}

bool packed_bit(const std::uint32_t* words, const Shape& shape, std::int64_t n, std::int64_t c,
                std::int64_t y, std::int64_t x) noexcept {
  const std::int64_t Cw = packed_words_per_pixel(shape[1]);
  return (words[((n * shape[2] + y) * shape[3] + x) * Cw + c / 32] >> (c % 32)) & 1u;
}

std::vector<float> unpack_activations(const std::uint32_t* words, const Shape& shape) {
  if (!words) throw InvalidArgument("unpack_activations: the input pointer is null");
  check_shape(shape, "unpack_activations");
  const std::int64_t N = shape[0], C = shape[1], H = shape[2], W = shape[3];
  std::vector<float> out(static_cast<std::size_t>(N * C * H * W));
  std::size_t i = 0;
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t yy = 0; yy < H; ++yy)
        for (std::int64_t x = 0; x < W; ++x) out[i++] = packed_bit(words, shape, n, c, yy, x) ? 1.0f : 0.0f;
  return out;
}

std::vector<float> reference_scale_bias(const float* y, const Shape& shape, const std::vector<float>& scale,
                                        const std::vector<float>& bias) {
  if (!y) throw InvalidArgument("reference_scale_bias: the input pointer is null");
  check_shape(shape, "reference_scale_bias");
  check_affine(scale, bias, "reference_scale_bias");
  if (static_cast<std::int64_t>(scale.size()) != shape[1]) {
    throw InvalidArgument("reference_scale_bias: " + std::to_string(scale.size()) + " scales for " +
                          std::to_string(shape[1]) + " channels");
  }
  const std::int64_t N = shape[0], C = shape[1], HW = shape[2] * shape[3];
  std::vector<float> out(static_cast<std::size_t>(N * C * HW));
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t i = 0; i < HW; ++i) {
        const std::size_t k = static_cast<std::size_t>((n * C + c) * HW + i);
        out[k] = std::fmaf(scale[c], y[k], bias[c]);
      }
  return out;
}

}  // namespace xnorcl
