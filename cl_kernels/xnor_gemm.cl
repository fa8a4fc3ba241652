// SPDX-License-Identifier: Apache-2.0
// xnor-popcount GEMM: Y[o, p] = K - 2 * sum_w popcount(filters[w][o] ^ patches[w][p]), written as float NCHW.
//
// Words: word_t is uint (-DWORD_BITS=32) or ulong (-DWORD_BITS=64), per architecture (src/runtime/device_profile.cpp);
// "word" below is word_t, B = WORD_BITS bits. The K order inside the words (dense (c, ky, kx) or
// channel-packed (ky, kx, cw)) is chosen per layer by the host and is the same for filters and patches (see
// im2col_pack.cl); this kernel only needs bits beyond K (tails) to be zero in both, so they xor to 0.
//
// Reads:
//   filters   packed filter matrix in blocks of filter_row channels, each block k-major: word w of channel
//             o at filters[filter_start(o, Kw) + w * filter_row] (below), packed once on the host in the
//             layer's K order; tail bits and rows o >= M (= C_OUT) up to M_pad (a multiple of the tile's
//             rows) are 0. The Global variant's blocks are FILTER_BLOCK (8) channels: a work-item's TM
//             channels are one block, whose words it reads front to back, one stream a CPU's prefetcher
//             follows (in one k-major matrix each step of K was a row of M_pad words further, a new 4 KiB
//             page per step at 512 channels; figures in filter_layout.hpp). The Local variant's buffer is
//             one block, k-major, filter_row >= M_pad an odd number of 64-byte lines where M_pad is an even
//             one, so that the lines of successive words do not all fall into one set of a CPU's cache.
//   patches   k-major packed patch matrix patches[w * P_pad + p] (word) written by im2col_pack.cl in the same bit
//             order; columns p >= P up to P_pad (a multiple of the tile's columns) are 0.
//   k-major patch rows make the loads of adjacent work-items contiguous.
// Writes:
//   y         float NCHW [N, M, OH, OW]. Column p of this chunk is image n0 + p / per_image, position
//             row_offset + p % per_image within the image (row_offset = oy0*OW); 64-bit offsets.
//             Interior positions (every tap in bounds) and all positions of a layer without the pad fold
//             (correct = 0: no pad taps, or v = +-1, where the packing kernel wrote pad taps as the bit of v)
//             get G = K - 2 * popcounts, the exact integer 2P - B (- S for v = -1 packed as bit 0).
//             Pad fold (correct = 1: the layer has pad taps and v is not +-1): the packing kernel gave every
//             pad tap the bit 0 (real -1), so G = (2P - B) - S with S = sum of w_real over the pad taps; the
//             store writes border positions as fma(v, (float)S, (float)(G + S)) = fmaf(v, S, 2P - B), the
//             reference's value with one rounding. Interior positions stay the plain store (in a run that
//             folds, they take the same fma with S = 0, which gives G exactly).
//   s_table   (read only with correct = 1) int [C_OUT][row_classes][column_classes], computed on the host
//             from the per-channel summed-area table of w_sum[o][ky][kx] = sum over c of w_real: S of every
//             class of border position. The in-bounds taps of a window form a rectangle of (ky, kx) whose
//             rows depend on oy only and columns on ox only, so positions fall into classes: rows above the
//             interior (oy < oy_lo) one class each, the interior rows one class, rows below (oy >= oy_hi)
//             one class each; columns likewise. One table read per border output value, no division.
//             Then, from entry C_OUT * row_classes * column_classes on, int [OH][OW]: the class of every
//             output position (row class * column_classes + column class; the interior's S is 0), which the
//             Global variant's runs read with one vector load per RUN_LANES columns.
//   Border positions: outside the interior [oy_lo, oy_hi) x [ox_lo, ox_hi) (host-computed, possibly empty).
//   The Global variant's usual block, TN contiguous columns of one image (in one output row or across
//   rows: positions are contiguous in an NCHW plane), is one run of TN floats per channel row, stored 8
//   (or 4) columns at a time, its border columns folded on the same vectors (K-light layers such as a 3-channel
//   first layer are bound by these stores); other blocks (across images, the last partial block, the Local
//   variant's strided columns) store column by column. Pad taps thus add work only in the GEMM's border
//   stores: no extra kernel, no read-modify-write of the output.
//
// Variants (one program per configuration, -DLOCAL_VARIANT=0/1 -DWG=.. -DTM=.. -DTN=.. -DKT=.. -DWORD_BITS=..):
//   2-D NDRange, global (P_pad / TN, M_pad / TM), local (WG, WG); each work-item accumulates a TM x TN block of
//   popcounts in registers. A work-group covers TILE_M = WG*TM output channels by TILE_N = WG*TN positions.
//   LOCAL_VARIANT 0 (Global, Mali: "local" memory is ordinary global memory there): each work-item reads its
//     TM filter words and TN patch words straight from global memory at every k step; its TN columns are
//     contiguous (p0 = global_id(0) * TN), so the loads are vload4s of adjacent blocks, and so are the stores
//     of 8 (or 4) columns of one image (vstore8, vstore4). No __local, no barriers; a block wholly beyond P or
//     M returns at once.
//   LOCAL_VARIANT 1 (Local, on-chip local memory): per step the work-group stages a KT x TILE_M block of filters
//     and a KT x TILE_N block of patches in __local (coalesced loads, words w >= Kw are zero and skipped),
//     then each work-item reads rows lid1 + i*WG and columns lid0 + j*WG (adjacent work-items, adjacent
//     banks).
// Both variants add the same integers, so their results are identical.

// Defaults only for compiling this file on its own (offline compilers, syntax checks); the runtime always
// passes its own values from src/runtime/device_profile.cpp.
#if !defined(LOCAL_VARIANT) && !defined(WG) && !defined(TM) && !defined(TN) && !defined(KT) && !defined(WORD_BITS)
#define LOCAL_VARIANT 0
#define WG 8
#define TM 4
#define TN 4
#define KT 8
#define WORD_BITS 32
#define FILTER_BLOCK 8
#endif
#if !defined(LOCAL_VARIANT) || !defined(WG) || !defined(TM) || !defined(TN) || !defined(KT) || !defined(WORD_BITS)
#error "xnor_gemm.cl needs all of -DLOCAL_VARIANT -DWG -DTM -DTN -DKT -DWORD_BITS, or none"
#endif
#if WORD_BITS == 64
typedef ulong word_t;
typedef ulong4 word4_t;
typedef ulong8 word8_t;
#elif WORD_BITS == 32
typedef uint word_t;
typedef uint4 word4_t;
typedef uint8 word8_t;
#else
#error "WORD_BITS must be 32 or 64"
#endif

#define TILE_M (WG * TM)
#define TILE_N (WG * TN)
// Popcounts are summed in the word's own width: PoCL's CPU code turns a 64-bit popcount into a vector
// sequence whose sums come out as 64-bit lanes, and narrowing them to 32 bits at every step took 2 of its 12
// instructions per vector (xnor_gemm_fused ~17% faster on Bi-Real Net-18 with 64-bit sums).
typedef word_t count_t;

