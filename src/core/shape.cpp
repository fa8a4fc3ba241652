// SPDX-License-Identifier: Apache-2.0
#include "xnorcl/shape.hpp"

namespace xnorcl {

std::string to_string(const Shape& s) {
  return std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]) + "x" +
         std::to_string(s[3]);
}

std::string to_string(AutoPad p) {
  switch (p) {
    case AutoPad::Explicit:
      return "explicit";
    case AutoPad::SameUpper:
      return "same_upper";
    case AutoPad::SameLower:
      return "same_lower";
    case AutoPad::Valid:
      return "valid";
  }
  return "unknown";
}

std::string to_string(BitOrder o) {
  return o == BitOrder::MsbFirst ? "msb_first" : "lsb_first";
}

std::string to_string(Variant v) {
  switch (v) {
    case Variant::Auto:
      return "auto";
    case Variant::Local:
      return "local";
    case Variant::Global:
      return "global";
  }
  return "unknown";
}

}  // namespace xnorcl
