// SPDX-License-Identifier: Apache-2.0
// Peak-rate kernels of `xnorcl-bench peak`: one kernel per word type, xor_<type> and
// fma_<type>. The 64-bit integer kernels are built only with -DPEAK_ULONG, in a program of their own, so a
// device without 64-bit integers still measures the others.
//
// Every work-item keeps 8 independent accumulators, so the device can overlap their latencies; changes an
// operand every iteration, so nothing can be hoisted out of the loop; and stores its results, so nothing is
// dead code.
//
// xor_T: c_j += POPCOUNT(a_j ^ b), then b += step (widened to every lane). Per iteration and accumulator:
//        one xor-popcount of a whole word, 8*sizeof(T) binary multiply-accumulates. b is shared by the 8
//        accumulators: the operand update costs one add per 8 xor-popcounts (a GEMM pays loads instead).
// fma_T: c_j = fma(c_j, m, a_j), 2 flops per lane. The accumulator is the operand that changes; with
//        0 < m < 1 it converges to a_j / (1 - m) and never overflows. fma() is explicit and the program is
//        built without fast-math options, so the compiler can neither drop nor split it.
// xorblk_T / fmablk_T: the GEMM's shape. Every iteration loads 4 "filter" words (the same for every
//        work-item, like a filter row) and 4 "patch" words (adjacent work-items read adjacent words) and
//        updates a 4 x 4 block of accumulators (16 independent ones): xorblk c_ij += POPCOUNT(a_i ^ b_j),
//        fmablk c_ij = fma(a_i, b_j, c_ij). Compilers that will not vectorize the loop-carried update of the
//        accumulator kernels (PoCL: LLVM's loop vectorizer turns xor_ulong into 4 iterations per ymm register,
//        while the register-blocked GEMM gets a whole vector of patch words per filter word) reach their peak
//        here. The host reports, per type, the faster of the two kernels (the table names it), so the peak is
//        an upper bound for kernels of either shape.
//        Launched as `rounds` rounds of `steps` = 8 steps with strides a_stride = 4, b_stride = 4 * local size
//        (<= 256), so operand indices stay inside the first 4096 elements of `in` (filter words 0..31, patch
//        words 1024..3071): every type reads inside the buffer and the working set stays in cache, as a GEMM's
//        tiles do.

// Popcounts: with -DNATIVE_POPCOUNT (the library's kernels count bits with the CPU's vector popcount
// instruction, spelled out in assembly for PoCL; cl_kernels/xnor_gemm.cl) the types that those kernels count
// with the instruction (vectors of 4 and 8 words) count with it here too, so that the peak is one of the
// code the kernels run; the other types keep `popcount`.
#ifdef NATIVE_POPCOUNT
#define NATIVE_POPCOUNT_OF(T, INSTRUCTION)                        \
  __attribute__((overloadable)) T word_popcount(const T x) {       \
    T r;                                                          \
    __asm__(INSTRUCTION " %1, %0" : "=v"(r) : "v"(x));            \
    return r;                                                     \
  }
#define PORTABLE_POPCOUNT_OF(T) \
  __attribute__((overloadable)) T word_popcount(const T x) { return popcount(x); }
PORTABLE_POPCOUNT_OF(uint)
PORTABLE_POPCOUNT_OF(uint2)
NATIVE_POPCOUNT_OF(uint4, "vpopcntd")
#ifdef PEAK_ULONG
PORTABLE_POPCOUNT_OF(ulong)
PORTABLE_POPCOUNT_OF(ulong2)
NATIVE_POPCOUNT_OF(ulong4, "vpopcntq")
NATIVE_POPCOUNT_OF(ulong8, "vpopcntq")
#endif
#define POPCOUNT word_popcount
#else
#define POPCOUNT popcount
#endif

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
      c0 += POPCOUNT(a0 ^ b);                                                                           \
      c1 += POPCOUNT(a1 ^ b);                                                                           \
      c2 += POPCOUNT(a2 ^ b);                                                                           \
      c3 += POPCOUNT(a3 ^ b);                                                                           \
      c4 += POPCOUNT(a4 ^ b);                                                                           \
      c5 += POPCOUNT(a5 ^ b);                                                                           \
      c6 += POPCOUNT(a6 ^ b);                                                                           \
      c7 += POPCOUNT(a7 ^ b);                                                                           \
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