// The main loops, shared by xnor_gemm and xnor_gemm_fused (macros, so both compile to the same code).
// They add to acc[TM][TN] the popcounts of the filter and patch words of K: XOR_POPCOUNT_BLOCK counts into
// acc, or where BLOCK_SUMS declares wider sums into those, which ADD_BLOCK_SUMS adds to acc after the loop.
// n consecutive words from src into dst[0..n): as vload4s where n is a multiple of 4.
#define LOAD_WORDS_BY_4(dst, src, n)                    \
  _Pragma("unroll") for (int k_ = 0; k_ < (n); k_ += 4) { \
    const word4_t t_ = vload4(0, (src) + k_);           \
    dst[k_] = t_.s0;                                    \
    dst[k_ + 1] = t_.s1;                                \
    dst[k_ + 2] = t_.s2;                                \
    dst[k_ + 3] = t_.s3;                                \
  }
#define LOAD_WORDS_BY_1(dst, src, n) _Pragma("unroll") for (int k_ = 0; k_ < (n); ++k_) dst[k_] = (src)[k_];
#if TM % 4 == 0
#define LOAD_FILTER_WORDS(a, fp) LOAD_WORDS_BY_4(a, fp, TM)
#else
#define LOAD_FILTER_WORDS(a, fp) LOAD_WORDS_BY_1(a, fp, TM)
#endif
#if TN % 4 == 0
#define LOAD_PATCH_WORDS(b, pp) LOAD_WORDS_BY_4(b, pp, TN)
#else
#define LOAD_PATCH_WORDS(b, pp) LOAD_WORDS_BY_1(b, pp, TN)
#endif
// -DNATIVE_POPCOUNT (PoCL on an x86 CPU with AVX-512 VPOPCNTDQ; src/runtime/device_profile.cpp decides):
// PoCL compiles for such CPUs as for ones without a vector popcount instruction, so `popcount` becomes a
// nibble-table sequence of 9 vector instructions per 4 words; one VPOPCNTQ (VPOPCNTD for 32-bit words)
// counts the bits of 4 or 8 words. GNU inline assembly, compiled only for that device.
#ifdef NATIVE_POPCOUNT
#if WORD_BITS == 64
#define VPOPCNT "vpopcntq"
#else
#define VPOPCNT "vpopcntd"
#endif
static inline word4_t popcount4_native(const word4_t x) {
  word4_t r;
  __asm__(VPOPCNT " %1, %0" : "=v"(r) : "v"(x));
  return r;
}
static inline word8_t popcount8_native(const word8_t x) {
  word8_t r;
  __asm__(VPOPCNT " %1, %0" : "=v"(r) : "v"(x));
  return r;
}
#endif
#if defined(NATIVE_POPCOUNT) && TN % 8 == 0
// 8 patch words at a time against each filter word, summed in 8-word vectors (one register each) until the
// block's loop ends. Counts added lane by lane to the scalar accumulators made PoCL's vectorizer (256-bit
// vectors by preference on these CPUs) keep each sum as two 4-word halves, one extract more per count, and
// the 8-word code did no better than the 4-word one. (TN 2, a tuning candidate, keeps `popcount`.)
#define BLOCK_SUMS                                                             \
  word8_t sums_[TM][TN / 8];                                                   \
  _Pragma("unroll") for (int i_ = 0; i_ < TM; ++i_) {                          \
    _Pragma("unroll") for (int j_ = 0; j_ < TN / 8; ++j_) sums_[i_][j_] = 0; \
  }
#define XOR_POPCOUNT_BLOCK(a, b)                                                                    \
  _Pragma("unroll") for (int i_ = 0; i_ < TM; ++i_) {                                               \
    _Pragma("unroll") for (int j_ = 0; j_ < TN; j_ += 8) {                                          \
      const word8_t run_ = (word8_t)(b[j_], b[j_ + 1], b[j_ + 2], b[j_ + 3], b[j_ + 4], b[j_ + 5], \
                                     b[j_ + 6], b[j_ + 7]);                                         \
      sums_[i_][j_ / 8] += popcount8_native(a[i_] ^ run_);                                          \
    }                                                                                               \
  }
#define ADD_BLOCK_SUMS                                  \
  _Pragma("unroll") for (int i_ = 0; i_ < TM; ++i_) {   \
    _Pragma("unroll") for (int j_ = 0; j_ < TN; j_ += 8) { \
      const word8_t n_ = sums_[i_][j_ / 8];             \
      acc[i_][j_] += n_.s0;                             \
      acc[i_][j_ + 1] += n_.s1;                         \
      acc[i_][j_ + 2] += n_.s2;                         \
      acc[i_][j_ + 3] += n_.s3;                         \
      acc[i_][j_ + 4] += n_.s4;                         \
      acc[i_][j_ + 5] += n_.s5;                         \
      acc[i_][j_ + 6] += n_.s6;                         \
      acc[i_][j_ + 7] += n_.s7;                         \
    }                                                   \
  }
#elif defined(NATIVE_POPCOUNT) && TN % 4 == 0
#define BLOCK_SUMS
#define ADD_BLOCK_SUMS
#define XOR_POPCOUNT_BLOCK(a, b)                                                                    \
  _Pragma("unroll") for (int i_ = 0; i_ < TM; ++i_) {                                               \
    _Pragma("unroll") for (int j_ = 0; j_ < TN; j_ += 4) {                                          \
      const word4_t n_ = popcount4_native(a[i_] ^ (word4_t)(b[j_], b[j_ + 1], b[j_ + 2], b[j_ + 3])); \
      acc[i_][j_] += n_.s0;                                                                         \
      acc[i_][j_ + 1] += n_.s1;                                                                     \
      acc[i_][j_ + 2] += n_.s2;                                                                     \
      acc[i_][j_ + 3] += n_.s3;                                                                     \
    }                                                                                               \
  }
#else
#define BLOCK_SUMS
#define ADD_BLOCK_SUMS
#define XOR_POPCOUNT_BLOCK(a, b)                          \
  _Pragma("unroll") for (int i_ = 0; i_ < TM; ++i_) {     \
    _Pragma("unroll") for (int j_ = 0; j_ < TN; ++j_) acc[i_][j_] += (count_t)popcount(a[i_] ^ b[j_]); \
  }
#endif

// Global variant: `steps` words of K read straight from global memory through fp (channel o0's words) and pp
// (patches + p0); adjacent work-items load adjacent blocks of patch words.
#define ACCUMULATE_GLOBAL(steps)             \
  {                                          \
    BLOCK_SUMS                               \
    for (int w_ = 0; w_ < (steps); ++w_) {   \
      word_t a_[TM];                         \
      word_t b_[TN];                         \
      LOAD_FILTER_WORDS(a_, fp)              \
      LOAD_PATCH_WORDS(b_, pp)               \
      XOR_POPCOUNT_BLOCK(a_, b_)             \
      fp += filter_row;                      \
      pp += P_pad;                           \
    }                                        \
    ADD_BLOCK_SUMS                           \
  }

// Where channel o (>= 0) has its first word in the filter buffer (see filters above); word w is filter_row * w
// further. The Global variant's blocks are FILTER_BLOCK channels (-DFILTER_BLOCK from the host, which also
// passes it as filter_row there): a constant, so the block's start is a shift and a mask. A work-item's TM
// channels must lie in one block, and xnor_gemm_bits reads its 32 channels as vectors of 8.
#if LOCAL_VARIANT == 0
#if !defined(FILTER_BLOCK) || FILTER_BLOCK % 8 != 0 || FILTER_BLOCK % TM != 0
#error "the Global variant needs -DFILTER_BLOCK, a multiple of 8 and of TM"
#endif
inline ulong filter_start(const int o, const int Kw) {
  const uint u = (uint)o;
  return (ulong)(u / FILTER_BLOCK) * (ulong)Kw * FILTER_BLOCK + (ulong)(u % FILTER_BLOCK);
}
#else
inline ulong filter_start(const int o, const int Kw) {
  (void)Kw;
  return (ulong)o;
}
#endif

