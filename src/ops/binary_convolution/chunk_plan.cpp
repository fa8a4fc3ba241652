// SPDX-License-Identifier: Apache-2.0
#include "ops/binary_convolution/chunk_plan.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <string>

#include "runtime/knobs.hpp"
#include "xnorcl/error.hpp"

namespace xnorcl::detail {
namespace {

constexpr std::uint64_t kDefaultChunkBudget = std::uint64_t(64) << 20;

std::uint64_t test_chunk_budget() {
  const auto v = knob_text("XNORCL_MAX_CHUNK_BYTES", "a positive number of bytes");
  return v ? parse_positive(*v, "XNORCL_MAX_CHUNK_BYTES", UINT64_MAX) : 0;
}

// The most columns (P_pad) a chunk may have: within the budget, the allocation limit and 32-bit column
// indices, at least one output row.
std::int64_t max_chunk_columns(const LayerDims& d, std::int64_t tile_n, const MemoryLimits& limits,
                               const ConvGeometry& g) {
  const std::uint64_t word_bytes = d.word_bytes() * std::uint64_t(d.Kw);
  const std::int64_t column_limit = (std::int64_t(INT_MAX) / 2) / tile_n * tile_n;
  auto columns_within = [&](std::uint64_t bytes) {
    return std::min<std::int64_t>(column_limit,
                                  static_cast<std::int64_t>(bytes / word_bytes) / tile_n * tile_n);
  };
  std::int64_t max_columns = std::max<std::int64_t>(columns_within(limits.chunk_budget()), tile_n);
  const std::int64_t one_row = round_up(d.OW, tile_n);
  if (max_columns < one_row) {
    // A single output row is the smallest chunk; the budget is soft, the allocation limit is not.
    if (one_row > columns_within(limits.max_alloc)) {
      throw Error("layer " + to_string(g.input) + " * " + to_string(g.filter) + ": one output row of " +
                  std::to_string(d.OW) + " patches of " + std::to_string(d.Kw) + " words needs " +
                  std::to_string(std::uint64_t(one_row) * word_bytes) +
                  " bytes, more than CL_DEVICE_MAX_MEM_ALLOC_SIZE (" + std::to_string(limits.max_alloc) +
                  ")");
    }
    max_columns = one_row;
  }
  return max_columns;
}

}  // namespace

std::uint64_t MemoryLimits::chunk_budget() const {
  std::uint64_t budget = std::min(max_alloc, kDefaultChunkBudget);
  if (test_budget) budget = std::min(budget, test_budget);
  return budget;
}

MemoryLimits memory_limits(std::uint64_t max_mem_alloc_size) {
  MemoryLimits limits;
  limits.max_alloc = std::max<std::uint64_t>(max_mem_alloc_size, 1);
  limits.test_budget = test_chunk_budget();
  return limits;
}

std::uint64_t ChunkPlan::patch_bytes(const LayerDims& d) const {
  return std::uint64_t(largest_P_pad) * (d.word_bytes() * std::uint64_t(d.Kw));
}

std::uint64_t ChunkPlan::packed_bytes(const LayerDims& d) const {
  return largest_packed * d.word_bytes();
}

ChunkPlan plan_layer_chunks(const LayerDims& d, std::int64_t tile_n, const MemoryLimits& limits,
                            const ConvGeometry& g) {
  ChunkPlan plan;
  plan.max_columns = max_chunk_columns(d, tile_n, limits, g);
  plan.chunks = plan_chunks(d, tile_n, d.N, plan.max_columns);
  std::uint64_t largest_extent = 0;  // of the packed input's indices the kernels count in ints
  for (const Chunk& c : plan.chunks) {
    plan.largest_P_pad = std::max<std::int64_t>(plan.largest_P_pad, c.P_pad);
    plan.largest_packed = std::max(plan.largest_packed, c.packed_words(d));
    largest_extent = std::max(largest_extent, c.packed_int_extent(d));
  }
  // run() on fewer batches plans its own chunks of at most as many columns: never more packed rows than
  // these.
  if (plan.largest_packed * d.word_bytes() > limits.max_alloc || largest_extent > std::uint64_t(INT_MAX)) {
    throw Error("layer " + to_string(g.input) + " * " + to_string(g.filter) +
                ": the binarized input rows of a " + "chunk need " +
                std::to_string(plan.largest_packed * d.word_bytes()) +
                " bytes, beyond CL_DEVICE_MAX_MEM_ALLOC_SIZE (" + std::to_string(limits.max_alloc) +
                ") or 32-bit pixel indices");
  }
  return plan;
}

std::vector<Chunk> plan_chunks(const LayerDims& d, std::int64_t tile_n, int batches,
                               std::int64_t max_columns) {
  const std::int64_t per_image = std::int64_t(d.OH) * d.OW;
  std::vector<Chunk> out;
  auto add = [&](int n0, int n_count, int oy0, int rows) {
    Chunk c;
    c.n0 = n0;
    c.n_count = n_count;
    c.oy0 = oy0;
    c.rows = rows;
    c.P = static_cast<int>(std::int64_t(n_count) * rows * d.OW);
    c.P_pad = static_cast<int>(round_up(c.P, tile_n));
    // Input rows the taps of output rows [oy0, oy0 + rows) can read, clamped to the input (rows outside are
    // pad and never read).
    const std::int64_t first = std::int64_t(oy0) * d.stride_y - d.pad_top;
    const std::int64_t last =
        std::int64_t(oy0 + rows - 1) * d.stride_y - d.pad_top + std::int64_t(d.KH - 1) * d.dilation_y;
    const std::int64_t lo = std::clamp<std::int64_t>(first, 0, d.H - 1);
    const std::int64_t hi = std::clamp<std::int64_t>(last, lo, d.H - 1);
    c.iy_first = static_cast<int>(lo);
    c.iy_count = static_cast<int>(hi - lo + 1);
    out.push_back(c);
  };
  if (round_up(per_image, tile_n) <= max_columns) {
    std::int64_t per_chunk = std::max<std::int64_t>(1, max_columns / per_image);
    while (per_chunk > 1 && round_up(per_chunk * per_image, tile_n) > max_columns) --per_chunk;
    for (std::int64_t n0 = 0; n0 < batches; n0 += per_chunk) {
      add(static_cast<int>(n0), static_cast<int>(std::min<std::int64_t>(per_chunk, batches - n0)), 0, d.OH);
    }
    return out;
  }
  std::int64_t rows = std::max<std::int64_t>(1, max_columns / d.OW);
  while (rows > 1 && round_up(rows * d.OW, tile_n) > max_columns) --rows;
  for (int n = 0; n < batches; ++n) {
    for (std::int64_t oy0 = 0; oy0 < d.OH; oy0 += rows) {
      add(n, 1, static_cast<int>(oy0), static_cast<int>(std::min<std::int64_t>(rows, d.OH - oy0)));
    }
  }
  return out;
}

}  // namespace xnorcl::detail
