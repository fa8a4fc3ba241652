// SPDX-License-Identifier: Apache-2.0
// Attribute and shape validation never crashes: it returns a consistent geometry or throws InvalidArgument.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdlib>
#include <limits>

#include "xnorcl/xnorcl.hpp"

namespace {

std::int64_t dimension(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0:
      return in.ConsumeIntegralInRange<std::int64_t>(-2, 16);
    case 1:
      return in.ConsumeIntegralInRange<std::int64_t>(0, 1 << 20);
    case 2:
      return in.ConsumeIntegral<std::int64_t>();
    default:
      return std::numeric_limits<std::int64_t>::max() - in.ConsumeIntegralInRange<std::int64_t>(0, 3);
  }
}

int small_or_any(FuzzedDataProvider& in) {
  return in.ConsumeBool() ? in.ConsumeIntegralInRange(-2, 8) : in.ConsumeIntegral<int>();
}

float any_float(FuzzedDataProvider& in) {
  static const float special[] = {0.0f,
                                  -0.0f,
                                  1.0f,
                                  -1.0f,
                                  0.5f,
                                  std::numeric_limits<float>::infinity(),
                                  std::numeric_limits<float>::quiet_NaN(),
                                  std::numeric_limits<float>::denorm_min()};
  return in.ConsumeBool() ? special[in.ConsumeIntegralInRange(0, 7)] : in.ConsumeFloatingPoint<float>();
}

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  xnorcl::Shape x{dimension(in), dimension(in), dimension(in), dimension(in)};
  xnorcl::Shape f{dimension(in), in.ConsumeBool() ? x[1] : dimension(in), dimension(in), dimension(in)};
  xnorcl::BinaryConvolution::Attributes a;
  a.strides = {small_or_any(in), small_or_any(in)};
  a.dilations = {small_or_any(in), small_or_any(in)};
  a.pads_begin = {small_or_any(in), small_or_any(in)};
  a.pads_end = {small_or_any(in), small_or_any(in)};
  a.auto_pad = static_cast<xnorcl::AutoPad>(in.ConsumeIntegralInRange(0, 3));
  a.pad_value = any_float(in);
  if (in.ConsumeBool()) a.mode = in.ConsumeRandomLengthString(16);
  const int thresholds = in.ConsumeIntegralInRange(0, 20);
  for (int i = 0; i < thresholds; ++i) a.input_thresholds.push_back(any_float(in));
  try {
    const xnorcl::ConvGeometry g = xnorcl::BinaryConvolution::validate(a, x, f);
    check(g.output[0] == x[0] && g.output[1] == f[0] && g.output[2] >= 1 && g.output[3] >= 1);
    for (int axis = 0; axis < 2; ++axis) {
      check(g.pads_begin[axis] >= 0 && g.pads_end[axis] >= 0);
      const std::int64_t dk = (f[2 + axis] - 1) * a.dilations[axis] + 1;
      const std::int64_t padded = x[2 + axis] + g.pads_begin[axis] + g.pads_end[axis];
      check(padded >= dk && (padded - dk) / a.strides[axis] + 1 == g.output[2 + axis]);
    }
  } catch (const xnorcl::InvalidArgument&) {
    // refused: the expected outcome for most random inputs
  }
  return 0;
}
