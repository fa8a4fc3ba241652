// SPDX-License-Identifier: Apache-2.0
// Float convolution (Convolution-1, and GroupConvolution-1 other than depthwise), direct: no patch matrix.
//
// Each work-item computes an 8 x 8 tile: 8 output channels of one group (OB) x 8 consecutive output columns
// of one row (one float8). Per tap it reads 8 input values (one row segment, a vector load where the segment
// lies inside the row) and the 8 channels' weights (adjacent: the host stores the weights as
// [G][ceil(Og/8)][Cg][KH][KW][8], zero-filled past Og), and does 8 vector FMAs: each input value is used for
// 8 channels and each weight for 8 columns from registers. Each weight is read as a scalar and broadcast
// (a CPU's broadcast load; a GPU's uniform load), not taken out of a vector of 8: on PoCL that halved the
// kernel's time.
//
// x [N][G*Cg][H][W], y [N][G*Og][OH][OW]. A 1x1 convolution with stride 1 and no padding runs
// convolution_1x1: the same tiles along the whole plane (P = H*W pixels), without the window's loops and
// bounds checks.
// Work-item index: column block fastest, then output row, output channel block (of all groups), image.
// Epilogue: y = fma(acc, scale[o], bias[o]) (a fused Multiply / Add by a per-channel constant; scale 1 and
// bias 0 where absent), then max(y, 0) with relu (y > 0 ? y : 0, so NaN -> 0 as OpenVINO's Relu).

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

// Epilogue of one channel's 8 columns, stored where they fall inside the row.
inline void store8(__global float* restrict y_row, float8 v, const int ow0, const int OW, const float scale,
                   const float bias, const int relu) {
  v = fma(v, (float8)(scale), (float8)(bias));
  if (relu) v = select((float8)(0.0f), v, v > (float8)(0.0f));
  if (ow0 + 8 <= OW) {
    vstore8(v, 0, y_row + ow0);
  } else {
    float t[8];
    vstore8(v, 0, t);
    for (int i = 0; ow0 + i < OW; ++i) y_row[ow0 + i] = t[i];
  }
}

#define TAP(j) a##j = fma((float8)(wp[j]), xv, a##j)
// The taps of one kernel row: LOAD reads the 8 input values of tap kw.
#define TAPS_OF_ROW(LOAD)                          \
  for (int kw = 0; kw < KW; ++kw) {                \
    const float8 xv = LOAD;                        \
    __global const float* wp = wr + kw * 8;        \
    TAP(0);                                        \
    TAP(1);                                        \
    TAP(2);                                        \
    TAP(3);                                        \
    TAP(4);                                        \
    TAP(5);                                        \
    TAP(6);                                        \
    TAP(7);                                        \
  }