// A work-item's TM x TN accumulators, zeroed.
#define ZERO_ACCUMULATORS(acc)                                                          \
  _Pragma("unroll") for (int i_ = 0; i_ < TM; ++i_) {                                   \
    _Pragma("unroll") for (int j_ = 0; j_ < TN; ++j_) acc[i_][j_] = 0u;                 \
  }

// The fused GEMMs' Global block: first column p0 and channel o0, acc summed over K (steps_k = 0 for a block
// in the tile padding, which stores nothing; it does not return, so that every work-item reaches the fused
// packing's barrier). p0_of places the block that starts at p_start: as it is (xnor_gemm_fused), or with
// the last block moved left to end at P, overlapping the one before it (xnor_gemm_fused_runs, see there).
#define FIRST_COLUMN_AS_IS(p) (p)
#define LAST_BLOCK_OVERLAPS(p) min((p), P - TN)
#define FUSED_GLOBAL_BLOCK(p0_of)                                   \
  const int p_start = (int)get_global_id(0) * TN;                   \
  const int p0 = p0_of(p_start);                                    \
  const int o0 = (int)get_global_id(1) * TM;                        \
  const int steps_k = (p_start < P && o0 < M) ? Kw : 0;             \
  __global const word_t* fp = filters + filter_start(o0, Kw);       \
  __global const word_t* pp = patches + p0;                         \
  ACCUMULATE_GLOBAL(steps_k);

// Local variant: per step the work-group (work-item `linear_id` of WG*WG) stages KT words of a TILE_M x
// TILE_N tile in As and Bs (coalesced loads from the one k-major block of filters; words w >= Kw are
// zero), then each work-item reads rows lid1 + i*WG and columns lid0 + j*WG. Rows kk >= Kw - kb hold zeros
// and are skipped, so a small K (a 3-channel first layer has Kw = 3) does not pay for KT words per step.
// Every work-item reaches the barriers.
#define ACCUMULATE_LOCAL(linear_id)                                                                   \
  {                                                                                                   \
  BLOCK_SUMS                                                                                          \
  for (int kb = 0; kb < Kw; kb += KT) {                                                               \
    for (int index = (linear_id); index < KT * TILE_M; index += WG * WG) {                            \
      const int kk = index / TILE_M;                                                                  \
      const int col = index - kk * TILE_M;                                                            \
      const int w = kb + kk;                                                                          \
      As[kk][col] = w < Kw ? filters[(ulong)w * (ulong)filter_row + (ulong)(group_o0 + col)] : 0;          \
    }                                                                                                 \
    for (int index = (linear_id); index < KT * TILE_N; index += WG * WG) {                            \
      const int kk = index / TILE_N;                                                                  \
      const int col = index - kk * TILE_N;                                                            \
      const int w = kb + kk;                                                                          \
      Bs[kk][col] = w < Kw ? patches[(ulong)w * (ulong)P_pad + (ulong)(group_p0 + col)] : 0;          \
    }                                                                                                 \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                     \
    const int steps = min(KT, Kw - kb);                                                               \
    for (int kk = 0; kk < steps; ++kk) {                                                              \
      word_t a_[TM];                                                                                  \
      word_t b_[TN];                                                                                  \
      _Pragma("unroll") for (int i_ = 0; i_ < TM; ++i_) a_[i_] = As[kk][lid1 + i_ * WG];              \
      _Pragma("unroll") for (int j_ = 0; j_ < TN; ++j_) b_[j_] = Bs[kk][lid0 + j_ * WG];              \
      XOR_POPCOUNT_BLOCK(a_, b_)                                                                      \
    }                                                                                                 \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                     \
  }                                                                                                   \
  ADD_BLOCK_SUMS                                                                                      \
  }

// The layer's padding geometry for the pad fold (see the header).
typedef struct {
  float v;
  __global const int* s_table;
  int OW, oy_lo, oy_hi, ox_lo, ox_hi, row_classes, column_classes;
} pad_fold;

// A pad_fold named `name` from the GEMM kernels' arguments of the same names (every GEMM kernel has them).
#define PAD_FOLD_FROM_ARGUMENTS(name) \
  pad_fold name;                      \
  name.v = v;                         \
  name.s_table = s_table;             \
  name.OW = OW;                       \
  name.oy_lo = oy_lo;                 \
  name.oy_hi = oy_hi;                 \
  name.ox_lo = ox_lo;                 \
  name.ox_hi = ox_hi;                 \
  name.row_classes = row_classes;     \
  name.column_classes = column_classes

// For output position (oy, ox): whether it is a border position and, if so, its class in the S table (see
// the header): rows oy < oy_lo are classes 0 .. oy_lo-1, the interior rows class oy_lo, rows oy >= oy_hi
// classes oy_lo+1 .. (likewise columns). No division.
inline int border_class(const pad_fold* f, const int oy, const int ox, int* cls) {
  if (oy >= f->oy_lo && oy < f->oy_hi && ox >= f->ox_lo && ox < f->ox_hi) return 0;
  const int ry = oy < f->oy_lo ? oy : (oy < f->oy_hi ? f->oy_lo : f->oy_lo + 1 + (oy - f->oy_hi));
  const int rx = ox < f->ox_lo ? ox : (ox < f->ox_hi ? f->ox_lo : f->ox_lo + 1 + (ox - f->ox_hi));
  *cls = ry * f->column_classes + rx;
  return 1;
}

// The value of output channel o at a position: G, or at a border position under the pad fold
// fma(v, S, G + S) with S read from o's S table.
inline float folded(const pad_fold* f, const int G, const int o, const int border, const int cls) {
  if (!border) return (float)G;
  const int S = f->s_table[(ulong)o * (ulong)f->row_classes * (ulong)f->column_classes + (ulong)cls];
  return fma(f->v, (float)S, (float)(G + S));
}

#if TN % 4 == 0
// A run's stores go RUN_LANES columns at a time: 8 where TN allows (one 256-bit vector per 8 values on
// CPUs; with 4 at a time the epilogue of xnor_gemm_fused_runs took about half its samples in Bi-Real
// Net-18 on PoCL, whose stage-1 K is only 9 words), else 4. run_int/run_float hold one group; RUN_OF(e)
// lists e(0) .. e(RUN_LANES - 1).
#if TN % 8 == 0
#define RUN_LANES 8
typedef int8 run_int;
typedef float8 run_float;
#define convert_run_float convert_float8
#define vload_run vload8
#define vstore_run vstore8
#define RUN_OF(e) (e(0), e(1), e(2), e(3), e(4), e(5), e(6), e(7))
#else
#define RUN_LANES 4
typedef int4 run_int;
typedef float4 run_float;
#define convert_run_float convert_float4
#define vload_run vload4
#define vstore_run vstore4
#define RUN_OF(e) (e(0), e(1), e(2), e(3))
#endif

