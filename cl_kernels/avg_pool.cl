// SPDX-License-Identifier: Apache-2.0
// avg_pool_f32 (src/ops/avg_pool.cpp): float32 NCHW in and out, one work-item per output. The window of
// output (oy, ox) is input rows oy*stride_y - pad_top + [0, KH), columns likewise (computed in 64 bits),
// clipped to the input; its taps are summed row by row in float and divided by `full` when it is not 0,
// else by the number of taps (a window with no tap gives 0).
//
// avg_pool_f32_runs: the same sums, a work-item per run of POOL_RUN consecutive outputs of one row as float16
//   lanes (each tap one vector load; stride 2: the 16 even columns of 31), as binary_maxpool.cl's
//   maxpool_f32_runs, a row's last run overlapping the one before it where the row is not whole runs (the
//   overlapped lanes' sums are the same, in the same order, and are not stored twice).
//   A lane without its column adds +0 (the sum starts at +0 and is never -0, so nothing changes) and does
//   not count in its divisor. A row narrower than a run is one run whose spare lanes read the next rows'
//   values where that stays inside the tensor, so that its taps load whole vectors too.
//
// NDRange: 1-D, global rounded up to WG_SIZE, local WG_SIZE; `total` real work-items, consecutive ones on
// consecutive outputs (or runs) of a row. Quotients and remainders written out (r = a - q*b) for Oclgrind
// 21.10.

#ifndef WG_SIZE
#define WG_SIZE 64
#endif

#define POOL_RUN 16

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void avg_pool_f32(
    __global const float* restrict in, __global float* restrict out, const int H, const int W, const int OH,
    const int OW, const int KH, const int KW, const int stride_y, const int stride_x, const int pad_top,
    const int pad_left, const int full, const int total) {
  const int gid = (int)get_global_id(0);
  if (gid >= total) return;
  const int plane = gid / (OH * OW);
  const int r = gid - plane * (OH * OW);
  const int oy = r / OW;
  const int ox = r - oy * OW;
  const long iy0 = (long)oy * stride_y - pad_top;
  const long ix0 = (long)ox * stride_x - pad_left;
  const int y_lo = (int)clamp(iy0, 0l, (long)H), y_hi = (int)clamp(iy0 + KH, 0l, (long)H);
  const int x_lo = (int)clamp(ix0, 0l, (long)W), x_hi = (int)clamp(ix0 + KW, 0l, (long)W);
  __global const float* x = in + (long)plane * H * W;
  float sum = 0.0f;
  for (int iy = y_lo; iy < y_hi; ++iy)
    for (int ix = x_lo; ix < x_hi; ++ix) sum += x[iy * W + ix];
  const int divisor = full != 0 ? full : (y_hi - y_lo) * (x_hi - x_lo);
  out[gid] = divisor > 0 ? sum / (float)divisor : 0.0f;
}

// Whether every tap of a run's windows loads as whole vectors: stride 1 or 2 and the windows of the run's
// `lanes` outputs inside the row. A run of a row narrower than POOL_RUN has spare lanes whose loads read on
// into the next rows (their sums are not stored): allowed while those loads stay inside the tensor of
// total / per_plane planes of H x W (`total` work-items, per_plane to a plane), divided only for such runs
// (as binary_maxpool.cl's).
inline bool whole_vector_taps(const long ix0, const int KW, const int stride_x, const int W, const int lanes,
                              const int plane, const int H, const int y_hi, const int total,
                              const int per_plane) {
  if ((stride_x != 1 && stride_x != 2) || ix0 < 0 || ix0 + (KW - 1) + (long)(lanes - 1) * stride_x >= W)
    return false;
  if (lanes == POOL_RUN) return true;
  const long last_read = ((long)plane * H + (y_hi - 1)) * W + ix0 + (KW - 1) + (long)(POOL_RUN - 1) * stride_x;
  return last_read < (long)(total / per_plane) * H * W;
}

// The POOL_RUN values of one window tap for the run's lanes (columns first + j * stride_x of `line`; 0 where a
// lane has no column) where the run is cut by the row's ends or the stride is above 2, and which lanes have
// their column (valid: all bits set).
inline float16 tap_run_at_edge(__global const float* line, const long first, const int stride_x, const int W,
                               const int lanes, int16* valid) {
  float values[POOL_RUN];
  int ok[POOL_RUN];
  for (int j = 0; j < POOL_RUN; ++j) {
    const long ix = first + (long)j * stride_x;
    ok[j] = (j < lanes && ix >= 0 && ix < W) ? -1 : 0;
    values[j] = ok[j] ? line[ix] : 0.0f;
  }
  *valid = vload16(0, ok);
  return vload16(0, values);
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void avg_pool_f32_runs(
    __global const float* restrict in, __global float* restrict out, const int H, const int W, const int OH,
    const int OW, const int KH, const int KW, const int stride_y, const int stride_x, const int pad_top,
    const int pad_left, const int full, const int total) {
  const int gid = (int)get_global_id(0);
  if (gid >= total) return;
  const int runs = OW / POOL_RUN + (OW % POOL_RUN != 0);
  const int row = gid / runs;  // plane * OH + oy
  const int run = gid - row * runs;
  const int ox0 = OW >= POOL_RUN ? min(run * POOL_RUN, OW - POOL_RUN) : 0;
  const int skip = run * POOL_RUN - ox0;  // lanes the run before this one stores
  const int plane = row / OH;
  const int oy = row - plane * OH;
  const int lanes = (int)min((long)POOL_RUN, (long)OW - ox0);
  const long iy0 = (long)oy * stride_y - pad_top;
  const int y_lo = (int)clamp(iy0, 0l, (long)H), y_hi = (int)clamp(iy0 + KH, 0l, (long)H);
  const long ix0 = (long)ox0 * stride_x - pad_left;
  float16 sum = (float16)(0.0f);
  int16 taps = (int16)(0);
  // Whether every tap loads whole vectors, as in maxpool_f32_runs (binary_maxpool.cl).
  const bool inside = whole_vector_taps(ix0, KW, stride_x, W, lanes, plane, H, y_hi, total, OH * runs);
  for (int iy = y_lo; iy < y_hi; ++iy) {
    __global const float* line = in + ((ulong)plane * (ulong)H + (ulong)iy) * (ulong)W;
    if (inside && stride_x == 1) {
      for (int kx = 0; kx < KW; ++kx) sum += vload16(0, line + ix0 + kx);
      taps += (int16)(KW);
    } else if (inside) {
      for (int kx = 0; kx < KW; ++kx) {
        __global const float* p = line + ix0 + kx;
        sum += (float16)(vload16(0, p).even, vload16(0, p + POOL_RUN - 1).odd);
      }
      taps += (int16)(KW);
    } else {
      for (int kx = 0; kx < KW; ++kx) {
        int16 valid;
        sum += tap_run_at_edge(line, ix0 + kx, stride_x, W, lanes, &valid);
        taps -= valid;  // valid is -1 or 0
      }
    }
  }
  const int16 divisor = full != 0 ? (int16)(full) : taps;
  const float16 average = select((float16)(0.0f), sum / convert_float16(divisor), divisor > 0);
  __global float* dst = out + (ulong)row * (ulong)OW + (ulong)ox0;
  if (lanes == POOL_RUN && skip == 0) {
    vstore16(average, 0, dst);
    return;
  }
  float values[POOL_RUN];
  vstore16(average, 0, values);
  for (int j = skip; j < lanes; ++j) dst[j] = values[j];
}
