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
// x [N][G*Cg][H][W], y [N][G*Og][OH][OW]. A 1x1 convolution without padding runs convolution_1x1: the same
// tiles along the whole output plane (P = OH*OW positions), without the window's loops and bounds checks; at
// a stride each tile finds its pixels' offsets once (a ResNet's 1x1/2 downsampling convolutions took 1.5-2
// times as long on PoCL through the window's kernels, whose set-up per kernel row is paid per channel). CPU
// devices run windowed convolutions with output columns in vector lanes on a padded copy of the input by
// default (convolution_split and its copy, phase_split), 1x1 ones with positions in vector lanes on the input
// plane itself at stride 1, else on a copy of the strided pixels (convolution_1x1_split; its copy,
// pointwise_sample), where the output plane holds 32 positions or more, and the other 1x1 ones with 16 output
// channels in vector lanes (convolution_1x1_lanes); convolution_lanes is the windowed kernels' third kind
// (all below).
// Work-item index: column block fastest, then output row, output channel block (of all groups), image.
// Tiles of a row: output columns [col_lo, col_hi) (host-computed) have every column their tile loads inside
// the row. Where that span holds a whole tile, the row's tiles cover exactly it, the last one shifted left to
// overlap the one before it (its first columns computed again, not stored), and the columns outside it are
// computed 4 at a time by edge work-items (edge_columns), numbered after every tile's work-item in the same
// order (edge block fastest). So no tile takes the lane-by-lane edge path, which costs several times a tile
// on a CPU (a 7x7 stride-2 stem row of 14 tiles had 2 on it), and on a GPU at most one group of work-items
// that run in lockstep mixes tiles with edge columns (a mixed group takes the time of both paths). The 7x7/2
// stem on an H200: 0.108 ms with edge tiles on the lane-by-lane path, 0.128 ms with the row's first tile
// computing the edge columns, 0.067 ms with edge work-items. A narrower row tiles from column 0, its tiles
// cut by the row's ends. Every path sums an
// output's taps in the same order (c, kh, kw; one fma each), so the tiling changes no bit (taps outside the
// input add w * 0 on the edge path and are skipped by the column path: the same for finite weights).
// convolution_1x1's last tile of a plane overlaps the one before it the same way.
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
// LOAD_STRIDE2 reads columns p .. p + 2*COLS - 1: one column past the last tap (col_hi counts it). Loads of
// exactly the taps' columns (the odd lanes of a second load started a column early, as the pools do) ran
// slower here on PoCL: both as (a.even, b.odd) and as one shuffle2.
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
  if (iw0 >= 0 && iw0 + (COLS - 1) * step + (step == 2) < W) {
    if (step == 1) return vloadC(0, row + iw0);
    if (step == 2) return LOAD_STRIDE2(row + iw0);
    return ROW_VALUES(ROW_AT);
  }
  return ROW_VALUES(ROW_OR_0);
}

// Epilogue of one channel's COLS columns, stored from lane `from` on where they fall inside the row.
inline void store_run(__global float* restrict y_row, floatC v, const int ow0, const int from, const int OW,
                      const float scale, const float bias, const int relu) {
  v = fma(v, (floatC)(scale), (floatC)(bias));
  if (relu) v = select((floatC)(0.0f), v, v > (floatC)(0.0f));
  if (from == 0 && ow0 + COLS <= OW) {
    vstoreC(v, 0, y_row + ow0);
  } else {
    float t[COLS];
    vstoreC(v, 0, t);
    for (int i = from; i < COLS && ow0 + i < OW; ++i) y_row[ow0 + i] = t[i];
  }
}

// The columns beside a row's tiles, [0, col_lo) and [col_hi, OW), 4 at a time: per tap one input value per
// column times the 8 channels' adjacent weights, taps outside the input skipped. Each column's sum is one
// chain of fmas, so 4 independent chains keep the FMA unit busy where one would wait on its latency.
// edge(e) is the e-th of those columns; y_row points at channel 0's row, channels `plane` floats apart.
#define EDGE_COLUMN(e) ((e) < col_lo ? (e) : col_hi + (e) - col_lo)
#define EDGE_TAP(j)                                                               \
  if (j < count) {                                                                \
    const int iw = iw##j + kw * DW;                                               \
    if (iw >= 0 && iw < W) acc##j = fma(wv, (float8)(xr[iw]), acc##j);            \
  }
