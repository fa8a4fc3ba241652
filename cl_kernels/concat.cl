// SPDX-License-Identifier: Apache-2.0
// concat_copy (src/ops/concat.cpp): one input of a Concat into its place in the output, both seen as rows
// of 32-bit words (float32 values or packed bit words, copied bitwise): in is [outer, width], out is
// [outer, out_width]; in[r, j] goes to out[r, offset + j].
//
// NDRange: 1-D, global rounded up to WG_SIZE, local WG_SIZE; `total` = outer * width real work-items,
// consecutive ones on consecutive words. Quotients and remainders written out (r = a - q*b) for Oclgrind
// 21.10.

#ifndef WG_SIZE
#define WG_SIZE 64
#endif

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void concat_copy(
    __global const uint* restrict in, __global uint* restrict out, const int width, const int out_width,
    const int offset, const int total) {
  const int i = (int)get_global_id(0);
  if (i >= total) return;
  const int r = i / width;
  const int j = i - r * width;
  out[(long)r * out_width + offset + j] = in[i];
}
