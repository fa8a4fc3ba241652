// Pad correction for a pad_value v other than +1 and -1 (SPEC section 1).
//
// The packing kernel gave every pad tap the bit 0 (real -1), so xnor_gemm.cl wrote G = (2P - B) - S, where
// S = sum of w_real over the pad taps. This kernel visits only the border output positions (those whose window
// touches the pad) and rewrites them as fma(v, (float)S, (float)(G + S)) = fmaf(v, S, 2P - B), the value the
// reference computes, with one rounding. Interior positions (S = 0 there, and G already equals 2P - B) are not
// touched, so the work is proportional to the border.
//
// Reads:
//   y      float NCHW [N, C_OUT, OH, OW] as written by xnor_gemm.cl (exact integers G)
//   wsum   int [C_OUT][KH*KW]: wsum[o*KH*KW + ky*KW + kx] = sum over c of w_real (computed on the host)
// Writes:
//   y      the border positions, in place.
//
// Border positions of one (n, o) plane, enumerated as one linear index b:
//   [0, top*OW)                      rows 0 .. oy_lo-1 (full rows)
//   [top*OW, (top+bottom)*OW)        rows oy_hi .. OH-1 (full rows)
//   then (oy_hi - oy_lo) rows of (left + right): columns 0 .. ox_lo-1 and ox_hi .. OW-1 of rows oy_lo .. oy_hi-1
// where [oy_lo, oy_hi) x [ox_lo, ox_hi) is the interior (every tap in bounds), possibly empty.
// The global index is first + get_global_id(0) = (n*C_OUT + o)*border + b (64-bit; the host splits launches).
//
// NDRange: 1-D, local (WG_SIZE), global rounded up to WG_SIZE; the tail is guarded by `count`.

#ifndef WG_SIZE
#error "WG_SIZE must be defined by the build options (-DWG_SIZE=...)"
#endif

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void pad_correction(
    __global float* restrict y, __global const int* restrict wsum, const float v, const int C_OUT, const int H,
    const int W, const int KH, const int KW, const int stride_y, const int stride_x, const int dilation_y,
    const int dilation_x, const int pad_top, const int pad_left, const int OH, const int OW, const int oy_lo,
    const int oy_hi, const int ox_lo, const int ox_hi, const ulong first, const ulong count) {
  const ulong g = first + (ulong)get_global_id(0);
  if (g >= count) return;
  const int top = oy_lo;
  const int bottom = OH - oy_hi;
  const int left = ox_lo;
  const int right = OW - ox_hi;
  const ulong border = (ulong)(top + bottom) * (ulong)OW + (ulong)(oy_hi - oy_lo) * (ulong)(left + right);
  // Quotients and remainders are written out: a div/rem pair makes LLVM emit `freeze`, which Oclgrind 21.10's
  // uninitialized-value checker cannot execute.
  const ulong plane_index = g / border;  // n*C_OUT + o
  long b = (long)(g - plane_index * border);
  const ulong n = plane_index / (ulong)C_OUT;
  const int o = (int)(plane_index - n * (ulong)C_OUT);

  int oy;
  int ox;
  if (b < (long)top * OW) {
    oy = (int)(b / OW);
    ox = (int)(b - (long)oy * OW);
  } else {
    b -= (long)top * OW;
    if (b < (long)bottom * OW) {
      const int row = (int)(b / OW);
      oy = oy_hi + row;
      ox = (int)(b - (long)row * OW);
    } else {
      b -= (long)bottom * OW;
      const int side = left + right;
      const int row = (int)(b / side);
      oy = oy_lo + row;
      const int c = (int)(b - (long)row * side);
      ox = c < left ? c : ox_hi + (c - left);
    }
  }

  const int iy0 = oy * stride_y - pad_top;
  const int ix0 = ox * stride_x - pad_left;
  __global const int* ws = wsum + (ulong)o * (ulong)(KH * KW);
  int S = 0;
  for (int ky = 0; ky < KH; ++ky) {
    const int iy = iy0 + ky * dilation_y;
    const bool row_out = iy < 0 || iy >= H;
    for (int kx = 0; kx < KW; ++kx) {
      const int ix = ix0 + kx * dilation_x;
      if (row_out || ix < 0 || ix >= W) S += ws[ky * KW + kx];
    }
  }

  const ulong index = plane_index * (ulong)OH * (ulong)OW + (ulong)oy * (ulong)OW + (ulong)ox;
  const int G = (int)y[index];
  y[index] = fma(v, (float)S, (float)(G + S));
}
