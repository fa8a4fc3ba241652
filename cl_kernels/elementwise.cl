// SPDX-License-Identifier: Apache-2.0
// Add, Subtract, Multiply of two float32 tensors (src/ops/elementwise.cpp). `op`: 0 add, 1 subtract,
// 2 multiply, the same for every work-item. One IEEE operation per element, no contraction.
//
// eltwise_same: both operands have the result's shape; element i of each.
// eltwise_broadcast and eltwise_rows: the result's 4-D coordinates (i0, i1, i2, i3) over sizes (.., D1, D2, D3); each operand
//   is read at sum(i_k * stride_k) with stride 0 along its broadcast axes (numpy's rule).
//   The host merges adjacent axes each operand walks as one, so the innermost axis D3 is as long as it can be.
//
// NDRange: eltwise_same and eltwise_broadcast 1-D, global rounded up to WG_SIZE, local WG_SIZE; `total` real
// work-items, one per output element, consecutive work-items on consecutive outputs. eltwise_rows 2-D,
// global (D3 rounded up to WG_SIZE, D0 * D1 * D2), local (WG_SIZE, 1): a row of D3 outputs per range row, so
// a work-item divides only its row index. Quotients and remainders written out
// (r = a - q*b) for Oclgrind 21.10.

#ifndef WG_SIZE
#define WG_SIZE 64
#endif

inline float arith(const float a, const float b, const int op) {
  if (op == 0) return a + b;
  if (op == 1) return a - b;
  return a * b;
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void eltwise_same(
    __global const float* a, __global const float* b, __global float* restrict out, const int op,
    const int total) {
  const int i = (int)get_global_id(0);
  if (i >= total) return;
  out[i] = arith(a[i], b[i], op);
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void eltwise_broadcast(
    __global const float* a, __global const float* b, __global float* restrict out, const int op,
    const int D1, const int D2, const int D3, const int a0, const int a1, const int a2, const int a3,
    const int b0, const int b1, const int b2, const int b3, const int total) {
  const int i = (int)get_global_id(0);
  if (i >= total) return;
  const int q3 = i / D3;
  const int i3 = i - q3 * D3;
  const int q2 = q3 / D2;
  const int i2 = q3 - q2 * D2;
  const int i0 = q2 / D1;
  const int i1 = q2 - i0 * D1;
  const int ia = i0 * a0 + i1 * a1 + i2 * a2 + i3 * a3;
  const int ib = i0 * b0 + i1 * b1 + i2 * b2 + i3 * b3;
  out[i] = arith(a[ia], b[ib], op);
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void eltwise_rows(
    __global const float* a, __global const float* b, __global float* restrict out, const int op,
    const int D1, const int D2, const int D3, const int a0, const int a1, const int a2, const int a3,
    const int b0, const int b1, const int b2, const int b3, const int total) {
  const int i3 = (int)get_global_id(0);
  if (i3 >= D3) return;
  const int row = (int)get_global_id(1);
  const int q2 = row / D2;
  const int i2 = row - q2 * D2;
  const int i0 = q2 / D1;
  const int i1 = q2 - i0 * D1;
  // Along the innermost axis (never of size 1 after merging) each operand is contiguous (stride 1) or
  // broadcast (stride 0), and not both broadcast: the cases written apart, so that consecutive work-items
  // read consecutive addresses or one.
  __global const float* pa = a + (i0 * a0 + i1 * a1 + i2 * a2);
  __global const float* pb = b + (i0 * b0 + i1 * b1 + i2 * b2);
  __global float* o = out + row * D3;
  if (a3 == 0)
    o[i3] = arith(pa[0], pb[i3], op);
  else if (b3 == 0)
    o[i3] = arith(pa[i3], pb[0], op);
  else
    o[i3] = arith(pa[i3], pb[i3], op);
}
