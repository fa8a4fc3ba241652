// SPDX-License-Identifier: Apache-2.0
// A binary filter [C_OUT, C_IN, KH, KW]: each element is +1 or -1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "xnorcl/shape.hpp"

namespace xnorcl {

class Filter {
 public:
  // C_OUT*C_IN*KH*KW bits, flat index ((o*C_IN + c)*KH + ky)*KW + kx, 8 to a byte, no padding between
  // output channels. MsbFirst: element i is bit 7 - i%8 of byte i/8 (ov::element::u1); LsbFirst: bit i%8
  // (weights written by OpenVINO's ConvToBinaryConv). byte_count must be at least ceil(n/8); extra bytes and
  // the unused bits of the last byte are ignored. Throws InvalidArgument for a null pointer, a short buffer
  // or a bad shape.
  static Filter from_packed(const std::uint8_t* bytes, std::size_t byte_count, const Shape& shape,
                            BitOrder order);
  // One value per element; w > 0 is +1, anything else (NaN included) is -1.
  static Filter from_values(const float* values, const Shape& shape);
  static Filter from_values(const std::uint8_t* values, const Shape& shape);

  const Shape& shape() const noexcept { return shape_; }
  std::int64_t size() const noexcept { return shape_[0] * shape_[1] * shape_[2] * shape_[3]; }
  // true is +1.
  bool bit(std::int64_t flat_index) const noexcept {
    return (msb_first_[static_cast<std::size_t>(flat_index >> 3)] >> (7 - (flat_index & 7))) & 1u;
  }
  bool bit(std::int64_t o, std::int64_t c, std::int64_t ky, std::int64_t kx) const noexcept {
    return bit(((o * shape_[1] + c) * shape_[2] + ky) * shape_[3] + kx);
  }
  // The bits in MsbFirst order, ceil(size/8) bytes, unused bits of the last byte zero.
  const std::vector<std::uint8_t>& msb_first_bytes() const noexcept { return msb_first_; }

 private:
  Filter(const Shape& shape, std::vector<std::uint8_t> msb_first)
      : shape_(shape), msb_first_(std::move(msb_first)) {}
  Shape shape_;
  std::vector<std::uint8_t> msb_first_;
};

}  // namespace xnorcl