#define EDGE_STORE(j)                                                             \
  if (j < count) {                                                                \
    float t[8];                                                                   \
    vstore8(acc##j, 0, t);                                                        \
    const int ow = EDGE_COLUMN(e0 + j);                                           \
    for (int o = 0; o < channels; ++o) {                                          \
      const float v = fma(t[o], scale[o], bias[o]);                               \
      y_row[o * plane + ow] = relu && !(v > 0.0f) ? 0.0f : v;                     \
    }                                                                             \
  }
inline void edge_columns(__global const float* restrict xg, __global const float* restrict wb,
                         __global float* restrict y_row, const long plane, __global const float* restrict scale,
                         __global const float* restrict bias, const int Cg, const int H, const int W,
                         const int KH, const int KW, const int SW, const int DH, const int DW, const int PW,
                         const int ih0, const int col_lo, const int col_hi, const int e0, const int count,
                         const int channels, const int relu) {
  const int iw0 = EDGE_COLUMN(e0) * SW - PW, iw1 = EDGE_COLUMN(e0 + 1) * SW - PW;
  const int iw2 = EDGE_COLUMN(e0 + 2) * SW - PW, iw3 = EDGE_COLUMN(e0 + 3) * SW - PW;
  float8 acc0 = 0.0f, acc1 = 0.0f, acc2 = 0.0f, acc3 = 0.0f;
  for (int c = 0; c < Cg; ++c) {
    for (int kh = 0; kh < KH; ++kh) {
      const int ih = ih0 + kh * DH;
      if (ih < 0 || ih >= H) continue;
      __global const float* xr = xg + ((long)c * H + ih) * W;
      __global const float* wr = wb + (c * KH + kh) * KW * 8;
      for (int kw = 0; kw < KW; ++kw) {
        const float8 wv = vload8(kw, wr);
        EDGE_TAP(0)
        EDGE_TAP(1)
        EDGE_TAP(2)
        EDGE_TAP(3)
      }
    }
  }
  EDGE_STORE(0)
  EDGE_STORE(1)
  EDGE_STORE(2)
  EDGE_STORE(3)
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
#define STORE(j)                                                                                        \
  if (oi + j < Og) store_run(y + ((long)(n * O + o0 + j) * OH + oh) * OW, a##j, ow0, from, OW, scale[o0 + j], \
                             bias[o0 + j], relu)

// The outputs of a windowed kernel's work-item `item`, per_row blocks to an output row (column block
// fastest, then output row, channel block of all groups, image): its column block, output row, image, group,
// channel block over all groups and first channel within the group (blocks of `width` channels). Quotients
// and remainders written out (r = a - q*b): LLVM's div/rem pairing emits `freeze`, which Oclgrind 21.10's
// uninitialized-value checker cannot execute.
typedef struct {
  int col, oh, n, g, cb, oi;
} out_block;
static inline out_block out_block_of(const int item, const int per_row, const int OH, const int groups,
                                     const int blocks, const int width) {
  out_block b;
  const int rows = item / per_row;
  b.col = item - rows * per_row;
  const int planes = rows / OH;  // n * groups * blocks + cb
  b.oh = rows - planes * OH;
  b.n = planes / (groups * blocks);
  b.cb = planes - b.n * (groups * blocks);
  b.g = b.cb / blocks;
  b.oi = (b.cb - b.g * blocks) * width;
  return b;
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void convolution(
    __global const float* restrict x, __global const float* restrict w, __global const float* restrict scale,
    __global const float* restrict bias, __global float* restrict y, const int Cg, const int H, const int W,
    const int Og, const int OH, const int OW, const int KH, const int KW, const int SH, const int SW,
    const int DH, const int DW, const int PH, const int PW, const int groups, const int group_blocks,
    const int col_blocks, const int tiles, const int edge_blocks, const int total, const int col_lo,
    const int col_hi, const int relu) {
  const int idx = (int)get_global_id(0);
  if (idx >= total) return;
  // Work-items [0, tiles) are tiles, col_blocks per row; the rest edge blocks, edge_blocks per row.
  const int edge_item = idx >= tiles;
  const int per_row = edge_item ? edge_blocks : col_blocks;
  const out_block b = out_block_of(edge_item ? idx - tiles : idx, per_row, OH, groups, group_blocks, 8);
  const int col = b.col, oh = b.oh, n = b.n, g = b.g, cb = b.cb, oi = b.oi;
  const int O = groups * Og;
  const int o0 = g * Og + oi;
  const int ih0 = oh * SH - PH;
  __global const float* xg = x + (long)(n * groups + g) * Cg * H * W;
  __global const float* wb = w + (long)cb * Cg * KH * KW * 8;
  if (edge_item) {  // the columns beside the row's tiles, 4 from col * 4
    const int edges = col_lo + OW - col_hi;
    __global float* y_row = y + ((long)(n * O + o0) * OH + oh) * OW;
    edge_columns(xg, wb, y_row, (long)OH * OW, scale + o0, bias + o0, Cg, H, W, KH, KW, SW, DH, DW, PW, ih0,
                 col_lo, col_hi, col * 4, min(4, edges - col * 4), min(8, Og - oi), relu);
    return;
  }
  const int inside_tiles = col_hi - col_lo >= COLS;
  const int first = inside_tiles ? col_lo + col * COLS : col * COLS;  // the first column this tile stores
  const int ow0 = inside_tiles ? min(first, col_hi - COLS) : first;
  const int from = first - ow0;
  const int iw0 = ow0 * SW - PW;
  floatC a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, a4 = 0.0f, a5 = 0.0f, a6 = 0.0f, a7 = 0.0f;
  // Whether a row's taps all lie inside the row is known before its loop: the common case then loads
  // without checks.
  const int inside_end = iw0 + (KW - 1) * DW + (COLS - 1) * SW + (SW == 2);  // the last column loaded
  const int inside = iw0 >= 0 && inside_end < W ? SW : 0;  // 1, 2, other strides; 0: at an edge
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

// ---- convolution_lanes: output channels as vector lanes (CPU devices; the tiles above elsewhere)
// Each work-item computes 16 output channels of one group (the lanes of a float16) x LANE_COLS consecutive
// output columns of one row. Per tap: one load of the 16 channels' adjacent weights (the host stores them as
// [G][ceil(Og/16)][Cg][KH][KW][16], zero-filled past Og) and per column one input value, broadcast, then
// LANE_COLS FMAs of 16 lanes. No shuffles at any stride (a tile at stride 2 takes every other column of two
// loads), and 2 weight loads (as 8-lane registers) + 6 scalar loads feed 12 FMAs where a tile loads 8 + 2 for
// 8: on PoCL (AVX2) the 7x7/2 stem of 3 channels ran about 25% faster. Sums in the same order as the tiles
// (c, kh, kw; taps outside the input skipped), so the results are the same.
// A block with every tap of its columns inside the row takes the loop without checks; a row's first and last
// blocks check each column's taps.
// Stores: the accumulators hold a column per vector, the output a channel per plane. A whole block leaves as
// one run of 6 columns per channel (LANE_BLOCK_STORE); 96
// single stores into 16 planes, each a cache line apart, had taken about a quarter of the stem's perf samples
// (PoCL, AVX2: the stem alone 3.29-3.66 -> 2.76-3.21 ms by medians of 300 runs, four alternating pairs).
#define LANE_COLS 6
#define LANE_TAP(j) a##j = fma(wv, (float16)(xp[(j) * SW]), a##j)
#define LANE_TAP_CHECKED(j) \
  if (j < count && (uint)(iw + (j) * SW) < (uint)W) a##j = fma(wv, (float16)(xr[iw + (j) * SW]), a##j)
// The taps of one kernel row inside the row; the common widths as constants, so the loop unrolls.
#define LANE_ROW(width)                                        \
  _Pragma("unroll") for (int kw = 0; kw < (width); ++kw, xp += DW) { \
    const float16 wv = vload16(kw, wr);                        \
    LANE_TAP(0);                                               \
    LANE_TAP(1);                                               \
    LANE_TAP(2);                                               \
    LANE_TAP(3);                                               \
    LANE_TAP(4);                                               \
    LANE_TAP(5);                                               \
  }
// A whole block (6 columns of 16 channels) from its first column `first` of channel o0's plane: the
// epilogue on each column's 16 lanes, then each channel's 6 columns as one run (a vstore4 and two floats),
// read out of the lanes by name. Through a private array the same stores crashed Oclgrind 21.10's
// uninitialized-value checker, and a vstore2 of the last two columns it reported as uninitialized.
#define LANE_VALUE(j)                                                 \
  float16 v##j = fma(a##j, s16, b16);                                 \
  if (relu) v##j = select((float16)(0.0f), v##j, v##j > (float16)(0.0f));
#define CHANNEL_RUN(o, lane)                                                        \
  {                                                                                 \
    __global float* yo = first + (o) * plane;                                       \
    vstore4((float4)(v0.lane, v1.lane, v2.lane, v3.lane), 0, yo);                   \
    yo[4] = v4.lane;                                                                \
    yo[5] = v5.lane;                                                                \
  }
#define LANE_BLOCK_STORE(first_column)                                              \
  {                                                                                 \
    __global float* first = (first_column);                                         \
    const float16 s16 = vload16(0, scale + o0), b16 = vload16(0, bias + o0);        \
    LANE_VALUE(0)                                                                   \
    LANE_VALUE(1)                                                                   \
    LANE_VALUE(2)                                                                   \
    LANE_VALUE(3)                                                                   \
    LANE_VALUE(4)                                                                   \
    LANE_VALUE(5)                                                                   \
    CHANNEL_RUN(0, s0)                                                              \
    CHANNEL_RUN(1, s1)                                                              \
    CHANNEL_RUN(2, s2)                                                              \
    CHANNEL_RUN(3, s3)                                                              \
    CHANNEL_RUN(4, s4)                                                              \
    CHANNEL_RUN(5, s5)                                                              \
    CHANNEL_RUN(6, s6)                                                              \
    CHANNEL_RUN(7, s7)                                                              \
    CHANNEL_RUN(8, s8)                                                              \
    CHANNEL_RUN(9, s9)                                                              \
    CHANNEL_RUN(10, sa)                                                             \
    CHANNEL_RUN(11, sb)                                                             \
    CHANNEL_RUN(12, sc)                                                             \
    CHANNEL_RUN(13, sd)                                                             \
    CHANNEL_RUN(14, se)                                                             \
    CHANNEL_RUN(15, sf)                                                             \
  }
// Column j of a block of convolution_1x1_lanes, where it is the block's to store (from <= j < count).
#define POINTWISE_LANE_STORE(j) \
  if (j >= from) LANE_STORE(j)
#define LANE_STORE(j)                                                        \
  if (j < count) {                                                           \
    float t[16];                                                             \
    vstore16(a##j, 0, t);                                                    \
    for (int o = 0; o < channels; ++o) {                                     \
      const float v = fma(t[o], scale[o0 + o], bias[o0 + o]);                \
      y_row[o * plane + ow0 + j] = relu && !(v > 0.0f) ? 0.0f : v;           \
    }                                                                        \
  }

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void convolution_lanes(
    __global const float* restrict x, __global const float* restrict w, __global const float* restrict scale,
    __global const float* restrict bias, __global float* restrict y, const int Cg, const int H, const int W,
    const int Og, const int OH, const int OW, const int KH, const int KW, const int SH, const int SW,
    const int DH, const int DW, const int PH, const int PW, const int groups, const int lane_blocks,
    const int col_blocks, const int total, const int relu) {
  const int idx = (int)get_global_id(0);
  if (idx >= total) return;
  const out_block b = out_block_of(idx, col_blocks, OH, groups, lane_blocks, 16);
  const int col = b.col, oh = b.oh, n = b.n, g = b.g, cb = b.cb, oi = b.oi;
  const int o0 = g * Og + oi;
  const int channels = min(16, Og - oi);
  const int ow0 = col * LANE_COLS;
  const int count = min(LANE_COLS, OW - ow0);
  const int ih0 = oh * SH - PH;
  const int iw0 = ow0 * SW - PW;
  __global const float* xg = x + (long)(n * groups + g) * Cg * H * W;
  __global const float* wb = w + (long)cb * Cg * KH * KW * 16;
  const int inside = count == LANE_COLS && iw0 >= 0 && iw0 + (LANE_COLS - 1) * SW + (KW - 1) * DW < W;
  float16 a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, a4 = 0.0f, a5 = 0.0f;
  for (int c = 0; c < Cg; ++c) {
    for (int kh = 0; kh < KH; ++kh) {
      const int ih = ih0 + kh * DH;
      if (ih < 0 || ih >= H) continue;
      __global const float* xr = xg + ((long)c * H + ih) * W;
      __global const float* wr = wb + (c * KH + kh) * KW * 16;
      if (inside) {
        __global const float* xp = xr + iw0;  // a pointer, not an index per column: fewer integer ops
        if (KW == 3) {
          LANE_ROW(3)
        } else if (KW == 7) {
          LANE_ROW(7)
        } else {
          LANE_ROW(KW)
        }
      } else {
        for (int kw = 0; kw < KW; ++kw) {
          const float16 wv = vload16(kw, wr);
          const int iw = iw0 + kw * DW;
          LANE_TAP_CHECKED(0);
          LANE_TAP_CHECKED(1);
          LANE_TAP_CHECKED(2);
          LANE_TAP_CHECKED(3);
          LANE_TAP_CHECKED(4);
          LANE_TAP_CHECKED(5);
        }
      }
    }
  }
  const long plane = (long)OH * OW;
  __global float* y_row = y + ((long)(n * groups * Og + o0) * OH + oh) * OW;
  if (count == LANE_COLS && channels == 16) {
    // A whole block: each channel's 6 columns as one run (see the stores above).
    LANE_BLOCK_STORE(y_row + ow0)
    return;
  }
  LANE_STORE(0)
  LANE_STORE(1)
  LANE_STORE(2)
  LANE_STORE(3)
  LANE_STORE(4)
  LANE_STORE(5)
}

// ---- convolution_split: output columns as vector lanes, on a padded copy of the input split by column phase
// A CPU's FMAs want one vector load to serve several output channels. Each work-item computes SPLIT_CHANNELS
// (6) output channels of one group x 16 consecutive output columns of one row, the columns in the lanes of a
// float16: per tap one load of 16 input values, then 6 broadcast weights and 12 FMAs. convolution_split_rows2
// (CPUs with 32 vector registers of 16 floats; detail::float_conv_split_rows) computes the same block of two
// output rows, each weight broadcast once for both. At a column stride SW
// the 16 inputs of a tap are every SW-th column of the row; phase_split (below) first copies the input with
// its pads written out as zeros and each row split into SW phases (phase r holds the padded columns
// q * SW + r), so that they are 16 contiguous values of one phase. No bounds checks remain: padded rows and
// columns are zeros, and the copy is wide enough for every tap of the last column block (the host sizes it).
// A zero tap adds w * 0 to the sum, which changes no bit for finite weights (the host takes this kernel only
// where every weight is finite; with an infinite weight the other kernels skip pad taps). Sums in the same
// order as the other kernels (c, kh, kw; one fma each), so the same results. On PoCL (AVX2) the 3-channel
// 7x7/2 stem ran about 15% faster than convolution_lanes, whose broadcasts feed 12 FMAs too but which
// checks the pad at each row's first and last blocks.
// xs [N*G*Cg][Hp][SW][Wq]: xs[plane][row][r][q] = padded column q * SW + r of padded row `row` (0 outside the
// input). Weights [G][ceil(Og/6)][Cg][KH][KW][6], zero past Og.
#define SPLIT_CHANNELS 6
#define SPLIT_COLS 16
// With two output rows each broadcast weight feeds the FMAs of both (12 accumulators, 12 independent FMA
// chains); `rows` is a constant in each kernel, so the one-row kernel compiles without the second row.
#define SPLIT_LOAD(at)                      \
  const float16 xv = vload16(0, xr + (at)); \
  const float16 xv2 = rows_now == 2 ? vload16(0, xr + second_row + (at)) : xv;
#define SPLIT_TAP(i)                            \
  {                                             \
    const float16 wv = (float16)(wt[i]);        \
    a##i = fma(wv, xv, a##i);                   \
    if (rows_now == 2) b##i = fma(wv, xv2, b##i); \
  }
// The block's 6 channels at one tap (weights wt[0..5]).
#define SPLIT_TAPS \
  SPLIT_TAP(0);    \
  SPLIT_TAP(1);    \
  SPLIT_TAP(2);    \
  SPLIT_TAP(3);    \
  SPLIT_TAP(4);    \
  SPLIT_TAP(5);
// One kernel row's taps: tap kw reads phase (kw*DW) % SW at column ox0 + (kw*DW) / SW of the copy (tap_at).
#define SPLIT_ROW(width)                                         \
  _Pragma("unroll") for (int kw = 0; kw < (width); ++kw) {       \
    SPLIT_LOAD(tap_at[kw])                                       \
    __global const float* wt = wr + kw * SPLIT_CHANNELS;         \
    SPLIT_TAPS                                                   \
  }
#define SPLIT_MAX_UNROLLED 7
// From one tap's (phase, column) in the copy to the next one's: DW columns further, in phases of SW.
#define SPLIT_NEXT_TAP(phase, column) \
  {                                   \
    column += step_columns;           \
    phase += step_phases;             \
    if (phase >= SW) {                \
      phase -= SW;                    \
      ++column;                       \
    }                                 \
  }
// The epilogue of 16 sums of one channel: scale and bias, then relu where asked.
static inline float16 epilogue16(const float16 acc, const float s, const float b, const int relu) {
  const float16 v = fma(acc, (float16)(s), (float16)(b));
  return relu ? select((float16)(0.0f), v, v > (float16)(0.0f)) : v;
}
// Channel i of the block: the epilogue, then lanes [from, to) of its 16 from y_run (channel i's plane
// `plane` floats further per channel). Lanes before `from` are an overlapping last block's, stored by the
// block before it (one writer per value); lanes from `to` on lie past the row. All 16: one vector store.
#define SPLIT_STORE(i, acc, y_run, from, to)                                    \
  if (i < channels) {                                                           \
    const float16 v = epilogue16(acc, scale[o0 + i], bias[o0 + i], relu);       \
    __global float* yo = (y_run) + (long)(i) * plane;                           \
    if ((from) <= 0 && (to) == SPLIT_COLS) {                                    \
      vstore16(v, 0, yo);                                                       \
    } else {                                                                    \
      float t[SPLIT_COLS];                                                      \
      vstore16(v, 0, t);                                                        \
      for (int j = max(from, 0); j < (to); ++j) yo[j] = t[j];                   \
    }                                                                           \
  }
// The block's 6 channels, accumulators acc##0 .. acc##5, each as SPLIT_STORE.
#define SPLIT_STORES(acc, y_run, from, to)  \
  SPLIT_STORE(0, acc##0, y_run, from, to)   \
  SPLIT_STORE(1, acc##1, y_run, from, to)   \
  SPLIT_STORE(2, acc##2, y_run, from, to)   \
  SPLIT_STORE(3, acc##3, y_run, from, to)   \
  SPLIT_STORE(4, acc##4, y_run, from, to)   \
  SPLIT_STORE(5, acc##5, y_run, from, to)

// The offsets of the first SPLIT_MAX_UNROLLED taps of a kernel row in a row of the copy (phase * Wq +
// column) for the 16 output columns from ox0, stepped without divisions; phase and column end at the tap
// after them (the wider windows' loop continues from there).
#define SPLIT_TAP_OFFSETS(ox0)                                            \
  int tap_at[SPLIT_MAX_UNROLLED];                                         \
  const int step_columns = DW / SW, step_phases = DW - step_columns * SW; \
  int phase = 0, column = (ox0);                                          \
  _Pragma("unroll") for (int kw = 0; kw < SPLIT_MAX_UNROLLED; ++kw) {     \
    tap_at[kw] = phase * Wq + column;                                     \
    SPLIT_NEXT_TAP(phase, column)                                         \
  }
// The sums of the block's 6 channels over every tap, added to a0..a5 for output row `top` and, with
// n_rows 2, to b0..b5 for the row `second_at` floats further in the copy (SPLIT_TAP_OFFSETS in scope).
#define SPLIT_SUMS(n_rows, top, second_at)                                                 \
  {                                                                                        \
    const int rows_now = (n_rows);                                                         \
    const long second_row = (second_at);                                                   \
    for (int c = 0; c < Cg; ++c) {                                                         \
      for (int kh = 0; kh < KH; ++kh) {                                                    \
        __global const float* xr = xg + ((long)c * Hp + SH * (top) + kh * DH) * row_words; \
        __global const float* wr = wb + (c * KH + kh) * KW * SPLIT_CHANNELS;               \
        if (KW == 3) {                                                                     \
          SPLIT_ROW(3)                                                                     \
        } else if (KW == 7) {                                                              \
          SPLIT_ROW(7)                                                                     \
        } else if (KW <= SPLIT_MAX_UNROLLED) {                                             \
          SPLIT_ROW(KW)                                                                    \
        } else { /* the taps past the unrolled ones continue the same steps */             \
          SPLIT_ROW(SPLIT_MAX_UNROLLED)                                                    \
          int ph = phase, cl = column;                                                     \
          for (int kw = SPLIT_MAX_UNROLLED; kw < KW; ++kw) {                               \
            SPLIT_LOAD(cl + ph * Wq)                                                       \
            __global const float* wt = wr + kw * SPLIT_CHANNELS;                           \
            SPLIT_TAPS                                                                     \
            SPLIT_NEXT_TAP(ph, cl)                                                         \
          }                                                                                \
        }                                                                                  \
      }                                                                                    \
    }                                                                                      \
  }
#define SPLIT_ZERO_SUMS                                                     \
  float16 a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, a4 = 0.0f, a5 = 0.0f; \
  float16 b0 = 0.0f, b1 = 0.0f, b2 = 0.0f, b3 = 0.0f, b4 = 0.0f, b5 = 0.0f;

// The body of both split kernels (`rows`: 1 or 2 output rows per work-item, a constant in each).
// No restrict on its parameters: Oclgrind 21.10 cannot run an inlined function's restrict pointers.
static inline void convolution_split_body(__global const float* xs, __global const float* w,
                                          __global const float* scale, __global const float* bias,
                                          __global float* y, const int Cg, const int Hp, const int SW,
                                          const int Wq, const int Og, const int OH, const int OW,
                                          const int KH, const int KW, const int SH, const int DH,
                                          const int DW, const int groups, const int channel_blocks,
                                          const int col_blocks, const int total, const int relu,
                                          const int rows) {
  const int idx = (int)get_global_id(0);
  if (idx >= total) return;
  const out_block b =
      out_block_of(idx, col_blocks, (OH + rows - 1) / rows, groups, channel_blocks, SPLIT_CHANNELS);
  const int col = b.col, oh = b.oh * rows, n = b.n, g = b.g, cb = b.cb, oi = b.oi;
  const int o0 = g * Og + oi;
  const int channels = min(SPLIT_CHANNELS, Og - oi);
  const int ox0 = col * SPLIT_COLS;
  const int count = min(SPLIT_COLS, OW - ox0);
  SPLIT_TAP_OFFSETS(ox0)
  const long row_words = (long)SW * Wq;
  __global const float* xg = xs + (long)(n * groups + g) * Cg * Hp * row_words;
  __global const float* wb = w + (long)cb * Cg * KH * KW * SPLIT_CHANNELS;
  SPLIT_ZERO_SUMS
  // A pair's missing second row (OH odd) computes the first again.
  SPLIT_SUMS(rows, oh, oh + 1 < OH ? SH * row_words : 0)
  const long plane = (long)OH * OW;
  __global float* y_row = y + ((long)(n * groups * Og + o0) * OH + oh) * OW + ox0;
  SPLIT_STORES(a, y_row, 0, count)
  if (rows == 2 && oh + 1 < OH) {
    SPLIT_STORES(b, y_row + OW, 0, count)
  }
}

#define SPLIT_PARAMETERS                                                                                     \
  __global const float *restrict xs, __global const float *restrict w, __global const float *restrict scale, \
      __global const float *restrict bias, __global float *restrict y, const int Cg, const int Hp,           \
      const int SW, const int Wq, const int Og, const int OH, const int OW, const int KH, const int KW,      \
      const int SH, const int DH, const int DW, const int groups, const int channel_blocks,                  \
      const int col_blocks, const int total, const int relu
#define SPLIT_ARGUMENTS \
  xs, w, scale, bias, y, Cg, Hp, SW, Wq, Og, OH, OW, KH, KW, SH, DH, DW, groups, channel_blocks, col_blocks, total, relu

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void convolution_split(SPLIT_PARAMETERS) {
  convolution_split_body(SPLIT_ARGUMENTS, 1);
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void convolution_split_rows2(SPLIT_PARAMETERS) {
  convolution_split_body(SPLIT_ARGUMENTS, 2);
}

// ---- convolution_split_maxpool: convolution_split with a 3x3, stride-2 max-pool whose window starts one
// row and one column before its pair of outputs (pads_begin 1, 1), in the same launch
// A pool output (py, px) is the maximum of the convolution's outputs in rows 2py-1 .. 2py+1 and columns
// 2px-1 .. 2px+1 (those inside the convolution's output; pads are not taps). The windows overlap by a row
// and a column, so a work-item owns whole pooled rows: one channel block (6 channels) x a band of `band`
// pooled rows x every pooled column. It walks the columns in blocks of 16 convolution columns (8 pooled
// ones), carrying each row's last column into the next block (`left`), and within a block the rows in pairs
// (2py, 2py + 1), carrying the pooled row 2py + 1 into the next pooled row; only the band's first row
// 2py0 - 1 is computed twice (by the band above too). The convolution's outputs are computed as
// convolution_split computes them (the same bits), the epilogue applied, then pooled as maxpool_f32_runs_
// native_compare does on a device whose float compare is exact: scanning each window row by row, a value
// wins where it is greater than the best so far, so among equal values the first stays (-0 before +0);
// NaN never wins; a window without a number gives -FLT_MAX. Scanning a window's rows in turn from the
// previous rows' best is that scan, and so is taking a whole row's own best (its first maximum).
// y [N][G*Og][POH][POW]. The copy is wide enough for every block's taps (the host sizes it).
// The most pooled rows a work-item's band holds (the host's kMaxPoolBand).
#define POOL_BAND_MAX 8
// Lanes of a value vector that are no tap (outside the output) hold NaN, which never wins. As TAKE_NATIVE
// in binary_maxpool.cl, whose bits this must give.
#define POOL_TAKE(best, seen, v)          \
  {                                       \
    best = select(best, (v), (v) > best); \
    seen |= (v) == (v);                   \
  }
// One convolution row's 16 columns v (block's lane j: column ox0 + j) into the running best of the 8 pooled
// columns: for pooled column j the columns 2j - 1, 2j, 2j + 1 in order, column -1 being `left`. Lanes taken
// with shuffle and shuffle2: Oclgrind 21.10 marks the result of a swizzle such as .odd or .hi of a 16-lane
// vector uninitialized, and crashes on one with a lane left undefined.
#define POOL_ROW(best, seen, v, left)                                                         \
  {                                                                                           \
    POOL_TAKE(best, seen, shuffle2((v), (float16)(left), (uint8)(16, 1, 3, 5, 7, 9, 11, 13))) \
    POOL_TAKE(best, seen, shuffle((v), (uint8)(0, 2, 4, 6, 8, 10, 12, 14)))                   \
    POOL_TAKE(best, seen, shuffle((v), (uint8)(1, 3, 5, 7, 9, 11, 13, 15)))                   \
  }
// Channel i's row: the epilogue of acc, lanes outside the output (columns from OW on, or a row past OH:
// row_in false) NaN.
#define POOL_VALUES(acc, i, row_in)                                          \
  select((float16)(NAN), epilogue16(acc, scale[o0 + i], bias[o0 + i], relu), \
         column_in&(int16)(row_in ? -1 : 0))

// Channel i (accumulators ea for row 2py, ob for row 2py + 1) of a pooled row: the rows' values, the
// pooled result stored (lanes up to `count`), the pooled row 2py + 1 kept as the next pooled row's first.
#define POOL_PAIR(i, ea, ob)                                                       \
  if (i < channels) {                                                              \
    const float16 e = POOL_VALUES(ea, i, even_in), o = POOL_VALUES(ob, i, odd_in); \
    float8 best = prev##i;                                                         \
    int8 seen = prev_seen##i;                                                      \
    POOL_ROW(best, seen, e, left[i][k])                                            \
    float8 odd_best = (float8)(-INFINITY);                                         \
    int8 odd_seen = (int8)(0);                                                     \
    POOL_ROW(odd_best, odd_seen, o, left[i][k + 1])                                \
    best = select(best, odd_best, odd_best > best);                                \
    seen |= odd_seen;                                                              \
    left[i][k] = e.sf;                                                             \
    left[i][k + 1] = o.sf;                                                         \
    prev##i = odd_best;                                                            \
    prev_seen##i = odd_seen;                                                       \
    const float8 out = select((float8)(-FLT_MAX), best, seen);                     \
    __global float* yo = y_row + (long)(i)*pooled_plane;                           \
    if (count == 8) {                                                              \
      vstore8(out, 0, yo);                                                         \
    } else {                                                                       \
      float t[8];                                                                  \
      vstore8(out, 0, t);                                                          \
      for (int j = 0; j < count; ++j) yo[j] = t[j];                                \
    }                                                                              \
  }
// The band's first row 2py0 - 1 (accumulators a): its pooled values start the first pooled row.
#define POOL_TOP(i, acc)                           \
  if (i < channels) {                              \
    const float16 v = POOL_VALUES(acc, i, top_in); \
    prev##i = (float8)(-INFINITY);                 \
    prev_seen##i = (int8)(0);                      \
    POOL_ROW(prev##i, prev_seen##i, v, left[i][0]) \
    left[i][0] = v.sf;                             \
  }

static inline void convolution_split_maxpool_body(
    __global const float* xs, __global const float* w, __global const float* scale,
    __global const float* bias, __global float* y, const int Cg, const int Hp, const int SW, const int Wq,
    const int Og, const int OH, const int OW, const int KH, const int KW, const int SH, const int DH,
    const int DW, const int groups, const int channel_blocks, const int col_blocks, const int POH,
    const int POW, const int band, const int bands, const int total, const int relu, const int rows) {
  const int idx = (int)get_global_id(0);
  if (idx >= total) return;
  const out_block b = out_block_of(idx, 1, bands, groups, channel_blocks, SPLIT_CHANNELS);
  const int n = b.n, g = b.g, cb = b.cb, oi = b.oi;
  const int o0 = g * Og + oi;
  const int channels = min(SPLIT_CHANNELS, Og - oi);
  const int py0 = b.oh * band, py_end = min(py0 + band, POH);
  const long row_words = (long)SW * Wq;
  __global const float* xg = xs + (long)(n * groups + g) * Cg * Hp * row_words;
  __global const float* wb = w + (long)cb * Cg * KH * KW * SPLIT_CHANNELS;
  const long pooled_plane = (long)POH * POW;
  const int16 lane = (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  // Each row's column before the block (row 2py0 - 1 + k of the band at index k), per channel: none yet.
  float left[SPLIT_CHANNELS][2 * POOL_BAND_MAX + 1];
  for (int i = 0; i < SPLIT_CHANNELS; ++i)
    for (int k = 0; k <= 2 * POOL_BAND_MAX; ++k) left[i][k] = NAN;
  for (int col = 0; col < col_blocks; ++col) {
    const int ox0 = col * SPLIT_COLS;
    const int count = min(8, POW - col * 8);
    const int16 column_in = lane + ox0 < OW;
    SPLIT_TAP_OFFSETS(ox0)
    float8 prev0, prev1, prev2, prev3, prev4, prev5;
    int8 prev_seen0, prev_seen1, prev_seen2, prev_seen3, prev_seen4, prev_seen5;
    {
      // Past the output where the pool's pads after it give pooled rows of pads alone.
      const int top = 2 * py0 - 1;
      const bool top_in = top >= 0 && top < OH;
      SPLIT_ZERO_SUMS
      if (top_in) SPLIT_SUMS(1, top, 0)
      POOL_TOP(0, a0)
      POOL_TOP(1, a1)
      POOL_TOP(2, a2)
      POOL_TOP(3, a3)
      POOL_TOP(4, a4)
      POOL_TOP(5, a5)
    }
    for (int py = py0; py < py_end; ++py) {
      const int even = 2 * py, k = 2 * (py - py0) + 1;
      const bool even_in = even < OH, odd_in = even + 1 < OH;
      // A row past the output is computed as the last one and not taken.
      const int first = min(even, OH - 1);
      SPLIT_ZERO_SUMS
      if (rows == 2) {
        SPLIT_SUMS(2, first, odd_in ? SH * row_words : 0)
      } else {
        SPLIT_SUMS(1, first, 0)
        const float16 c0 = a0, c1 = a1, c2 = a2, c3 = a3, c4 = a4, c5 = a5;
        a0 = a1 = a2 = a3 = a4 = a5 = 0.0f;
        SPLIT_SUMS(1, min(even + 1, OH - 1), 0)
        b0 = a0, b1 = a1, b2 = a2, b3 = a3, b4 = a4, b5 = a5;
        a0 = c0, a1 = c1, a2 = c2, a3 = c3, a4 = c4, a5 = c5;
      }
      __global float* y_row = y + ((long)(n * groups * Og + o0) * POH + py) * POW + col * 8;
      POOL_PAIR(0, a0, b0)
      POOL_PAIR(1, a1, b1)
      POOL_PAIR(2, a2, b2)
      POOL_PAIR(3, a3, b3)
      POOL_PAIR(4, a4, b4)
      POOL_PAIR(5, a5, b5)
    }
  }
}

#define SPLIT_MAXPOOL_PARAMETERS                                                                             \
  __global const float *restrict xs, __global const float *restrict w, __global const float *restrict scale, \
      __global const float *restrict bias, __global float *restrict y, const int Cg, const int Hp,           \
      const int SW, const int Wq, const int Og, const int OH, const int OW, const int KH, const int KW,      \
      const int SH, const int DH, const int DW, const int groups, const int channel_blocks,                  \
      const int col_blocks, const int POH, const int POW, const int band, const int bands, const int total,  \
      const int relu
#define SPLIT_MAXPOOL_ARGUMENTS                                                                              \
  xs, w, scale, bias, y, Cg, Hp, SW, Wq, Og, OH, OW, KH, KW, SH, DH, DW, groups, channel_blocks, col_blocks, \
      POH, POW, band, bands, total, relu

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void convolution_split_maxpool(
    SPLIT_MAXPOOL_PARAMETERS) {
  convolution_split_maxpool_body(SPLIT_MAXPOOL_ARGUMENTS, 1);
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void convolution_split_maxpool_rows2(
    SPLIT_MAXPOOL_PARAMETERS) {
  convolution_split_maxpool_body(SPLIT_MAXPOOL_ARGUMENTS, 2);
}

// ---- phase_split: convolution_split's input copy (see there)
// Work-item: one phase r of one padded row of one input plane, xs[plane][row][r][q] =
// x[plane][row - PH][q * SW + r - PW] for q < Wq (at least 16), 0 outside the input; 16 columns at a time,
// the last 16 overlapping the ones before where Wq is not a multiple of 16. `total` = planes * Hp * SW.
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void phase_split(
    __global const float* restrict x, __global float* restrict xs, const int H, const int W, const int Hp,
    const int SW, const int Wq, const int PH, const int PW, const int total) {
  const int line = (int)get_global_id(0);  // (plane * Hp + row) * SW + r
  if (line >= total) return;
  const int rows = line / SW;
  const int r = line - rows * SW;
  const int plane = rows / Hp;
  const int iy = rows - plane * Hp - PH;
  __global float* dst = xs + (long)line * Wq;
  if (iy < 0 || iy >= H) {  // a pad row
    for (int q = 0; q < Wq; q += 16) vstore16((float16)(0.0f), 0, dst + min(q, Wq - 16));
    return;
  }
  __global const float* xr = x + ((long)plane * H + iy) * W;
  for (int q = 0; q < Wq; q += 16) {
    const int q0 = min(q, Wq - 16);
    const int ix0 = q0 * SW + r - PW;
    // Inside the row at stride 1 or 2: one or two vector loads (at stride 2 the even lanes of one and the
    // odd lanes of the next, started a column early so that neither passes the last column read).
    if (ix0 >= 0 && ix0 + 15 * SW < W && SW <= 2) {
      __global const float* p = xr + ix0;
      vstore16(SW == 1 ? vload16(0, p) : (float16)(vload16(0, p).even, vload16(0, p + 15).odd), 0, dst + q0);
      continue;
    }
    // Near the row's ends: every lane loads a column inside the row (clamped) and keeps it or 0.
    float v[16];
    for (int j = 0; j < 16; ++j) {
      const int ix = ix0 + j * SW;
      const float u = xr[clamp(ix, 0, W - 1)];
      v[j] = ix >= 0 && ix < W ? u : 0.0f;
    }
    vstore16(vload16(0, v), 0, dst + q0);
  }
}

// ---- pointwise_sample: convolution_1x1_split's input copy at a stride
// Work-item: one input plane, xs[plane][oy * OW + ox] = x[plane][oy * SH][ox * SW]: the pixels a 1x1 window
// without pads reads, as one contiguous plane of OH * OW positions, so that the positions kernel loads
// whole vectors of them. At stride 1 or 2 in the row, N = 16 or 8 columns at a time (the widest N <= OW;
// the last N overlapping the ones before); at 2, the even lanes of one load and the odd lanes of the next,
// started a column early, so that no load passes the row's last column read (2 * OW - 2). Narrower rows and
// larger strides one column at a time. `total` = planes. PoCL (AVX-512) ran a ResNet-18's three copies in
// 0.05-0.06 ms with a work-item per plane, 0.07-0.08 ms with one per output row (each paying the set-up).
#define SAMPLE_ROW(N, STRIDE2_STORE)          \
  for (int q = 0; q < OW; q += N) {           \
    const int q0 = min(q, OW - N);            \
    __global const float* p = xr + q0 * SW;   \
    if (SW == 1) {                            \
      vstore##N(vload##N(0, p), 0, dst + q0); \
    } else {                                  \
      STRIDE2_STORE;                          \
    }                                         \
  }
// The stride-2 stores in forms Oclgrind 21.10 follows: it takes some lanes of other shuffles of the same
// loads (a float8 of two float4 halves; the odd half of a float16 stored apiece) for uninitialized.
#define SAMPLE_STRIDE2_16 vstore16((float16)(vload16(0, p).even, vload16(0, p + 15).odd), 0, dst + q0)
#define SAMPLE_STRIDE2_8                   \
  vstore4(vload8(0, p).even, 0, dst + q0); \
  vstore4(vload8(0, p + 7).odd, 0, dst + q0 + 4)

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void pointwise_sample(
    __global const float* restrict x, __global float* restrict xs, const int H, const int W, const int OH,
    const int OW, const int SH, const int SW, const int total) {
  const int plane = (int)get_global_id(0);
  if (plane >= total) return;
  for (int oy = 0; oy < OH; ++oy) {
    __global const float* xr = x + ((long)plane * H + oy * SH) * W;
    __global float* dst = xs + ((long)plane * OH + oy) * OW;
    if (SW <= 2 && OW >= 16) {
      SAMPLE_ROW(16, SAMPLE_STRIDE2_16)
    } else if (SW <= 2 && OW >= 8) {
      SAMPLE_ROW(8, SAMPLE_STRIDE2_8)
    } else {
      for (int q = 0; q < OW; ++q) dst[q] = xr[q * SW];
    }
  }
}

// The input pixel offsets of output positions p0 .. p0 + n - 1 of a 1x1 convolution's plane: position p
// reads pixel (p / out_width) * SH * W + (p % out_width) * SW; positions past P read pixel 0 (not stored).
static inline void plane_offsets(int* off, const int n, const int p0, const int P, const int out_width,
                                 const int SH, const int SW, const int W) {
  int oy = p0 / out_width;
  int ox = p0 - oy * out_width;
#pragma unroll
  for (int i = 0; i < n; ++i) {
    off[i] = p0 + i < P ? oy * SH * W + ox * SW : 0;
    if (++ox == out_width) {
      ox = 0;
      ++oy;
    }
  }
}

// ---- convolution_1x1_lanes: pointwise convolutions on CPU devices, 16 output channels as vector lanes
// Each work-item computes 16 output channels of one group x LANE_COLS consecutive positions of the output
// plane (P = OH*OW, across row ends; the plane's last block overlaps the one before it, as convolution_1x1's
// last tile). Each position's input pixel offset is found once; per input channel one load of the 16
// channels' weights (the lanes' weight layout, [G][ceil(Og/16)][Cg][16]) and one broadcast value per position
// feed LANE_COLS FMAs of 16 lanes: no gathers at a stride, no shuffles. On PoCL (AVX2) the 8x8 tiles gathered
// 8 scalars per channel wherever a tile crossed a row end or took every other pixel (a ResNet's 1x1/2
// shortcuts at 7x7 and 14x14 outputs). The same sums in the same order (c), so the same results.
// Work-item order (channels_first, the host's choice): at a stride, where a block's pixels lie in every
// other row and column of an input plane larger than the output channels, a block's neighbours are its
// other channel blocks, which read the same input lines while they are in cache; otherwise its other
// position blocks, which read the same weights. On PoCL (AVX2), alone: the ResNet's 1x1/2 shortcuts from
// 64 x 56 x 56 and 128 x 28 x 28 took 0.20-0.28 -> 0.18-0.23 ms with their channel blocks first, the one
// from 256 x 14 x 14 (its 196-pixel plane smaller than its 512 output channels) 0.22 -> 0.24 ms, and at
// stride 1 (64 x 28 x 28 -> 128) either order the same. A grouped layer with one channel block per group
// keeps its position blocks first: its channel blocks would share neither input channels nor weights.
#define POINTWISE_LANE_TAP(j) a##j = fma(wv, (float16)(xc[off##j]), a##j)

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void convolution_1x1_lanes(
    __global const float* restrict x, __global const float* restrict w, __global const float* restrict scale,
    __global const float* restrict bias, __global float* restrict y, const int Cg, const int P, const int Og,
    const int groups, const int lane_blocks, const int col_blocks, const int total, const int HW, const int W,
    const int out_width, const int SH, const int SW, const int channels_first, const int relu) {
  const int idx = (int)get_global_id(0);
  if (idx >= total) return;
  // The block's image n, channel block cb (of all groups) and position block col; quotients and remainders
  // written out, as in convolution.
  const int channel_blocks = groups * lane_blocks;
  int n, cb, col;
  if (channels_first) {
    const int positions = idx / channel_blocks;  // n * col_blocks + col
    cb = idx - positions * channel_blocks;
    n = positions / col_blocks;
    col = positions - n * col_blocks;
  } else {
    const int planes = idx / col_blocks;  // n * channel_blocks + cb
    col = idx - planes * col_blocks;
    n = planes / channel_blocks;
    cb = planes - n * channel_blocks;
  }
  const int g = cb / lane_blocks;
  const int oi = (cb - g * lane_blocks) * 16;
  const int o0 = g * Og + oi;
  const int channels = min(16, Og - oi);
  const int first = col * LANE_COLS;
  const int p0 = P >= LANE_COLS ? min(first, P - LANE_COLS) : first;
  const int from = first - p0;  // positions before it belong to the block before (computed again, not stored)
  const int count = min(LANE_COLS, P - p0);
  int off[LANE_COLS];
  plane_offsets(off, LANE_COLS, p0, P, out_width, SH, SW, W);
  const int off0 = off[0], off1 = off[1], off2 = off[2], off3 = off[3], off4 = off[4], off5 = off[5];
  __global const float* xc = x + (long)(n * groups + g) * Cg * HW;
  __global const float* wp = w + (long)cb * Cg * 16;
  float16 a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, a4 = 0.0f, a5 = 0.0f;
  for (int c = 0; c < Cg; ++c, xc += HW, wp += 16) {
    const float16 wv = vload16(0, wp);
    POINTWISE_LANE_TAP(0);
    POINTWISE_LANE_TAP(1);
    POINTWISE_LANE_TAP(2);
    POINTWISE_LANE_TAP(3);
    POINTWISE_LANE_TAP(4);
    POINTWISE_LANE_TAP(5);
  }
  const long plane = P;
  __global float* y_row = y + (long)(n * groups * Og + o0) * P + p0;
  if (from == 0 && count == LANE_COLS && channels == 16) {
    // A whole block: each channel's 6 positions as one run (as convolution_lanes stores).
    LANE_BLOCK_STORE(y_row)
    return;
  }
  const int ow0 = 0;
  POINTWISE_LANE_STORE(0)
  POINTWISE_LANE_STORE(1)
  POINTWISE_LANE_STORE(2)
  POINTWISE_LANE_STORE(3)
  POINTWISE_LANE_STORE(4)
  POINTWISE_LANE_STORE(5)
}

// ---- convolution_1x1_split: pointwise convolutions on CPU devices, positions as vector lanes
// convolution_split's form for a 1x1 window without pads, whose input plane at stride 1 is already the
// contiguous run of values that kernel's copy provides (at a stride, x is pointwise_sample's copy of the
// pixels read, the same run): each work-item computes SPLIT_CHANNELS (6) output channels of one group x
// `runs` (1 or 2, a constant in each kernel) runs of 16 consecutive positions of the plane (P = OH*OW, across
// row ends; the plane's last block overlaps the one before it, its overlap computed again and not stored).
// Per input channel one vector load of 16 positions per run and 6 broadcast weights (weights
// [G][ceil(Og/6)][Cg][6], zero past Og) feed 6 x runs FMAs, and each channel leaves as whole vectors.
// convolution_1x1_lanes broadcasts one input value per position instead: 7 loads for 6 FMAs, each input line
// used for 6 positions, and its stores scatter single values over 16 planes. Sums in the same order (c, one
// fma each), so the same results. Work-items: a block's neighbours are its group's other channel blocks,
// which read the same input lines while they are in cache. The host takes this kernel only where P >= 16 x
// runs. The taps and stores are convolution_split's (SPLIT_TAPS, SPLIT_STORES), with `rows` counting runs of
// positions.
// The body of both kernels. No restrict on its parameters (Oclgrind 21.10 cannot run an inlined function's
// restrict pointers).
static inline void convolution_1x1_split_body(__global const float* x, __global const float* w,
                                              __global const float* scale, __global const float* bias,
                                              __global float* y, const int Cg, const int P, const int Og,
                                              const int groups, const int channel_blocks,
                                              const int pos_blocks, const int total, const int relu,
                                              const int rows) {
  const int idx = (int)get_global_id(0);
  if (idx >= total) return;
  // idx = ((n * groups + g) * pos_blocks + pb) * channel_blocks + cb; quotients and remainders written out,
  // as in convolution.
  const int rest = idx / channel_blocks;
  const int cb = idx - rest * channel_blocks;
  const int plane_group = rest / pos_blocks;  // n * groups + g
  const int pb = rest - plane_group * pos_blocks;
  const int n = plane_group / groups;
  const int g = plane_group - n * groups;
  const int oi = cb * SPLIT_CHANNELS;
  const int o0 = g * Og + oi;
  const int channels = min(SPLIT_CHANNELS, Og - oi);
  const int block = SPLIT_COLS * rows;
  const int first = pb * block;
  const int p0 = min(first, P - block);
  const int from = first - p0;  // positions before it belong to the block before (computed again, not stored)
  __global const float* xc = x + (long)plane_group * Cg * P + p0;
  __global const float* wt = w + (long)(g * channel_blocks + cb) * Cg * SPLIT_CHANNELS;
  float16 a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, a4 = 0.0f, a5 = 0.0f;
  float16 b0 = 0.0f, b1 = 0.0f, b2 = 0.0f, b3 = 0.0f, b4 = 0.0f, b5 = 0.0f;
  const int rows_now = rows;  // SPLIT_TAPS' name for it
  for (int c = 0; c < Cg; ++c, xc += P, wt += SPLIT_CHANNELS) {
    const float16 xv = vload16(0, xc);
    const float16 xv2 = rows == 2 ? vload16(1, xc) : xv;
    SPLIT_TAPS
  }
  const long plane = P;
  __global float* y_run = y + ((long)n * groups * Og + o0) * P + p0;
  SPLIT_STORES(a, y_run, from, SPLIT_COLS)
  if (rows == 2) {
    SPLIT_STORES(b, y_run + SPLIT_COLS, from - SPLIT_COLS, SPLIT_COLS)
  }
}

#define POINTWISE_SPLIT_PARAMETERS                                                                           \
  __global const float *restrict x, __global const float *restrict w, __global const float *restrict scale, \
      __global const float *restrict bias, __global float *restrict y, const int Cg, const int P,            \
      const int Og, const int groups, const int channel_blocks, const int pos_blocks, const int total,      \
      const int relu
#define POINTWISE_SPLIT_ARGUMENTS \
  x, w, scale, bias, y, Cg, P, Og, groups, channel_blocks, pos_blocks, total, relu

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void convolution_1x1_split(
    POINTWISE_SPLIT_PARAMETERS) {
  convolution_1x1_split_body(POINTWISE_SPLIT_ARGUMENTS, 1);
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void convolution_1x1_split_runs2(
    POINTWISE_SPLIT_PARAMETERS) {
  convolution_1x1_split_body(POINTWISE_SPLIT_ARGUMENTS, 2);
}

// Channels c0 .. Cg-1 of a pointwise tile: LOAD reads the tile's COLS pixels of input channel xc.
#define POINTWISE_LOOP(LOAD)                                 \
  for (int c = 0; c < Cg; ++c) {                             \
    __global const float* xc = xg + (long)c * HW;            \
    const floatC xv = LOAD;                                  \
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
#define WHOLE_TILE vloadC(0, xc + p0)
#define PART_TILE row_run(xc, p0, 1, P)
// At a stride: the tile's pixels through their offsets (off[], found once per tile), or, for a tile inside
// one output row at stride 2, every other value of one run of the input row.
#define AT_OFFSET(i) xc[off[i]]
#define GATHERED_TILE ROW_VALUES(AT_OFFSET)
#define STRIDE2_TILE LOAD_STRIDE2(xc + off[0])

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void convolution_1x1(
    __global const float* restrict x, __global const float* restrict w, __global const float* restrict scale,
    __global const float* restrict bias, __global float* restrict y, const int Cg, const int P, const int Og,
    const int groups, const int group_blocks, const int col_blocks, const int total, const int HW, const int W,
    const int out_width, const int SH, const int SW, const int relu) {
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
  const int first = col * COLS;
  const int p0 = P >= COLS ? min(first, P - COLS) : first;  // the last tile overlaps the one before it
  const int from = first - p0;
  __global const float* xg = x + (long)(n * groups + g) * Cg * HW;
  __global const float* wb = w + (long)cb * Cg * 8;

  floatC a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, a4 = 0.0f, a5 = 0.0f, a6 = 0.0f, a7 = 0.0f;
  if (SH == 1 && SW == 1) {  // the plane's pixels are the input's, contiguous
    if (p0 + COLS <= P) {
      POINTWISE_LOOP(WHOLE_TILE)
    } else {
      POINTWISE_LOOP(PART_TILE)
    }
  } else {
    // Each position's input pixel, found once (positions past P: a plane narrower than a tile).
    int off[COLS];
    plane_offsets(off, COLS, p0, P, out_width, SH, SW, W);
    const int ox0 = p0 - p0 / out_width * out_width;
    if (SW == 2 && ox0 + COLS <= out_width && 2 * (ox0 + COLS) <= W) {
      POINTWISE_LOOP(STRIDE2_TILE)
    } else {
      POINTWISE_LOOP(GATHERED_TILE)
    }
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
