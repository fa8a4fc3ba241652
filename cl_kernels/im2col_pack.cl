// SPDX-License-Identifier: Apache-2.0
// im2col with packing: reads X once, binarizes it, applies stride, dilation and padding and writes the packed
// bit patches that xnor_gemm.cl multiplies with the packed filters (Algorithm 1 of Khan et al., EUSIPCO 2018, generalised).
//
// Words: word_t is uint (-DWORD_BITS=32, GPUs) or ulong (-DWORD_BITS=64, CPUs whose scalar 64-bit popcount is
// their fastest xor-popcount, e.g. PoCL), chosen per architecture in src/runtime/device_profile.cpp; B = WORD_BITS.
//
// Inputs:
//   x          the input, NCHW ([N, C_IN, H, W]), float32 (*_f32, read as raw 32-bit patterns so that no float
//              operation can flush a subnormal) or uint8 (*_u8, converted with (float)x, exact for 0..255).
//              Batch indices count from the buffer's first image.
//   thr_keys   [C_IN] uint: the order key of each channel's threshold t_c (computed on the host with the same
//              key() as below), so that "x > t_c" is an unsigned comparison of keys: exact IEEE order, -0 == +0,
//              subnormals count as themselves even where the device flushes them; NaN input is -1.
// Output of both layouts: the k-major packed patch matrix patches[w * P_pad + p] (word_t), w in [0, Kw),
// p in [0, P_pad), that xnor_gemm.cl reads. Columns p >= P (the GEMM's tile padding) are written as 0, so the
// GEMM never reads uninitialized memory. k-major ("word w of every patch, then word w+1") makes the stores
// here and the GEMM's loads contiguous across adjacent output positions p.
//
// Two layouts of K, chosen per layer on the host (src/ops/binary_convolution/conv_layout.hpp, choose_packing):
//   Dense (c, ky, kx), used when 2*C_IN < B*ceil(C_IN/B) (few channels: a 3-channel 5x5 first layer has
//     K = 75 bits in 2-3 words, no channel padding), or when it needs at most 3/4 of the channel-packed words
//     and can be built from bit rows (32 channels in 64-bit words: 13 words per 5x5 patch instead of 25):
//     bit j (LSB = 0) of word w is k = B*w + j in the filter's flat order k = (c*KH + ky)*KW + kx;
//     Kw = ceil(K/B); bits k >= K are 0 (the host packs the filters the same way, so they xor to 0).
//     Two ways to build it, same words:
//     - bit rows (dilation_x == 1 and KW <= B, the usual case): two launches. row_pack_f32 / row_pack_u8
//       read X exactly once and binarize the chunk's input rows into
//       rows[((image*C_IN + c)*iy_count + iy - iy_first)*Rw + rw]
//       (Rw = ceil(W/B) words per row; bit j of word rw is pixel ix = B*rw + j; bits of pixels
//       ix >= W are the pad bit). im2col_pack_rows then builds the Kw words of a patch from C_IN*KH runs:
//       each (c, ky) contributes the KW consecutive row bits starting at ix = ox*stride_x - pad_left, cut
//       out with one funnel shift of two row words and a mask, and streamed into the words. A row word
//       outside [0, Rw), or a row iy outside the input, reads as the pad word (every bit the pad bit), so the
//       row is a line of pad bits outside [0, W).
//     - per bit (dilation_x > 1 or KW > B): im2col_pack_f32 / im2col_pack_u8, one launch; one work-item
//       builds one word from B scattered input elements.
//   Channel-packed (ky, kx, cw), otherwise (C_IN channels waste at most half of their words' bits): two
//     launches. channel_pack_f32 / channel_pack_u8 read X exactly once and binarize it into
//     packed[((n*iy_count + iy - iy_first)*W + ix)*Cw + cw] (Cw = ceil(C_IN/B) words per pixel, bit j of word
//     cw is channel B*cw + j, tail bits zero), for the input rows [iy_first, iy_first + iy_count) the chunk
//     reads; im2col_pack_words then copies whole words: word w = (ky*KW + kx)*Cw + cw of patch p is the
//     packed word of its tap, or the pad word (every valid-channel bit the pad bit, tail bits zero) where the
//     tap lies in the pad. Kw = KH*KW*Cw. The host packs the filters in the same (ky, kx, cw) order with zero
//     tail bits, so tail bits xor to 0 and the GEMM's K stays C_IN*KH*KW. On CPU devices at stride 1 where
//     the output rows keep the input's width, channel_pack_patches_* does both in one launch (see there).
//
// Chunk: the kernels pack the output positions of rows [oy0, oy0 + rows) of batches [n0, n0 + n_count) (the
// host splits large layers). Column p is batch n0 + p / (rows*OW), output row
// oy0 + (p % (rows*OW)) / OW, output column (p % (rows*OW)) % OW. P = n_count*rows*OW.
// Taps outside the input take the pad bit (1 for pad_value +1, else 0; thresholds never apply to them).
//
// NDRanges (local (WG_SIZE, 1)): im2col_pack_*: global (P_pad rounded up to WG_SIZE, Kw), one word per
// work-item; row_pack_*: global (iy_count*Rw rounded up, n_count*C_IN), one row word per work-item;
// channel_pack_*: global (n_count*ceil(iy_count*W/16) rounded up, Cw), one channel word of a run of 16
// pixels per work-item; im2col_pack_rows: global (n_count*rows*ceil(OW/16) + 1 rounded up, 1), the Kw words
// of a run of 16 output columns per work-item; im2col_pack_words: global (n_count*rows*ceil(OW/16) + 1
// rounded up, KH), the KW*Cw words of one row of taps of a run of 16 output columns per work-item. In both
// the work-item after the runs writes the zero columns [P, P_pad). On a CPU device (PoCL) the work-item
// loop wraps each kernel's body, so the 16 lanes of a run are explicit vectors (vload16/vstore16 and vector
// arithmetic) rather than work-items a vectoriser would have to merge. GPUs run the channel-packed layout
// one word per work-item instead: channel_pack_pixel_* (global (n_count*iy_count*W rounded up, Cw)) and
// im2col_pack_word (global (P_pad rounded up, Kw)), the same words.

// Defaults only for compiling this file on its own (offline compilers, syntax checks); the runtime always
// passes its own values from src/runtime/device_profile.cpp.
#ifndef WG_SIZE
#define WG_SIZE 64
#endif
#ifndef WORD_BITS
#define WORD_BITS 32
#endif
#if WORD_BITS != 32 && WORD_BITS != 64
#error "WORD_BITS must be 32 or 64"
#endif
#if WORD_BITS == 64
typedef ulong word_t;
#define LOG2_WORD_BITS 6
#else
typedef uint word_t;
#define LOG2_WORD_BITS 5
#endif
// 16 words, one per lane of a run of 16 pixels or output columns, and the select() mask of their type.
#if WORD_BITS == 64
typedef ulong16 word16_t;
typedef long16 mask16_t;
#define MASK16(int16_mask) convert_long16(int16_mask)
#else
typedef uint16 word16_t;
typedef int16 mask16_t;
#define MASK16(int16_mask) (int16_mask)
#endif
#define LANES16 (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)

// Each kernel's scalar arguments, all 32-bit, as one struct passed by value (the host passes them as an array
// of 32-bit values in the same order): PoCL's launch costs about 0.2 us per kernel argument whatever its
// type, paid between one kernel's end and the next one's start. The X-macro list of each kernel makes both
// its struct and, at the kernel's start, one local of the same name per field.
// clang-format off: one field per X, in the order the host passes them
#define SCALAR_FIELD(type, name) type name;
#define SCALAR_LOCAL(type, name) const type name = scalars.name;
#define IM2COL_PACK_SCALARS(X)                                                                                \
  X(int, C_IN) X(int, H) X(int, W) X(int, KH) X(int, KW) X(int, stride_y) X(int, stride_x)                    \
  X(int, dilation_y) X(int, dilation_x) X(int, pad_top) X(int, pad_left) X(int, OW) X(int, K) X(int, n0)      \
  X(int, oy0) X(int, rows) X(int, P) X(int, P_pad) X(uint, pad_bit)
