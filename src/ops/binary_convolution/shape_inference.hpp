// SPDX-License-Identifier: Apache-2.0
// Validation helpers shared by shape inference, filters, the reference and the device path.
//
// BinaryConvolution::validate() is the single place where a layer is accepted or refused; these helpers are
// its pieces, exposed so that code handling one part (a Filter's shape, a size computed later) refuses it
// with the same messages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "xnorcl/shape.hpp"

namespace xnorcl::detail {

// float32 holds every integer up to 2^24 exactly, and the counts P, B and S of one output never exceed the
// patch size C_IN*KH*KW, so larger patches are refused (float32 could no longer hold every count exactly).
constexpr std::int64_t kMaxPatchBits = std::int64_t{1} << 24;

// a*b and a+b, or InvalidArgument naming `what` and both operands when signed 64-bit arithmetic overflows.
std::int64_t checked_mul(std::int64_t a, std::int64_t b, const std::string& what);
std::int64_t checked_add(std::int64_t a, std::int64_t b, const std::string& what);

// Every dimension of `shape` is at least 1 and the product of the four fits in int64; returns the product.
// `tensor` names it in messages ("input", "filter"), `axes` the four axes ({"N", "C", "H", "W"}).
std::int64_t checked_element_count(const Shape& shape, const std::string& tensor,
                                   const char* const (&axes)[4]);
// The same with the axis names of a data tensor (N, C_IN, H, W) and of a filter (C_OUT, C_IN, KH, KW).
std::int64_t checked_input_count(const Shape& input_shape);
std::int64_t checked_filter_count(const Shape& filter_shape);

// mode is "xnor-popcount", compared case-insensitively.
void validate_mode(const std::string& mode);
// A finite, normal or zero pad_value.
void validate_pad_value(float pad_value);
// Empty, or exactly `channels` values, none of them NaN (infinities are allowed).
void validate_thresholds(const std::vector<float>& thresholds, std::int64_t channels);

// A float written with enough digits to tell every float apart ("1.40129846e-45", "nan", "-inf").
std::string float_to_string(float value);

}  // namespace xnorcl::detail