#define STORE(j)                                                                                          \
  if (oi + j < Og) store8(y + ((long)(n * O + o0 + j) * OH + oh) * OW, a##j, ow0, OW, scale[o0 + j],   \
                          bias[o0 + j], relu)

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void convolution(
    __global const float* restrict x, __global const float* restrict w, __global const float* restrict scale,
    __global const float* restrict bias, __global float* restrict y, const int Cg, const int H, const int W,
    const int Og, const int OH, const int OW, const int KH, const int KW, const int SH, const int SW,
    const int DH, const int DW, const int PH, const int PW, const int groups, const int group_blocks,
    const int col_blocks, const int total, const int relu) {
  const int idx = (int)get_global_id(0);
  if (idx >= total) return;
  // Quotients and remainders written out (r = a - q*b): LLVM's div/rem pairing emits `freeze`, which
  // Oclgrind 21.10's uninitialized-value checker cannot execute.
  const int rows = idx / col_blocks;
  const int col = idx - rows * col_blocks;
  const int planes = rows / OH;  // n * groups * group_blocks + cb
  const int oh = rows - planes * OH;
  const int n = planes / (groups * group_blocks);
  const int cb = planes - n * (groups * group_blocks);
  const int g = cb / group_blocks;
  const int oi = (cb - g * group_blocks) * 8;  // first channel within the group
  const int O = groups * Og;
  const int o0 = g * Og + oi;
  const int ow0 = col * 8;
  const int ih0 = oh * SH - PH;
  const int iw0 = ow0 * SW - PW;
  __global const float* xg = x + (long)(n * groups + g) * Cg * H * W;
  __global const float* wb = w + (long)cb * Cg * KH * KW * 8;

  float8 a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, a4 = 0.0f, a5 = 0.0f, a6 = 0.0f, a7 = 0.0f;
  // Whether a row's taps all lie inside the row is known before its loop: the common case then loads
  // without checks.
  const int inside_end = iw0 + (KW - 1) * DW + 8 * SW;
  const int inside = iw0 >= 0 && inside_end <= W ? SW : 0;  // 1, 2, other strides; 0: at an edge
  for (int c = 0; c < Cg; ++c) {
    __global const float* xc = xg + (long)c * H * W;
    __global const float* wc = wb + c * KH * KW * 8;
    for (int kh = 0; kh < KH; ++kh) {
      const int ih = ih0 + kh * DH;
      if (ih < 0 || ih >= H) continue;
      __global const float* xr = xc + (long)ih * W;
      __global const float* wr = wc + kh * KW * 8;
      if (inside == 1) {
        TAPS_OF_ROW(vload8(0, xr + iw0 + kw * DW))
      } else if (inside == 2) {
        TAPS_OF_ROW(vload16(0, xr + iw0 + kw * DW).even)
      } else {
        TAPS_OF_ROW(row8(xr, iw0 + kw * DW, SW, W))
      }
    }
  }
  STORE(0);
  STORE(1);
  STORE(2);
  STORE(3);
  STORE(4);
  STORE(5);
  STORE(6);
  STORE(7);
}

// Channels c0 .. Cg-1 of a pointwise tile: LOAD(xc) reads the tile's 8 pixels of one input channel.
#define POINTWISE_LOOP(LOAD)                                 \
  for (int c = 0; c < Cg; ++c) {                             \
    const float8 xv = LOAD(xg + (long)c * P);                \
    __global const float* wp = wb + c * 8;                   \
    TAP(0);                                                  \
    TAP(1);                                                  \
    TAP(2);                                                  \
    TAP(3);                                                  \
    TAP(4);                                                  \
    TAP(5);                                                  \
    TAP(6);                                                  \
    TAP(7);                                                  \
  }
#define WHOLE_TILE(xc) vload8(0, (xc) + p0)
#define PART_TILE(xc) row8((xc), p0, 1, P)

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void convolution_1x1(
    __global const float* restrict x, __global const float* restrict w, __global const float* restrict scale,
    __global const float* restrict bias, __global float* restrict y, const int Cg, const int P, const int Og,
    const int groups, const int group_blocks, const int col_blocks, const int total, const int relu) {
  const int idx = (int)get_global_id(0);
  if (idx >= total) return;
  const int planes = idx / col_blocks;  // quotients and remainders written out, as in convolution
  const int col = idx - planes * col_blocks;
  const int n = planes / (groups * group_blocks);
  const int cb = planes - n * (groups * group_blocks);
  const int g = cb / group_blocks;
  const int oi = (cb - g * group_blocks) * 8;
  const int O = groups * Og;
  const int o0 = g * Og + oi;
  const int p0 = col * 8;
  __global const float* xg = x + (long)(n * groups + g) * Cg * P;
  __global const float* wb = w + (long)cb * Cg * 8;

  float8 a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, a4 = 0.0f, a5 = 0.0f, a6 = 0.0f, a7 = 0.0f;
  if (p0 + 8 <= P) {
    POINTWISE_LOOP(WHOLE_TILE)
  } else {
    POINTWISE_LOOP(PART_TILE)
  }
  const int oh = 0, OH = 1, ow0 = p0, OW = P;
  STORE(0);
  STORE(1);
  STORE(2);
  STORE(3);
  STORE(4);
  STORE(5);
  STORE(6);
  STORE(7);
}
