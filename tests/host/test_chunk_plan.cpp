// SPDX-License-Identifier: Apache-2.0
// The chunk plan of random small layers under random memory limits: the chunks cover every output position
// exactly once, each chunk's patch matrix and binarized input fit the limits, the input rows a chunk
// binarizes hold every row its taps read, and the refusals name the numbers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "layer_case.hpp"
#include "ops/binary_convolution/chunk_plan.hpp"

using namespace xnorcl;
using detail::Chunk;
using detail::ChunkPlan;
using detail::LayerDims;
using detail::MemoryLimits;
using xnorcl::test::LayerCase;
using xnorcl::test::Rng;

namespace {

// Every (n, oy, ox) of `batches` images in exactly one chunk, in the chunk's columns [0, P).
void check_cover(const LayerDims& d, const std::vector<Chunk>& chunks, int batches, std::int64_t tile_n,
                 std::int64_t max_columns) {
  std::vector<int> seen(static_cast<std::size_t>(batches) * d.OH * d.OW, 0);
  for (const Chunk& c : chunks) {
    INFO("chunk n0 " << c.n0 << " n_count " << c.n_count << " oy0 " << c.oy0 << " rows " << c.rows << " P "
                     << c.P << " P_pad " << c.P_pad);
    REQUIRE(c.n_count >= 1);
    REQUIRE(c.rows >= 1);
    // Several images only whole; a range of rows only of one image.
    if (c.n_count > 1) REQUIRE((c.oy0 == 0 && c.rows == d.OH));
    REQUIRE(c.P == c.n_count * c.rows * d.OW);
    REQUIRE(c.P_pad % tile_n == 0);
    REQUIRE(c.P_pad >= c.P);
    REQUIRE(c.P_pad < c.P + tile_n);
    REQUIRE(c.P_pad <= max_columns);
    for (int n = c.n0; n < c.n0 + c.n_count; ++n) {
      for (int oy = c.oy0; oy < c.oy0 + c.rows; ++oy) {
        REQUIRE(n < batches);
        REQUIRE(oy < d.OH);
        for (int ox = 0; ox < d.OW; ++ox) ++seen[(std::size_t(n) * d.OH + oy) * d.OW + ox];
      }
    }
    // The binarized rows: within the input, and holding every in-bounds row a tap of the chunk reads.
    REQUIRE(c.iy_first >= 0);
    REQUIRE(c.iy_count >= 1);
    REQUIRE(c.iy_first + c.iy_count <= d.H);
    for (int oy = c.oy0; oy < c.oy0 + c.rows; ++oy) {
      for (int ky = 0; ky < d.KH; ++ky) {
        const int iy = oy * d.stride_y - d.pad_top + ky * d.dilation_y;
        if (iy >= 0 && iy < d.H) {
          INFO("oy " << oy << " ky " << ky << " reads row " << iy);
          REQUIRE(iy >= c.iy_first);
          REQUIRE(iy < c.iy_first + c.iy_count);
        }
      }
    }
  }
  for (std::size_t i = 0; i < seen.size(); ++i) {
    INFO("output position " << i << " (n, oy, ox flattened)");
    REQUIRE(seen[i] == 1);
  }
}

}  // namespace

