// SPDX-License-Identifier: Apache-2.0
// Shape inference and validation of BinaryConvolution-1, with OpenVINO's formulas and, where
// OpenVINO has one, its message.
#include "ops/binary_convolution/shape_inference.hpp"

#include <cctype>
#include <climits>
#include <cmath>
#include <iomanip>
#include <locale>
#include <sstream>

#include "xnorcl/binary_convolution.hpp"
#include "xnorcl/error.hpp"

namespace xnorcl {
namespace detail {

namespace {

const char* const kInputAxes[4] = {"N", "C_IN", "H", "W"};
const char* const kFilterAxes[4] = {"C_OUT", "C_IN", "KH", "KW"};

}  // namespace

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const std::string& what) {
  std::int64_t result = 0;
  if (__builtin_mul_overflow(a, b, &result)) {
    throw InvalidArgument(what + " overflows 64-bit arithmetic (" + std::to_string(a) + " * " +
                          std::to_string(b) + ")");
  }
  return result;
}

std::int64_t checked_add(std::int64_t a, std::int64_t b, const std::string& what) {
  std::int64_t result = 0;
  if (__builtin_add_overflow(a, b, &result)) {
    throw InvalidArgument(what + " overflows 64-bit arithmetic (" + std::to_string(a) + " + " +
                          std::to_string(b) + ")");
  }
  return result;
}

std::int64_t checked_element_count(const Shape& shape, const std::string& tensor,
                                   const char* const (&axes)[4]) {
  for (int axis = 0; axis < 4; ++axis) {
    if (shape[axis] < 1) {
      throw InvalidArgument(tensor + " shape " + to_string(shape) + ": dimension " + axes[axis] + " (axis " +
                            std::to_string(axis) + ") is " + std::to_string(shape[axis]) +
                            "; every dimension must be at least 1");
    }
  }
  const std::string what = tensor + " shape " + to_string(shape) + ": element count " + axes[0] + "*" +
                           axes[1] + "*" + axes[2] + "*" + axes[3];
  std::int64_t count = 1;
  for (std::int64_t dim : shape) count = checked_mul(count, dim, what);
  return count;
}

std::int64_t checked_input_count(const Shape& input_shape) {
  return checked_element_count(input_shape, "input", kInputAxes);
}

std::int64_t checked_filter_count(const Shape& filter_shape) {
  return checked_element_count(filter_shape, "filter", kFilterAxes);
}

void validate_mode(const std::string& mode) {
  static const std::string expected = "xnor-popcount";
  bool same = mode.size() == expected.size();
  for (std::size_t i = 0; same && i < mode.size(); ++i) {
    same = std::tolower(static_cast<unsigned char>(mode[i])) == expected[i];
  }
  if (!same) {
    throw InvalidArgument("unknown mode \"" + mode +
                          "\"; BinaryConvolution-1 supports only \"xnor-popcount\"");
  }
}

void validate_pad_value(float pad_value) {
  // Pad taps contribute pad_value * S with one rounding; a NaN or infinity would poison every output that
  // touches padding, and a subnormal would be flushed on some devices but not on others.
  switch (std::fpclassify(pad_value)) {
    case FP_NAN:
      throw InvalidArgument("pad_value is NaN (" + float_to_string(pad_value) + "); it must be finite");
    case FP_INFINITE:
      throw InvalidArgument("pad_value is infinite (" + float_to_string(pad_value) + "); it must be finite");
    case FP_SUBNORMAL:
      throw InvalidArgument("pad_value " + float_to_string(pad_value) +
                            " is subnormal; devices that flush subnormals would compute a different result");
    default:
      return;
  }
}

void validate_thresholds(const std::vector<float>& thresholds, std::int64_t channels) {
  if (!thresholds.empty() &&
      static_cast<std::uint64_t>(thresholds.size()) != static_cast<std::uint64_t>(channels)) {
    throw InvalidArgument(
        "input_thresholds holds " + std::to_string(thresholds.size()) +
        " values; it must be empty or hold one per input channel (C_IN = " + std::to_string(channels) + ")");
  }
  for (std::size_t c = 0; c < thresholds.size(); ++c) {
    if (std::isnan(thresholds[c])) {
      throw InvalidArgument("input_thresholds[" + std::to_string(c) +
                            "] is NaN; a threshold may be any value but NaN (+-inf are allowed)");
    }
  }
}

std::string float_to_string(float value) {
  std::ostringstream out;
  out.imbue(std::locale::classic());  // a global locale must not turn 0.5 into "0,5"
  out << std::setprecision(9) << value;
  return out.str();
}

}  // namespace detail

