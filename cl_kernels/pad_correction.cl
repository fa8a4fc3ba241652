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
//   sat    int [C_OUT][KH+1][KW+1], computed on the host: the summed-area table of w_sum[o][ky][kx] = sum over
//          c of w_real, sat[o][a][b] = sum over ky < a, kx < b of w_sum[o][ky][kx]
// Writes:
//   y      the border positions, in place.
//
// Border positions of one image, enumerated as one linear index b (the same for every output channel):
//   [0, top*OW)                      rows 0 .. oy_lo-1 (full rows)
//   [top*OW, (top+bottom)*OW)        rows oy_hi .. OH-1 (full rows)
//   then (oy_hi - oy_lo) rows of (left + right): columns 0 .. ox_lo-1 and ox_hi .. OW-1 of rows oy_lo .. oy_hi-1
// where [oy_lo, oy_hi) x [ox_lo, ox_hi) is the interior (every tap in bounds), possibly empty.
// The global index is first + get_global_id(0) = n*border + b (64-bit; the host splits launches). One work-item
// decodes its position once and rewrites it in every output channel o (C_OUT planes): the decoding, a 64-bit
// division, is paid once per position, not once per output value, and adjacent work-items write adjacent
// positions of one plane.
//
// NDRange: 1-D, local (WG_SIZE), global rounded up to WG_SIZE; the tail is guarded by `count`.

#ifndef WG_SIZE
#error "WG_SIZE must be defined by the build options (-DWG_SIZE=...)"
#endif

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void pad_correction(
    __global float* restrict y, __global const int* restrict sat, const float v, const int C_OUT, const int H,
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
  const ulong n = g / border;
  long b = (long)(g - n * border);
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

  // The in-bounds taps of a window form the rectangle [ky_lo, ky_hi) x [kx_lo, kx_hi) (iy grows with ky, ix
  // with kx), so S = (sum of all taps) - (sum over the rectangle): four reads of the summed-area table.
  const int iy0 = oy * stride_y - pad_top;
  const int ix0 = ox * stride_x - pad_left;
  int ky_lo = KH, ky_hi = 0, kx_lo = KW, kx_hi = 0;
  for (int ky = KH - 1; ky >= 0; --ky) {
    const int iy = iy0 + ky * dilation_y;
    if (iy >= 0 && iy < H) {
      ky_lo = ky;
      ky_hi = max(ky_hi, ky + 1);
    }
  }
  for (int kx = KW - 1; kx >= 0; --kx) {
    const int ix = ix0 + kx * dilation_x;
    if (ix >= 0 && ix < W) {
      kx_lo = kx;
      kx_hi = max(kx_hi, kx + 1);
    }
  }
  if (ky_hi <= ky_lo || kx_hi <= kx_lo) {  // no tap in bounds
    ky_lo = ky_hi = 0;
    kx_lo = kx_hi = 0;
  }
  const int row = KW + 1;
  const int table = (KH + 1) * row;
  const int whole = KH * row + KW;
  const int hh = ky_hi * row + kx_hi, lh = ky_lo * row + kx_hi, hl = ky_hi * row + kx_lo, ll = ky_lo * row + kx_lo;
  const ulong plane = (ulong)OH * (ulong)OW;
  ulong index = n * (ulong)C_OUT * plane + (ulong)oy * (ulong)OW + (ulong)ox;
  __global const int* t = sat;
  for (int o = 0; o < C_OUT; ++o) {
    const int S = t[whole] - (t[hh] - t[lh] - t[hl] + t[ll]);
    const int G = (int)y[index];
    y[index] = fma(v, (float)S, (float)(G + S));
    t += table;
    index += plane;
  }
}
