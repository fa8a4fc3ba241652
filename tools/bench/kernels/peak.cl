// Peak-rate kernels of `xnorcl-bench peak` (SPEC section 5): one kernel per word type, xor_<type> and
// fma_<type>. The 64-bit integer kernels are built only with -DPEAK_ULONG, in a program of their own, so a
// device without 64-bit integers still measures the others.
//
// Every work-item keeps 8 independent accumulators, so the device can overlap their latencies; changes an
// operand every iteration, so nothing can be hoisted out of the loop; and stores its results, so nothing is
// dead code.
//
// xor_T: c_j += popcount(a_j ^ b), then b += step (widened to every lane). Per iteration and accumulator:
//        one xor-popcount of a whole word, 8*sizeof(T) binary multiply-accumulates. b is shared by the 8
//        accumulators: the operand update costs one add per 8 xor-popcounts (a GEMM pays loads instead).
// fma_T: c_j = fma(c_j, m, a_j), 2 flops per lane. The accumulator is the operand that changes; with
//        0 < m < 1 it converges to a_j / (1 - m) and never overflows. fma() is explicit and the program is
//        built without fast-math options, so the compiler can neither drop nor split it.

#define LOAD_OPERANDS(T)                                       \
  const size_t gid = get_global_id(0);                         \
  const T a0 = in[(gid * 8 + 0) % 4096], a1 = in[(gid * 8 + 1) % 4096]; \
  const T a2 = in[(gid * 8 + 2) % 4096], a3 = in[(gid * 8 + 3) % 4096]; \
  const T a4 = in[(gid * 8 + 4) % 4096], a5 = in[(gid * 8 + 5) % 4096]; \
  const T a6 = in[(gid * 8 + 6) % 4096], a7 = in[(gid * 8 + 7) % 4096];

#define STORE_SUM out[gid] = ((c0 + c1) + (c2 + c3)) + ((c4 + c5) + (c6 + c7));

#define XOR_PEAK(T)                                                                                     \
  __kernel void xor_##T(__global const T* restrict in, __global T* restrict out, const int iterations, \
                        const uint step) {                                                              \
    LOAD_OPERANDS(T)                                                                                    \
    T b = in[gid % 4096];                                                                               \
    T c0 = 0, c1 = 0, c2 = 0, c3 = 0, c4 = 0, c5 = 0, c6 = 0, c7 = 0;                                   \
    for (int i = 0; i < iterations; ++i) {                                                              \
      c0 += popcount(a0 ^ b);                                                                           \
      c1 += popcount(a1 ^ b);                                                                           \
      c2 += popcount(a2 ^ b);                                                                           \
      c3 += popcount(a3 ^ b);                                                                           \
      c4 += popcount(a4 ^ b);                                                                           \
      c5 += popcount(a5 ^ b);                                                                           \
      c6 += popcount(a6 ^ b);                                                                           \
      c7 += popcount(a7 ^ b);                                                                           \
      b += step;                                                                                        \
    }                                                                                                   \
    STORE_SUM                                                                                           \
  }

#define FMA_PEAK(T)                                                                                     \
  __kernel void fma_##T(__global const T* restrict in, __global T* restrict out, const int iterations, \
                        const float m) {                                                                \
    LOAD_OPERANDS(T)                                                                                    \
    const T mv = (T)(m);                                                                                \
    T c0 = a7, c1 = a6, c2 = a5, c3 = a4, c4 = a3, c5 = a2, c6 = a1, c7 = a0;                           \
    for (int i = 0; i < iterations; ++i) {                                                              \
      c0 = fma(c0, mv, a0);                                                                             \
      c1 = fma(c1, mv, a1);                                                                             \
      c2 = fma(c2, mv, a2);                                                                             \
      c3 = fma(c3, mv, a3);                                                                             \
      c4 = fma(c4, mv, a4);                                                                             \
      c5 = fma(c5, mv, a5);                                                                             \
      c6 = fma(c6, mv, a6);                                                                             \
      c7 = fma(c7, mv, a7);                                                                             \
    }                                                                                                   \
    STORE_SUM                                                                                           \
  }

#ifdef PEAK_ULONG
XOR_PEAK(ulong)
XOR_PEAK(ulong2)
XOR_PEAK(ulong4)
#else
XOR_PEAK(uint)
XOR_PEAK(uint2)
XOR_PEAK(uint4)
FMA_PEAK(float)
FMA_PEAK(float4)
FMA_PEAK(float8)
FMA_PEAK(float16)
#endif
