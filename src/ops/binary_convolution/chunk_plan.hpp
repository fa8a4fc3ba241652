// SPDX-License-Identifier: Apache-2.0
// The chunk plan of a layer: the patch matrix of a whole batch easily outgrows CL_DEVICE_MAX_MEM_ALLOC_SIZE
// (and a mobile GPU's memory), so the packing and the GEMM run chunk by chunk (whole batches where an image
// fits, else ranges of output rows) on one patch buffer sized for the largest chunk.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/binary_convolution/conv_layout.hpp"
#include "xnorcl/binary_convolution.hpp"

namespace xnorcl::detail {

// What a layer's device buffers are planned against.
struct MemoryLimits {
  std::uint64_t max_alloc = 1;    // CL_DEVICE_MAX_MEM_ALLOC_SIZE, at least 1
  std::uint64_t test_budget = 0;  // XNORCL_MAX_CHUNK_BYTES, 0 where unset
  // The patch buffer of one chunk stays below this many bytes: 64 MiB, the allocation limit and the test
  // budget, whichever is least.
  std::uint64_t chunk_budget() const;
};

// The device's allocation limit and the test hook XNORCL_MAX_CHUNK_BYTES (a positive integer that lowers the
// chunk budget, so tests can force a layer to be split into batches and row ranges, and the staging buffers
// of run() into batch groups; not a tuning knob). Throws InvalidArgument where the variable is set to
// anything but a positive integer.
MemoryLimits memory_limits(std::uint64_t max_mem_alloc_size);

struct ChunkPlan {
  std::int64_t max_columns = 0;  // P_pad of a chunk at most (the patch buffer holds Kw * max_columns words)
  std::vector<Chunk> chunks;     // of one enqueue over all N batches
  std::int64_t largest_P_pad = 0;
  std::uint64_t largest_packed = 0;  // words of the binarized input of a chunk (channel-packed, bit rows)
  std::uint64_t patch_bytes(const LayerDims& d) const;
  std::uint64_t packed_bytes(const LayerDims& d) const;
};

// Plans the chunks of all N batches within the limits: the patch matrix of a chunk (Kw * P_pad words) stays
// within the chunk budget, the allocation limit and 32-bit column indices, except that a single output row is
// always allowed up to the allocation limit (the budget is soft). Throws Error, naming the layer g, where one
// output row or the binarized input rows of a chunk do not fit the allocation limit or 32-bit indices.
// tile_n: the GEMM's tile of columns (P_pad is a multiple of it).
ChunkPlan plan_layer_chunks(const LayerDims& d, std::int64_t tile_n, const MemoryLimits& limits,
                            const ConvGeometry& g);

// Splits `batches` images into chunks whose patch matrix has at most max_columns columns (P_pad): whole
// batches where one image fits, else ranges of output rows of one image. run() on fewer batches than N plans
// its own chunks with the layer's max_columns.
std::vector<Chunk> plan_chunks(const LayerDims& d, std::int64_t tile_n, int batches,
                               std::int64_t max_columns);

}  // namespace xnorcl::detail