// The run helpers below are static, with no restrict on their pointers: PoCL inlines a static function
// called once, where it compiled the plain `inline` ones as calls that pass acc through memory (perf on
// Bi-Real Net-18: store_run_fused and image_run were a fifth of the fused GEMM's samples, gone once
// inlined); restrict parameters of an inlined function become llvm.experimental.noalias.scope.decl, which
// Oclgrind 21.10 cannot run (the kernels' own parameters keep theirs).
// Whether the Global variant's block of TN columns from p0 (p0 + TN <= P) lies in one image, so that each
// channel row's TN values are one contiguous run of y. `first`: the run's start as the offset of the
// image's channel 0 from y (row_offset: the chunk's first position). Under the pad fold, cls[j] is column
// j's class in the S tables (interior columns too: S is 0 there), read from the tables' per-position
// classes, and *folds whether any column is on the border; without it cls is unset and unread.
static inline int image_run(const int p0, const int per_image, const int M, const int n0, const ulong OHW,
                            const ulong row_offset, const int correct, const pad_fold* f, ulong* first,
                            int cls[TN], int* folds) {
  const int image = p0 / per_image;
  const int within = p0 - image * per_image;
  *first = (ulong)(n0 + image) * (ulong)M * OHW + row_offset + (ulong)within;
  *folds = 0;
  if (within + TN > per_image) return 0;
  if (correct) {
    const ulong classes = (ulong)f->row_classes * (ulong)f->column_classes;
    __global const int* position_classes = f->s_table + (ulong)M * classes + row_offset + (ulong)within;
    const run_int interior = (run_int)(f->oy_lo * f->column_classes + f->ox_lo);
#pragma unroll
    for (int j = 0; j < TN; j += RUN_LANES) {
      const run_int c = vload_run(0, position_classes + j);
      vstore_run(c, 0, cls + j);
      *folds |= any(c != interior);
    }
  }
  return 1;
}

// Columns j .. j+RUN_LANES-1 of accumulator row i (channel o) of a run from image_run: the floats folded()
// gives, on one vector. Interior columns read their class's S, which is 0, and fma(v, 0, G) is G exactly
// (pad_value is finite, so v * 0 is +-0, and G + -0 is G, +0 for G = 0), so every column takes the same
// operations.
static inline run_float run_values(const count_t acc[TM][TN], const int i, const int j, const int K,
                                   const int o, const pad_fold* f, const int cls[TN], const int folds) {
#define RUN_G(l) (K - 2 * (int)acc[i][j + (l)])
  const run_int g = (run_int)RUN_OF(RUN_G);
#undef RUN_G
  if (!folds) return convert_run_float(g);
  __global const int* table = f->s_table + (ulong)o * (ulong)f->row_classes * (ulong)f->column_classes;
#define RUN_S(l) (table[cls[j + (l)]])
  const run_int s = (run_int)RUN_OF(RUN_S);
#undef RUN_S
  return fma((run_float)(f->v), convert_run_float(s), convert_run_float(g + s));
}

// A run from image_run, as xnor_gemm stores it. Rows o >= M (tile padding) are skipped.
static inline void store_run(__global float* y, const count_t acc[TM][TN], const int o_first, const int M,
                             const int K, const ulong first, const ulong OHW, const pad_fold* f,
                             const int cls[TN], const int folds) {
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int o = o_first + i;
    if (o >= M) continue;
    __global float* row = y + first + (ulong)o * OHW;
#pragma unroll
    for (int j = 0; j < TN; j += RUN_LANES) {
      // Only 4-byte aligned: vstoreN takes any element-aligned address.
      vstore_run(run_values(acc, i, j, K, o, f, cls, folds), 0, row + j);
    }
  }
}
#endif

// The stores of the blocks that are not one run per channel row (see the header), column by column. Quotients
// and remainders are written out (a div/rem pair makes LLVM emit `freeze`, which Oclgrind 21.10's
// uninitialized-value checker cannot execute).
// The plain store (no pad fold): G for every column.
inline void store_block(__global float* restrict y, const count_t acc[TM][TN], const int o_first,
                        const int o_step, const int p_first, const int p_step, const int M, const int K,
                        const int P, const int per_image, const int n0, const ulong OHW,
                        const ulong row_offset) {
#pragma unroll
  for (int j = 0; j < TN; ++j) {
    const int p = p_first + j * p_step;
    if (p >= P) continue;
    const int image = p / per_image;
    const int n = n0 + image;
    const ulong column = row_offset + (ulong)(p - image * per_image);
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int o = o_first + i * o_step;
      if (o >= M) continue;
      const ulong index = ((ulong)n * (ulong)M + (ulong)o) * OHW + column;
      y[index] = (float)(K - 2 * (int)acc[i][j]);
    }
  }
}

// The store under the pad fold: border columns folded.
inline void store_block_folded(__global float* restrict y, const count_t acc[TM][TN], const int o_first,
                               const int o_step, const int p_first, const int p_step, const int M, const int K,
                               const int P, const int per_image, const int n0, const ulong OHW,
                               const int oy0, const pad_fold* f) {
  const int OW = f->OW;
#pragma unroll
  for (int j = 0; j < TN; ++j) {
    const int p = p_first + j * p_step;
    if (p >= P) continue;
    const int image = p / per_image;
    const int n = n0 + image;
    const int within = p - image * per_image;
    const int ry = within / OW;
    const int ox = within - ry * OW;
    const int oy = oy0 + ry;
    const ulong column = (ulong)oy * (ulong)OW + (ulong)ox;
    int cls = 0;
    const int border = border_class(f, oy, ox, &cls);
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int o = o_first + i * o_step;
      if (o >= M) continue;
      const ulong index = ((ulong)n * (ulong)M + (ulong)o) * OHW + column;
      y[index] = folded(f, K - 2 * (int)acc[i][j], o, border, cls);
    }
  }
}

__kernel __attribute__((reqd_work_group_size(WG, WG, 1))) void xnor_gemm(
    __global const word_t* restrict filters, __global const word_t* restrict patches, __global float* restrict y,
    const int M, const int filter_row, const int Kw, const int K, const int P, const int P_pad, const int per_image,
    const int n0, const ulong OHW, const ulong row_offset, const int correct, const float v,
    __global const int* restrict s_table, const int OW, const int oy0, const int oy_lo, const int oy_hi,
    const int ox_lo, const int ox_hi, const int row_classes, const int column_classes) {
  count_t acc[TM][TN];
  ZERO_ACCUMULATORS(acc)
  // The pad fold's geometry (used only where correct = 1: a branch uniform over the NDRange).
  PAD_FOLD_FROM_ARGUMENTS(fold);

#if LOCAL_VARIANT == 0
  const int p0 = (int)get_global_id(0) * TN;
  const int o0 = (int)get_global_id(1) * TM;
  // A block entirely in the tile padding has nothing to store (no barriers in this variant, so it may leave;
  // a 1x1 layer with P = 1 would otherwise compute TILE_N columns).
  if (p0 >= P || o0 >= M) return;
  __global const word_t* fp = filters + filter_start(o0, Kw);
  __global const word_t* pp = patches + p0;
  ACCUMULATE_GLOBAL(Kw);
  const int o_first = o0, o_step = 1, p_first = p0, p_step = 1;
#if TN % 4 == 0
  // The usual block, one run per channel row, stored here: PoCL keeps acc in registers for it, where the
  // calls below take about twice as long (the spec layer's GEMM is bound by these stores).
  ulong first;
  int cls[TN], folds;
  if (p0 + TN <= P &&
      image_run(p0, per_image, M, n0, OHW, row_offset, correct, &fold, &first, cls, &folds)) {
    store_run(y, acc, o0, M, K, first, OHW, &fold, cls, folds);
    return;
  }
#endif
#else
  __local word_t As[KT][TILE_M];
  __local word_t Bs[KT][TILE_N];
  const int lid0 = (int)get_local_id(0);
  const int lid1 = (int)get_local_id(1);
  const int linear = lid1 * WG + lid0;
  const int group_p0 = (int)get_group_id(0) * TILE_N;
  const int group_o0 = (int)get_group_id(1) * TILE_M;
  ACCUMULATE_LOCAL(linear);
  const int o_first = group_o0 + lid1, o_step = WG, p_first = group_p0 + lid0, p_step = WG;
#endif
  if (correct) {
    store_block_folded(y, acc, o_first, o_step, p_first, p_step, M, K, P, per_image, n0, OHW, oy0, &fold);
  } else {
    store_block(y, acc, o_first, o_step, p_first, p_step, M, K, P, per_image, n0, OHW, row_offset);
  }
}

