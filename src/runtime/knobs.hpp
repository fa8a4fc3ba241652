// SPDX-License-Identifier: Apache-2.0
// The one strict parser of the library's settings (XNORCL_* environment variables and the matching
// RuntimeOptions fields). A setting that is present is used exactly as written or refused: an empty value,
// surrounding blanks, a sign, trailing characters or a number out of range is an InvalidArgument naming the
// setting, the value and what is valid; nothing is silently read as unset, as 0 or as "no limit".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace xnorcl::detail {

// The environment variable's value, or nothing when it is not set. Set but empty or blank-padded: refused,
// with `valid` (what the variable takes) in the message.
std::optional<std::string> knob_text(const char* name, const std::string& valid);

// A decimal integer in [1, max]: digits only.
std::uint64_t parse_positive(const std::string& text, const std::string& source, std::uint64_t max);

// One of the named choices (case-insensitive).
template <class T>
T parse_choice(const std::string& text, const std::string& source,
               const std::vector<std::pair<const char*, T>>& choices);

// "P:D" with both indices decimal and within int, or nothing when the text is not of that form (a name
// substring then). Out-of-range indices are refused, never wrapped.
std::optional<std::pair<int, int>> parse_device_indices(const std::string& text, const std::string& source);

[[noreturn]] void refuse_setting(const std::string& source, const std::string& text,
                                 const std::string& valid);
std::string lower_case(std::string s);

template <class T>
T parse_choice(const std::string& text, const std::string& source,
               const std::vector<std::pair<const char*, T>>& choices) {
  std::string valid;
  for (const auto& c : choices) {
    if (lower_case(text) == c.first) return c.second;
    valid += (valid.empty() ? "" : ", ") + std::string(c.first);
  }
  refuse_setting(source, text, "one of " + valid);
}

}  // namespace xnorcl::detail
