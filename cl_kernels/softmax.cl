// SPDX-License-Identifier: Apache-2.0
// softmax_f32 (src/ops/softmax.cpp): the tensor as [outer, length, inner]; work-group `line` (o, i) computes
// out[o, k, i] = exp(x[o, k, i] - m) / s over k < length, m the line's maximum and s the sum of exp(x - m).
// Work-item lid handles k = lid, lid + WG_SIZE, ...; the maximum and the (compensated, Kahan) partial sums
// are combined in a fixed tree in local memory, so the result does not depend on scheduling.
//
// NDRange: 2-D, global (WG_SIZE, outer * inner), local (WG_SIZE, 1): one work-group per line. Quotients and
// remainders written out (r = a - q*b) for Oclgrind 21.10.

#ifndef WG_SIZE
#define WG_SIZE 64
#endif

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void softmax_f32(
    __global const float* restrict in, __global float* restrict out, const int length, const int inner) {
  __local float partial[WG_SIZE];
  const int lid = (int)get_local_id(0);
  const int line = (int)get_global_id(1);
  const int o = line / inner;
  const int i = line - o * inner;
  const long base = (long)o * length * inner + i;
  __global const float* x = in + base;
  __global float* y = out + base;

  float high = -INFINITY;
  for (int k = lid; k < length; k += WG_SIZE) high = fmax(high, x[(long)k * inner]);
  partial[lid] = high;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int span = WG_SIZE / 2; span > 0; span /= 2) {
    if (lid < span) partial[lid] = fmax(partial[lid], partial[lid + span]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  high = partial[0];
  barrier(CLK_LOCAL_MEM_FENCE);

  float sum = 0.0f, carry = 0.0f;
  for (int k = lid; k < length; k += WG_SIZE) {
    const float e = exp(x[(long)k * inner] - high) - carry;
    const float t = sum + e;
    carry = (t - sum) - e;
    sum = t;
  }
  partial[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int span = WG_SIZE / 2; span > 0; span /= 2) {
    if (lid < span) partial[lid] += partial[lid + span];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float total = partial[0];
  for (int k = lid; k < length; k += WG_SIZE) y[(long)k * inner] = exp(x[(long)k * inner] - high) / total;
}
