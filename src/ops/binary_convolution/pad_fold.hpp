// SPDX-License-Identifier: Apache-2.0
// The pad_value of a layer: the packing writes one bit per pad tap, which can stand for +1 or -1 only. Any
// other value v is folded into the GEMM's stores instead: pad taps pack as bit 0 (-1), and at every border
// position the GEMM writes fma(v, S, G + S), S being the sum of the real filter values over the position's
// pad taps (cl_kernels/xnor_gemm.cl). S depends only on the output channel and on which taps are in bounds,
// so it is tabulated once per class of border position.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/binary_convolution/conv_layout.hpp"
#include "ops/binary_convolution/xnor_gemm.hpp"
#include "xnorcl/binary_convolution.hpp"

namespace xnorcl::detail {

// The bit the packing writes for every pad tap: 1 only for pad_value +1.
cl_uint pad_bit(float pad_value);

// The layer's border and whether the GEMM folds pad_value in (v other than +-1 and pad taps exist). The S
// table's classes are left 0: pad_fold_tables sets them.
PadFold pad_fold(const LayerDims& d, float pad_value);

// The S tables, [C_OUT][row_classes][column_classes] ints (row classes: each row above the interior, the
// interior rows, each row below; likewise columns; see border_class in cl_kernels/xnor_gemm.cl), followed by
// the class of every output position, [OH][OW] ints (row class * column_classes + column class), and sets
// fold.row_classes and fold.column_classes. Empty, fold untouched, without the fold. Throws Error, naming the
// layer g, where the tables would exceed max_alloc (CL_DEVICE_MAX_MEM_ALLOC_SIZE).
std::vector<cl_int> pad_fold_tables(const Filter& filter, const LayerDims& d, PadFold& fold,
                                    std::uint64_t max_alloc, const ConvGeometry& g);

}  // namespace xnorcl::detail
