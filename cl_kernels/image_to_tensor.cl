// SPDX-License-Identifier: Apache-2.0
// Camera frames into a network (src/ops/image_to_tensor.cpp): interleaved uint8 pixels [N, H, W, K] (K 3 for
// RGB or BGR, 4 for RGBA or BGRA, the fourth byte dropped) to float NCHW [N, 3, H, W] in the model's channel
// order, out[n][c][p] = ((float)in[n][p][src_c] - mean_c) * scale_c, rounded after the subtraction and after
// the product as the host reference rounds. One work-item per pixel: it reads its K bytes and writes one
// value into each of the three channel planes.
//
// NDRange: 1-D, global rounded up to WG_SIZE, local WG_SIZE; `total` = N * H * W real work-items. Quotients
// and remainders written out (r = a - q*b) for Oclgrind 21.10.

#ifndef WG_SIZE
#define WG_SIZE 64
#endif

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void image_to_tensor(
    __global const uchar* restrict in, __global float* restrict out, const int HW, const int K,
    const int src0, const int src1, const int src2, const float mean0, const float mean1, const float mean2,
    const float scale0, const float scale1, const float scale2, const int nhwc, const int total) {
  const int i = (int)get_global_id(0);
  if (i >= total) return;
  const int n = i / HW;
  const int p = i - n * HW;
  __global const uchar* pixel = in + (long)i * K;
  // NCHW: one value into each channel plane; NHWC: the pixel's three values side by side.
  __global float* o = nhwc ? out + (long)i * 3 : out + (long)n * 3 * HW + p;
  const int step = nhwc ? 1 : HW;
  o[0] = ((float)pixel[src0] - mean0) * scale0;
  o[step] = ((float)pixel[src1] - mean1) * scale1;
  o[2 * step] = ((float)pixel[src2] - mean2) * scale2;
}
