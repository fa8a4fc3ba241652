// SPDX-License-Identifier: Apache-2.0
// Binary fully-connected layer: xnor-popcount dot products of packed activations with packed weights.
//
// x: packed input (include/xnorcl/packed.hpp), Kwt = H*W*Cw words per image, image n at x[n*Kwt].
// w: the weights reordered once on the host into the same word layout as one image of x, row-major
//    w[o*Kwt + j] (word j of output o holds the weights of the 32 channels of word j of the input; bits of
//    channels >= C are 0).
// y: float32 [N][O], y = K - 2*D where D = sum of popcount(x ^ w) over the Kwt words and K = C*H*W: tail bits are
//    0 on both sides, so they never disagree, and K - 2D = 2P - K with P the agreeing bits (exact: K <= 2^24).
//
// LOCAL_VARIANT 1 (Khan et al., EUSIPCO 2018, section 3.2): one work-group of WG_SIZE work-items per (output o, image n);
//   work-item l sums the words j = l, l + WG_SIZE, ...; the partial sums are reduced in __local memory (tree,
//   barriers between steps; WG_SIZE is a power of two). NDRange global (O*WG_SIZE, N), local (WG_SIZE, 1).
// LOCAL_VARIANT 0: one work-item per (o, n), no __local memory; it reads its row and image 16 words at a
//   time (vload8s: a CPU's vector unit, a Mali core's vector loads), the last Kwt % 16 words one by one.
//   NDRange global (O rounded up to WG_SIZE, N), local (WG_SIZE, 1).

// Defaults only for compiling this file on its own (offline compilers, syntax checks); the runtime always
// passes its own values from src/runtime/device_profile.cpp.
#ifndef WG_SIZE
#define WG_SIZE 64
#endif
#ifndef LOCAL_VARIANT
#define LOCAL_VARIANT 0
#endif

#if LOCAL_VARIANT
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void binary_fc(
    __global const uint* restrict x, __global const uint* restrict w, __global float* restrict y, const int O,
    const int Kwt, const int K) {
  __local int partial[WG_SIZE];
  const int o = (int)get_group_id(0);
  const int l = (int)get_local_id(0);
  const int n = (int)get_global_id(1);
  __global const uint* xi = x + (ulong)n * (ulong)Kwt;
  __global const uint* wo = w + (ulong)o * (ulong)Kwt;
  int d = 0;
  for (int j = l; j < Kwt; j += WG_SIZE) d += (int)popcount(xi[j] ^ wo[j]);
  partial[l] = d;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = WG_SIZE / 2; step > 0; step >>= 1) {
    if (l < step) partial[l] += partial[l + step];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) y[(ulong)n * (ulong)O + (ulong)o] = (float)(K - 2 * partial[0]);
}
#else
// Lane-wise popcount of 8 words built from scalar ones, which PoCL's CPU compiler turns into one vector
// popcount sequence (its vector popcount works in 128-bit pieces).
inline uint8 popcount8(const uint8 v) {
  return (uint8)(popcount(v.s0), popcount(v.s1), popcount(v.s2), popcount(v.s3), popcount(v.s4),
                 popcount(v.s5), popcount(v.s6), popcount(v.s7));
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void binary_fc(
    __global const uint* restrict x, __global const uint* restrict w, __global float* restrict y, const int O,
    const int Kwt, const int K) {
  const int o = (int)get_global_id(0);
  const int n = (int)get_global_id(1);
  if (o >= O) return;
  __global const uint* xi = x + (ulong)n * (ulong)Kwt;
  __global const uint* wo = w + (ulong)o * (ulong)Kwt;
  const int blocks = Kwt / 16;
  uint8 acc0 = 0u, acc1 = 0u;
  for (int b = 0; b < blocks; ++b) {
    acc0 += popcount8(vload8(2 * b, xi) ^ vload8(2 * b, wo));
    acc1 += popcount8(vload8(2 * b + 1, xi) ^ vload8(2 * b + 1, wo));
  }
  // The lanes summed from memory: summed as a vector expression, LLVM emits a shuffle reduction that crashes
  // Oclgrind 21.10's uninitialized-value checker.
  uint lanes[8];
  vstore8(acc0 + acc1, 0, lanes);
  uint d = 0;
  for (int i = 0; i < 8; ++i) d += lanes[i];
  for (int j = blocks * 16; j < Kwt; ++j) d += popcount(xi[j] ^ wo[j]);
  y[(ulong)n * (ulong)O + (ulong)o] = (float)(K - 2 * (int)d);
}
#endif
