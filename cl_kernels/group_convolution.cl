// SPDX-License-Identifier: Apache-2.0
// Depthwise convolution (GroupConvolution-1 with one input and one output channel per group): each
// work-item computes 8 consecutive output columns (one float8) of one row of one channel, reading each tap's
// 8 input values as one vector where they lie inside the row. Other groupings run convolution.cl's kernel.
//
// x [N][C][H][W], w [C][KH][KW], y [N][C][OH][OW]. Work-item index: column block fastest, then output row,
// channel, image. Epilogue as convolution.cl: y = fma(acc, scale[c], bias[c]), then relu (y > 0 ? y : 0).

#ifndef WG_SIZE
#define WG_SIZE 64
#endif

// row[iw0 + i*step] for i = 0..7, 0 outside [0, W). Built from scalars, not through a private array, so that
// it stays in registers.
#define ROW_AT(i) row[iw0 + (i) * step]
#define ROW_OR_0(i) ((uint)(iw0 + (i) * step) < (uint)W ? ROW_AT(i) : 0.0f)
inline float8 row8(__global const float* restrict row, const int iw0, const int step, const int W) {
  if (iw0 >= 0 && iw0 + 8 * step <= W) {
    if (step == 1) return vload8(0, row + iw0);
    if (step == 2) return vload16(0, row + iw0).even;
    return (float8)(ROW_AT(0), ROW_AT(1), ROW_AT(2), ROW_AT(3), ROW_AT(4), ROW_AT(5), ROW_AT(6), ROW_AT(7));
  }
  return (float8)(ROW_OR_0(0), ROW_OR_0(1), ROW_OR_0(2), ROW_OR_0(3), ROW_OR_0(4), ROW_OR_0(5), ROW_OR_0(6),
                  ROW_OR_0(7));
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void depthwise_convolution(
    __global const float* restrict x, __global const float* restrict w, __global const float* restrict scale,
    __global const float* restrict bias, __global float* restrict y, const int C, const int H, const int W,
    const int OH, const int OW, const int KH, const int KW, const int SH, const int SW, const int DH,
    const int DW, const int PH, const int PW, const int col_blocks, const int total, const int relu) {
  const int idx = (int)get_global_id(0);
  if (idx >= total) return;
  // Quotients and remainders written out (r = a - q*b): LLVM's div/rem pairing emits `freeze`, which
  // Oclgrind 21.10's uninitialized-value checker cannot execute.
  const int rows = idx / col_blocks;
  const int col = idx - rows * col_blocks;
  const int nc = rows / OH;  // n * C + c
  const int oh = rows - nc * OH;
  const int c = nc - nc / C * C;
  const int ow0 = col * 8;
  const int ih0 = oh * SH - PH;
  const int iw0 = ow0 * SW - PW;
  __global const float* xc = x + (long)nc * H * W;
  __global const float* wc = w + c * KH * KW;

  // As convolution.cl: rows whose taps all lie inside load without checks.
  const int inside = iw0 >= 0 && iw0 + (KW - 1) * DW + 8 * SW <= W ? SW : 0;
  float8 acc = 0.0f;
  for (int kh = 0; kh < KH; ++kh) {
    const int ih = ih0 + kh * DH;
    if (ih < 0 || ih >= H) continue;
    __global const float* xr = xc + (long)ih * W;
    __global const float* wr = wc + kh * KW;
    if (inside == 1) {
      for (int kw = 0; kw < KW; ++kw) acc = fma((float8)(wr[kw]), vload8(0, xr + iw0 + kw * DW), acc);
    } else if (inside == 2) {
      for (int kw = 0; kw < KW; ++kw) acc = fma((float8)(wr[kw]), vload16(0, xr + iw0 + kw * DW).even, acc);
    } else {
      for (int kw = 0; kw < KW; ++kw) acc = fma((float8)(wr[kw]), row8(xr, iw0 + kw * DW, SW, W), acc);
    }
  }
  float8 v = fma(acc, (float8)(scale[c]), (float8)(bias[c]));
  if (relu) v = select((float8)(0.0f), v, v > (float8)(0.0f));
  __global float* yr = y + ((long)nc * OH + oh) * OW;
  if (ow0 + 8 <= OW) {
    vstore8(v, 0, yr + ow0);
  } else {
    float t[8];
    vstore8(v, 0, t);
    for (int i = 0; ow0 + i < OW; ++i) yr[ow0 + i] = t[i];
  }
}
