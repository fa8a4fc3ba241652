// SPDX-License-Identifier: Apache-2.0
// Float matrix product (MatMul-0 with constant weights): y [N][M] = x [N][K] * W, in tiles of 8 outputs of
// one row (one float8). The classifier's product (N = 1) is a matrix-vector product, bound by reading the
// weights once; Mp = M rounded up to 8, weights and epilogue tables zero-filled (scale 1) past M. W is stored
// [Mp/8][K][8] (transposed where the node's weights are [M, K]): each tile's weights are one contiguous
// block, read front to back.
//
// LOCAL_VARIANT 0: one work-item per tile (index: tile fastest, then row), k in order: one stream of weights
//   per work-item. (Stored [K][Mp], neighbouring work-items reading neighbouring vectors and each work-item
//   stepping a whole row of W per k, PoCL ran the classifier's 512 x 1000 product in 0.26-0.31 ms; as
//   streams in 0.13-0.16 ms.) NDRange 1-D over `total` tiles.
// LOCAL_VARIANT 1: one work-group per tile, so that a matrix-vector product still fills a GPU (the
//   classifier has only 125 tiles): work-item l sums k = l, l + WG_SIZE, ...; the partial sums are reduced
//   in __local memory (tree, barriers between steps; WG_SIZE is a power of two), in the same order every
//   run. NDRange total * WG_SIZE.
// Epilogue as convolution.cl, per output column m: y = fma(acc, scale[m], bias[m]), then relu
// (y > 0 ? y : 0).

#ifndef WG_SIZE
#define WG_SIZE 64
#endif
#ifndef LOCAL_VARIANT
#define LOCAL_VARIANT 0
#endif

inline void store_tile(__global float* restrict yr, float8 acc, __global const float* restrict scale,
                       __global const float* restrict bias, const int m0, const int M, const int relu) {
  float8 v = fma(acc, vload8(0, scale + m0), vload8(0, bias + m0));
  if (relu) v = select((float8)(0.0f), v, v > (float8)(0.0f));
  if (m0 + 8 <= M) {
    vstore8(v, 0, yr + m0);
  } else {
    float t[8];
    vstore8(v, 0, t);
    for (int i = 0; m0 + i < M; ++i) yr[m0 + i] = t[i];
  }
}

#if LOCAL_VARIANT
__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void mat_mul(
    __global const float* restrict x, __global const float* restrict w, __global const float* restrict scale,
    __global const float* restrict bias, __global float* restrict y, const int K, const int M,
    const int m_blocks, const int total, const int relu) {
  __local float8 partial[WG_SIZE];
  const int tile = (int)get_group_id(0);  // every work-item of a group agrees: no divergent barrier
  if (tile >= total) return;
  const int l = (int)get_local_id(0);
  const int n = tile / m_blocks;
  const int m0 = (tile - n * m_blocks) * 8;  // not tile % m_blocks: see the global variant
  __global const float* xr = x + (long)n * K;
  __global const float* wb = w + (long)m0 * K;  // block m0 / 8 of [Mp/8][K][8]
  float8 acc = 0.0f;
  for (int k = l; k < K; k += WG_SIZE) acc = fma((float8)(xr[k]), vload8(k, wb), acc);
  partial[l] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = WG_SIZE / 2; step > 0; step >>= 1) {
    if (l < step) partial[l] += partial[l + step];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) store_tile(y + (long)n * M, partial[0], scale, bias, m0, M, relu);
}
#else

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void mat_mul(
    __global const float* restrict x, __global const float* restrict w, __global const float* restrict scale,
    __global const float* restrict bias, __global float* restrict y, const int K, const int M,
    const int m_blocks, const int total, const int relu) {
  const int idx = (int)get_global_id(0);
  if (idx >= total) return;
  const int n = idx / m_blocks;
  const int m0 = (idx - n * m_blocks) * 8;  // not idx % m_blocks: a div/rem pair makes LLVM emit `freeze`,
                                            // which Oclgrind 21.10's uninitialized-value checker cannot run
  __global const float* xr = x + (long)n * K;
  __global const float* wb = w + (long)m0 * K;  // block m0 / 8 of [Mp/8][K][8]
  float8 a0 = 0.0f, a1 = 0.0f;
  int k = 0;
  // Two accumulators halve the dependency chain of the FMAs; their sum is the same for every run.
  for (; k + 2 <= K; k += 2) {
    a0 = fma((float8)(xr[k]), vload8(k, wb), a0);
    a1 = fma((float8)(xr[k + 1]), vload8(k + 1, wb), a1);
  }
  if (k < K) a0 = fma((float8)(xr[k]), vload8(k, wb), a0);
  store_tile(y + (long)n * M, a0 + a1, scale, bias, m0, M, relu);
}
#endif