// ---- xnor_gemm_fused: the same GEMM with an output epilogue (BinaryConvolution::Output) -------------------
//
// The accumulation is xnor_gemm's (same tiles, same integers, the same ACCUMULATE_* macros), then each value
// y (G, or the pad fold's fma at border positions, exactly the float xnor_gemm would store) goes out as one of:
//   out_mode 0: y (float NCHW, as xnor_gemm);
//   out_mode 1: fma(scale[o], y, bias[o]) (folded batch-norm, one rounding; float NCHW);
//   out_mode 3: fma(scale[o], y, bias[o]) + shortcut[index] (a residual Add after the batch-norm, read at the
//     output's own index: no separate pass over memory; float NCHW);
//   out_mode 2: packed bits (include/xnorcl/packed.hpp): bit o%32 of word o/32 of pixel (n, oy, ox) in
//     words[((n*OH + oy)*OW + ox)*Cw_out + o/32] is the rule of channel o applied to y, given as an interval
//     of order keys (keys[o] = lo, modes[o] = count; see fused_rule_bit). Only the Local variant with
//     TILE_M % 32 == 0 (FUSED_PACKS; elsewhere the host packs with xnor_gemm_bits below): a work-group covers
//     whole words of channels. Each work-item writes the bit of each of its TM x TN values as a byte into the
//     work-group's __local flags[TILE_N][TILE_M] (every byte of a column p < P has exactly one writer;
//     channels o >= M give 0, the words' tail bits); after one barrier, work-items assemble whole words
//     from 32 bytes and store them: each output word has exactly one writer, no atomics, deterministic.
//   In the Global variant a block beyond P or M skips the accumulation rather than returning (the loop is
//   shared with the Local variant's structure; it stores nothing for such a block).
// In modes 0, 1 and 3 the value is first clamped: value < clamp_lo ? clamp_lo : (value > clamp_hi ? clamp_hi :
// value) (BinaryConvolution::Options::clamp_low/high, OpenVINO Clamp; -INFINITY and +INFINITY: none, the value
// unchanged). Mode 2's rules have the clamp composed in by the host (clamp is monotone).
// also_packed (BinaryConvolution::Options::also_packed; modes 0, 1 and 3; FUSED_PACKS configurations only,
//   elsewhere the host thresholds the stored output in a pass of its own): each stored value's bit under the
//   rule of its channel (keys, modes as in mode 2) goes to words as well, in mode 2's layout, through the
//   __local flags. (ORing bits into words with atomics instead would put atomic_or into this kernel, which
//   alone keeps PoCL from running its work-items as vector lanes.)
// Output buffers: y is written in modes 0/1/3 only, words in mode 2 and with also_packed only (the host passes
// a buffer that is never written for the other); shortcut is read in mode 3 only.

// The bit of a value under a rule, branch-free: with k the order key of the value (threshold_pack.cl's key:
// unsigned order of keys is IEEE order, -0 == +0, NaN is 0), every rule is "k in an interval of keys",
// tested as (k - lo[o]) < count[o] in unsigned arithmetic. The host derives (lo, count) from the rule's
// threshold key t: Greater: keys t+1 .. 2^32-1 (lo = t+1, count = 2^32-1-t); Less: keys 1 .. t-1 (lo = 1,
// count = t-1: NaN's key 0 is excluded); AlwaysOne: keys 1 .. 2^32-1; AlwaysZero: count 0. NaN (k = 0)
// gives 0 under every rule: 0 - lo wraps to at least count.
inline uint fused_order_key(const uint u) {
  const uint magnitude = u & 0x7fffffffu;
  const uint v = magnitude == 0u ? 0u : u;  // -0 == +0
  const uint key = (v & 0x80000000u) ? ~v : (v | 0x80000000u);
  return magnitude > 0x7f800000u ? 0u : key;  // NaN
}
inline uint fused_rule_bit(const float value, const uint lo, const uint count) {
  return (fused_order_key(as_uint(value)) - lo) < count ? 1u : 0u;
}

#define FUSED_WORDS_PER_TILE (TILE_M / 32)
// Whether this configuration of xnor_gemm_fused writes packed words (mode 2): the Local variant with whole
// words of channels per tile. Elsewhere the host packs with xnor_gemm_bits.
#define FUSED_PACKS (LOCAL_VARIANT == 1 && TILE_M % 32 == 0)

#if LOCAL_VARIANT == 0 && TN % 4 == 0
// The Global variant's usual block (a run from image_run) in modes 0, 1 and 3 without packed bits. Per
// channel row the epilogue runs on vectors of RUN_LANES columns (pad fold, shortcut load, store), the same
// operations per value as the general path below, which PoCL runs one value at a time (there it was about
// 40% of the fused GEMM's time on Bi-Real Net-18's 3x3 convolutions).
static inline void store_run_fused(__global float* y, const count_t acc[TM][TN], const int o_first,
                                   const int M, const int K, const ulong first, const ulong OHW,
                                   const pad_fold* f, const int cls[TN], const int folds, const int out_mode,
                                   __global const float* scale, __global const float* bias,
                                   __global const float* shortcut, const float clamp_lo,
                                   const float clamp_hi) {
  // A layer without a clamp (both bounds infinite, which change no value) skips its compares and selects:
  // on PoCL the run epilogue's GEMMs of Bi-Real Net-18 and the binary ResNet-18 took 3-9% less time.
  const bool clamped = clamp_lo != -INFINITY || clamp_hi != INFINITY;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int o = o_first + i;
    if (o >= M) continue;
    const ulong row = first + (ulong)o * OHW;
#pragma unroll
    for (int j = 0; j < TN; j += RUN_LANES) {
      const run_float g = run_values(acc, i, j, K, o, f, cls, folds);
      const run_float value = clamped ? select(select(g, (run_float)(clamp_hi), g > (run_float)(clamp_hi)),
                                               (run_float)(clamp_lo), g < (run_float)(clamp_lo))
                                      : g;
      run_float stored = out_mode == 0 ? value : fma((run_float)(scale[o]), value, (run_float)(bias[o]));
      if (out_mode == 3) stored += vload_run(0, shortcut + row + j);
      vstore_run(stored, 0, y + row + j);
    }
  }
}
#endif

