// SPDX-License-Identifier: Apache-2.0
// avg_pool_f32 (src/ops/avg_pool.cpp): float32 NCHW in and out, one work-item per output. The window of
// output (oy, ox) is input rows oy*stride_y - pad_top + [0, KH), columns likewise (computed in 64 bits),
// clipped to the input; its taps are summed row by row in float and divided by `full` when it is not 0,
// else by the number of taps (a window with no tap gives 0).
//
// NDRange: 1-D, global rounded up to WG_SIZE, local WG_SIZE; `total` real work-items, consecutive ones on
// consecutive outputs of a row. Quotients and remainders written out (r = a - q*b) for Oclgrind 21.10.

#ifndef WG_SIZE
#define WG_SIZE 64
#endif

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