typedef struct { IM2COL_PACK_SCALARS(SCALAR_FIELD) } im2col_pack_scalars;
#define CHANNEL_PACK_SCALARS(X)                                                                               \
  X(int, C_IN) X(int, H) X(int, W) X(int, Cw) X(int, n0) X(int, iy_first) X(int, iy_count)                    \
  X(int, runs_per_image) X(int, runs)
typedef struct { CHANNEL_PACK_SCALARS(SCALAR_FIELD) } channel_pack_scalars;
#define CHANNEL_PACK_PATCHES_SCALARS(X)                                                                       \
  X(int, C_IN) X(int, H) X(int, W) X(int, Cw) X(int, n0) X(int, iy_first) X(int, iy_count)                    \
  X(int, runs_per_image) X(int, runs) X(int, KH) X(int, KW) X(int, dilation_y) X(int, dilation_x)             \
  X(int, pad_top) X(int, pad_left) X(int, oy0) X(int, rows) X(int, P) X(int, P_pad) X(uint, pad_bit)          \
  X(int, pad_items)
typedef struct { CHANNEL_PACK_PATCHES_SCALARS(SCALAR_FIELD) } channel_pack_patches_scalars;
#define IM2COL_PACK_WORDS_SCALARS(X)                                                                          \
  X(int, C_IN) X(int, H) X(int, W) X(int, KW) X(int, stride_y) X(int, stride_x) X(int, dilation_y)            \
  X(int, dilation_x) X(int, pad_top) X(int, pad_left) X(int, OW) X(int, Cw) X(int, oy0) X(int, rows)          \
  X(int, iy_first) X(int, iy_count) X(int, P) X(int, P_pad) X(uint, pad_bit) X(int, runs_per_row)             \
  X(int, runs)
typedef struct { IM2COL_PACK_WORDS_SCALARS(SCALAR_FIELD) } im2col_pack_words_scalars;
#define CHANNEL_PACK_PIXEL_SCALARS(X)                                                                         \
  X(int, C_IN) X(int, H) X(int, W) X(int, Cw) X(int, n0) X(int, iy_first) X(int, iy_count) X(int, pixels)
typedef struct { CHANNEL_PACK_PIXEL_SCALARS(SCALAR_FIELD) } channel_pack_pixel_scalars;
#define IM2COL_PACK_WORD_SCALARS(X)                                                                           \
  X(int, C_IN) X(int, H) X(int, W) X(int, KW) X(int, stride_y) X(int, stride_x) X(int, dilation_y)            \
  X(int, dilation_x) X(int, pad_top) X(int, pad_left) X(int, OW) X(int, Cw) X(int, oy0) X(int, rows)          \
  X(int, iy_first) X(int, iy_count) X(int, P) X(int, P_pad) X(uint, pad_bit)
typedef struct { IM2COL_PACK_WORD_SCALARS(SCALAR_FIELD) } im2col_pack_word_scalars;
#define ROW_PACK_SCALARS(X)                                                                                   \
  X(int, C_IN) X(int, H) X(int, W) X(int, Rw) X(int, n0) X(int, iy_first) X(int, iy_count)                    \
  X(uint, pad_bit)
typedef struct { ROW_PACK_SCALARS(SCALAR_FIELD) } row_pack_scalars;
#define IM2COL_PACK_ROWS_SCALARS(X)                                                                           \
  X(int, C_IN) X(int, H) X(int, KH) X(int, KW) X(int, stride_y) X(int, stride_x) X(int, dilation_y)           \
  X(int, pad_top) X(int, pad_left) X(int, OW) X(int, Kw) X(int, oy0) X(int, rows) X(int, iy_first)            \
  X(int, iy_count) X(int, Rw) X(int, P) X(int, P_pad) X(uint, pad_bit) X(int, runs_per_row) X(int, runs)
typedef struct { IM2COL_PACK_ROWS_SCALARS(SCALAR_FIELD) } im2col_pack_rows_scalars;
#define IM2COL_PACK_UNITS_SCALARS(X)                                                                          \
  X(int, C_IN) X(int, H) X(int, W) X(int, KW) X(int, stride_y) X(int, stride_x) X(int, dilation_y)            \
  X(int, dilation_x) X(int, pad_top) X(int, pad_left) X(int, OW) X(int, Cw) X(int, units) X(int, n0)          \
  X(int, oy0) X(int, rows) X(int, P) X(int, P_pad) X(uint, pad_bit) X(int, runs_per_row) X(int, runs)
typedef struct { IM2COL_PACK_UNITS_SCALARS(SCALAR_FIELD) } im2col_pack_units_scalars;
// clang-format on

