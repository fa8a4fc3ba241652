// SPDX-License-Identifier: Apache-2.0
// Bounds-checked little-endian reading of a file format held in memory (the network file). Every read and
// every count is checked against the bytes that are left before anything is allocated for it, so a malformed
// file costs at most a small multiple of its own size, whatever sizes it claims.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "xnorcl/error.hpp"

namespace xnorcl::detail {

template <class T>
using UnsignedOf =
    std::conditional_t<sizeof(T) == 8, std::uint64_t,
                       std::conditional_t<sizeof(T) == 4, std::uint32_t,
                                          std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint8_t>>>;

class ByteReader {
 public:
  // `data` must outlive the reader; `context` starts every error message ("network file").
  ByteReader(std::string_view data, std::string context) : data_(data), context_(std::move(context)) {}

  // A little-endian integer or float, whatever the host's byte order.
  template <class T>
  T get(const char* what) {
    static_assert(std::is_arithmetic_v<T>, "get reads numbers");
    need(sizeof(T), what);
    std::uint64_t wide = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
      wide |= std::uint64_t(static_cast<unsigned char>(data_[at_ + i])) << (8 * i);
    const auto u = static_cast<UnsignedOf<T>>(wide);
    at_ += sizeof(T);
    T v;
    std::memcpy(&v, &u, sizeof(T));
    return v;
  }

  // A u32 count of items that take at least `item_bytes` each in what follows: refused unless that many
  // bytes are left, so the caller may size a container by it.
  std::uint32_t count(const char* what, std::size_t item_bytes) {
    const std::uint32_t n = get<std::uint32_t>(what);
    if (item_bytes != 0 && n > left() / item_bytes) {
      fail(std::string(what) + " = " + std::to_string(n) + " needs at least " +
           std::to_string(std::uint64_t(n) * item_bytes) + " bytes, " + std::to_string(left()) + " are left");
    }
    return n;
  }

  // The next n bytes, without copying them.
  std::string_view bytes(std::size_t n, const char* what) {
    need(n, what);
    const std::string_view b = data_.substr(at_, n);
    at_ += n;
    return b;
  }

  void need(std::size_t n, const char* what) const {
    if (left() < n) {
      fail(std::string(what) + " needs " + std::to_string(n) + " bytes, " + std::to_string(left()) +
           " are left");
    }
  }

  [[noreturn]] void fail(const std::string& message) const {
    throw InvalidArgument(context_ + ", offset " + std::to_string(at_) + ": " + message);
  }

  std::size_t offset() const { return at_; }
  std::size_t left() const { return data_.size() - at_; }
  bool done() const { return at_ == data_.size(); }

 private:
  std::string_view data_;
  std::string context_;
  std::size_t at_ = 0;
};

}  // namespace xnorcl::detail