#define BLOCK_OPERANDS(T)                                    \
  const T a0 = fp[0], a1 = fp[1], a2 = fp[2], a3 = fp[3];    \
  const T b0 = pp[0], b1 = pp[1], b2 = pp[2], b3 = pp[3];

#define BLOCK_ROW(OP, i) \
  OP(c##i##0, a##i, b0); \
  OP(c##i##1, a##i, b1); \
  OP(c##i##2, a##i, b2); \
  OP(c##i##3, a##i, b3);

#define BLOCK_STORE                                                                            \
  out[get_global_id(0)] = (((c00 + c01) + (c02 + c03)) + ((c10 + c11) + (c12 + c13))) +      \
                          (((c20 + c21) + (c22 + c23)) + ((c30 + c31) + (c32 + c33)));

#define XOR_STEP(c, a, b) c += POPCOUNT((a) ^ (b))
#define FMA_STEP(c, a, b) c = fma((a), (b), c)

// rounds x steps iterations; the strides are run-time values, as a GEMM's are, so the compiler treats the
// loads as a GEMM's (no unrolling into loop-invariant loads, no gathers across iterations).
#define BLOCK_PEAK(NAME, T, STEP, INIT)                                                                   \
  __kernel void NAME##_##T(__global const T* restrict in, __global T* restrict out, const int rounds,     \
                           const int steps, const int a_stride, const int b_stride) {                    \
    const int lid = (int)get_local_id(0);                                                                 \
    T c00 = INIT, c01 = INIT, c02 = INIT, c03 = INIT, c10 = INIT, c11 = INIT, c12 = INIT, c13 = INIT;     \
    T c20 = INIT, c21 = INIT, c22 = INIT, c23 = INIT, c30 = INIT, c31 = INIT, c32 = INIT, c33 = INIT;     \
    for (int r = 0; r < rounds; ++r) {                                                                    \
      __global const T* restrict fp = in;                                                                 \
      __global const T* restrict pp = in + 1024 + lid * 4;                                                \
      for (int s = 0; s < steps; ++s) {                                                                   \
        BLOCK_OPERANDS(T)                                                                                 \
        BLOCK_ROW(STEP, 0)                                                                                \
        BLOCK_ROW(STEP, 1)                                                                                \
        BLOCK_ROW(STEP, 2)                                                                                \
        BLOCK_ROW(STEP, 3)                                                                                \
        fp += a_stride;                                                                                   \
        pp += b_stride;                                                                                   \
      }                                                                                                   \
    }                                                                                                     \
    BLOCK_STORE                                                                                           \
  }

#ifdef PEAK_ULONG
XOR_PEAK(ulong)
XOR_PEAK(ulong2)
XOR_PEAK(ulong4)
XOR_PEAK(ulong8)
BLOCK_PEAK(xorblk, ulong, XOR_STEP, 0)
BLOCK_PEAK(xorblk, ulong2, XOR_STEP, 0)
BLOCK_PEAK(xorblk, ulong4, XOR_STEP, 0)
BLOCK_PEAK(xorblk, ulong8, XOR_STEP, 0)
#else
XOR_PEAK(uint)
XOR_PEAK(uint2)
XOR_PEAK(uint4)
BLOCK_PEAK(xorblk, uint, XOR_STEP, 0)
BLOCK_PEAK(xorblk, uint2, XOR_STEP, 0)
BLOCK_PEAK(xorblk, uint4, XOR_STEP, 0)
FMA_PEAK(float)
FMA_PEAK(float4)
FMA_PEAK(float8)
FMA_PEAK(float16)
BLOCK_PEAK(fmablk, float, FMA_STEP, 0.0f)
BLOCK_PEAK(fmablk, float4, FMA_STEP, 0.0f)
BLOCK_PEAK(fmablk, float8, FMA_STEP, 0.0f)
BLOCK_PEAK(fmablk, float16, FMA_STEP, 0.0f)
#endif
