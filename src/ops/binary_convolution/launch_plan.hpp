// SPDX-License-Identifier: Apache-2.0
// What BinaryConvolution::plan() reports: the layout, tiles, output choice and chunking a layer was built
// with, and the launches of its first chunk, so that users and tests can see which kernels run without
// running them.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/binary_convolution/conv_layout.hpp"
#include "ops/binary_convolution/im2col_pack.hpp"
#include "ops/binary_convolution/output_rules.hpp"
#include "ops/binary_convolution/xnor_gemm.hpp"
#include "xnorcl/binary_convolution.hpp"

namespace xnorcl::detail {

// The layer as built: its variant and launchers, dimensions, chunks (at least one), options, the GEMM kernel
// that applies the output choice (with M_pad) and its epilogue, the fused max-pool and the bytes of its
// buffers (LayerTables::bytes()). The launches are the first chunk's.
Plan describe_plan(Variant variant, const Im2colPackLauncher& pack, const XnorGemmLauncher& gemm,
                   const LayerDims& d, const std::vector<Chunk>& chunks,
                   const BinaryConvolution::Options& options, const GemmChoice& gemm_choice,
                   const Epilogue& epilogue, const FusedPool& pool, std::uint64_t scratch_bytes);

}  // namespace xnorcl::detail
