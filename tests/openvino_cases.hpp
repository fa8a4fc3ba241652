// SPDX-License-Identifier: Apache-2.0
// OpenVINO's published BinaryConvolution reference cases (template plugin tests,
// src/plugins/template/tests/functional/op_reference/binary_convolution.cpp), mapped to xnorcl as
// the README says: OpenVINO's reference pad_value p becomes the real value 2p - 1. These and the values the
// section 7 derives from them are the only hard-coded outputs in the tests.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "xnorcl/xnorcl.hpp"

namespace xnorcl::test {

struct OpenVinoCase {
  int id;
  Shape input_shape;
  Shape filter_shape;
  std::vector<std::uint8_t> filter_bytes_msb_first;
  std::array<int, 2> strides, pads_begin, pads_end, dilations;
  float pad_value;
  std::vector<float> input;
  std::vector<float> expected;

  BinaryConvolution::Attributes attributes() const {
    BinaryConvolution::Attributes a;
    a.strides = strides;
    a.pads_begin = pads_begin;
    a.pads_end = pads_end;
    a.dilations = dilations;
    a.pad_value = pad_value;
    return a;
  }
};

inline const std::vector<OpenVinoCase>& openvino_cases() {
  static const std::vector<OpenVinoCase> cases = {
      {1,
       {1, 1, 4, 4},
       {1, 1, 3, 3},
       {0xaa, 0x80},
       {1, 1},
       {0, 0},
       {0, 0},
       {1, 1},
       -1.0f,
       {1, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 1, 1},
       {1, 1, 3, -1}},
      {2,
       {1, 1, 4, 4},
       {1, 1, 3, 3},
       {0xaa, 0x80},
       {1, 1},
       {1, 1},
       {1, 1},
       {1, 1},
       -1.0f,
       {1, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 1, 1},
       {1, -3, -1, 1, -3, 1, 1, -5, -3, 3, -1, 1, 1, -5, 1, -3}},
      {3,
       {1, 1, 4, 4},
       {1, 1, 3, 3},
       {0xaa, 0x80},
       {1, 1},
       {1, 1},
       {1, 1},
       {1, 1},
       1.0f,
       {1, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 1, 1},
       {3, -1, 1, 3, -1, 1, 1, -3, -1, 3, -1, 3, 3, -3, 3, -1}},
      {4,
       {1, 1, 5, 5},
       {1, 1, 3, 3},
       {0x2e, 0x0},
       {2, 2},
       {0, 0},
       {0, 0},
       {1, 1},
       -1.0f,
       {0, 1, 1, 0, 1, 1, 1, 0, 1, 0, 0, 0, 1, 0, 1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1},
       {-1, 3, 1, 1}},
      {5,
       {1, 1, 7, 7},
       {1, 1, 3, 3},
       {0x6b, 0x0},
       {1, 1},
       {0, 0},
       {0, 0},
       {2, 2},
       -1.0f,
       {1, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 1,
        1, 1, 0, 0, 1, 0, 0, 1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0},
       {-5, -3, -5, 5, 1, 3, -1, -1, 3}},
      {6,
       {1, 1, 7, 7},
       {1, 1, 3, 3},
       {0x6b, 0x0},
       {2, 2},
       {2, 2},
       {2, 2},
       {2, 2},
       -1.0f,
       {1, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 1,
        1, 1, 0, 0, 1, 0, 0, 1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0},
       {1, 1, -1, 1, 1, -5, -5, 5, 3, -1, 3, 3, -1, -1, 3, -3}},
      {7,
       {1, 1, 7, 7},
       {1, 1, 3, 3},
       {0x6b, 0x0},
       {2, 2},
       {2, 2},
       {2, 2},
       {2, 2},
       1.0f,
       {1, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 1,
        1, 1, 0, 0, 1, 0, 0, 1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0},
       {3, 3, 1, -1, -1, -5, -5, 3, 1, -1, 3, 1, -3, 1, 5, -1}},
      {8,
       {1, 2, 4, 4},
       {1, 2, 3, 3},
       {0xaa, 0xaa, 0x80},
       {1, 1},
       {0, 0},
       {0, 0},
       {1, 1},
       -1.0f,
       {1, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0},
       {2, 2, 6, -2}},
      {9,
       {2, 1, 4, 4},
       {1, 1, 3, 3},
       {0xaa, 0x80},
       {1, 1},
       {0, 0},
       {0, 0},
       {1, 1},
       -1.0f,
       {1, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 0},
       {1, 1, 3, -1, -3, 3, 5, -7}},
  };
  return cases;
}

// Y is affine in v, so the published +-1 pairs give these values at other pad values.
struct DerivedCase {
  int id;  // the case whose input, filter and geometry are used
  float pad_value;
  std::vector<float> expected;
};

inline const std::vector<DerivedCase>& derived_cases() {
  static const std::vector<DerivedCase> cases = {
      {2, 0.0f, {2, -2, 0, 2, -2, 1, 1, -4, -2, 3, -1, 2, 2, -4, 2, -2}},
      {2, 0.5f, {2.5f, -1.5f, 0.5f, 2.5f, -1.5f, 1, 1, -3.5f, -1.5f, 3, -1, 2.5f, 2.5f, -3.5f, 2.5f, -1.5f}},
      {6, 0.0f, {2, 2, 0, 0, 0, -5, -5, 4, 2, -1, 3, 2, -2, 0, 4, -2}},
  };
  return cases;
}

inline const OpenVinoCase& openvino_case(int id) {
  for (const auto& c : openvino_cases()) {
    if (c.id == id) return c;
  }
  throw Error("no OpenVINO case " + std::to_string(id));
}

// Byte-wise bit reversal: MsbFirst bytes become the LsbFirst bytes of the same filter.
inline std::vector<std::uint8_t> bit_reversed(std::vector<std::uint8_t> bytes) {
  for (auto& b : bytes) {
    std::uint8_t r = 0;
    for (int i = 0; i < 8; ++i) r |= ((b >> i) & 1) << (7 - i);
    b = r;
  }
  return bytes;
}

}  // namespace xnorcl::test
