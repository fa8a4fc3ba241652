// SPDX-License-Identifier: Apache-2.0
// Float bit patterns as the kernels see them, for host code in every layer (packing, validation, rules):
// order keys and NaN tests that no compiler flag can change, and the threshold modes the kernels know.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "xnorcl/packed.hpp"

namespace xnorcl::detail {

// Order key of a float (as the kernels compute it): unsigned order of keys is IEEE order, -0 == +0.
inline std::uint32_t float_order_key(float value) noexcept {
  std::uint32_t u;
  std::memcpy(&u, &value, sizeof u);
  if ((u & 0x7fffffffu) == 0) u = 0;
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

inline bool float_is_nan(float value) noexcept {
  std::uint32_t u;
  std::memcpy(&u, &value, sizeof u);
  return (u & 0x7fffffffu) > 0x7f800000u;
}

// A ThresholdMode the kernels know (an enum may hold any value of its type).
void check_threshold_mode(ThresholdMode mode, const char* what, std::size_t channel);

}  // namespace xnorcl::detail
