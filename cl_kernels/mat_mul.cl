// Float matrix product (MatMul-0 with constant weights): y [N][M] = x [N][K] * W.
//
// The host stores W as [K][Mp] (transposed where the node's weights are [M, K]), Mp = M rounded up to 8,
// zero-filled: each work-item computes 8 consecutive outputs of one row (one float8), reading one vector of
// weights per k, and neighbouring work-items read neighbouring vectors (coalesced). The classifier's
// product (N = 1) is a matrix-vector product, bound by reading the weights once.
// Work-item index: output block fastest, then row. Epilogue as convolution.cl, per output column m:
// y = fma(acc, scale[m], bias[m]), then relu (y > 0 ? y : 0).

#ifndef WG_SIZE
#define WG_SIZE 64
#endif

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void mat_mul(
    __global const float* restrict x, __global const float* restrict w, __global const float* restrict scale,
    __global const float* restrict bias, __global float* restrict y, const int K, const int M,
    const int m_blocks, const int total, const int relu) {
  const int idx = (int)get_global_id(0);
  if (idx >= total) return;
  const int n = idx / m_blocks;
  const int m0 = (idx - n * m_blocks) * 8;  // not idx % m_blocks: a div/rem pair makes LLVM emit `freeze`,
                                            // which Oclgrind 21.10's uninitialized-value checker cannot run
  const int Mp = m_blocks * 8;
  __global const float* xr = x + (long)n * K;
  float8 a0 = 0.0f, a1 = 0.0f;
  int k = 0;
  // Two accumulators halve the dependency chain of the FMAs; their sum is the same for every run.
  for (; k + 2 <= K; k += 2) {
    a0 = fma((float8)(xr[k]), vload8(0, w + (long)k * Mp + m0), a0);
    a1 = fma((float8)(xr[k + 1]), vload8(0, w + (long)(k + 1) * Mp + m0), a1);
  }
  if (k < K) a0 = fma((float8)(xr[k]), vload8(0, w + (long)k * Mp + m0), a0);
  float8 v = fma(a0 + a1, vload8(0, scale + m0), vload8(0, bias + m0));
  if (relu) v = select((float8)(0.0f), v, v > (float8)(0.0f));
  __global float* yr = y + (long)n * M;
  if (m0 + 8 <= M) {
    vstore8(v, 0, yr + m0);
  } else {
    float t[8];
    vstore8(v, 0, t);
    for (int i = 0; m0 + i < M; ++i) yr[m0 + i] = t[i];
  }
}
