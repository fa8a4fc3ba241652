// SPDX-License-Identifier: Apache-2.0
// Thresholding into packed activations.
//
// Packed layout (include/xnorcl/packed.hpp): logical [N, C, H, W]; words [N][H][W][Cw], Cw = ceil(C/32);
// channel c of a pixel is bit c%32 (LSB = 0) of the pixel's word c/32; tail bits (c >= C) are 0.
//
// threshold_pack: float32 NCHW y (read as raw 32-bit patterns, so that no float operation can flush a
//   subnormal) -> packed words. Rule per channel: keys[c] is the order key of the threshold t_c (computed on the
//   host with the same key), modes[c]: 0 bit = y > t_c, 1 bit = y < t_c, 2 bit = 0, 3 bit = 1; NaN y gives 0
//   under every rule. One work-item per output word; it reads the (at most 32) channel planes of its pixel.
//
// NDRange: 1-D, global rounded up to WG_SIZE, local WG_SIZE; `total` is the number of real work-items.
// Quotients and remainders are written out (r = a - q*b): LLVM's div/rem pairing emits `freeze`, which
// Oclgrind 21.10's uninitialized-value checker cannot execute.

// Defaults only for compiling this file on its own (offline compilers, syntax checks); the runtime always
// passes its own values from src/runtime/device_profile.cpp.
#ifndef WG_SIZE
#define WG_SIZE 64
#endif

// Order key of a float's bit pattern: unsigned order of keys == IEEE order of the values (with -0 == +0).
// NaN maps to 0, below every non-NaN key (the smallest is key(-inf) = 0x007fffff).
inline uint order_key(uint u) {
  const uint magnitude = u & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return 0u;  // NaN
  if (magnitude == 0u) u = 0u;             // -0 == +0
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

inline uint rule_bit(const uint u, const uint t_key, const uint mode) {
  const uint k = order_key(u);
  if (k == 0u) return 0u;  // NaN
  if (mode == 0u) return k > t_key ? 1u : 0u;
  if (mode == 1u) return k < t_key ? 1u : 0u;
  return mode == 3u ? 1u : 0u;
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void threshold_pack(
    __global const uint* restrict y, __global uint* restrict out, __global const uint* restrict keys,
    __global const uint* restrict modes, const int C, const int HW, const int Cw, const int total) {
  const int gid = (int)get_global_id(0);
  if (gid >= total) return;
  const int pixel = gid / Cw;
  const int w = gid - pixel * Cw;
  const int n = pixel / HW;
  const int s = pixel - n * HW;
  const int c0 = w * 32;
  const int count = min(32, C - c0);
  ulong index = ((ulong)n * (ulong)C + (ulong)c0) * (ulong)HW + (ulong)s;
  uint word = 0u;
  for (int j = 0; j < count; ++j) {
    word |= rule_bit(y[index], keys[c0 + j], modes[c0 + j]) << j;
    index += (ulong)HW;
  }
  out[gid] = word;
}