namespace {

using detail::checked_add;
using detail::checked_mul;

std::string pair_to_string(const std::array<int, 2>& v) {
  return std::to_string(v[0]) + "," + std::to_string(v[1]);
}

// The whole layer, appended to messages about one attribute so that the caller can find the layer.
std::string describe(const BinaryConvolution::Attributes& a, const Shape& input, const Shape& filter) {
  return "input " + to_string(input) + ", filter " + to_string(filter) + ", strides " +
         pair_to_string(a.strides) + ", dilations " + pair_to_string(a.dilations) + ", pads_begin " +
         pair_to_string(a.pads_begin) + ", pads_end " + pair_to_string(a.pads_end) + ", auto_pad " +
         to_string(a.auto_pad);
}

void validate_auto_pad(AutoPad auto_pad) {
  switch (auto_pad) {
    case AutoPad::Explicit:
    case AutoPad::SameUpper:
    case AutoPad::SameLower:
    case AutoPad::Valid:
      return;
  }
  throw InvalidArgument("unknown auto_pad value " + std::to_string(static_cast<int>(auto_pad)));
}

void require_at_least_one(const std::array<int, 2>& values, const char* name, const std::string& layer) {
  if (values[0] < 1 || values[1] < 1) {
    throw InvalidArgument(std::string(name) + " must be at least 1, got " + pair_to_string(values) + " (" +
                          layer + ")");
  }
}

void require_not_negative(const std::array<int, 2>& values, const char* name, const std::string& layer) {
  if (values[0] < 0 || values[1] < 0) {
    throw InvalidArgument(std::string(name) + " must not be negative, got " + pair_to_string(values) + " (" +
                          layer + ")");
  }
}

void validate_patch_bits(const Shape& filter) {
  const std::string what = "filter shape " + to_string(filter) + ": patch size C_IN*KH*KW";
  const std::int64_t bits = checked_mul(checked_mul(filter[1], filter[2], what), filter[3], what);
  if (bits > detail::kMaxPatchBits) {
    throw InvalidArgument(what + " = " + std::to_string(bits) + " exceeds the limit of " +
                          std::to_string(detail::kMaxPatchBits) +
                          " (2^24): float32 outputs could no longer hold every count exactly");
  }
}

// One spatial axis (0 = H, 1 = W) before and after padding.
struct AxisIn {
  int axis = 0;
  std::int64_t size = 0;    // D
  std::int64_t kernel = 0;  // k
  int stride = 1;
  int dilation = 1;
  int pad_begin = 0;  // as given; used only with AutoPad::Explicit
  int pad_end = 0;
};

struct AxisOut {
  std::int64_t out = 0;
  std::int64_t pad_begin = 0;
  std::int64_t pad_end = 0;
  bool pad_taps = false;
};

// same_upper / same_lower: the output covers ceil(D/s) positions and the padding is whatever that needs.
void resolve_same_padding(const AxisIn& in, std::int64_t dilated, bool upper, const std::string& where,
                          AxisOut& r) {
  r.out = in.size / in.stride + (in.size % in.stride != 0 ? 1 : 0);
  // (out-1)*s < D, so only adding the dilated kernel can overflow.
  const std::int64_t reach = checked_add((r.out - 1) * in.stride, dilated, "padded extent" + where);
  const std::int64_t total = reach > in.size ? reach - in.size : 0;
  const std::int64_t small = total / 2;
  const std::int64_t big = total - small;
  r.pad_begin = upper ? small : big;
  r.pad_end = upper ? big : small;
}

AxisOut resolve_axis(const AxisIn& in, AutoPad auto_pad, const std::string& layer) {
  const std::string where = " at axis " + std::to_string(in.axis) + " (" + layer + ")";
  const std::int64_t dilated =
      checked_add(checked_mul(in.kernel - 1, in.dilation, "kernel after dilation" + where), 1,
                  "kernel after dilation" + where);
  AxisOut r;
  if (auto_pad == AutoPad::SameUpper || auto_pad == AutoPad::SameLower) {
    resolve_same_padding(in, dilated, auto_pad == AutoPad::SameUpper, where, r);
  } else if (auto_pad == AutoPad::Explicit) {
    r.pad_begin = in.pad_begin;
    r.pad_end = in.pad_end;
  }
  const std::int64_t padded = checked_add(checked_add(in.size, r.pad_begin, "padded input" + where),
                                          r.pad_end, "padded input" + where);
  if (dilated > padded) {
    throw InvalidArgument("Kernel after dilation has size (dim: " + std::to_string(dilated) +
                          ") larger than the data shape after padding (dim: " + std::to_string(padded) +
                          ") at axis " + std::to_string(in.axis) + ". (" + layer + ")");
  }
  if (auto_pad == AutoPad::Explicit || auto_pad == AutoPad::Valid) r.out = (padded - dilated) / in.stride + 1;
  if (r.pad_begin > INT_MAX || r.pad_end > INT_MAX) {
    throw InvalidArgument("padding " + std::to_string(r.pad_begin) + "/" + std::to_string(r.pad_end) +
                          " does not fit in int" + where);
  }
  // The last output's taps end at padded position reach-1; with strides the end pad may never be read.
  const std::int64_t reach = (r.out - 1) * in.stride + dilated;  // <= padded
  r.pad_taps = r.pad_begin > 0 || reach > in.size + r.pad_begin;
  return r;
}

}  // namespace

