// SPDX-License-Identifier: Apache-2.0
#include "ops/binary_convolution/pad_fold.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "xnorcl/error.hpp"

namespace xnorcl::detail {
namespace {

using TapRange = std::array<int, 2>;  // [lo, hi) of the taps of one dimension, empty as [0, 0)

// The in-bounds taps of output row oy (column ox) of class `cls` of a dimension with interior [in_lo, in_hi):
// classes below in_lo are positions, in_lo the interior (every tap), above it positions in_hi + (cls - in_lo
// - 1).
TapRange taps_of(int cls, int in_lo, int in_hi, int size, int taps, int stride, int dilation, int pad) {
  if (cls == in_lo) return {0, taps};
  const int o = cls < in_lo ? cls : in_hi + (cls - in_lo - 1);
  const std::int64_t i0 = std::int64_t(o) * stride - pad;
  int lo = taps, hi = 0;
  for (int k = 0; k < taps; ++k) {
    const std::int64_t i = i0 + std::int64_t(k) * dilation;
    if (i >= 0 && i < size) {
      lo = std::min(lo, k);
      hi = std::max(hi, k + 1);
    }
  }
  if (hi <= lo) lo = hi = 0;
  return {lo, hi};
}

// The summed-area table [KH + 1][KW + 1] of output channel o's real filter values summed over the channels.
void summed_area(const Filter& filter, const LayerDims& d, int o, std::vector<cl_int>& per_tap,
                 std::vector<cl_int>& sat) {
  const int taps = d.KH * d.KW;
  const int row = d.KW + 1;
  std::fill(per_tap.begin(), per_tap.end(), 0);
  for (int c = 0; c < d.C_IN; ++c) {
    for (int t = 0; t < taps; ++t) {
      per_tap[t] += filter.bit((std::int64_t(o) * d.C_IN + c) * taps + t) ? 1 : -1;
    }
  }
  std::fill(sat.begin(), sat.end(), 0);
  for (int a = 1; a <= d.KH; ++a) {
    for (int b = 1; b <= d.KW; ++b) {
      sat[a * row + b] = per_tap[(a - 1) * d.KW + (b - 1)] + sat[(a - 1) * row + b] + sat[a * row + b - 1] -
                         sat[(a - 1) * row + b - 1];
    }
  }
}

// Every output position's class, row by row (interior positions too: their class has S = 0), so that the
// GEMM's run epilogue reads a run's classes with one vector load instead of working them out column by
// column after a division (on PoCL, Bi-Real Net-18's xnor_gemm_fused_runs took 10-14% less time and
// xnor_gemm_fused 5-6%).
void append_position_classes(const LayerDims& d, const Border& bd, int column_classes,
                             std::vector<cl_int>& s) {
  auto class_of = [](int i, int lo, int hi) { return i < lo ? i : (i < hi ? lo : lo + 1 + (i - hi)); };
  s.reserve(s.size() + std::size_t(d.OH) * std::size_t(d.OW));
  for (int oy = 0; oy < d.OH; ++oy) {
    const int ry = class_of(oy, bd.oy_lo, bd.oy_hi);
    for (int ox = 0; ox < d.OW; ++ox) s.push_back(ry * column_classes + class_of(ox, bd.ox_lo, bd.ox_hi));
  }
}

}  // namespace

cl_uint pad_bit(float pad_value) {
  return pad_value == 1.0f ? 1u : 0u;
}

PadFold pad_fold(const LayerDims& d, float pad_value) {
  PadFold fold;
  fold.border = compute_border(d);
  fold.v = pad_value;
  fold.correct = pad_value != 1.0f && pad_value != -1.0f && fold.border.per_plane > 0;
  return fold;
}

std::vector<cl_int> pad_fold_tables(const Filter& filter, const LayerDims& d, PadFold& fold,
                                    std::uint64_t max_alloc, const ConvGeometry& g) {
  std::vector<cl_int> wsum;
  if (!fold.correct) return wsum;
  const Border& bd = fold.border;
  const int row_classes = bd.oy_lo + 1 + (d.OH - bd.oy_hi);
  const int column_classes = bd.ox_lo + 1 + (d.OW - bd.ox_hi);
  const std::uint64_t s_bytes =
      (std::uint64_t(d.C_OUT) * std::uint64_t(row_classes) * std::uint64_t(column_classes) +
       std::uint64_t(d.OH) * std::uint64_t(d.OW)) *
      4;
  if (s_bytes > max_alloc) {
    throw Error("the pad_value tables of layer " + xnorcl::to_string(g.input) + " * " +
                xnorcl::to_string(g.filter) + " need " + std::to_string(s_bytes) +
                " bytes, more than CL_DEVICE_MAX_MEM_ALLOC_SIZE (" + std::to_string(max_alloc) + ")");
  }
  fold.row_classes = row_classes;
  fold.column_classes = column_classes;
  std::vector<TapRange> rows(static_cast<std::size_t>(row_classes));
  std::vector<TapRange> columns(static_cast<std::size_t>(column_classes));
  for (int r = 0; r < row_classes; ++r) {
    rows[r] = taps_of(r, bd.oy_lo, bd.oy_hi, d.H, d.KH, d.stride_y, d.dilation_y, d.pad_top);
  }
  for (int x = 0; x < column_classes; ++x) {
    columns[x] = taps_of(x, bd.ox_lo, bd.ox_hi, d.W, d.KW, d.stride_x, d.dilation_x, d.pad_left);
  }
  const int row = d.KW + 1;
  std::vector<cl_int> per_tap(static_cast<std::size_t>(d.KH * d.KW));
  std::vector<cl_int> sat(static_cast<std::size_t>((d.KH + 1) * row));
  wsum.assign(std::size_t(d.C_OUT) * std::size_t(row_classes) * std::size_t(column_classes), 0);
  for (int o = 0; o < d.C_OUT; ++o) {
    summed_area(filter, d, o, per_tap, sat);
    // S = (sum of all taps) - (sum over the in-bounds rectangle).
    cl_int* s = wsum.data() + std::size_t(o) * std::size_t(row_classes) * std::size_t(column_classes);
    for (int r = 0; r < row_classes; ++r) {
      const int ky_lo = rows[r][0], ky_hi = rows[r][1];
      for (int x = 0; x < column_classes; ++x) {
        const int kx_lo = columns[x][0], kx_hi = columns[x][1];
        const int inside = sat[ky_hi * row + kx_hi] - sat[ky_lo * row + kx_hi] - sat[ky_hi * row + kx_lo] +
                           sat[ky_lo * row + kx_lo];
        s[std::size_t(r) * std::size_t(column_classes) + std::size_t(x)] = sat[d.KH * row + d.KW] - inside;
      }
    }
  }
  append_position_classes(d, bd, column_classes, wsum);
  return wsum;
}

}  // namespace xnorcl::detail
