// SPDX-License-Identifier: Apache-2.0
// reduce_mean_f32 (src/ops/reduce_mean.cpp): out[row] = mean of in[row * count + k], k < count.
// Work-item lid of row `row` adds the values k = lid, lid + WG_SIZE, ... (consecutive work-items read
// consecutive values) with a compensated (Kahan) float sum (a sum past FLT_MAX stays +-inf: its carry, which
// would make it NaN, is not taken); the WG_SIZE partial sums are then added in a fixed tree in local memory,
// so the result does not depend on scheduling.
//
// reduce_mean_rows: the same mean for short rows (count below WG_SIZE, where most of a work-group per row
// would idle): each work-item takes ROWS_PER_ITEM rows, one per lane of a float4, each a compensated sum in
// order (the same operations per lane as one row alone, so the same bits). A row's sum is one chain of
// dependent operations; four rows side by side run four chains in the time of one, where PoCL ran a
// work-item's single chain after the other's (a network's final 512 x 7 x 7 mean took 0.07 ms).
//
// NDRange: reduce_mean_f32 2-D, global (WG_SIZE, rows), local (WG_SIZE, 1): one work-group per output value.
// reduce_mean_rows 1-D, global ceil(rows / ROWS_PER_ITEM) rounded up to WG_SIZE, local WG_SIZE.

#ifndef WG_SIZE
#define WG_SIZE 64
#endif

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void reduce_mean_f32(
    __global const float* restrict in, __global float* restrict out, const int count) {
  __local float partial[WG_SIZE];
  const int lid = (int)get_local_id(0);
  const int row = (int)get_global_id(1);
  __global const float* x = in + (long)row * count;
  float sum = 0.0f, carry = 0.0f;
  for (int k = lid; k < count; k += WG_SIZE) {
    const float y = x[k] - carry;
    const float t = sum + y;
    carry = isinf(t) ? 0.0f : (t - sum) - y;  // past FLT_MAX: inf, not inf - inf = NaN
    sum = t;
  }
  partial[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int span = WG_SIZE / 2; span > 0; span /= 2) {
    if (lid < span) partial[lid] += partial[lid + span];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) out[row] = partial[0] / (float)count;
}

#define ROWS_PER_ITEM 4

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void reduce_mean_rows(
    __global const float* restrict in, __global float* restrict out, const int count, const int rows) {
  const int first = (int)get_global_id(0) * ROWS_PER_ITEM;
  if (first >= rows) return;
  // Lanes past the last row read the last row again and are not stored.
  __global const float* x0 = in + (long)first * count;
  __global const float* x1 = in + (long)min(first + 1, rows - 1) * count;
  __global const float* x2 = in + (long)min(first + 2, rows - 1) * count;
  __global const float* x3 = in + (long)min(first + 3, rows - 1) * count;
  float4 sum = 0.0f, carry = 0.0f;
  for (int k = 0; k < count; ++k) {
    const float4 y = (float4)(x0[k], x1[k], x2[k], x3[k]) - carry;
    const float4 t = sum + y;
    carry = select((t - sum) - y, (float4)(0.0f), isinf(t));  // past FLT_MAX: inf, not inf - inf = NaN
    sum = t;
  }
  const float4 mean = sum / (float)count;
  out[first] = mean.s0;
  if (first + 1 < rows) out[first + 1] = mean.s1;
  if (first + 2 < rows) out[first + 2] = mean.s2;
  if (first + 3 < rows) out[first + 3] = mean.s3;
}