// The scalars of the GEMMs with an epilogue, passed by value as one struct argument: PoCL's launch costs
// about 0.2 us per kernel argument whatever its type (64 launches of a kernel with 29 int arguments took 6-8
// us more each than with one), paid between one kernel's end and the next one's start. gemm_scalars is the
// part they share, the layer and chunk and the pad fold; the host's structs of the same names in CamelCase
// (src/ops/binary_convolution/xnor_gemm.cpp) have the same fields in the same order, 64-bit ones first.
typedef struct {
  ulong OHW, row_offset;
  int M, filter_row, Kw, K, P, P_pad, per_image, n0, correct;
  float v;
  int OW, oy0, oy_lo, oy_hi, ox_lo, ox_hi, row_classes, column_classes, Cw_out;
} gemm_scalars;
// The shared scalars under their own names, so that the kernel bodies read them as parameters.
#define GEMM_SCALARS(s)                                                                                      \
  const ulong OHW = (s).OHW, row_offset = (s).row_offset;                                                  \
  const int M = (s).M, filter_row = (s).filter_row, Kw = (s).Kw, K = (s).K, P = (s).P, P_pad = (s).P_pad;  \
  const int per_image = (s).per_image, n0 = (s).n0, correct = (s).correct;                                 \
  const float v = (s).v;                                                                                   \
  const int OW = (s).OW, oy0 = (s).oy0, oy_lo = (s).oy_lo, oy_hi = (s).oy_hi, ox_lo = (s).ox_lo;           \
  const int ox_hi = (s).ox_hi, row_classes = (s).row_classes, column_classes = (s).column_classes;         \
  const int Cw_out = (s).Cw_out
// xnor_gemm_fused's and xnor_gemm_fused_runs's (the host sets the same arguments for both).
typedef struct {
  gemm_scalars gemm;
  int out_mode;
  float clamp_lo, clamp_hi;
  int also_packed;
} fused_gemm_scalars;
#define FUSED_GEMM_PARAMETERS                                                                              \
  __global const word_t* restrict filters, __global const word_t* restrict patches,                        \
      __global float* restrict y, __global uint* restrict words, __global const int* restrict s_table,     \
      __global const float* restrict scale, __global const float* restrict bias,                           \
      __global const uint* restrict keys, __global const uint* restrict modes,                             \
      __global const float* restrict shortcut, const fused_gemm_scalars scalars
#define FUSED_GEMM_SCALARS                                                                              \
  GEMM_SCALARS(scalars.gemm);                                                                          \
  const int out_mode = scalars.out_mode, also_packed = scalars.also_packed;                            \
  const float clamp_lo = scalars.clamp_lo, clamp_hi = scalars.clamp_hi

__kernel __attribute__((reqd_work_group_size(WG, WG, 1))) void xnor_gemm_fused(
    FUSED_GEMM_PARAMETERS) {
  FUSED_GEMM_SCALARS;
#if FUSED_PACKS
  __local uchar flags[TILE_N * TILE_M];  // [column][channel]: one bit per byte
#endif
  count_t acc[TM][TN];
  ZERO_ACCUMULATORS(acc)
  const int packs = out_mode == 2 || also_packed;  // the values' bits go to words
  PAD_FOLD_FROM_ARGUMENTS(fold);
  const int lid0 = (int)get_local_id(0);
  const int lid1 = (int)get_local_id(1);
  const int group_p0 = (int)get_group_id(0) * TILE_N;
  const int group_o0 = (int)get_group_id(1) * TILE_M;

#if LOCAL_VARIANT == 0
  FUSED_GLOBAL_BLOCK(FIRST_COLUMN_AS_IS)
  const int o_first = o0, o_step = 1, p_first = p0, p_step = 1;
#if TN % 4 == 0
  ulong first;
  int cls[TN], folds;
  if (steps_k > 0 && p0 + TN <= P && out_mode != 2 && !also_packed &&
      image_run(p0, per_image, M, n0, OHW, row_offset, correct, &fold, &first, cls, &folds)) {
    store_run_fused(y, acc, o0, M, K, first, OHW, &fold, cls, folds, out_mode, scale, bias, shortcut,
                    clamp_lo, clamp_hi);
    return;
  }
#endif
#else
  __local word_t As[KT][TILE_M];
  __local word_t Bs[KT][TILE_N];
  const int linear0 = lid1 * WG + lid0;
  const int o_first = group_o0 + lid1, o_step = WG, p_first = group_p0 + lid0, p_step = WG;
  const int lo_first = lid1, lo_step = WG, lp_first = lid0, lp_step = WG;
  ACCUMULATE_LOCAL(linear0);
#endif

  // Each column's (image, position) and, under the pad fold, its border class. The Global variant's columns
  // are contiguous: one division, then counters; the Local variant's are WG apart: divisions per column.
  // Quotients and remainders written out (a div/rem pair makes LLVM emit `freeze`, which Oclgrind 21.10
  // cannot execute).
  int image = p_first / per_image;
  int within = p_first - image * per_image;
  int ry = 0, ox = 0;
  if (correct) {
    ry = within / OW;
    ox = within - ry * OW;
  }
#pragma unroll
  for (int j = 0; j < TN; ++j) {
    const int p = p_first + j * p_step;
#if LOCAL_VARIANT == 1
    if (j > 0) {
      image = p / per_image;
      within = p - image * per_image;
      if (correct) {
        ry = within / OW;
        ox = within - ry * OW;
      }
    }
#endif
    if (p < P) {
      int border = 0, cls = 0;
      if (correct) border = border_class(&fold, oy0 + ry, ox, &cls);
      // Two bodies, the packing-only mode apart: with one body for every mode Bi-Real Net-18's Local steps
      // (shortcut and packing) ran 5-10% slower on an H200, though PoCL compiled that ~10% faster.
      if (out_mode == 2) {
#if FUSED_PACKS
#pragma unroll
        for (int i = 0; i < TM; ++i) {
          const int o = o_first + i * o_step;
          uint bit = 0u;
          if (o < M)
            bit = fused_rule_bit(folded(&fold, K - 2 * (int)acc[i][j], o, border, cls), keys[o], modes[o]);
          flags[(lp_first + j * lp_step) * TILE_M + lo_first + i * lo_step] = (uchar)bit;
        }
#endif
      } else {
        const ulong column = row_offset + (ulong)within;
#pragma unroll
        for (int i = 0; i < TM; ++i) {
          const int o = o_first + i * o_step;
          uint bit = 0u;
          if (o < M) {
            const float y_o = folded(&fold, K - 2 * (int)acc[i][j], o, border, cls);
            const float value = y_o < clamp_lo ? clamp_lo : (y_o > clamp_hi ? clamp_hi : y_o);
            const ulong index = ((ulong)(n0 + image) * (ulong)M + (ulong)o) * OHW + column;
            const float scaled = out_mode == 0 ? value : fma(scale[o], value, bias[o]);
            const float stored = out_mode == 3 ? scaled + shortcut[index] : scaled;
            y[index] = stored;
            if (also_packed) bit = fused_rule_bit(stored, keys[o], modes[o]);
          }
#if FUSED_PACKS
          if (also_packed) flags[(lp_first + j * lp_step) * TILE_M + lo_first + i * lo_step] = (uchar)bit;
#endif
        }
      }
    }
#if LOCAL_VARIANT == 0
    if (++within == per_image) {
      within = 0;
      ++image;
      ry = 0;
      ox = 0;
    } else if (correct && ++ox == OW) {
      ox = 0;
      ++ry;
    }
#endif
  }
#if FUSED_PACKS
  // Unconditional, though only the packing modes need it: PoCL turns a barrier under a branch into copies of
  // the kernel's tail, which made this kernel's compile up to 3x slower (a barrier that no work-item waits
  // at costs a GPU almost nothing).
  barrier(CLK_LOCAL_MEM_FENCE);
  if (packs) {
    for (int index = lid1 * WG + lid0; index < TILE_N * FUSED_WORDS_PER_TILE; index += WG * WG) {
      const int col = index / FUSED_WORDS_PER_TILE;
      const int wi = index - col * FUSED_WORDS_PER_TILE;
      const int p = group_p0 + col;
      const int word = group_o0 / 32 + wi;
      if (p >= P || word >= Cw_out) continue;
      uint bits = 0u;
      __local const uchar* f = flags + col * TILE_M + wi * 32;
      for (int b = 0; b < 32; ++b) bits |= (uint)f[b] << b;
      const int q_image = p / per_image;
      const int q_within = p - q_image * per_image;
      const ulong pixel = (ulong)(n0 + q_image) * OHW + row_offset + (ulong)q_within;
      words[pixel * (ulong)Cw_out + (ulong)word] = bits;
    }
  }
#endif
}