// Order key of a float's bit pattern: unsigned order of keys == IEEE order of the values (with -0 == +0).
// NaN maps to 0, below every non-NaN key (the smallest is key(-inf) = 0x007fffff), so "NaN > t" is false.
inline uint order_key(uint u) {
  const uint magnitude = u & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return 0u;  // NaN
  if (magnitude == 0u) u = 0u;             // -0 == +0
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

#define LOAD_BITS_F32(ptr, index) ((ptr)[index])
#define LOAD_BITS_U8(ptr, index) as_uint((float)((ptr)[index]))

#define DEFINE_IM2COL_PACK(NAME, TYPE, LOAD_BITS)                                                           \
  __kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void NAME(                                  \
      __global const TYPE* restrict x, __global word_t* restrict patches,                                   \
      __global const uint* restrict thr_keys, const im2col_pack_scalars scalars) {                          \
    IM2COL_PACK_SCALARS(SCALAR_LOCAL)                                                                       \
    const int p = (int)get_global_id(0);                                                                    \
    const int w = (int)get_global_id(1);                                                                    \
    if (p >= P_pad) return;                                                                                 \
    const ulong out_index = (ulong)w * (ulong)P_pad + (ulong)p;                                             \
    if (p >= P) {                                                                                           \
      patches[out_index] = 0;                                                                               \
      return;                                                                                               \
    }                                                                                                       \
    /* Quotient and remainder written out: LLVM's div/rem pairing emits `freeze`, which Oclgrind 21.10's */ \
    /* uninitialized-value checker cannot execute. */                                                       \
    const int per_image = rows * OW;                                                                        \
    const int image = p / per_image;                                                                        \
    const int r = p - image * per_image;                                                                    \
    const int n = n0 + image;                                                                               \
    const int row = r / OW;                                                                                 \
    const int oy = oy0 + row;                                                                               \
    const int ox = r - row * OW;                                                                            \
    const long iy0 = (long)oy * stride_y - pad_top;                                                         \
    const long ix0 = (long)ox * stride_x - pad_left;                                                        \
    /* Decode k0 = B*w once, then step the counters. */                                                     \
    const int k0 = w * WORD_BITS;                                                                           \
    const int taps = KH * KW;                                                                               \
    int c = k0 / taps;                                                                                      \
    const int rem = k0 - c * taps;                                                                          \
    int ky = rem / KW;                                                                                      \
    int kx = rem - ky * KW;                                                                                 \
    const ulong plane = (ulong)H * (ulong)W;                                                                \
    ulong channel_base = ((ulong)n * (ulong)C_IN + (ulong)c) * plane;                                       \
    uint t_key = thr_keys[c];                                                                               \
    const int count = min(WORD_BITS, K - k0);                                                               \
    word_t word = 0;                                                                                        \
    for (int j = 0; j < count; ++j) {                                                                       \
      const long iy = iy0 + (long)ky * dilation_y;                                                          \
      const long ix = ix0 + (long)kx * dilation_x;                                                          \
      uint bit;                                                                                             \
      if (iy >= 0 && iy < H && ix >= 0 && ix < W) {                                                         \
        const uint u = LOAD_BITS(x, channel_base + (ulong)iy * (ulong)W + (ulong)ix);                       \
        bit = order_key(u) > t_key ? 1u : 0u;                                                               \
      } else {                                                                                              \
        bit = pad_bit;                                                                                      \
      }                                                                                                     \
      word |= (word_t)bit << j;                                                                             \
      if (++kx == KW) {                                                                                     \
        kx = 0;                                                                                             \
        if (++ky == KH) {                                                                                   \
          ky = 0;                                                                                           \
          if (j + 1 < count) {                                                                              \
            ++c;                                                                                            \
            channel_base += plane;                                                                          \
            t_key = thr_keys[c];                                                                            \
          }                                                                                                 \
        }                                                                                                   \
      }                                                                                                     \
    }                                                                                                       \
    patches[out_index] = word;                                                                              \
  }

DEFINE_IM2COL_PACK(im2col_pack_f32, uint, LOAD_BITS_F32)
DEFINE_IM2COL_PACK(im2col_pack_u8, uchar, LOAD_BITS_U8)

// Binarizes C_IN channels into channel-packed words: work-item (g, cw) is run g of PACK_RUN consecutive pixels
// of one image's chunk rows (pixels r = (iy - iy_first)*W + ix in [run*PACK_RUN, run*PACK_RUN + PACK_RUN), rows
// are contiguous in the plane; g = image*runs_per_image + run) and channel word cw. A full run reads each
// channel's PACK_RUN floats with one vload and keys them with vector operations (the same order key as
// order_key(), lane by lane), so the CPU's vector units do the work without relying on a vectoriser; the run
// that ends an image's rows is done pixel by pixel (no read past the rows). channel_pack_f32_native_compare
// compares a full run's floats with the threshold as floats instead (one compare where the keys take a
// dozen operations), which the host picks where the device keeps subnormals: the same bits.
#define PACK_RUN 16
// Order keys of 16 bit patterns compared with t: exactly order_key(u) > t lane by lane (-1 true, 0 false).
inline int16 key_greater16(const uint16 u, const uint t) {
  const uint16 magnitude = u & (uint16)0x7fffffffu;
  const uint16 negative = as_uint16(as_int16(u) >> 31);
  uint16 key = u ^ (negative | (uint16)0x80000000u); /* ~u where the sign is set, else u | sign */
  key = select(key, (uint16)0x80000000u, magnitude == (uint16)0u); /* -0 == +0 */
  return (key > (uint16)t) & (magnitude <= (uint16)0x7f800000u); /* NaN: false */
}
// The threshold whose order key is `key`: order_key's inverse (thresholds are never NaN; key(-0) gives +0).
inline float threshold_of_key(const uint key) {
  return as_float((key & 0x80000000u) ? key ^ 0x80000000u : ~key);
}
// key_greater16 as one float compare: the same answers where the device keeps subnormal floats (the host's
// rule, floats_compare_exactly): NaN compares false, -0 and +0 are equal, every other value in IEEE order.
inline int16 float_greater16(const uint16 u, const uint t) {
  return as_float16(u) > (float16)(threshold_of_key(t));
}
#define VLOAD_BITS_F32(ptr, index) vload16(0, (ptr) + (index))
// The channel words of a full run of PACK_RUN pixels, the first at element `first` of x, channels `count`
// planes one after the other from there, thresholds `keys`: bit j of lane i is channel j of pixel i, bits
// 0..31 in lo, 32..63 in hi (64-bit words).
#define PACK_FULL_RUN(lo, hi, x, first, plane, keys, count, VLOAD_BITS, GREATER16)                 \
  do {                                                                                             \
    lo = (uint16)0u;                                                                               \
    hi = (uint16)0u;                                                                               \
    ulong index_ = (first);                                                                        \
    const int count_lo_ = min((count), 32);                                                        \
    for (int j_ = 0; j_ < count_lo_; ++j_) {                                                       \
      lo |= as_uint16(GREATER16(VLOAD_BITS((x), index_), (keys)[j_])) & (uint16)(1u << j_);        \
      index_ += (plane);                                                                           \
    }                                                                                              \
    for (int j_ = 32; j_ < (count); ++j_) {                                                        \
      hi |= as_uint16(GREATER16(VLOAD_BITS((x), index_), (keys)[j_])) & (uint16)(1u << (j_ - 32)); \
      index_ += (plane);                                                                           \
    }                                                                                              \
  } while (0)
// The channel word of one pixel, at element `index0` of x (order keys, as order_key()).
#define PACK_PIXEL_WORD(word, x, index0, plane, keys, count, LOAD_BITS)                 \
  do {                                                                                  \
    ulong index_ = (index0);                                                            \
    word = 0;                                                                           \
    for (int j_ = 0; j_ < (count); ++j_) {                                              \
      word |= (word_t)(order_key(LOAD_BITS((x), index_)) > (keys)[j_] ? 1u : 0u) << j_; \
      index_ += (plane);                                                                \
    }                                                                                   \
  } while (0)
#define VLOAD_BITS_U8(ptr, index) as_uint16(convert_float16(vload16(0, (ptr) + (index))))
#define DEFINE_CHANNEL_PACK(NAME, TYPE, LOAD_BITS, VLOAD_BITS, GREATER16)                                  \
  __kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void NAME(                                 \
      __global const TYPE* restrict x, __global word_t* restrict packed,                                   \
      __global const uint* restrict thr_keys, const channel_pack_scalars scalars) {                        \
    CHANNEL_PACK_SCALARS(SCALAR_LOCAL)                                                                     \
    const int g = (int)get_global_id(0);                                                                   \
    const int cw = (int)get_global_id(1);                                                                  \
    if (g >= runs) return;                                                                                 \
    const int image = g / runs_per_image;                                                                  \
    const int r0 = (g - image * runs_per_image) * PACK_RUN;                                                \
    const int per_image = iy_count * W;                                                                    \
    const int n_pixels = min(PACK_RUN, per_image - r0);                                                    \
    const ulong plane = (ulong)H * (ulong)W;                                                               \
    const int c0 = cw * WORD_BITS;                                                                         \
    const ulong first =                                                                                    \
        ((ulong)(n0 + image) * (ulong)C_IN + (ulong)c0) * plane + (ulong)iy_first * (ulong)W + (ulong)r0;  \
    const int count = min(WORD_BITS, C_IN - c0);                                                           \
    __global word_t* out = packed + ((ulong)image * (ulong)per_image + (ulong)r0) * (ulong)Cw + (ulong)cw; \
    if (n_pixels == PACK_RUN) {                                                                            \
      uint16 lo, hi;                                                                                       \
      PACK_FULL_RUN(lo, hi, x, first, plane, thr_keys + c0, count, VLOAD_BITS, GREATER16);                 \
      STORE_RUN(out, lo, hi, Cw);                                                                          \
    } else {                                                                                               \
      for (int i = 0; i < n_pixels; ++i) {                                                                 \
        word_t word;                                                                                       \
        PACK_PIXEL_WORD(word, x, first + (ulong)i, plane, thr_keys + c0, count, LOAD_BITS);                \
        out[(ulong)i * (ulong)Cw] = word;                                                                  \
      }                                                                                                    \
    }                                                                                                      \
  }

#if WORD_BITS == 64
#define RUN_WORDS(lo, hi) (convert_ulong16(lo) | (convert_ulong16(hi) << (ulong16)32))
#else
#define RUN_WORDS(lo, hi) (lo)
#endif
// Stores the run's PACK_RUN words at out[i*Cw]: one vector store where they are contiguous.
#define STORE_RUN(out, lo, hi, Cw)                                                                             \
  do {                                                                                                        \
    if ((Cw) == 1) {                                                                                          \
      vstore16(RUN_WORDS(lo, hi), 0, (out));                                                                  \
    } else {                                                                                                  \
      word_t words[PACK_RUN];                                                                                 \
      vstore16(RUN_WORDS(lo, hi), 0, words);                                                                  \
      for (int i = 0; i < PACK_RUN; ++i) (out)[(ulong)i * (ulong)(Cw)] = words[i];                            \
    }                                                                                                         \
  } while (0)

DEFINE_CHANNEL_PACK(channel_pack_f32, uint, LOAD_BITS_F32, VLOAD_BITS_F32, key_greater16)
DEFINE_CHANNEL_PACK(channel_pack_f32_native_compare, uint, LOAD_BITS_F32, VLOAD_BITS_F32, float_greater16)
DEFINE_CHANNEL_PACK(channel_pack_u8, uchar, LOAD_BITS_U8, VLOAD_BITS_U8, key_greater16)

// channel_pack_patches_*: channel_pack_* and im2col_pack_words in one launch, for CPU devices (vector runs)
// where the convolution has stride 1 and keeps the row width (OW == W, so pads of at most W - 1 columns on
// each side). Each pixel run's 16 words go straight into the patch matrix: for tap (ky, kx) an input pixel
// is the tap of the output position shift(ky, kx) = (iy_first + pad_top - ky*dilation_y - oy0)*W +
// pad_left - kx*dilation_x further in the chunk's positions of its image, so the run's words are 16
// contiguous words of that tap's row of the matrix (one vector store). A lane whose column moves past the
// row's end lands on the next row's first columns (or before its start on the row before), and those
// positions' taps lie in the pad: the lane stores the pad word there. Lanes whose positions fall outside the
// chunk's rows of the image store nothing. The other work-items write what no run does: pad item e, for
// output line e / KH (image * rows + row) and kernel row ky = e % KH, that line's pad taps of kernel row ky
// (the whole line where the tap's input row is outside, else the columns left and right of the input); the
// last work-item, runs + pad_items, the zero columns [P, P_pad). Runs and pad items share the work-items
// before it (item_of). A pad position can thus be written twice, with the same pad word. The same words as
// channel_pack_* + im2col_pack_words: a launch, the packed copy's writes and reads and the patch words'
// gather (lane by lane where Cw > 1) are saved. NDRange global (runs + pad_items + 1 rounded up, Cw).
// Lanes [0, lanes) of a run at positions p0 + i, those inside [0, per_image). p0 is 64-bit: a tap's shift is
// a dilation times a kernel row, as large as the attributes allow.
static inline void store_patch_run(__global word_t* dst, const word16_t v, const long p0, const int per_image,
                                   const int lanes) {
  if (p0 >= per_image || p0 + lanes <= 0) return;
  if (p0 >= 0 && p0 + PACK_RUN <= per_image && lanes == PACK_RUN) {
    vstore16(v, 0, dst + p0);
    return;
  }
  word_t values[PACK_RUN];
  vstore16(v, 0, values);
  for (int i = 0; i < lanes; ++i)
    if (p0 + i >= 0 && p0 + i < per_image) dst[p0 + i] = values[i];
}
// Work-item g < runs + pad_items of channel_pack_patches_*: pixel run *run (or -1) or pad item *e (or -1).
// Runs and pad items alternate while both last: a CPU runs each work-group on one thread, and with the
// runs first a 56x56 layer's 196 runs filled three work-groups of 64 and a fourth with 4, so one of two
// threads packed 128 runs to the other's 68.
static inline void item_of(const int g, const int runs, const int pad_items, int* run, int* e) {
  const int both = min(runs, pad_items);
  const int odd = g & 1;
  *run = -1;
  *e = -1;
  if (g < 2 * both) {
    *(odd ? e : run) = g >> 1;
  } else {
    *(runs > pad_items ? run : e) = g - both;
  }
}
// The pad taps of output line `line` of the chunk for kernel row ky (channel word cw's rows of the matrix).
static inline void store_pad_taps(__global word_t* patches, const int line, const int ky, const int cw,
                           const word_t pad_word, const channel_pack_patches_scalars s) {
  const int row = line - (line / s.rows) * s.rows;
  const long iy = (long)(s.oy0 + row) - s.pad_top + (long)ky * s.dilation_y;
  const bool row_in = iy >= 0 && iy < s.H;
  for (int kx = 0; kx < s.KW; ++kx) {
    const int shift = s.pad_left - kx * s.dilation_x;  // input column + shift = output column
    __global word_t* out = patches + (ulong)((ky * s.KW + kx) * s.Cw + cw) * (ulong)s.P_pad +
                           (ulong)line * (ulong)s.W;
    const int left_end = row_in ? clamp(shift, 0, s.W) : s.W;
    const int right_start = row_in ? clamp(s.W + shift, left_end, s.W) : s.W;
    for (int ox = 0; ox < left_end; ++ox) out[ox] = pad_word;
    for (int ox = right_start; ox < s.W; ++ox) out[ox] = pad_word;
  }
}
#define DEFINE_CHANNEL_PACK_PATCHES(NAME, TYPE, LOAD_BITS, VLOAD_BITS, GREATER16)                         \
  __kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void NAME(                                \
      __global const TYPE* restrict x, __global word_t* restrict patches,                                 \
      __global const uint* restrict thr_keys, const channel_pack_patches_scalars scalars) {               \
    CHANNEL_PACK_PATCHES_SCALARS(SCALAR_LOCAL)                                                            \
    const int g = (int)get_global_id(0);                                                                  \
    const int cw = (int)get_global_id(1);                                                                 \
    if (g > runs + pad_items) return;                                                                     \
    const int c0 = cw * WORD_BITS;                                                                        \
    const int count = min(WORD_BITS, C_IN - c0);                                                          \
    const word_t ones = pad_bit ? ~(word_t)0 : (word_t)0;                                                 \
    const word_t pad_word = count >= WORD_BITS ? ones : ones & (((word_t)1 << count) - 1);                \
    if (g == runs + pad_items) {                                                                          \
      for (int t = 0; t < KH * KW; ++t)                                                                   \
        for (int p = P; p < P_pad; ++p) patches[(ulong)(t * Cw + cw) * (ulong)P_pad + (ulong)p] = 0;      \
      return;                                                                                             \
    }                                                                                                     \
    int run, e;                                                                                           \
    item_of(g, runs, pad_items, &run, &e);                                                                \
    if (run < 0) {                                                                                        \
      const int line = e / KH;                                                                            \
      store_pad_taps(patches, line, e - line * KH, cw, pad_word, scalars);                                \
      return;                                                                                             \
    }                                                                                                     \
    const int image = run / runs_per_image;                                                               \
    const int r0 = (run - image * runs_per_image) * PACK_RUN;                                             \
    const int per_image = iy_count * W;                                                                   \
    const int n_pixels = min(PACK_RUN, per_image - r0);                                                   \
    const ulong plane = (ulong)H * (ulong)W;                                                              \
    const ulong first =                                                                                   \
        ((ulong)(n0 + image) * (ulong)C_IN + (ulong)c0) * plane + (ulong)iy_first * (ulong)W + (ulong)r0; \
    word16_t words;                                                                                       \
    if (n_pixels == PACK_RUN) {                                                                           \
      uint16 lo, hi;                                                                                      \
      PACK_FULL_RUN(lo, hi, x, first, plane, thr_keys + c0, count, VLOAD_BITS, GREATER16);                \
      words = RUN_WORDS(lo, hi);                                                                          \
    } else {                                                                                              \
      word_t run_words[PACK_RUN];                                                                         \
      for (int i = 0; i < PACK_RUN; ++i) {                                                                \
        run_words[i] = 0;                                                                                 \
        if (i < n_pixels)                                                                                 \
          PACK_PIXEL_WORD(run_words[i], x, first + (ulong)i, plane, thr_keys + c0, count, LOAD_BITS);     \
      }                                                                                                   \
      words = vload16(0, run_words);                                                                      \
    }                                                                                                     \
    /* Each lane's input column (runs may cross rows, and rows may be narrower than a run). */            \
    const int first_column = r0 - (r0 / W) * W;                                                           \
    int16 column = (int16)first_column + LANES16;                                                         \
    while (any(column >= (int16)W)) column = select(column, column - (int16)W, column >= (int16)W);       \
    const int out_per_image = rows * W;                                                                   \
    __global word_t* image_patches = patches + (ulong)image * (ulong)out_per_image;                       \
    for (int kx = 0; kx < KW; ++kx) {                                                                     \
      const int column_shift = pad_left - kx * dilation_x;                                                \
      const int16 out_column = column + (int16)column_shift;                                              \
      const word16_t v =                                                                                  \
          select((word16_t)pad_word, words, MASK16(out_column >= (int16)0 & out_column < (int16)W));      \
      for (int ky = 0; ky < KH; ++ky) {                                                                   \
        const long row_shift = (long)iy_first + pad_top - (long)ky * dilation_y - oy0;                    \
        const long p0 = r0 + row_shift * W + column_shift;                                                \
        store_patch_run(image_patches + (ulong)((ky * KW + kx) * Cw + cw) * (ulong)P_pad, v, p0,          \
                        out_per_image, n_pixels);                                                         \
      }                                                                                                   \
    }                                                                                                     \
  }
DEFINE_CHANNEL_PACK_PATCHES(channel_pack_patches_f32, uint, LOAD_BITS_F32, VLOAD_BITS_F32, key_greater16)
DEFINE_CHANNEL_PACK_PATCHES(channel_pack_patches_f32_native_compare, uint, LOAD_BITS_F32, VLOAD_BITS_F32,
                            float_greater16)
DEFINE_CHANNEL_PACK_PATCHES(channel_pack_patches_u8, uchar, LOAD_BITS_U8, VLOAD_BITS_U8, key_greater16)

// Run g of `run` output columns (im2col_pack_words, im2col_pack_rows): output line (image * rows + row of the
// chunk) and first column ox0 (the last run of a line may be shorter). Quotients and remainders written out
// (a div/rem pair makes LLVM emit `freeze`, which Oclgrind 21.10's uninitialized-value checker cannot execute).
inline void output_run(const int g, const int runs_per_row, const int run, const int rows, int* line, int* ox0,
                       int* image, int* row) {
  *line = g / runs_per_row;
  *ox0 = (g - *line * runs_per_row) * run;
  *image = *line / rows;
  *row = *line - *image * rows;
}

// im2col of channel-packed words: work-item (g, ky) writes words (ky*KW + kx)*Cw + cw, kx in [0, KW), of
// the patches of run g (one row of taps). Work-item g < runs is run g of WORDS_RUN consecutive output columns
// of one output row (g = line*runs_per_row + run, line = image*rows + row, columns [run*WORDS_RUN,
// run*WORDS_RUN + WORDS_RUN) clipped to OW); with stride_x 1 a whole run's taps are consecutive input pixels,
// so each of its words is one vector of 16 lanes (one vector load where Cw is 1 and the taps lie inside the
// row, lanes outside the input take the pad word) and one vector store; otherwise patch by patch.
// Work-item g == runs writes the zero columns [P, P_pad) of its row of taps.
#define WORDS_RUN 16
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void im2col_pack_words(
    __global const word_t* restrict packed, __global word_t* restrict patches,
    const im2col_pack_words_scalars scalars) {
  IM2COL_PACK_WORDS_SCALARS(SCALAR_LOCAL)
  const int g = (int)get_global_id(0);
  const int ky = (int)get_global_id(1);
  if (g > runs) return;
  const ulong tap_words = (ulong)Cw * (ulong)P_pad;
  __global word_t* out = patches + (ulong)ky * (ulong)KW * tap_words;
  if (g == runs) {
    for (int w = 0; w < KW * Cw; ++w) {
      for (int p = P; p < P_pad; ++p) out[(ulong)w * (ulong)P_pad + (ulong)p] = 0;
    }
    return;
  }
  int line, ox0, image, row;
  output_run(g, runs_per_row, WORDS_RUN, rows, &line, &ox0, &image, &row);
  const int n_columns = min(WORDS_RUN, OW - ox0);
  const long iy = (long)(oy0 + row) * stride_y - pad_top + (long)ky * dilation_y;
  const bool row_in = iy >= 0 && iy < H;
  // Where the row is pad, `src` is never read.
  const int packed_row = row_in ? image * iy_count + (int)(iy - iy_first) : 0;
  __global const word_t* src = packed + (ulong)packed_row * (ulong)W * (ulong)Cw;
  const word_t ones = pad_bit ? ~(word_t)0 : (word_t)0;
  out += (ulong)line * (ulong)OW + (ulong)ox0;
  if (n_columns < WORDS_RUN || stride_x != 1) {
    for (int i = 0; i < n_columns; ++i) {
      __global word_t* col = out + i;
      long ix = (long)(ox0 + i) * stride_x - pad_left;
      for (int kx = 0; kx < KW; ++kx) {
        if (row_in && ix >= 0 && ix < W) {
          __global const word_t* tap_src = src + (ulong)ix * (ulong)Cw;
          for (int cw = 0; cw < Cw; ++cw) col[(ulong)cw * (ulong)P_pad] = tap_src[cw];
        } else {
          for (int cw = 0; cw < Cw; ++cw) {
            const int count = C_IN - cw * WORD_BITS;
            col[(ulong)cw * (ulong)P_pad] = count >= WORD_BITS ? ones : ones & (((word_t)1 << count) - 1);
          }
        }
        col += tap_words;
        ix += dilation_x;
      }
    }
    return;
  }
  long ix = (long)ox0 - pad_left;  // lane i's tap is input pixel ix + i
  for (int kx = 0; kx < KW; ++kx) {
    const bool inside = row_in && ix >= 0 && ix + (WORDS_RUN - 1) < W;
    const bool outside = !row_in || ix + (WORDS_RUN - 1) < 0 || ix >= W;
    // Read only where not `outside`: then -WORDS_RUN < ix < W, an int.
    const int16 lane_ix = (int16)(int)ix + LANES16;
    const mask16_t lane_in = MASK16(lane_ix >= (int16)0 & lane_ix < (int16)W);
    for (int cw = 0; cw < Cw; ++cw) {
      const int count = C_IN - cw * WORD_BITS;
      const word_t pad_word = count >= WORD_BITS ? ones : ones & (((word_t)1 << count) - 1);
      word16_t v;
      if (outside) {
        v = (word16_t)pad_word;
      } else if (inside && Cw == 1) {
        v = vload16(0, src + ix);
      } else {
        // Lanes outside the row read its nearest pixel, then take the pad word.
        word_t taps[WORDS_RUN];
        for (int i = 0; i < WORDS_RUN; ++i) {
          taps[i] = src[(ulong)clamp((int)ix + i, 0, W - 1) * (ulong)Cw + (ulong)cw];
        }
        v = select((word16_t)pad_word, vload16(0, taps), lane_in);
      }
      vstore16(v, 0, out + (ulong)(kx * Cw + cw) * (ulong)P_pad);
    }
    ix += dilation_x;
  }
}

// The channel-packed layout one word per work-item, for GPUs (the runs above are for CPUs, whose work-item
// loop leaves vectors to the kernel body). A GPU runs work-items side by side in waves: runs of 16 give it
// 16 times fewer work-items, each with a long serial loop, and lanes whose loads lie 64 bytes apart; a layer
// at batch 1 (512x7x7: 4 runs of pixels per channel word, 7 runs of columns per row of taps) then leaves
// most compute units idle. Here adjacent work-items take adjacent pixels or output columns, so a wave's loads
// of one channel plane and its stores of one patch word are contiguous. Same words as the runs.
//
// channel_pack_pixel_*: work-item (q, cw) is pixel q of the chunk's rows (q = image*iy_count*W + (iy -
// iy_first)*W + ix, `pixels` of them) and channel word cw; NDRange global (pixels rounded up, Cw).
#define DEFINE_CHANNEL_PACK_PIXEL(NAME, TYPE, LOAD_BITS)                                                 \
  __kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void NAME(                               \
      __global const TYPE* restrict x, __global word_t* restrict packed,                                 \
      __global const uint* restrict thr_keys, const channel_pack_pixel_scalars scalars) {                \
    CHANNEL_PACK_PIXEL_SCALARS(SCALAR_LOCAL)                                                             \
    const int q = (int)get_global_id(0);                                                                 \
    const int cw = (int)get_global_id(1);                                                                \
    if (q >= pixels) return;                                                                             \
    const int per_image = iy_count * W;                                                                  \
    const int image = q / per_image;                                                                     \
    const int r = q - image * per_image; /* (iy - iy_first)*W + ix: rows are contiguous in the plane */  \
    const ulong plane = (ulong)H * (ulong)W;                                                             \
    const int c0 = cw * WORD_BITS;                                                                       \
    const ulong index =                                                                                  \
        ((ulong)(n0 + image) * (ulong)C_IN + (ulong)c0) * plane + (ulong)iy_first * (ulong)W + (ulong)r; \
    const int count = min(WORD_BITS, C_IN - c0);                                                         \
    word_t word;                                                                                         \
    PACK_PIXEL_WORD(word, x, index, plane, thr_keys + c0, count, LOAD_BITS);                             \
    packed[(ulong)q * (ulong)Cw + (ulong)cw] = word;                                                     \
  }

DEFINE_CHANNEL_PACK_PIXEL(channel_pack_pixel_f32, uint, LOAD_BITS_F32)
DEFINE_CHANNEL_PACK_PIXEL(channel_pack_pixel_u8, uchar, LOAD_BITS_U8)

// im2col_pack_word: work-item (p, w) writes word w = (ky*KW + kx)*Cw + cw of patch p (a zero for the
// columns p in [P, P_pad)); NDRange global (P_pad rounded up, Kw).
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void im2col_pack_word(
    __global const word_t* restrict packed, __global word_t* restrict patches,
    const im2col_pack_word_scalars scalars) {
  IM2COL_PACK_WORD_SCALARS(SCALAR_LOCAL)
  const int p = (int)get_global_id(0);
  const int w = (int)get_global_id(1);
  if (p >= P_pad) return;
  const ulong out_index = (ulong)w * (ulong)P_pad + (ulong)p;
  if (p >= P) {
    patches[out_index] = 0;
    return;
  }
  // Quotients and remainders written out (a div/rem pair makes LLVM emit `freeze`, which Oclgrind 21.10's
  // uninitialized-value checker cannot execute).
  const int per_image = rows * OW;
  const int image = p / per_image;
  const int r = p - image * per_image;
  const int row = r / OW;
  const int ox = r - row * OW;
  const int tap = w / Cw;
  const int cw = w - tap * Cw;
  const int ky = tap / KW;
  const int kx = tap - ky * KW;
  // Positions in 64 bits: strides, dilations and pads may be near INT_MAX.
  const long iy = (long)(oy0 + row) * stride_y - pad_top + (long)ky * dilation_y;
  const long ix = (long)ox * stride_x - pad_left + (long)kx * dilation_x;
  word_t word;
  if (iy >= 0 && iy < H && ix >= 0 && ix < W) {
    const ulong packed_row = (ulong)image * (ulong)iy_count + (ulong)(iy - iy_first);
    word = packed[(packed_row * (ulong)W + (ulong)ix) * (ulong)Cw + (ulong)cw];
  } else {
    const int count = C_IN - cw * WORD_BITS;
    const word_t ones = pad_bit ? ~(word_t)0 : (word_t)0;
    word = count >= WORD_BITS ? ones : ones & (((word_t)1 << count) - 1);
  }
  patches[out_index] = word;
}

// The 16 lanes of a comparison mask (-1 or 0) as the bits 0..15 of a uint (lane i is bit i). Lane by lane with
// scalar constants: Oclgrind 21.10's uninitialized-value checker crashes on a non-uniform constant vector.
inline uint lane_bits16(const int16 mask) {
  const uint16 m = as_uint16(mask) & (uint16)1u;
  return (m.s0 | (m.s1 << 1) | (m.s2 << 2) | (m.s3 << 3)) | ((m.s4 << 4) | (m.s5 << 5) | (m.s6 << 6) | (m.s7 << 7)) |
         ((m.s8 << 8) | (m.s9 << 9) | (m.sa << 10) | (m.sb << 11)) |
         ((m.sc << 12) | (m.sd << 13) | (m.se << 14) | (m.sf << 15));
}

// Binarizes the chunk's input rows into bit rows: work-item (q, plane) is word rw of row iy_first + t of
// channel c of image n0 + image, q = t*Rw + rw, plane = image*C_IN + c. Its pixels are keyed 16 at a time
// with one vload (key_greater16), the last count % 16 one by one (no read past the row).
#define DEFINE_ROW_PACK(NAME, TYPE, LOAD_BITS, VLOAD_BITS)                                    \
  __kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void NAME(                    \
      __global const TYPE* restrict x, __global word_t* restrict rows_out,                    \
      __global const uint* restrict thr_keys, const row_pack_scalars scalars) {               \
    ROW_PACK_SCALARS(SCALAR_LOCAL)                                                            \
    const int q = (int)get_global_id(0);                                                      \
    const int plane_index = (int)get_global_id(1);                                            \
    if (q >= iy_count * Rw) return;                                                           \
    const int t = q / Rw;                                                                     \
    const int rw = q - t * Rw;                                                                \
    const int image = plane_index / C_IN;                                                     \
    const int c = plane_index - image * C_IN;                                                 \
    const int ix0 = rw * WORD_BITS;                                                           \
    const ulong plane = (ulong)H * (ulong)W;                                                  \
    const ulong base = ((ulong)(n0 + image) * (ulong)C_IN + (ulong)c) * plane +               \
                       (ulong)(iy_first + t) * (ulong)W + (ulong)ix0;                         \
    const uint t_key = thr_keys[c];                                                           \
    const int count = min(WORD_BITS, W - ix0);                                                \
    /* Pixels beyond the row's end are pad taps: their bits are the pad bit. */               \
    word_t word = (pad_bit && count < WORD_BITS) ? ~(word_t)0 << count : (word_t)0;           \
    const int vector_end = count & ~15;                                                       \
    for (int j = 0; j < vector_end; j += 16) {                                                \
      word |= (word_t)lane_bits16(key_greater16(VLOAD_BITS(x, base + (ulong)j), t_key)) << j; \
    }                                                                                         \
    for (int j = vector_end; j < count; ++j) {                                                \
      const uint u = LOAD_BITS(x, base + (ulong)j);                                           \
      word |= (word_t)(order_key(u) > t_key ? 1u : 0u) << j;                                  \
    }                                                                                         \
    rows_out[(ulong)plane_index * (ulong)iy_count * (ulong)Rw + (ulong)q] = word;             \
  }

DEFINE_ROW_PACK(row_pack_f32, uint, LOAD_BITS_F32, VLOAD_BITS_F32)
DEFINE_ROW_PACK(row_pack_u8, uchar, LOAD_BITS_U8, VLOAD_BITS_U8)

// Dense patches from bit rows (dilation_x == 1, KW <= B). The patch's K bits are C_IN*KH runs of KW bits, one
// per (c, ky), each cut out of row (c, iy0 + ky*dilation_y) at the same start ix0 = ox*stride_x - pad_left,
// and streamed into the words in order. The word boundaries (where `fill` passes B) depend only on K's
// layout, so every patch takes the same branches.
//
// Work-item g < runs is run g of ROWS_RUN consecutive output columns of one output row (g = line*runs_per_row
// + run, line = image*rows + row, columns [run*ROWS_RUN, run*ROWS_RUN + ROWS_RUN) clipped to OW): with stride_x
// 1 a whole run is built as ROWS_RUN lanes of vector words (the runs of consecutive columns start at
// consecutive bits, so every lane cuts its bits out of the same three row words) and stored with one vector
// store per word; otherwise patch by patch. Work-item g == runs writes the zero columns [P, P_pad).

// The Kw words of patch p (output column ox of output row `row` of chunk image `image`), one at a time.
inline void pack_patch_rows(__global const word_t* restrict rows_in, __global word_t* restrict out,
                            const int C_IN, const int H, const int KH, const int KW, const int dilation_y,
                            const long iy0, const long xs, const int pad_left, const int image,
                            const int iy_first, const int iy_count, const int Rw, const int P_pad,
                            const uint pad_bit) {
  // The run of every row starts at bit s of row word wi (wi = floor(xs / B), computed without shifting a
  // negative value: xs >= -pad_left > -bias). Row words outside [0, Rw) read as the pad word. Positions are
  // 64-bit: strides, dilations and pads may be near INT_MAX.
  const long bias = (((long)pad_left >> LOG2_WORD_BITS) + 1) << LOG2_WORD_BITS;
  const long wi = ((xs + bias) >> LOG2_WORD_BITS) - (bias >> LOG2_WORD_BITS);
  const int s = (int)(xs & (WORD_BITS - 1));
  const bool lo_in = wi >= 0 && wi < Rw;
  const bool hi_in = wi + 1 >= 0 && wi + 1 < Rw;
  const word_t pad_word = pad_bit ? ~(word_t)0 : (word_t)0;
  const word_t run_mask = ~(word_t)0 >> (WORD_BITS - KW);
  const ulong row_step = (ulong)dilation_y * (ulong)Rw;
  // Row (c, iy) of this image starts at rows_in + ((image*C_IN + c)*iy_count + iy - iy_first)*Rw.
  ulong plane_base = (ulong)image * (ulong)C_IN * (ulong)iy_count * (ulong)Rw + (ulong)wi;
  const ulong plane_step = (ulong)iy_count * (ulong)Rw;
  word_t acc = 0;
  int fill = 0;
  ulong out_offset = 0;
  for (int c = 0; c < C_IN; ++c) {
    long iy = iy0;
    // Where iy < iy_first the row is pad (iy < 0) and `index` is not used.
    ulong index = plane_base + (ulong)(iy - iy_first) * (ulong)Rw;
    for (int ky = 0; ky < KH; ++ky) {
      word_t bits = pad_word;
      if (iy >= 0 && iy < H) {
        const word_t lo = lo_in ? rows_in[index] : pad_word;
        const word_t hi = hi_in ? rows_in[index + 1] : pad_word;
        // Funnel shift: bits s.. of lo, then hi; (hi << 1) << (B-1-s) is hi << (B-s), and 0 for s == 0.
        bits = (lo >> s) | ((hi << 1) << (WORD_BITS - 1 - s));
      }
      bits &= run_mask;
      acc |= bits << fill;
      fill += KW;
      if (fill >= WORD_BITS) {
        out[out_offset] = acc;
        out_offset += (ulong)P_pad;
        fill -= WORD_BITS;
        // The run's bits that did not fit; (bits >> 1) >> (KW-1-fill) is bits >> (KW-fill), 0 for fill == 0.
        acc = (bits >> 1) >> (KW - 1 - fill);
      }
      iy += dilation_y;
      index += row_step;
    }
    plane_base += plane_step;
  }
  if (fill > 0) out[out_offset] = acc;
}

#define ROWS_RUN 16

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void im2col_pack_rows(
    __global const word_t* restrict rows_in, __global word_t* restrict patches,
    const im2col_pack_rows_scalars scalars) {
  IM2COL_PACK_ROWS_SCALARS(SCALAR_LOCAL)
  const int g = (int)get_global_id(0);
  if (g > runs) return;
  if (g == runs) {
    for (int w = 0; w < Kw; ++w) {
      __global word_t* out = patches + (ulong)w * (ulong)P_pad;
      for (int p = P; p < P_pad; ++p) out[p] = 0;
    }
    return;
  }
  int line, ox0, image, row;
  output_run(g, runs_per_row, ROWS_RUN, rows, &line, &ox0, &image, &row);
  const int n_columns = min(ROWS_RUN, OW - ox0);
  const long iy0 = (long)(oy0 + row) * stride_y - pad_top;
  __global word_t* out = patches + (ulong)line * (ulong)OW + (ulong)ox0;
  if (n_columns < ROWS_RUN || stride_x != 1) {
    for (int i = 0; i < n_columns; ++i) {
      pack_patch_rows(rows_in, out + i, C_IN, H, KH, KW, dilation_y, iy0, (long)(ox0 + i) * stride_x - pad_left,
                      pad_left, image, iy_first, iy_count, Rw, P_pad, pad_bit);
    }
    return;
  }
  // Lane i is column ox0 + i: its run starts at bit s0 + i of row word wi (s0 + i < 2B), so at bit
  // (s0 + i) mod B of word wi + 1 where s0 + i >= B; every lane reads within words wi .. wi + 2.
  const long xs = (long)ox0 - pad_left;
  const long bias = (((long)pad_left >> LOG2_WORD_BITS) + 1) << LOG2_WORD_BITS;
  const long wi = ((xs + bias) >> LOG2_WORD_BITS) - (bias >> LOG2_WORD_BITS);
  const word16_t lane_start = (word16_t)(int)(xs & (WORD_BITS - 1)) +
                              (word16_t)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const mask16_t upper = lane_start >= (word16_t)WORD_BITS;
  const word16_t lane_s = lane_start & (word16_t)(WORD_BITS - 1);
  const word16_t lane_hi_shift = (word16_t)(WORD_BITS - 1) - lane_s;
  const bool in0 = wi >= 0 && wi < Rw;
  const bool in1 = wi + 1 >= 0 && wi + 1 < Rw;
  const bool in2 = wi + 2 >= 0 && wi + 2 < Rw;
  const word_t pad_word = pad_bit ? ~(word_t)0 : (word_t)0;
  const word16_t run_mask = (word16_t)(~(word_t)0 >> (WORD_BITS - KW));
  const ulong row_step = (ulong)dilation_y * (ulong)Rw;
  ulong plane_base = (ulong)image * (ulong)C_IN * (ulong)iy_count * (ulong)Rw + (ulong)wi;
  const ulong plane_step = (ulong)iy_count * (ulong)Rw;
  word16_t acc = (word16_t)0;
  int fill = 0;
  ulong out_offset = 0;
  for (int c = 0; c < C_IN; ++c) {
    long iy = iy0;
    // Where iy < iy_first the row is pad (iy < 0) and `index` is not used.
    ulong index = plane_base + (ulong)(iy - iy_first) * (ulong)Rw;
    for (int ky = 0; ky < KH; ++ky) {
      word16_t bits = (word16_t)pad_word;
      if (iy >= 0 && iy < H) {
        const word_t w0 = in0 ? rows_in[index] : pad_word;
        const word_t w1 = in1 ? rows_in[index + 1] : pad_word;
        const word_t w2 = in2 ? rows_in[index + 2] : pad_word;
        const word16_t lo = select((word16_t)w0, (word16_t)w1, upper);
        const word16_t hi = select((word16_t)w1, (word16_t)w2, upper);
        // Funnel shift per lane, as in pack_patch_rows.
        bits = (lo >> lane_s) | ((hi << (word16_t)1) << lane_hi_shift);
      }
      bits &= run_mask;
      acc |= bits << (word16_t)fill;
      fill += KW;
      if (fill >= WORD_BITS) {
        vstore16(acc, 0, out + out_offset);
        out_offset += (ulong)P_pad;
        fill -= WORD_BITS;
        acc = (bits >> (word16_t)1) >> (word16_t)(KW - 1 - fill);
      }
      iy += dilation_y;
      index += row_step;
    }
    plane_base += plane_step;
  }
  if (fill > 0) vstore16(acc, 0, out + out_offset);
}

// Packed input (BinaryConvolution::Options::input_packed): the input is already bits, in the packed contract
// layout of include/xnorcl/packed.hpp (32-bit words [N][H][W][Cw] (here Cw = ceil(C_IN/32)), channel c at bit
// c%32 of word c/32, bit 1 = +1); no thresholds, no binarized copy. The K order is (ky, kx, cw) in these
// 32-bit units: unit u = (ky*KW + kx)*Cw + cw, and word w of a patch holds units UNITS_PER_WORD*w ..
// UNITS_PER_WORD*w + UNITS_PER_WORD - 1 (with 64-bit words unit 2w in the low half, so a word may span two
// taps and 32 channels fill every bit: 13 words per 5x5 patch, not 25); units past the last are 0. Bits of
// channels >= C_IN are cleared (the contract says they are 0; clearing them keeps the GEMM exact whatever the
// caller's tail bits hold); pad taps are the pad bit on every valid channel.
// Work-item (g, w) writes word w of the patches of run g of WORDS_RUN consecutive output columns of one
// output row (as im2col_pack_words: g = line*runs_per_row + run). Work-item g == runs writes word w of the
// zero columns [P, P_pad). NDRange global (runs + 1 rounded up to WG_SIZE, Kw), local (WG_SIZE, 1).
// With 64-bit words and an even Cw (33 to 64 channels, 97 to 128, ...) a word's two units are channel words
// cw and cw + 1 of one tap, adjacent in the input: the word is one aligned 64-bit load per column (the unit
// offsets are even), with no per-unit work (unit by unit, a 64-channel layer's packing took 3x the time of
// packing the same patches from floats on PoCL). Otherwise unit by unit: with stride_x 1, Cw 1 and the run's
// taps inside the row a unit is one vector load, else lane by lane.
#define UNITS_PER_WORD (WORD_BITS / 32)

// The bits of channel word cw that hold channels (< C_IN).
inline uint unit_valid(const int C_IN, const int cw) {
  const int count = C_IN - cw * 32;
  return count >= 32 ? 0xffffffffu : (1u << count) - 1u;
}

// Unit u of the run's patches (lanes: its columns), or the pad unit where a tap is pad.
static inline uint16 run_unit(__global const uint* x, const int u, const int C_IN, const int H, const int W,
                              const int KW, const int stride_x, const int dilation_y, const int dilation_x,
                              const int pad_left, const int Cw, const uint pad_bit, const ulong image_row0,
                              const long iy_base, const int ox0) {
  const int tap = u / Cw;
  const int cw = u - tap * Cw;
  const int ky = tap / KW;
  const int kx = tap - ky * KW;
  const uint valid = unit_valid(C_IN, cw);
  const uint pad_unit = pad_bit ? valid : 0u;
  // Positions in 64 bits: strides, dilations and pads may be near INT_MAX.
  const long iy = iy_base + (long)ky * dilation_y;
  const long ix0 = (long)ox0 * stride_x - pad_left + (long)kx * dilation_x;
  if (iy < 0 || iy >= H) return (uint16)pad_unit;
  __global const uint* src = x + (image_row0 + (ulong)iy) * (ulong)W * (ulong)Cw + (ulong)cw;
  if (stride_x == 1 && Cw == 1 && ix0 >= 0 && ix0 + (WORDS_RUN - 1) < W) return vload16(0, src + ix0) & valid;
  uint taps[WORDS_RUN];
  long ix = ix0;
  for (int i = 0; i < WORDS_RUN; ++i) {
    taps[i] = ix >= 0 && ix < W ? src[(ulong)ix * (ulong)Cw] & valid : pad_unit;
    ix += stride_x;
  }
  return vload16(0, taps);
}

#if WORD_BITS == 64
// Word w of the run's patches where Cw is even: units 2w and 2w + 1 are channel words cw, cw + 1 of one tap,
// read as one 64-bit word per column (unit 2w in the low half, as the little-endian load gives it).
static inline word16_t run_word_of_pairs(__global const uint* x, const int w, const int C_IN, const int H,
                                         const int W, const int KW, const int stride_x, const int dilation_y,
                                         const int dilation_x, const int pad_left, const int Cw,
                                         const uint pad_bit, const ulong image_row0, const long iy_base,
                                         const int ox0) {
  const int tap = (2 * w) / Cw;
  const int cw = 2 * w - tap * Cw;
  const int ky = tap / KW;
  const int kx = tap - ky * KW;
  const ulong valid = (ulong)unit_valid(C_IN, cw) | ((ulong)unit_valid(C_IN, cw + 1) << 32);
  const ulong pad_word = pad_bit ? valid : 0ul;
  const long iy = iy_base + (long)ky * dilation_y;
  const long ix0 = (long)ox0 * stride_x - pad_left + (long)kx * dilation_x;
  if (iy < 0 || iy >= H) return (word16_t)pad_word;
  const ulong pair_stride = (ulong)(Cw / 2);  // in words, between neighbouring pixels
  __global const ulong* src =
      (__global const ulong*)(x + (image_row0 + (ulong)iy) * (ulong)W * (ulong)Cw + (ulong)cw);
  ulong words[WORDS_RUN];
  if (ix0 >= 0 && ix0 + (long)(WORDS_RUN - 1) * stride_x < W) {
    __global const ulong* p = src + (ulong)ix0 * pair_stride;
    if (stride_x == 1 && pair_stride == 1) return vload16(0, p) & valid;
    const ulong step = (ulong)stride_x * pair_stride;
    for (int i = 0; i < WORDS_RUN; ++i) words[i] = p[(ulong)i * step] & valid;
  } else {
    long ix = ix0;
    for (int i = 0; i < WORDS_RUN; ++i) {
      words[i] = ix >= 0 && ix < W ? src[(ulong)ix * pair_stride] & valid : pad_word;
      ix += stride_x;
    }
  }
  return vload16(0, words);
}
#endif

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void im2col_pack_units(
    __global const uint* restrict x, __global word_t* restrict patches,
    const im2col_pack_units_scalars scalars) {
  IM2COL_PACK_UNITS_SCALARS(SCALAR_LOCAL)
  const int g = (int)get_global_id(0);
  const int w = (int)get_global_id(1);
  if (g > runs) return;
  __global word_t* out = patches + (ulong)w * (ulong)P_pad;
  if (g == runs) {
    for (int p = P; p < P_pad; ++p) out[p] = 0;
    return;
  }
  int line, ox0, image, row;
  output_run(g, runs_per_row, WORDS_RUN, rows, &line, &ox0, &image, &row);
  const int n_columns = min(WORDS_RUN, OW - ox0);
  const ulong image_row0 = (ulong)(n0 + image) * (ulong)H;
  const long iy_base = (long)(oy0 + row) * stride_y - pad_top;
  word16_t v = (word16_t)0;
#if WORD_BITS == 64
  if (Cw % 2 == 0) {
    v = run_word_of_pairs(x, w, C_IN, H, W, KW, stride_x, dilation_y, dilation_x, pad_left, Cw, pad_bit,
                          image_row0, iy_base, ox0);
  } else
#endif
  {
    for (int part = 0; part < UNITS_PER_WORD; ++part) {
      const int u = w * UNITS_PER_WORD + part;
      if (u >= units) break;
      const uint16 lanes = run_unit(x, u, C_IN, H, W, KW, stride_x, dilation_y, dilation_x, pad_left, Cw,
                                    pad_bit, image_row0, iy_base, ox0);
#if WORD_BITS == 64
      v |= convert_ulong16(lanes) << (ulong)(32 * part);
#else
      v = lanes;
#endif
    }
  }
  out += (ulong)line * (ulong)OW + (ulong)ox0;
  if (n_columns == WORDS_RUN) {
    vstore16(v, 0, out);
  } else {
    word_t column_words[WORDS_RUN];
    vstore16(v, 0, column_words);
    for (int i = 0; i < n_columns; ++i) out[i] = column_words[i];
  }
}
