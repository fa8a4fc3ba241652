// SPDX-License-Identifier: Apache-2.0
// Filters are kept as MSB-first packed bits whatever the caller's format, so that everything downstream
// (reference, device packing) reads one layout.
#include "xnorcl/filter.hpp"

#include <limits>
#include <string>

#include "ops/binary_convolution/shape_inference.hpp"
#include "xnorcl/error.hpp"

namespace xnorcl {

namespace {

std::uint8_t reverse_bits(std::uint8_t b) {
  b = static_cast<std::uint8_t>((b & 0xF0u) >> 4 | (b & 0x0Fu) << 4);
  b = static_cast<std::uint8_t>((b & 0xCCu) >> 2 | (b & 0x33u) << 2);
  b = static_cast<std::uint8_t>((b & 0xAAu) >> 1 | (b & 0x55u) << 1);
  return b;
}

// On a 32-bit target a valid int64 element count can need more bytes than size_t holds; truncating it would
// make bit() read past the vector.
std::size_t packed_bytes(std::int64_t bits, const Shape& shape) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(bits / 8 + (bits % 8 != 0));
  if (bytes > std::numeric_limits<std::size_t>::max()) {
    throw InvalidArgument("filter " + to_string(shape) + " needs " + std::to_string(bytes) +
                          " bytes, more than this platform can address");
  }
  return static_cast<std::size_t>(bytes);
}

// Callers' bytes may hold anything past the last element, but msb_first_bytes() promises zeros there so that
// consumers can copy and compare whole bytes.
void clear_unused_bits(std::vector<std::uint8_t>& msb_first, std::int64_t bits) {
  const int used = static_cast<int>(bits % 8);
  if (used != 0) msb_first.back() &= static_cast<std::uint8_t>(0xFFu << (8 - used));
}

template <class T>
std::vector<std::uint8_t> pack_values(const T* values, std::int64_t count, const Shape& shape) {
  std::vector<std::uint8_t> msb_first(packed_bytes(count, shape), 0);
  for (std::int64_t i = 0; i < count; ++i) {
    // A NaN compares false, so it is -1 like every value that is not above zero.
    if (values[i] > 0)
      msb_first[static_cast<std::size_t>(i >> 3)] |= static_cast<std::uint8_t>(0x80u >> (i & 7));
  }
  return msb_first;
}

std::int64_t checked_count(const Shape& shape, const char* function) {
  try {
    return detail::checked_filter_count(shape);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string(function) + ": " + e.what());
  }
}

}  // namespace

Filter Filter::from_packed(const std::uint8_t* bytes, std::size_t byte_count, const Shape& shape,
                           BitOrder order) {
  const char* function = "Filter::from_packed";
  const std::int64_t count = checked_count(shape, function);
  const std::size_t needed = packed_bytes(count, shape);
  if (bytes == nullptr) {
    throw InvalidArgument(std::string(function) + ": bytes is a null pointer (filter " + to_string(shape) +
                          " needs " + std::to_string(needed) + " bytes)");
  }
  if (byte_count < needed) {
    throw InvalidArgument(std::string(function) + ": filter " + to_string(shape) + " has " +
                          std::to_string(count) + " bits and needs ceil(" + std::to_string(count) +
                          "/8) = " + std::to_string(needed) + " bytes, got " + std::to_string(byte_count));
  }
  std::vector<std::uint8_t> msb_first(bytes, bytes + needed);
  switch (order) {
    case BitOrder::MsbFirst:
      break;
    case BitOrder::LsbFirst:
      for (std::uint8_t& b : msb_first) b = reverse_bits(b);
      break;
    default:
      throw InvalidArgument(std::string(function) + ": unknown bit order " +
                            std::to_string(static_cast<int>(order)));
  }
  clear_unused_bits(msb_first, count);
  return Filter(shape, std::move(msb_first));
}

Filter Filter::from_values(const float* values, const Shape& shape) {
  const std::int64_t count = checked_count(shape, "Filter::from_values");
  if (values == nullptr) {
    throw InvalidArgument("Filter::from_values: values is a null pointer (filter " + to_string(shape) +
                          " needs " + std::to_string(count) + " floats)");
  }
  return Filter(shape, pack_values(values, count, shape));
}

Filter Filter::from_values(const std::uint8_t* values, const Shape& shape) {
  const std::int64_t count = checked_count(shape, "Filter::from_values");
  if (values == nullptr) {
    throw InvalidArgument("Filter::from_values: values is a null pointer (filter " + to_string(shape) +
                          " needs " + std::to_string(count) + " uint8 values)");
  }
  return Filter(shape, pack_values(values, count, shape));
}

}  // namespace xnorcl