#if LOCAL_VARIANT == 0 && TN % 4 == 0
// xnor_gemm_fused for layers whose every block is a run (the Global variant's usual block, see image_run):
// the host picks it where the output is floats only (modes 0, 1 and 3, no also_packed) and either a chunk's
// positions per image are a multiple of TN (no block crosses an image or ends past P) or the chunk holds one
// image of at least TN positions. Then the block that would end past P starts at P - TN instead, so that it
// too is a whole run; the columns it shares with the block before it are computed and stored by both, the
// same values (the same sums in the same order, the same epilogue). Same arguments, same accumulation and
// the same run epilogue as xnor_gemm_fused, so the same bits; without xnor_gemm_fused's column-by-column
// path in the same function PoCL compiles the run path alone into faster code (the GEMM of a stage-1 step of
// Bi-Real Net-18, whose K is only 9 words, 10% faster; 5-6% at stages 2 and 3; the 14x14 and 7x7 layers,
// whose 196 and 49 positions are no multiple of 8, 1-13% since they run here too).
__kernel __attribute__((reqd_work_group_size(WG, WG, 1))) void xnor_gemm_fused_runs(
    FUSED_GEMM_PARAMETERS) {
  FUSED_GEMM_SCALARS;
  count_t acc[TM][TN];
  ZERO_ACCUMULATORS(acc)
  PAD_FOLD_FROM_ARGUMENTS(fold);
  FUSED_GLOBAL_BLOCK(LAST_BLOCK_OVERLAPS)
  ulong first;
  int cls[TN], folds;
  if (steps_k > 0 && image_run(p0, per_image, M, n0, OHW, row_offset, correct, &fold, &first, cls, &folds))
    store_run_fused(y, acc, o0, M, K, first, OHW, &fold, cls, folds, out_mode, scale, bias, shortcut, clamp_lo,
                    clamp_hi);
}
#endif

// ---- xnor_gemm_bits: packed output without local memory or barriers (the Global variant's) -------------
//
// Work-item (p, word) computes the 32 output channels 32*word .. 32*word + 31 of column p and writes their
// word of the packed output itself: bit i is the rule of channel o = 32*word + i applied to the value
// xnor_gemm would store (G, or the pad fold's fma at a border position); channels o >= M give 0 (tail bits).
// Where the value is the integer G (every position without the pad fold, the interior with it), the rule
// is applied as the host's equivalent interval of integers (int_lo[o], int_count[o]: the G in [-K, K] whose
// float the rule accepts): (uint)(G - lo) < count; the host pads these tables to M_pad (a multiple of 32,
// checked by the host) with empty intervals, so the 32 tests need no bound check.
// One writer per word, no __local, no barrier (a barrier makes PoCL's CPU work-group functions far slower,
// and Mali's "local" memory is global memory).
// The 32 channels are four 8-lane vectors, written out as such: PoCL's CPU compiler then keeps them in
// vector registers through the K loop and the rule tests (as scalars its SLP vectorizer shuffled them
// between layouts and the 32 tests ran as scalar compare-and-branch steps: most of a K-light layer's time).
// The filter words of a step are the same for every work-item of a row of the NDRange, the patch word is
// the work-item's own (adjacent work-items, adjacent words).
// With pool_KH > 0 (BinaryConvolution::Options::max_pool) the work-item is a pixel of the max-pooled output
// and writes the OR of the words of its window's positions (the max of +-1 values is the OR of their bits;
// OpenVINO MaxPool windows: rows py*pool_sy - pool_pt + [0, pool_KH) clipped to the output, columns
// likewise; pad positions are not taps): conv -> threshold -> pool in one launch, no unpooled words stored.
// A chunk of output rows takes the pooled rows whose windows meet it (py_first, py_count); where a chunk
// boundary cuts a window, the next chunk's launch ORs into the word (see the kernel).
// NDRange: global (P_pad, or the chunk's pooled pixels, rounded up to WG*WG; ceil(M / 32) output words),
// local (WG*WG, 1).
// Sums of 8 popcounts, in the word's width as count_t (see there).
typedef word8_t count8_t;
// Lane-wise popcount: the instruction under NATIVE_POPCOUNT (above); else built from scalar popcounts, as
// PoCL's vector popcount works in 128-bit pieces while its compiler turns these eight scalar ones into one
// 512-bit popcount sequence.
inline count8_t popcount8(const word8_t x) {
#ifdef NATIVE_POPCOUNT
  return popcount8_native(x);
#else
  return (count8_t)(popcount(x.s0), popcount(x.s1), popcount(x.s2), popcount(x.s3), popcount(x.s4),
                    popcount(x.s5), popcount(x.s6), popcount(x.s7));
#endif
}
// The rule of each of 8 G values g as an interval (lo, count): 1 where g - lo < count (unsigned), else 0.
// The unsigned test is the borrow of d - count in 64 bits: as a compare, LLVM turns the compare-shift-or of
// lanes_to_bits8 into a bitcast of an <8 x i1> vector, which Oclgrind 21.10 executes wrongly (any set lane
// sets all 8 bits).
inline uint8 interval_hits8(const int8 g, const int8 lo, const uint8 count) {
  return convert_uint8((convert_ulong8(as_uint8(g - lo)) - convert_ulong8(count)) >> 63);
}
// 0/1 lanes as bits 0..7. Lane weights from a table or a vector literal would be a non-uniform constant
// vector, which Oclgrind's uninitialized-value checker crashes on.
inline uint lanes_to_bits8(const uint8 hit) {
  return hit.s0 | hit.s1 << 1 | hit.s2 << 2 | hit.s3 << 3 | hit.s4 << 4 | hit.s5 << 5 | hit.s6 << 6 |
         hit.s7 << 7;
}

