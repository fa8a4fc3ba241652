// SPDX-License-Identifier: Apache-2.0
#include "ops/pool_attributes.hpp"

#include <algorithm>
#include <cctype>
#include <climits>

#include "xnorcl/error.hpp"

namespace xnorcl::ops {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

std::array<int, 2> int_pair(const NodeView& v, const std::string& name, std::array<int, 2> fallback,
                            bool required) {
  if (!v.has(name) && !required) return fallback;
  const std::vector<std::int64_t> values = v.integers(name);
  if (values.size() != 2)
    throw InvalidArgument(v.where() + ": " + name + " must hold 2 values (y, x), it holds " +
                          std::to_string(values.size()));
  for (std::int64_t value : values)
    if (value < INT_MIN || value > INT_MAX)
      throw InvalidArgument(v.where() + ": " + name + " value " + std::to_string(value) + " is outside int");
  return {static_cast<int>(values[0]), static_cast<int>(values[1])};
}

AutoPad parse_auto_pad(const NodeView& v, const std::string& attribute) {
  const std::string value = lower(v.text(attribute, "explicit"));
  if (value == "explicit" || value == "notset") return AutoPad::Explicit;
  if (value == "same_upper") return AutoPad::SameUpper;
  if (value == "same_lower") return AutoPad::SameLower;
  if (value == "valid") return AutoPad::Valid;
  throw InvalidArgument(v.where() + ": " + attribute + " '" + v.text(attribute) +
                        "' is not one of explicit, same_upper, same_lower, valid");
}

PoolAttributes pool_attributes(const NodeView& v) {
  PoolAttributes a;
  a.kernel = int_pair(v, "kernel", a.kernel, true);
  a.strides = int_pair(v, "strides", {1, 1});
  a.pads_begin = int_pair(v, "pads_begin", a.pads_begin);
  a.pads_end = int_pair(v, "pads_end", a.pads_end);
  a.auto_pad = parse_auto_pad(v, "auto_pad");
  const std::string rounding = lower(v.text("rounding_type", "floor"));
  if (rounding == "floor")
    a.rounding_type = RoundingType::Floor;
  else if (rounding == "ceil")
    a.rounding_type = RoundingType::Ceil;
  else
    throw InvalidArgument(v.where() + ": rounding_type '" + v.text("rounding_type") +
                          "' is not floor or ceil");
  return a;
}

}  // namespace xnorcl::ops