TEST_CASE("chunk plan: chunks cover every output once and each buffer respects the limits", "[chunk_plan]") {
  Rng rng(20261123);
  int split = 0, refused = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int word_bits = rng.chance(50) ? 32 : 64;
    const LayerCase c = test::random_layer(rng, word_bits, rng.chance(20));
    const LayerDims& d = c.d;
    const std::int64_t tile_n = rng.pick(std::vector<std::int64_t>{4, 8, 16, 32, 64});
    const std::uint64_t row_bytes = d.word_bytes() * std::uint64_t(d.Kw);  // one column of the patch matrix
    MemoryLimits limits;
    // From a few columns to a whole batch: tiny limits split into row ranges, larger into batch groups.
    // (At least tile_n columns: the plan never makes a chunk narrower than a tile.)
    limits.max_alloc = row_bytes * std::uint64_t(tile_n * rng.uniform(1, 40));
    limits.test_budget = rng.chance(50) ? row_bytes * std::uint64_t(rng.uniform(1, 300)) : 0;
    INFO(c.text << ", tile_n " << tile_n << ", max_alloc " << limits.max_alloc << ", test budget "
                << limits.test_budget);
    // The widest chunk: as many whole tiles of columns as the budget holds, at least one tile and one output
    // row.
    const std::int64_t one_row = detail::round_up(d.OW, tile_n);
    const std::int64_t within_budget = std::int64_t(limits.chunk_budget() / row_bytes) / tile_n * tile_n;
    const std::int64_t max_columns = std::max({within_budget, tile_n, one_row});
    std::uint64_t largest_rows = 0;  // binarized input words of the plan's chunks
    for (const Chunk& ch : detail::plan_chunks(d, tile_n, d.N, max_columns)) {
      largest_rows = std::max(largest_rows, ch.packed_words(d));
    }
    ChunkPlan plan;
    try {
      plan = detail::plan_layer_chunks(d, tile_n, limits, c.g);
    } catch (const Error& e) {
      ++refused;
      // Refused only where one output row of one image, or the binarized rows of the chunks, cannot fit the
      // allocation limit.
      const std::string what = e.what();
      INFO(what);
      if (what.find("one output row") != std::string::npos) {
        REQUIRE(std::uint64_t(one_row) * row_bytes > limits.max_alloc);
      } else {
        REQUIRE(std::uint64_t(one_row) * row_bytes <= limits.max_alloc);
        REQUIRE(largest_rows * d.word_bytes() > limits.max_alloc);
        REQUIRE_THAT(what, Catch::Contains(std::to_string(largest_rows * d.word_bytes()) + " bytes"));
      }
      continue;
    }
    REQUIRE(plan.max_columns == max_columns);
    REQUIRE(std::uint64_t(one_row) * row_bytes <= limits.max_alloc);
    REQUIRE(plan.max_columns % tile_n == 0);
    REQUIRE(plan.max_columns >= one_row);
    REQUIRE(!plan.chunks.empty());
    if (plan.chunks.size() > 1) ++split;
    check_cover(d, plan.chunks, d.N, tile_n, plan.max_columns);
    std::int64_t largest_P_pad = 0;
    std::uint64_t largest_packed = 0;
    for (const Chunk& ch : plan.chunks) {
      largest_P_pad = std::max<std::int64_t>(largest_P_pad, ch.P_pad);
      largest_packed = std::max(largest_packed, ch.packed_words(d));
    }
    REQUIRE(plan.largest_P_pad == largest_P_pad);
    REQUIRE(plan.largest_packed == largest_packed);
    REQUIRE(plan.patch_bytes(d) == std::uint64_t(largest_P_pad) * row_bytes);
    REQUIRE(plan.packed_bytes(d) == largest_packed * d.word_bytes());
    // Each buffer within the allocation limit; the patch buffer within the chunk budget unless the chunk is
    // the smallest there is (the budget is soft).
    REQUIRE(plan.patch_bytes(d) <= limits.max_alloc);
    REQUIRE(plan.packed_bytes(d) <= limits.max_alloc);
    if (plan.patch_bytes(d) > limits.chunk_budget()) REQUIRE(largest_P_pad == one_row);
    // Where the budget allows a whole batch in one chunk, there is one chunk.
    if (std::uint64_t(detail::round_up(std::int64_t(d.N) * d.OH * d.OW, tile_n)) * row_bytes <=
        limits.chunk_budget()) {
      REQUIRE(plan.chunks.size() == 1);
    }
    // run() on fewer batches plans with the same max_columns: never a larger buffer than the plan's.
    for (int batches = 1; batches < d.N; ++batches) {
      const std::vector<Chunk> own = detail::plan_chunks(d, tile_n, batches, plan.max_columns);
      check_cover(d, own, batches, tile_n, plan.max_columns);
      for (const Chunk& ch : own) {
        REQUIRE(ch.P_pad <= plan.largest_P_pad);
        REQUIRE(ch.packed_words(d) <= plan.largest_packed);
      }
    }
  }
  // The random limits reached both the split and the refusal paths.
  CHECK(split > 50);
  CHECK(refused > 0);
}

TEST_CASE("chunk plan: a layer whose one output row exceeds the allocation limit is refused with its numbers",
          "[chunk_plan]") {
  BinaryConvolution::Attributes a;
  const ConvGeometry g = BinaryConvolution::validate(a, {1, 64, 3, 40}, {8, 64, 3, 3});
  const LayerDims d = test::dims_of(g, a, 32, false);
  REQUIRE(d.channel_packed);
  REQUIRE(d.Kw == 18);  // 9 taps of 2 words
  MemoryLimits limits;
  limits.max_alloc = 40 * 18 * 4;  // 40 columns; one row is 48 with tile_n 16
  REQUIRE_THROWS_WITH(detail::plan_layer_chunks(d, 16, limits, g),
                      "layer 1x64x3x40 * 8x64x3x3: one output row of 38 patches of 18 words needs 3456 "
                      "bytes, more than CL_DEVICE_MAX_MEM_ALLOC_SIZE (2880)");
  limits.max_alloc = 48 * 18 * 4;  // exactly one row
  const ChunkPlan plan = detail::plan_layer_chunks(d, 16, limits, g);
  CHECK(plan.max_columns == 48);
  CHECK(plan.chunks.size() == 1);  // one image of one output row
}

TEST_CASE(
    "chunk plan: XNORCL_MAX_CHUNK_BYTES lowers the chunk budget; anything but a positive integer is "
    "refused",
    "[chunk_plan]") {
  struct Restore {
    ~Restore() { unsetenv("XNORCL_MAX_CHUNK_BYTES"); }
  } restore;
  unsetenv("XNORCL_MAX_CHUNK_BYTES");
  MemoryLimits l = detail::memory_limits(0);
  CHECK(l.max_alloc == 1);  // a device reporting 0 still gets a limit to divide by
  CHECK(l.test_budget == 0);
  l = detail::memory_limits(std::uint64_t(1) << 40);
  CHECK(l.chunk_budget() == std::uint64_t(64) << 20);
  CHECK(detail::memory_limits(1000).chunk_budget() == 1000);
  setenv("XNORCL_MAX_CHUNK_BYTES", "4096", 1);
  l = detail::memory_limits(std::uint64_t(1) << 40);
  CHECK(l.test_budget == 4096);
  CHECK(l.chunk_budget() == 4096);
  CHECK(detail::memory_limits(1000).chunk_budget() == 1000);
  setenv("XNORCL_MAX_CHUNK_BYTES", "12x", 1);
  REQUIRE_THROWS_AS(detail::memory_limits(1000), InvalidArgument);
  REQUIRE_THROWS_WITH(detail::memory_limits(1000),
                      "XNORCL_MAX_CHUNK_BYTES = '12x' is not valid; it takes a decimal integer from 1 to "
                      "18446744073709551615");
  setenv("XNORCL_MAX_CHUNK_BYTES", "0", 1);
  REQUIRE_THROWS_WITH(detail::memory_limits(1000),
                      Catch::Contains("XNORCL_MAX_CHUNK_BYTES = '0' is not valid"));
}