// ORs the rule results of channels o0 .. o0 + 31 at column p of the patch matrix, output position (oy, ox)
// (read only under the pad fold), into the accumulators: interior positions as 0/1 lanes of channels
// o0 + 8q .. o0 + 8q + 7 in hit[q] (turned into bits once, after a pooling window's last position), border
// positions as bits in *bits. Always inlined: with its two call sites PoCL compiled it as a call that passed
// the accumulators through memory (14% of the binary ResNet-18's samples); no restrict on its parameters,
// which Oclgrind 21.10 cannot run once inlined.
static inline __attribute__((always_inline)) void or_column(
    __global const word_t* filters, __global const word_t* patches, const int p, const int o0, const int M,
    const int filter_row, const int Kw, const int K, const int P_pad, const int correct, const int oy,
    const int ox, const pad_fold* fold, __global const uint* keys, __global const uint* modes,
    __global const int* int_lo, __global const uint* int_count, uint8* hit0, uint8* hit1, uint8* hit2,
    uint8* hit3, uint* bits) {
  count8_t acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0;
  // Channels o0 + 8q .. o0 + 8q + 7, one vector of words each (a block of the Global variant's filters).
  __global const word_t* fp0 = filters + filter_start(o0, Kw);
  __global const word_t* fp1 = filters + filter_start(o0 + 8, Kw);
  __global const word_t* fp2 = filters + filter_start(o0 + 16, Kw);
  __global const word_t* fp3 = filters + filter_start(o0 + 24, Kw);
  __global const word_t* pp = patches + p;
  for (int w = 0; w < Kw; ++w) {
    const word_t b = *pp;
    acc0 += popcount8(vload8(0, fp0) ^ b);
    acc1 += popcount8(vload8(0, fp1) ^ b);
    acc2 += popcount8(vload8(0, fp2) ^ b);
    acc3 += popcount8(vload8(0, fp3) ^ b);
    fp0 += filter_row;
    fp1 += filter_row;
    fp2 += filter_row;
    fp3 += filter_row;
    pp += P_pad;
  }
  // G = K - 2 * popcounts, lanes of channels o0 + 8q .. o0 + 8q + 7.
  const int8 g0 = K - 2 * convert_int8(acc0), g1 = K - 2 * convert_int8(acc1);
  const int8 g2 = K - 2 * convert_int8(acc2), g3 = K - 2 * convert_int8(acc3);
  int border = 0, cls = 0;
  if (correct) border = border_class(fold, oy, ox, &cls);
  if (border) {
    int g[32];
    vstore8(g0, 0, g);
    vstore8(g1, 1, g);
    vstore8(g2, 2, g);
    vstore8(g3, 3, g);
    // s_table has rows o < M only (the position classes follow them).
    for (int i = 0; i < 32 && o0 + i < M; ++i) {
      const int o = o0 + i;
      *bits |= fused_rule_bit(folded(fold, g[i], o, 1, cls), keys[o], modes[o]) << i;
    }
    return;
  }
  // The value is the integer G (exact in float): the rule as an interval of integers.
  __global const int* lo = int_lo + o0;
  __global const uint* count = int_count + o0;
  *hit0 |= interval_hits8(g0, vload8(0, lo), vload8(0, count));
  *hit1 |= interval_hits8(g1, vload8(1, lo), vload8(1, count));
  *hit2 |= interval_hits8(g2, vload8(2, lo), vload8(2, count));
  *hit3 |= interval_hits8(g3, vload8(3, lo), vload8(3, count));
}

// xnor_gemm_bits's scalars (see gemm_scalars).
typedef struct {
  gemm_scalars gemm;
  int pool_KH, pool_KW, pool_sy, pool_sx, pool_pt, pool_pl, POH, POW, OH, py_first, py_count;
} bits_gemm_scalars;
__kernel __attribute__((reqd_work_group_size(WG * WG, 1, 1))) void xnor_gemm_bits(
    __global const word_t* restrict filters, __global const word_t* restrict patches,
    __global uint* restrict words, __global const int* restrict s_table, __global const uint* restrict keys,
    __global const uint* restrict modes, __global const int* restrict int_lo,
    __global const uint* restrict int_count, const bits_gemm_scalars scalars) {
  GEMM_SCALARS(scalars.gemm);
  const int pool_KH = scalars.pool_KH, pool_KW = scalars.pool_KW, pool_sy = scalars.pool_sy;
  const int pool_sx = scalars.pool_sx, pool_pt = scalars.pool_pt, pool_pl = scalars.pool_pl;
  const int POH = scalars.POH, POW = scalars.POW, OH = scalars.OH;
  const int py_first = scalars.py_first, py_count = scalars.py_count;
  const int word = (int)get_global_id(1);
  const int o0 = word * 32;
  PAD_FOLD_FROM_ARGUMENTS(fold);
  uint8 hit0 = 0u, hit1 = 0u, hit2 = 0u, hit3 = 0u;
  uint bits = 0u;
  if (pool_KH == 0) {
    const int p = (int)get_global_id(0);
    if (p >= P) return;
    // Quotients and remainders written out (a div/rem pair makes LLVM emit `freeze`, which Oclgrind 21.10
    // cannot execute).
    const int image = p / per_image;
    const int within = p - image * per_image;
    int ry = 0, ox = 0;
    if (correct) {
      ry = within / OW;
      ox = within - ry * OW;
    }
    or_column(filters, patches, p, o0, M, filter_row, Kw, K, P_pad, correct, oy0 + ry, ox, &fold, keys, modes,
              int_lo, int_count, &hit0, &hit1, &hit2, &hit3, &bits);
    const ulong pixel = (ulong)(n0 + image) * OHW + row_offset + (ulong)within;
    words[pixel * (ulong)Cw_out + (ulong)word] = bits | lanes_to_bits8(hit0) | lanes_to_bits8(hit1) << 8 |
                                                 lanes_to_bits8(hit2) << 16 | lanes_to_bits8(hit3) << 24;
    return;
  }
  // Max-pool: work-item q is pixel px of pooled row py_first + q / POW of chunk image q / (py_count*POW); it
  // ORs the words of the positions of its window inside the chunk's rows [oy0, oy0 + per_image / OW). A
  // window cut by a chunk boundary is finished by the next chunk's launch, which ORs into the word (launches
  // run one after another); the chunk holding the window's first row (or, for an empty window, the image's
  // first chunk) stores it.
  const int q = (int)get_global_id(0);
  const int images = P / per_image;
  const int per_image_pooled = py_count * POW;
  if (q >= images * per_image_pooled) return;
  const int image = q / per_image_pooled;
  const int r = q - image * per_image_pooled;
  const int row = r / POW;
  const int px = r - row * POW;
  const int py = py_first + row;
  // Window corners in 64 bits (strides and pads may be near INT_MAX), clipped to the output: ints again.
  const long y0 = (long)py * pool_sy - pool_pt, x0 = (long)px * pool_sx - pool_pl;
  const int y_lo = (int)clamp(y0, 0l, (long)OH), y_hi = (int)clamp(y0 + pool_KH, 0l, (long)OH);
  const int x_lo = (int)clamp(x0, 0l, (long)OW), x_hi = (int)clamp(x0 + pool_KW, 0l, (long)OW);
  const int chunk_end = oy0 + per_image / OW;
  for (int oy = max(y_lo, oy0); oy < min(y_hi, chunk_end); ++oy) {
    for (int ox = x_lo; ox < x_hi; ++ox) {
      or_column(filters, patches, image * per_image + (oy - oy0) * OW + ox, o0, M, filter_row, Kw, K, P_pad,
                correct, oy, ox, &fold, keys, modes, int_lo, int_count, &hit0, &hit1, &hit2, &hit3, &bits);
    }
  }
  bits |= lanes_to_bits8(hit0) | lanes_to_bits8(hit1) << 8 | lanes_to_bits8(hit2) << 16 |
          lanes_to_bits8(hit3) << 24;
  const ulong pixel = ((ulong)(n0 + image) * (ulong)POH + (ulong)py) * (ulong)POW + (ulong)px;
  __global uint* out = words + pixel * (ulong)Cw_out + (ulong)word;
  if (y_lo >= oy0 || y_lo >= y_hi) {
    *out = bits;
  } else {
    *out |= bits;
  }
}
