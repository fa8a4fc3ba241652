// SPDX-License-Identifier: Apache-2.0
// Max-pooling (OpenVINO MaxPool-1 windows) on packed bits and on float32.
//
// binary_maxpool: packed in, packed out (include/xnorcl/packed.hpp: words [N][H][W][Cw], channel c is bit c%32
//   of word c/32). The max of +-1 values is the OR of their bits, so one work-item ORs the words of its window
//   for one output word (32 channels at once); tail bits stay 0. Pad positions are not taps (they never win);
//   a window with no input position gives 0.
// maxpool_f32: float32 NCHW in and out, read and written as raw bit patterns. The maximum is taken on order
//   keys (exact IEEE order on every device, -0 == +0, subnormals count as themselves): a tap wins when its key
//   is greater than the best so far, scanning the window row by row, so among equal keys the first wins; NaN
//   (key 0) never wins; a window with no (non-NaN) input gives -FLT_MAX (0xff7fffff).
// Window of output (oy, ox): input rows oy*stride_y - pad_top + [0, KH), columns likewise (computed in 64 bits).
//
// NDRange: 1-D, global rounded up to WG_SIZE, local WG_SIZE; `total` real work-items (one per output word or
// float). Quotients and remainders written out (r = a - q*b) for Oclgrind 21.10.

// Defaults only for compiling this file on its own (offline compilers, syntax checks); the runtime always
// passes its own values from src/runtime/device_profile.cpp.
#ifndef WG_SIZE
#define WG_SIZE 64
#endif

inline uint order_key(uint u) {
  const uint magnitude = u & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return 0u;  // NaN
  if (magnitude == 0u) u = 0u;             // -0 == +0
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void binary_maxpool(
    __global const uint* restrict in, __global uint* restrict out, const int H, const int W, const int Cw,
    const int OH, const int OW, const int KH, const int KW, const int stride_y, const int stride_x,
    const int pad_top, const int pad_left, const int total) {
  const int gid = (int)get_global_id(0);
  if (gid >= total) return;
  const int pixel = gid / Cw;
  const int w = gid - pixel * Cw;
  const int row = pixel / OW;
  const int ox = pixel - row * OW;
  const int n = row / OH;
  const int oy = row - n * OH;
  // Window corners in 64 bits (strides and pads may be near INT_MAX), clipped to the input: ints again.
  const long iy0 = (long)oy * stride_y - pad_top;
  const long ix0 = (long)ox * stride_x - pad_left;
  const int y_lo = (int)clamp(iy0, 0l, (long)H), y_hi = (int)clamp(iy0 + KH, 0l, (long)H);
  const int x_lo = (int)clamp(ix0, 0l, (long)W), x_hi = (int)clamp(ix0 + KW, 0l, (long)W);
  uint acc = 0u;
  for (int iy = y_lo; iy < y_hi; ++iy) {
    const ulong base = ((ulong)n * (ulong)H + (ulong)iy) * (ulong)W;
    for (int ix = x_lo; ix < x_hi; ++ix) acc |= in[(base + (ulong)ix) * (ulong)Cw + (ulong)w];
  }
  out[gid] = acc;
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void maxpool_f32(
    __global const uint* restrict in, __global uint* restrict out, const int H, const int W, const int OH,
    const int OW, const int KH, const int KW, const int stride_y, const int stride_x, const int pad_top,
    const int pad_left, const int total) {
  const int gid = (int)get_global_id(0);
  if (gid >= total) return;
  const int plane = gid / (OH * OW);
  const int r = gid - plane * (OH * OW);
  const int oy = r / OW;
  const int ox = r - oy * OW;
  // Window corners in 64 bits (strides and pads may be near INT_MAX), clipped to the input: ints again.
  const long iy0 = (long)oy * stride_y - pad_top;
  const long ix0 = (long)ox * stride_x - pad_left;
  const int y_lo = (int)clamp(iy0, 0l, (long)H), y_hi = (int)clamp(iy0 + KH, 0l, (long)H);
  const int x_lo = (int)clamp(ix0, 0l, (long)W), x_hi = (int)clamp(ix0 + KW, 0l, (long)W);
  uint best = 0xff7fffffu;  // -FLT_MAX
  uint best_key = 0u;       // below every non-NaN key
  for (int iy = y_lo; iy < y_hi; ++iy) {
    const ulong base = ((ulong)plane * (ulong)H + (ulong)iy) * (ulong)W;
    for (int ix = x_lo; ix < x_hi; ++ix) {
      const uint u = in[base + (ulong)ix];
      const uint k = order_key(u);
      if (k > best_key) {
        best_key = k;
        best = u;
      }
    }
  }
  out[gid] = best;
}
