// SPDX-License-Identifier: Apache-2.0
// A validated layer in the int arguments the kernels take: the geometry is int64 (shape inference must not
// overflow on any input), the kernels index with 32-bit ints, so each dimension is converted once here, with
// a refusal that names the one that does not fit.
#pragma once

#include "ops/binary_convolution/conv_layout.hpp"
#include "ops/binary_convolution/xnor_gemm.hpp"
#include "xnorcl/binary_convolution.hpp"
#include "xnorcl/pool.hpp"

namespace xnorcl::detail {

// The layer's dimensions, strides, dilations and leading pads, in the K layout choose_packing picks for
// word_bits (unit-packed for a packed input). Throws InvalidArgument where a dimension (or K) exceeds
// INT_MAX.
LayerDims layer_dims(const ConvGeometry& g, const BinaryConvolution::Attributes& a, int word_bits,
                     bool input_packed);

// Options::max_pool resolved on the convolution's output `conv_output`: the window xnor_gemm_bits pools in;
// sets `pooled` to the layer's output shape. Throws InvalidArgument (prefixed with the convolution's output)
// where the pool does not fit it.
FusedPool fused_pool(const PoolAttributes& a, const Shape& conv_output, Shape& pooled);

}  // namespace xnorcl::detail
