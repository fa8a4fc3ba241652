// SPDX-License-Identifier: Apache-2.0
// Filter parsing with arbitrary bytes and shapes: refused cleanly, or every bit read back as packed.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdlib>
#include <vector>

#include "xnorcl/xnorcl.hpp"

namespace {
void check(bool ok) {
  if (!ok) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  xnorcl::Shape shape;
  for (auto& d : shape) {
    d = in.ConsumeBool() ? in.ConsumeIntegralInRange<std::int64_t>(-1, 9)
                         : in.ConsumeIntegral<std::int64_t>();
  }
  const auto order = in.ConsumeBool() ? xnorcl::BitOrder::MsbFirst : xnorcl::BitOrder::LsbFirst;
  const bool null_pointer = in.ConsumeIntegralInRange(0, 15) == 0;
  const std::vector<std::uint8_t> bytes = in.ConsumeRemainingBytes<std::uint8_t>();
  try {
    const auto f =
        xnorcl::Filter::from_packed(null_pointer ? nullptr : bytes.data(), bytes.size(), shape, order);
    check(!null_pointer && f.shape() == shape &&
          static_cast<std::size_t>((f.size() + 7) / 8) <= bytes.size());
    for (std::int64_t i = 0; i < f.size(); ++i) {
      const int bit =
          order == xnorcl::BitOrder::MsbFirst ? 7 - static_cast<int>(i % 8) : static_cast<int>(i % 8);
      check(f.bit(i) == static_cast<bool>((bytes[static_cast<std::size_t>(i / 8)] >> bit) & 1));
    }
    // The same elements as one value per element give the same filter.
    if (f.size() <= static_cast<std::int64_t>(bytes.size())) {
      const auto g = xnorcl::Filter::from_values(bytes.data(), shape);
      for (std::int64_t i = 0; i < g.size(); ++i) check(g.bit(i) == (bytes[static_cast<std::size_t>(i)] > 0));
    }
  } catch (const xnorcl::InvalidArgument&) {
  }
  return 0;
}
