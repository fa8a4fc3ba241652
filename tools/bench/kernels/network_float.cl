// SPDX-License-Identifier: Apache-2.0
// The float32 network of `xnorcl-bench network`: the layers CLBlast has no routine for. Built without any
// fast-math option, so fma() and the comparisons are exact IEEE operations (the host checks them bitwise).

// Folded batch-norm followed by sign, NCHW: out = fma(scale[c], y, bias[c]) > 0 ? +1 : -1 (sign(0) = -1,
// as xnorcl's Threshold). Range (hw rounded up to whole work-groups, N*C): one plane per row, so the channel
// is one division per row instead of one per element.
__kernel void batch_norm_sign(__global const float* y, __global const float* scale,
                              __global const float* bias, __global float* out, uint hw, uint channels) {
  const uint p = get_global_id(0);
  if (p >= hw) return;
  const uint plane = get_global_id(1);
  const uint c = plane % channels;
  const size_t i = (size_t)plane * hw + p;
  out[i] = fma(scale[c], y[i], bias[c]) > 0.0f ? 1.0f : -1.0f;
}

// Max-pool, NCHW, OpenVINO's MaxPool-1 semantics: padded taps are skipped (never win). One work-item per
// output, NCHW order (the range rounded up to whole work-groups). The window always holds at least one real
// tap (validate_pool guarantees it).
__kernel void max_pool(__global const float* x, __global float* y, uint H, uint W, uint OH, uint OW, uint KH,
                       uint KW, uint SH, uint SW, int PH, int PW, uint count) {
  const uint i = get_global_id(0);
  if (i >= count) return;
  const uint ox = i % OW, oy = (i / OW) % OH, plane = i / (OW * OH);
  const __global float* in = x + plane * H * W;
  float m = -INFINITY;
  for (uint ky = 0; ky < KH; ++ky) {
    const int iy = (int)(oy * SH + ky) - PH;
    if (iy < 0 || iy >= (int)H) continue;
    for (uint kx = 0; kx < KW; ++kx) {
      const int ix = (int)(ox * SW + kx) - PW;
      if (ix >= 0 && ix < (int)W) m = fmax(m, in[iy * W + ix]);
    }
  }
  y[i] = m;
}

// The common case, 2x2 windows with stride 2 and no padding, every window inside the input (floor rounding):
// four loads and no loops or branches, which PoCL vectorizes across work-items. Range (OW, OH, N*C).
__kernel void max_pool_2x2(__global const float* x, __global float* y, uint H, uint W, uint OH, uint OW) {
  const uint ox = get_global_id(0), oy = get_global_id(1);
  const size_t plane = get_global_id(2);
  const __global float* p = x + (plane * H + 2 * oy) * W + 2 * ox;
  y[(plane * OH + oy) * OW + ox] = fmax(fmax(p[0], p[1]), fmax(p[W], p[W + 1]));
}
