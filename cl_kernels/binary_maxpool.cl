// SPDX-License-Identifier: Apache-2.0
// Max-pooling (OpenVINO MaxPool-1 windows) on packed bits and on float32.
//
// binary_maxpool: packed in, packed out (include/xnorcl/packed.hpp: words [N][H][W][Cw], channel c is bit c%32
//   of word c/32). The max of +-1 values is the OR of their bits, so one work-item ORs the words of its window
//   for one output word (32 channels at once); tail bits stay 0. Pad positions are not taps (they never win);
//   a window with no input position gives 0.
// maxpool_f32: float32 NCHW in and out, read and written as raw bit patterns. The maximum is taken on order
//   keys (exact IEEE order on every device, -0 == +0, subnormals count as themselves): a tap wins when its key
//   is greater than the best so far, scanning the window row by row, so among equal keys the first wins; NaN
//   (key 0) never wins; a window with no (non-NaN) input gives -FLT_MAX (0xff7fffff).
// maxpool_f32_runs: the same result, a work-item per run of POOL_RUN consecutive outputs of one row, held as
//   uint16 lanes: each tap of the window is one vector load (stride 1: 16 neighbouring columns; stride 2:
//   the 16 even columns of 31) and vector key, compare and select, so that a compiler that runs work-items
//   as scalar loops (PoCL on CPUs) still works on 16 outputs at once. A row's last run overlaps the one
//   before it where the row is not a whole number of runs, and its first run starts right of the left pad
//   (RUN_PLACEMENT); a row narrower than a run is one run whose spare lanes read the next rows' values where
//   that stays inside the tensor; runs still cut by the input's edges load lane by lane, a lane without its
//   column taking key 0 (it never wins).
// maxpool_f32_runs_native_compare: maxpool_f32_runs comparing the values as floats instead of keys, for
//   devices that keep subnormals (the host's rule); the same bits.
// Window of output (oy, ox): input rows oy*stride_y - pad_top + [0, KH), columns likewise (computed in 64 bits).
//
// NDRange: 1-D, global rounded up to WG_SIZE, local WG_SIZE; `total` real work-items (one per output word,
// float or run). Quotients and remainders written out (r = a - q*b) for Oclgrind 21.10.

// Defaults only for compiling this file on its own (offline compilers, syntax checks); the runtime always
// passes its own values from src/runtime/device_profile.cpp.
#ifndef WG_SIZE
#define WG_SIZE 64
#endif

#define POOL_RUN 16

// Where a run of row `run` starts (ox0) and which of its lanes it stores ([skip, end)); `lanes` of them have
// an output. A row that is not a whole number of runs ends in a run that overlaps the one before it (its
// first `skip` lanes are that run's outputs, computed again and not stored), so that it too loads whole
// vectors. The first run of a row cut by the left pad starts at the first output whose windows lie right of
// the pad (`lead`, when that is at most 4 outputs and another run follows) and computes the outputs before it
// one by one, so that its own windows load without checks too (the division only where a row's first run is
// cut by the left pad and another run follows). Needs `run`, `runs`, OW, stride_x, pad_left.
#define RUN_PLACEMENT                                                                                  \
  int lead = 0;                                                                                        \
  if (run == 0 && runs > 1 && pad_left > 0) {                                                          \
    const long lead_wanted = ((long)pad_left + stride_x - 1) / stride_x;                               \
    lead = lead_wanted <= 4 ? (int)lead_wanted : 0;                                                    \
  }                                                                                                    \
  const int ox0 = lead > 0 ? lead : OW >= POOL_RUN ? min(run * POOL_RUN, OW - POOL_RUN) : 0;           \
  const int skip = run * POOL_RUN - ox0 + lead;                                                        \
  const int lanes = (int)min((long)POOL_RUN, (long)OW - ox0);                                          \
  const int end = lead > 0 ? POOL_RUN - lead : lanes;

