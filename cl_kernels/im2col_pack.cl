// im2col with packing: reads X once, binarizes it, applies stride, dilation and padding and writes the packed
// bit patches that xnor_gemm.cl multiplies with the packed filters (the paper's Algorithm 1, generalised).
//
// Reads:
//   x          the input, NCHW ([N, C_IN, H, W]), float32 (im2col_pack_f32, read as raw 32-bit patterns so
//              that no float operation can flush a subnormal) or uint8 (im2col_pack_u8, converted with
//              (float)x, exact for 0..255). Batch indices count from the buffer's first image.
//   thr_keys   [C_IN] uint: the order key of each channel's threshold t_c (computed on the host with the same
//              key() as below), so that "x > t_c" is an unsigned comparison of keys: exact IEEE order, -0 == +0,
//              subnormals count as themselves even where the device flushes them; NaN input is -1.
// Writes:
//   patches    k-major packed bit matrix, patches[w * P_pad + p] (uint), for w in [0, Kw) and p in [0, P_pad).
//              K = C_IN*KH*KW bits per patch in the filter's flat order k = (c*KH + ky)*KW + kx, packed densely:
//              bit j (LSB = 0) of word w is k = 32*w + j; Kw = ceil(K/32). Bits k >= K are 0 (the host packs the
//              filters the same way, so they agree there and xor to 0). Columns p >= P (the GEMM's tile padding)
//              are written as 0, so the GEMM never reads uninitialized memory.
//   Why this layout: dense packing of (c, ky, kx) wastes at most 31 bits per patch whatever C_IN is, so a
//   3-channel 5x5 first layer (K = 75 -> 3 words) pays no channel padding, while a layer of hundreds of channels
//   gets long runs of full words. k-major ("word w of every patch, then word w+1") makes both this kernel's
//   stores and the GEMM's loads contiguous across adjacent output positions p.
//
// Chunk: the kernel packs the output positions of rows [oy0, oy0 + rows) of batches [n0, n0 + n_count) (the
// host splits large layers, SPEC section 4). Column p is batch n0 + p / (rows*OW), output row
// oy0 + (p % (rows*OW)) / OW, output column (p % (rows*OW)) % OW. P = n_count*rows*OW.
// Taps outside the input take the pad bit (1 for pad_value +1, else 0; thresholds never apply to them).
//
// NDRange: 2-D, global (P_pad rounded up to WG_SIZE, Kw), local (WG_SIZE, 1); one work-item builds one word.

#ifndef WG_SIZE
#error "WG_SIZE must be defined by the build options (-DWG_SIZE=...)"
#endif

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

#define DEFINE_IM2COL_PACK(NAME, TYPE, LOAD_BITS)                                                              \
  __kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void NAME(                                    \
      __global const TYPE* restrict x, __global uint* restrict patches, __global const uint* restrict thr_keys, \
      const int C_IN, const int H, const int W, const int KH, const int KW, const int stride_y,             \
      const int stride_x, const int dilation_y, const int dilation_x, const int pad_top, const int pad_left,  \
      const int OW, const int K, const int n0, const int oy0, const int rows, const int P, const int P_pad,    \
      const uint pad_bit) {                                                                                   \
    const int p = (int)get_global_id(0);                                                                      \
    const int w = (int)get_global_id(1);                                                                      \
    if (p >= P_pad) return;                                                                                   \
    const ulong out_index = (ulong)w * (ulong)P_pad + (ulong)p;                                               \
    if (p >= P) {                                                                                             \
      patches[out_index] = 0u;                                                                                \
      return;                                                                                                 \
    }                                                                                                         \
    /* Quotient and remainder written out: LLVM's div/rem pairing emits `freeze`, which Oclgrind 21.10's */ \
    /* uninitialized-value checker cannot execute. */                                                        \
    const int per_image = rows * OW;                                                                          \
    const int image = p / per_image;                                                                          \
    const int r = p - image * per_image;                                                                      \
    const int n = n0 + image;                                                                                 \
    const int row = r / OW;                                                                                   \
    const int oy = oy0 + row;                                                                                 \
    const int ox = r - row * OW;                                                                              \
    const int iy0 = oy * stride_y - pad_top;                                                                  \
    const int ix0 = ox * stride_x - pad_left;                                                                 \
    /* Decode k0 = 32*w once, then step the counters. */                                                     \
    const int k0 = w * 32;                                                                                    \
    const int taps = KH * KW;                                                                                 \
    int c = k0 / taps;                                                                                        \
    const int rem = k0 - c * taps;                                                                            \
    int ky = rem / KW;                                                                                        \
    int kx = rem - ky * KW;                                                                                   \
    const ulong plane = (ulong)H * (ulong)W;                                                                  \
    ulong channel_base = ((ulong)n * (ulong)C_IN + (ulong)c) * plane;                                         \
    uint t_key = thr_keys[c];                                                                                 \
    const int count = min(32, K - k0);                                                                        \
    uint word = 0u;                                                                                           \
    for (int j = 0; j < count; ++j) {                                                                         \
      const int iy = iy0 + ky * dilation_y;                                                                   \
      const int ix = ix0 + kx * dilation_x;                                                                   \
      uint bit;                                                                                               \
      if (iy >= 0 && iy < H && ix >= 0 && ix < W) {                                                           \
        const uint u = LOAD_BITS(x, channel_base + (ulong)iy * (ulong)W + (ulong)ix);                         \
        bit = order_key(u) > t_key ? 1u : 0u;                                                                 \
      } else {                                                                                                \
        bit = pad_bit;                                                                                        \
      }                                                                                                       \
      word |= bit << j;                                                                                       \
      if (++kx == KW) {                                                                                       \
        kx = 0;                                                                                               \
        if (++ky == KH) {                                                                                     \
          ky = 0;                                                                                             \
          if (j + 1 < count) {                                                                                \
            ++c;                                                                                              \
            channel_base += plane;                                                                            \
            t_key = thr_keys[c];                                                                              \
          }                                                                                                   \
        }                                                                                                     \
      }                                                                                                       \
    }                                                                                                         \
    patches[out_index] = word;                                                                                \
  }

DEFINE_IM2COL_PACK(im2col_pack_f32, uint, LOAD_BITS_F32)
DEFINE_IM2COL_PACK(im2col_pack_u8, uchar, LOAD_BITS_U8)
