// SPDX-License-Identifier: Apache-2.0
// Plain value types of the public API.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace xnorcl {

using Shape = std::array<std::int64_t, 4>;  // N,C,H,W (data) or C_OUT,C_IN,KH,KW (filter)

enum class AutoPad { Explicit, SameUpper, SameLower, Valid };
enum class BitOrder { MsbFirst, LsbFirst };
enum class Variant { Auto, Local, Global };

std::string to_string(const Shape& s);  // "1x3x224x224"
std::string to_string(AutoPad p);       // "explicit", "same_upper", "same_lower", "valid"
std::string to_string(BitOrder o);      // "msb_first", "lsb_first"
std::string to_string(Variant v);       // "auto", "local", "global"

}  // namespace xnorcl
