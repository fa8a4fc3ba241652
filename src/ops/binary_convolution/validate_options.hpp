// SPDX-License-Identifier: Apache-2.0
// BinaryConvolution::Options checked against the attributes and the layer's C_OUT before any device work, so
// that bad options are refused with their values and the caller's output is never touched.
#pragma once

#include <cstdint>

#include "xnorcl/binary_convolution.hpp"

namespace xnorcl::detail {

// Throws InvalidArgument (prefixed "BinaryConvolution: ") where a packed input comes with input thresholds,
// the output choice has the wrong number of values or rules (or non-finite scale and bias, a NaN threshold,
// an unknown mode or kind), or max_pool is asked of an output that is not packed.
void validate_options(const BinaryConvolution::Attributes& a, const BinaryConvolution::Options& o,
                      std::int64_t c_out);

}  // namespace xnorcl::detail
