// SPDX-License-Identifier: Apache-2.0
// A small end-to-end convolution with arbitrary shapes and attributes: the device agrees with the reference
// bit for bit, in both variants, or the layer is refused before any device work.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "xnorcl/xnorcl.hpp"

namespace {

xnorcl::Runtime& runtime(xnorcl::Variant v) {
  static xnorcl::Runtime local = [] {
    xnorcl::RuntimeOptions o;
    o.variant = xnorcl::Variant::Local;
    return xnorcl::Runtime::create(o);
  }();
  static xnorcl::Runtime global = [] {
    xnorcl::RuntimeOptions o;
    o.variant = xnorcl::Variant::Global;
    return xnorcl::Runtime::create(o);
  }();
  return v == xnorcl::Variant::Local ? local : global;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const xnorcl::Variant variant = in.ConsumeBool() ? xnorcl::Variant::Local : xnorcl::Variant::Global;
  const xnorcl::Shape xs{in.ConsumeIntegralInRange(1, 2), in.ConsumeIntegralInRange(1, 40),
                         in.ConsumeIntegralInRange(1, 9), in.ConsumeIntegralInRange(1, 9)};
  const xnorcl::Shape fs{in.ConsumeIntegralInRange(1, 9), xs[1], in.ConsumeIntegralInRange(1, 5),
                         in.ConsumeIntegralInRange(1, 5)};
  xnorcl::BinaryConvolution::Attributes a;
  a.strides = {in.ConsumeIntegralInRange(1, 3), in.ConsumeIntegralInRange(1, 3)};
  a.dilations = {in.ConsumeIntegralInRange(1, 3), in.ConsumeIntegralInRange(1, 3)};
  a.pads_begin = {in.ConsumeIntegralInRange(0, 3), in.ConsumeIntegralInRange(0, 3)};
  a.pads_end = {in.ConsumeIntegralInRange(0, 3), in.ConsumeIntegralInRange(0, 3)};
  a.auto_pad = static_cast<xnorcl::AutoPad>(in.ConsumeIntegralInRange(0, 3));
  static const float pad_values[] = {-1.0f, 0.0f, 1.0f, 0.5f, -0.25f, 0.1f};
  a.pad_value = pad_values[in.ConsumeIntegralInRange(0, 5)];
  if (in.ConsumeBool()) {
    for (std::int64_t c = 0; c < xs[1]; ++c)
      a.input_thresholds.push_back(in.ConsumeIntegralInRange(-4, 4) * 0.25f);
  }
  std::vector<std::uint8_t> filter_bytes(static_cast<std::size_t>((fs[0] * fs[1] * fs[2] * fs[3] + 7) / 8));
  for (auto& b : filter_bytes) b = in.ConsumeIntegral<std::uint8_t>();
  std::vector<float> x(static_cast<std::size_t>(xs[0] * xs[1] * xs[2] * xs[3]));
  for (auto& v : x) v = static_cast<float>(in.ConsumeIntegralInRange(-2, 2)) * 0.5f;
  const auto filter =
      xnorcl::Filter::from_packed(filter_bytes.data(), filter_bytes.size(), fs,
                                  in.ConsumeBool() ? xnorcl::BitOrder::MsbFirst : xnorcl::BitOrder::LsbFirst);
  std::vector<float> expected;
  try {
    expected = xnorcl::reference_binary_convolution(x.data(), xs, filter, a);
  } catch (const xnorcl::InvalidArgument&) {
    // The device side must refuse the same layer.
    try {
      xnorcl::BinaryConvolution conv(runtime(variant), a, xs, filter);
    } catch (const xnorcl::InvalidArgument&) {
      return 0;
    }
    std::abort();
  }
  xnorcl::BinaryConvolution conv(runtime(variant), a, xs, filter);
  const auto y = conv.run(x.data());
  if (y.size() != expected.size() || std::memcmp(y.data(), expected.data(), y.size() * sizeof(float)) != 0) {
    std::fprintf(stderr, "MISMATCH %s x %s f %s\n", xnorcl::to_string(variant).c_str(),
                 xnorcl::to_string(xs).c_str(), xnorcl::to_string(fs).c_str());
    std::abort();
  }
  return 0;
}
