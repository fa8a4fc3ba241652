// SPDX-License-Identifier: Apache-2.0
#include "runtime/knobs.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>

#include "xnorcl/error.hpp"

namespace xnorcl::detail {
namespace {

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// Digits only, at most `max`; nothing when out of range.
std::optional<std::uint64_t> decimal(const std::string& s, std::uint64_t max) {
  std::uint64_t v = 0;
  for (unsigned char c : s) {
    const std::uint64_t digit = c - '0';
    if (v > (max - digit) / 10) return std::nullopt;
    v = v * 10 + digit;
  }
  return v;
}

}  // namespace

std::string lower_case(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

void refuse_setting(const std::string& source, const std::string& text, const std::string& valid) {
  throw InvalidArgument(source + " = '" + text + "' is not valid; it takes " + valid);
}

std::optional<std::string> knob_text(const char* name, const std::string& valid) {
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  const std::string text(v);
  const auto blank = [](unsigned char c) { return std::isspace(c) != 0; };
  if (text.empty() || blank(text.front()) || blank(text.back())) {
    refuse_setting(name, text, valid + " (unset it for the default)");
  }
  return text;
}

std::uint64_t parse_positive(const std::string& text, const std::string& source, std::uint64_t max) {
  const std::string valid = "a decimal integer from 1 to " + std::to_string(max);
  if (!all_digits(text)) refuse_setting(source, text, valid);
  const std::optional<std::uint64_t> v = decimal(text, max);
  if (!v || *v == 0) refuse_setting(source, text, valid);
  return *v;
}

std::optional<std::pair<int, int>> parse_device_indices(const std::string& text, const std::string& source) {
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos) return std::nullopt;
  const std::string p = text.substr(0, colon), d = text.substr(colon + 1);
  if (!all_digits(p) || !all_digits(d)) return std::nullopt;
  const auto pi = decimal(p, INT_MAX), di = decimal(d, INT_MAX);
  if (!pi || !di) {
    refuse_setting(source, text,
                   "P:D with platform and device indices from 0 to " + std::to_string(INT_MAX) +
                       ", or a substring of a device's \"<platform> / <device>\"");
  }
  return std::make_pair(static_cast<int>(*pi), static_cast<int>(*di));
}

}  // namespace xnorcl::detail