inline uint order_key(uint u) {
  const uint magnitude = u & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return 0u;  // NaN
  if (magnitude == 0u) u = 0u;             // -0 == +0
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void binary_maxpool(
    __global const uint* restrict in, __global uint* restrict out, const int H, const int W, const int Cw,
    const int OH, const int OW, const int KH, const int KW, const int stride_y, const int stride_x,
    const int pad_top, const int pad_left, const int total) {
  const int gid = (int)get_global_id(0);
  if (gid >= total) return;
  const int pixel = gid / Cw;
  const int w = gid - pixel * Cw;
  const int row = pixel / OW;
  const int ox = pixel - row * OW;
  const int n = row / OH;
  const int oy = row - n * OH;
  // Window corners in 64 bits (strides and pads may be near INT_MAX), clipped to the input: ints again.
  const long iy0 = (long)oy * stride_y - pad_top;
  const long ix0 = (long)ox * stride_x - pad_left;
  const int y_lo = (int)clamp(iy0, 0l, (long)H), y_hi = (int)clamp(iy0 + KH, 0l, (long)H);
  const int x_lo = (int)clamp(ix0, 0l, (long)W), x_hi = (int)clamp(ix0 + KW, 0l, (long)W);
  uint acc = 0u;
  for (int iy = y_lo; iy < y_hi; ++iy) {
    const ulong base = ((ulong)n * (ulong)H + (ulong)iy) * (ulong)W;
    for (int ix = x_lo; ix < x_hi; ++ix) acc |= in[(base + (ulong)ix) * (ulong)Cw + (ulong)w];
  }
  out[gid] = acc;
}

// The maximum of one output's window: input rows [y_lo, y_hi) (already clipped), columns ix0 + [0, KW).
inline uint window_max(__global const uint* in, const int plane, const int H, const int W, const int y_lo,
                       const int y_hi, const long ix0, const int KW) {
  const int x_lo = (int)clamp(ix0, 0l, (long)W), x_hi = (int)clamp(ix0 + KW, 0l, (long)W);
  uint best = 0xff7fffffu;  // -FLT_MAX
  uint best_key = 0u;       // below every non-NaN key
  for (int iy = y_lo; iy < y_hi; ++iy) {
    const ulong base = ((ulong)plane * (ulong)H + (ulong)iy) * (ulong)W;
    for (int ix = x_lo; ix < x_hi; ++ix) {
      const uint u = in[base + (ulong)ix];
      const uint k = order_key(u);
      if (k > best_key) {
        best_key = k;
        best = u;
      }
    }
  }
  return best;
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void maxpool_f32(
    __global const uint* restrict in, __global uint* restrict out, const int H, const int W, const int OH,
    const int OW, const int KH, const int KW, const int stride_y, const int stride_x, const int pad_top,
    const int pad_left, const int total) {
  const int gid = (int)get_global_id(0);
  if (gid >= total) return;
  const int plane = gid / (OH * OW);
  const int r = gid - plane * (OH * OW);
  const int oy = r / OW;
  const int ox = r - oy * OW;
  // Window corners in 64 bits (strides and pads may be near INT_MAX), clipped to the input: ints again.
  const long iy0 = (long)oy * stride_y - pad_top;
  const int y_lo = (int)clamp(iy0, 0l, (long)H), y_hi = (int)clamp(iy0 + KH, 0l, (long)H);
  out[gid] = window_max(in, plane, H, W, y_lo, y_hi, (long)ox * stride_x - pad_left, KW);
}

inline uint16 order_keys(uint16 u) {
  const uint16 magnitude = u & 0x7fffffffu;
  uint16 k = select(u | 0x80000000u, ~u, (u & 0x80000000u) != 0u);
  k = select(k, (uint16)(0x80000000u), magnitude == 0u);  // -0 == +0
  return select(k, (uint16)(0u), magnitude > 0x7f800000u);  // NaN
}

// Whether every tap of a run's windows loads as whole vectors: stride 1 or 2 and the windows of the run's
// `lanes` outputs inside the row. A run of a row narrower than POOL_RUN has spare lanes whose loads read on
// into the next rows (their maxima are not stored): allowed while those loads stay inside the tensor of
// total / per_plane planes of H x W (`total` work-items, per_plane to a plane). That division, and the lead's
// in RUN_PLACEMENT, are worked out only for the runs that use them: they are the same in every work-item,
// but they follow its early return, so PoCL's work-item loop computed them again for each run (without them
// a 64x112x112 3x3/2 max-pool took 0-8% less time, AVX-512, in one process).
inline bool whole_vector_taps(const long ix0, const int KW, const int stride_x, const int W, const int lanes,
                              const int plane, const int H, const int y_hi, const int total,
                              const int per_plane) {
  if ((stride_x != 1 && stride_x != 2) || ix0 < 0 || ix0 + (KW - 1) + (long)(lanes - 1) * stride_x >= W)
    return false;
  if (lanes == POOL_RUN) return true;
  const long last_read = ((long)plane * H + (y_hi - 1)) * W + ix0 + (KW - 1) + (long)(POOL_RUN - 1) * stride_x;
  return last_read < (long)(total / per_plane) * H * W;
}

// The POOL_RUN values of one window tap for the run's lanes (columns first + j * stride_x of `line`) where the
// run is cut by the row's ends or the stride is above 2, and which lanes have their column (valid: all bits
// set).
inline uint16 tap_run_at_edge(__global const uint* line, const long first, const int stride_x, const int W,
                              const int lanes, int16* valid) {
  uint values[POOL_RUN];
  int ok[POOL_RUN];
  for (int j = 0; j < POOL_RUN; ++j) {
    const long ix = first + (long)j * stride_x;
    ok[j] = (j < lanes && ix >= 0 && ix < W) ? -1 : 0;
    values[j] = ok[j] ? line[ix] : 0u;
  }
  *valid = vload16(0, ok);
  return vload16(0, values);
}

// The running maximum of a run, tap by tap: a lane's tap wins where it is above the best so far. By order
// keys (TAKE_KEYED: any device), or by the device's float compare where that is exact, subnormals included
// (TAKE_NATIVE: one compare per tap where the keys take several integer operations; the keys' work was
// about a third of the kernel's time on PoCL). Compared as floats, NaN never wins and -0 and +0 are equal, so
// the first stays, as with keys. The native best starts at -inf, which only a number beats; a lane that saw
// no number (`seen`: v == v is false only for NaN) gives -FLT_MAX, as the keys do.
#define TAKE_KEYED(u, k)                    \
  {                                         \
    const int16 wins = (k) > best_key;      \
    best = select(best, (u), wins);         \
    best_key = select(best_key, (k), wins); \
  }
#define TAKE_NATIVE(u)                                  \
  {                                                     \
    const float16 v = as_float16(u);                    \
    best_value = select(best_value, v, v > best_value); \
    seen |= v == v;                                     \
  }
#define TAKE(u, valid)                                               \
  if (native) {                                                      \
    TAKE_NATIVE(select((uint16)(0x7fc00000u), (u), (valid)))         \
  } else {                                                           \
    TAKE_KEYED((u), select((uint16)(0u), order_keys(u), (valid)))    \
  }

// The body of both run kernels; `native` is a constant in each, so each compiles to its own code.
static inline void maxpool_runs(__global const uint* in, __global uint* out, const int H, const int W,
                                const int OH, const int OW, const int KH, const int KW, const int stride_y,
                                const int stride_x, const int pad_top, const int pad_left, const int total,
                                const bool native) {
  const int gid = (int)get_global_id(0);
  if (gid >= total) return;
  const int runs = OW / POOL_RUN + (OW % POOL_RUN != 0);
  const int row = gid / runs;  // plane * OH + oy
  const int run = gid - row * runs;
  RUN_PLACEMENT
  const int plane = row / OH;
  const int oy = row - plane * OH;
  const long iy0 = (long)oy * stride_y - pad_top;
  const int y_lo = (int)clamp(iy0, 0l, (long)H), y_hi = (int)clamp(iy0 + KH, 0l, (long)H);
  const long ix0 = (long)ox0 * stride_x - pad_left;
  uint16 best = (uint16)(0xff7fffffu);  // -FLT_MAX
  uint16 best_key = (uint16)(0u);       // below every non-NaN key
  float16 best_value = (float16)(-INFINITY);
  int16 seen = (int16)(0);
  const int16 all = (int16)(-1);
  // Whether every tap of the run's windows loads whole vectors (the common case loads without checks): at
  // stride 1, 16 neighbouring columns; at stride 2, the even lanes of a 16-column load and the odd lanes of
  // the next one, started a column early so that no load passes the run's last column (1.2x as fast on
  // PoCL as a shuffle2 of two loads; built this way in a function that also returned the edge path's vector,
  // Oclgrind 21.10 read them as uninitialized).
  const bool inside = whole_vector_taps(ix0, KW, stride_x, W, lanes, plane, H, y_hi, total, OH * runs);
  for (int iy = y_lo; iy < y_hi; ++iy) {
    __global const uint* line = in + ((ulong)plane * (ulong)H + (ulong)iy) * (ulong)W;
    if (inside && stride_x == 1) {
      for (int kx = 0; kx < KW; ++kx) {
        const uint16 u = vload16(0, line + ix0 + kx);
        TAKE(u, all)
      }
    } else if (inside) {
      for (int kx = 0; kx < KW; ++kx) {
        __global const uint* p = line + ix0 + kx;
        const uint16 u = (uint16)(vload16(0, p).even, vload16(0, p + POOL_RUN - 1).odd);
        TAKE(u, all)
      }
    } else {
      for (int kx = 0; kx < KW; ++kx) {
        int16 valid;
        const uint16 u = tap_run_at_edge(line, ix0 + kx, stride_x, W, lanes, &valid);
        TAKE(u, valid)
      }
    }
  }
  if (native) best = select(best, as_uint16(best_value), seen);
  __global uint* dst = out + (ulong)row * (ulong)OW + (ulong)ox0;
  for (int j = 0; j < lead; ++j)
    out[(ulong)row * (ulong)OW + (ulong)j] =
        window_max(in, plane, H, W, y_lo, y_hi, (long)j * stride_x - pad_left, KW);
  if (skip == 0 && end == POOL_RUN) {
    vstore16(best, 0, dst);
    return;
  }
  uint values[POOL_RUN];
  vstore16(best, 0, values);
  for (int j = skip; j < end; ++j) dst[j] = values[j];
}

#define MAXPOOL_RUNS_PARAMETERS                                                                             \
  __global const uint *restrict in, __global uint *restrict out, const int H, const int W, const int OH,  \
      const int OW, const int KH, const int KW, const int stride_y, const int stride_x, const int pad_top, \
      const int pad_left, const int total

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void maxpool_f32_runs(MAXPOOL_RUNS_PARAMETERS) {
  maxpool_runs(in, out, H, W, OH, OW, KH, KW, stride_y, stride_x, pad_top, pad_left, total, false);
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void maxpool_f32_runs_native_compare(
    MAXPOOL_RUNS_PARAMETERS) {
  maxpool_runs(in, out, H, W, OH, OW, KH, KW, stride_y, stride_x, pad_top, pad_left, total, true);
}