ConvGeometry BinaryConvolution::validate(const Attributes& attributes, const Shape& input_shape,
                                         const Shape& filter_shape) {
  const Attributes& a = attributes;
  detail::validate_mode(a.mode);
  validate_auto_pad(a.auto_pad);
  const std::int64_t input_count = detail::checked_input_count(input_shape);
  detail::checked_filter_count(filter_shape);
  const std::string layer = describe(a, input_shape, filter_shape);
  if (input_shape[1] != filter_shape[1]) {
    throw InvalidArgument("C_IN of the input (" + std::to_string(input_shape[1]) + ") and of the filter (" +
                          std::to_string(filter_shape[1]) + ") differ (" + layer + ")");
  }
  require_at_least_one(a.strides, "strides", layer);
  require_at_least_one(a.dilations, "dilations", layer);
  if (a.auto_pad == AutoPad::Explicit) {
    require_not_negative(a.pads_begin, "pads_begin", layer);
    require_not_negative(a.pads_end, "pads_end", layer);
  }
  detail::validate_pad_value(a.pad_value);
  detail::validate_thresholds(a.input_thresholds, input_shape[1]);
  validate_patch_bits(filter_shape);

  ConvGeometry g;
  g.input = input_shape;
  g.filter = filter_shape;
  g.output = {input_shape[0], filter_shape[0], 0, 0};
  for (int axis = 0; axis < 2; ++axis) {
    const AxisIn in{axis,
                    input_shape[2 + axis],
                    filter_shape[2 + axis],
                    a.strides[axis],
                    a.dilations[axis],
                    a.pads_begin[axis],
                    a.pads_end[axis]};
    const AxisOut r = resolve_axis(in, a.auto_pad, layer);
    g.output[2 + axis] = r.out;
    g.pads_begin[axis] = static_cast<int>(r.pad_begin);
    g.pads_end[axis] = static_cast<int>(r.pad_end);
    g.has_pad_taps = g.has_pad_taps || r.pad_taps;
  }
  const std::string output_what = "output shape " + to_string(g.output) + ": element count N*C_OUT*OH*OW";
  std::int64_t output_count = 1;
  for (std::int64_t dim : g.output) output_count = checked_mul(output_count, dim, output_what);
  // Callers size host and device buffers of float32 in bytes; refuse here rather than let that product wrap.
  const std::int64_t float_bytes = sizeof(float);
  checked_mul(input_count, float_bytes, "input shape " + to_string(input_shape) + ": size in bytes");
  checked_mul(output_count, float_bytes, "output shape " + to_string(g.output) + ": size in bytes");
  return g;
}

}  // namespace xnorcl
