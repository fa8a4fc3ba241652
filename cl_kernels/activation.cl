// SPDX-License-Identifier: Apache-2.0
// Relu, Clamp, PRelu and Round of a float32 tensor (src/ops/activation.cpp), one work-item per element.
//   kind 0 Relu:  x > 0 ? x : 0
//   kind 1 Clamp: x < lo ? lo : (x > hi ? hi : x)
//   kind 2 PRelu: x < 0 ? x * slope[c] : x, c = (i / inner) % C (C 1 for a single slope)
//   kind 3 Round, ties to even: rint(x), then clamped to [lo, hi] and multiplied by scale (a fused Clamp and
//          Multiply; lo, hi infinite and scale 1 without them)
//   kind 4 Round, ties away from zero: round(x), then the same
//
// NDRange: 1-D, global rounded up to WG_SIZE, local WG_SIZE; `total` real work-items. Quotients and
// remainders written out (r = a - q*b) for Oclgrind 21.10.

#ifndef WG_SIZE
#define WG_SIZE 64
#endif

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void activation_f32(
    __global const float* restrict in, __global float* restrict out, __global const float* restrict slope,
    const int kind, const float lo, const float hi, const float scale, const int inner, const int C,
    const int total) {
  const int i = (int)get_global_id(0);
  if (i >= total) return;
  const float x = in[i];
  if (kind == 0) {
    out[i] = x > 0.0f ? x : 0.0f;
  } else if (kind == 1) {
    out[i] = x < lo ? lo : (x > hi ? hi : x);
  } else if (kind == 3 || kind == 4) {
    const float y = kind == 3 ? rint(x) : round(x);
    out[i] = (y < lo ? lo : (y > hi ? hi : y)) * scale;
  } else {
    const int q = i / inner;
    const int c = q - (q / C) * C;
    out[i] = x < 0.0f ? x * slope[c] : x;
  }
}
