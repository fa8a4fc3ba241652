// SPDX-License-Identifier: Apache-2.0
// Float convolution (Convolution-1, and GroupConvolution-1 other than depthwise), direct: no patch matrix.
//
// Each work-item computes an 8 x COLS tile: 8 output channels of one group (OB) x COLS consecutive output
// columns of one row (one vector; COLS below). Per tap it reads COLS input values (one row segment, a vector
// load where the segment lies inside the row) and the 8 channels' weights (adjacent: the host stores the
// weights as [G][ceil(Og/8)][Cg][KH][KW][8], zero-filled past Og), and does 8 vector FMAs: each input value is
// used for 8 channels and each weight for COLS columns from registers. Each weight is read as a scalar and broadcast
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

// Columns per tile, COLS (-DCOLS, 8 by default, or 16): 16 lets a CPU's compiler, which vectorizes only what
// the kernel spells as vectors, feed 16-lane FMAs from each tap's 8 weight loads (wide rows); 8 gives more
// work-items (GPUs, narrow rows). The tuner chooses per layer. floatC is the float vector of COLS lanes.
#ifndef COLS
#define COLS 8
#endif
#if COLS == 8
#define floatC float8
#define vloadC vload8
#define vstoreC vstore8
#define LOAD_STRIDE2(p) vload16(0, (p)).even
#elif COLS == 16
#define floatC float16
#define vloadC vload16
#define vstoreC vstore16
#define LOAD_STRIDE2(p) (float16)(vload16(0, (p)).even, vload16(0, (p) + 16).even)
#else
#error "COLS must be 8 or 16"
#endif

// row[iw0 + i*step] for i = 0..COLS-1, 0 outside [0, W). Built from scalars, not through a private array, so
// that it stays in registers.
#define ROW_AT(i) row[iw0 + (i) * step]
#define ROW_OR_0(i) ((uint)(iw0 + (i) * step) < (uint)W ? ROW_AT(i) : 0.0f)
#if COLS == 16
#define ROW_VALUES(F) \
  (floatC)(F(0), F(1), F(2), F(3), F(4), F(5), F(6), F(7), F(8), F(9), F(10), F(11), F(12), F(13), F(14), F(15))
#else
#define ROW_VALUES(F) (floatC)(F(0), F(1), F(2), F(3), F(4), F(5), F(6), F(7))
#endif
inline floatC row_run(__global const float* restrict row, const int iw0, const int step, const int W) {
  if (iw0 >= 0 && iw0 + COLS * step <= W) {
    if (step == 1) return vloadC(0, row + iw0);
    if (step == 2) return LOAD_STRIDE2(row + iw0);
    return ROW_VALUES(ROW_AT);
  }
  return ROW_VALUES(ROW_OR_0);
}

// Epilogue of one channel's COLS columns, stored where they fall inside the row.
inline void store_run(__global float* restrict y_row, floatC v, const int ow0, const int OW, const float scale,
                      const float bias, const int relu) {
  v = fma(v, (floatC)(scale), (floatC)(bias));
  if (relu) v = select((floatC)(0.0f), v, v > (floatC)(0.0f));
  if (ow0 + COLS <= OW) {
    vstoreC(v, 0, y_row + ow0);
  } else {
    float t[COLS];
    vstoreC(v, 0, t);
    for (int i = 0; ow0 + i < OW; ++i) y_row[ow0 + i] = t[i];
  }
}

#define TAP(j) a##j = fma((floatC)(wp[j]), xv, a##j)
// The taps of one kernel row: LOAD reads the COLS input values of tap kw.
#define TAPS_OF_ROW(LOAD)                          \
  for (int kw = 0; kw < KW; ++kw) {                \
    const floatC xv = LOAD;                        \
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
  if (oi + j < Og) store_run(y + ((long)(n * O + o0 + j) * OH + oh) * OW, a##j, ow0, OW, scale[o0 + j], \
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
  const int ow0 = col * COLS;
  const int ih0 = oh * SH - PH;
  const int iw0 = ow0 * SW - PW;
  __global const float* xg = x + (long)(n * groups + g) * Cg * H * W;
  __global const float* wb = w + (long)cb * Cg * KH * KW * 8;

  floatC a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, a4 = 0.0f, a5 = 0.0f, a6 = 0.0f, a7 = 0.0f;
  // Whether a row's taps all lie inside the row is known before its loop: the common case then loads
  // without checks.
  const int inside_end = iw0 + (KW - 1) * DW + COLS * SW;
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
        TAPS_OF_ROW(vloadC(0, xr + iw0 + kw * DW))
      } else if (inside == 2) {
        TAPS_OF_ROW(LOAD_STRIDE2(xr + iw0 + kw * DW))
      } else {
        TAPS_OF_ROW(row_run(xr, iw0 + kw * DW, SW, W))
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

// Channels c0 .. Cg-1 of a pointwise tile: LOAD(xc) reads the tile's COLS pixels of one input channel.
#define POINTWISE_LOOP(LOAD)                                 \
  for (int c = 0; c < Cg; ++c) {                             \
    const floatC xv = LOAD(xg + (long)c * P);                \
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
#define WHOLE_TILE(xc) vloadC(0, (xc) + p0)
#define PART_TILE(xc) row_run((xc), p0, 1, P)

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
  const int p0 = col * COLS;
  __global const float* xg = x + (long)(n * groups + g) * Cg * P;
  __global const float* wb = w + (long)cb * Cg * 8;

  floatC a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, a4 = 0.0f, a5 = 0.0f, a6 = 0.0f, a7 = 0.0f;
  if (p0 + COLS <= P) {
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
