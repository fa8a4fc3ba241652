// SPDX-License-Identifier: Apache-2.0
// transpose_copy (src/ops/transpose.cpp): a Transpose of 32-bit words (float32 values, copied bitwise). The
// output is row-major [d0, d1, d2, d3] (d0 implied by `total`); output axis k reads the input with stride
// s_k (in words), so out[i0, i1, i2, i3] = in[i0*s0 + i1*s1 + i2*s2 + i3*s3]. The host passes a simplified
// permutation padded on the left with axes of size 1 (stride 0).
//
// NDRange: 1-D, global rounded up to WG_SIZE, local WG_SIZE; `total` = d0*d1*d2*d3 real work-items, one per
// output word, consecutive ones writing consecutive words. Every index and offset is below total <= INT_MAX.
// Quotients and remainders written out (r = a - q*b) for Oclgrind 21.10.

#ifndef WG_SIZE
#define WG_SIZE 64
#endif

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void transpose_copy(
    __global const uint* restrict in, __global uint* restrict out, const int d1, const int d2, const int d3,
    const int s0, const int s1, const int s2, const int s3, const int total) {
  const int i = (int)get_global_id(0);
  if (i >= total) return;
  const int q3 = i / d3;
  const int i3 = i - q3 * d3;
  const int q2 = q3 / d2;
  const int i2 = q3 - q2 * d2;
  const int i0 = q2 / d1;
  const int i1 = q2 - i0 * d1;
  out[i] = in[i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3];
}
