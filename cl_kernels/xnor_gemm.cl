// xnor-popcount GEMM: Y[o, p] = K - 2 * sum_w popcount(filters[w][o] ^ patches[w][p]), written as float NCHW.
//
// Reads:
//   filters   k-major packed filter matrix filters[w * M_pad + o] (uint), packed once on the host: bit j (LSB = 0)
//             of word w is filter element k = 32*w + j of output channel o, flat order k = (c*KH + ky)*KW + kx;
//             bits k >= K and rows o >= M (= C_OUT) up to M_pad (a multiple of the tile's rows) are 0.
//   patches   k-major packed patch matrix patches[w * P_pad + p] (uint) written by im2col_pack.cl in the same bit
//             order; columns p >= P up to P_pad (a multiple of the tile's columns) are 0.
//   Dense packing of (c, ky, kx) serves a 3-channel first layer (K = 75 is 3 words, no channel padding) and layers
//   of hundreds of channels alike; k-major rows make the loads of adjacent work-items contiguous.
// Writes:
//   y         float NCHW [N, M, OH, OW]. Column p of this chunk is image n0 + p / per_image, position
//             row_offset + p % per_image within the image (row_offset = oy0*OW); 64-bit offsets.
//             The value is the exact integer sum over all taps of x_real * w_real, pad taps counted as the pad
//             bit the packing kernel wrote (pad_correction.cl fixes border positions for other pad values).
//
// Variants (one program per configuration, -DLOCAL_VARIANT=0/1 -DWG=.. -DTM=.. -DTN=.. -DKT=..):
//   2-D NDRange, global (P_pad / TN, M_pad / TM), local (WG, WG); each work-item accumulates a TM x TN block of
//   popcounts in registers. A work-group covers TILE_M = WG*TM output channels by TILE_N = WG*TN positions.
//   LOCAL_VARIANT 0 (Global, Mali: "local" memory is ordinary global memory there): each work-item reads its
//     TM filter words and TN patch words straight from global memory at every k step; its TN columns are
//     contiguous (p0 = global_id(0) * TN), so the loads are vload4s of adjacent 16-byte blocks. No __local, no
//     barriers.
//   LOCAL_VARIANT 1 (Local, on-chip local memory): per step the work-group stages a KT x TILE_M block of filters
//     and a KT x TILE_N block of patches in __local (coalesced loads, words w >= Kw are zero and skipped),
//     then each work-item reads rows lid1 + i*WG and columns lid0 + j*WG (adjacent work-items, adjacent
//     banks).
// Both variants add the same integers, so their results are identical.

#if !defined(LOCAL_VARIANT) || !defined(WG) || !defined(TM) || !defined(TN) || !defined(KT)
#error "xnor_gemm.cl needs -DLOCAL_VARIANT -DWG -DTM -DTN -DKT"
#endif

#define TILE_M (WG * TM)
#define TILE_N (WG * TN)

inline void store_block(__global float* restrict y, const uint acc[TM][TN], const int o_first, const int o_step,
                        const int p_first, const int p_step, const int M, const int K, const int P,
                        const int per_image, const int n0, const ulong OHW, const ulong row_offset) {
#pragma unroll
  for (int j = 0; j < TN; ++j) {
    const int p = p_first + j * p_step;
    if (p >= P) continue;
    // Quotient and remainder written out (a div/rem pair makes LLVM emit `freeze`, which Oclgrind 21.10's
    // uninitialized-value checker cannot execute).
    const int image = p / per_image;
    const int n = n0 + image;
    const ulong column = row_offset + (ulong)(p - image * per_image);
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int o = o_first + i * o_step;
      if (o >= M) continue;
      const ulong index = ((ulong)n * (ulong)M + (ulong)o) * OHW + column;
      y[index] = (float)(K - 2 * (int)acc[i][j]);
    }
  }
}

__kernel __attribute__((reqd_work_group_size(WG, WG, 1))) void xnor_gemm(
    __global const uint* restrict filters, __global const uint* restrict patches, __global float* restrict y,
    const int M, const int M_pad, const int Kw, const int K, const int P, const int P_pad, const int per_image,
    const int n0, const ulong OHW, const ulong row_offset) {
  uint acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i) {
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0u;
  }

#if LOCAL_VARIANT == 0
  const int p0 = (int)get_global_id(0) * TN;
  const int o0 = (int)get_global_id(1) * TM;
  __global const uint* fp = filters + o0;
  __global const uint* pp = patches + p0;
  for (int w = 0; w < Kw; ++w) {
    uint a[TM];
    uint b[TN];
#if TM % 4 == 0
#pragma unroll
    for (int i = 0; i < TM; i += 4) {
      const uint4 v = vload4(0, fp + i);
      a[i] = v.s0;
      a[i + 1] = v.s1;
      a[i + 2] = v.s2;
      a[i + 3] = v.s3;
    }
#else
#pragma unroll
    for (int i = 0; i < TM; ++i) a[i] = fp[i];
#endif
#if TN % 4 == 0
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const uint4 v = vload4(0, pp + j);
      b[j] = v.s0;
      b[j + 1] = v.s1;
      b[j + 2] = v.s2;
      b[j + 3] = v.s3;
    }
#else
#pragma unroll
    for (int j = 0; j < TN; ++j) b[j] = pp[j];
#endif
#pragma unroll
    for (int i = 0; i < TM; ++i) {
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] += popcount(a[i] ^ b[j]);
    }
    fp += M_pad;
    pp += P_pad;
  }
  store_block(y, acc, o0, 1, p0, 1, M, K, P, per_image, n0, OHW, row_offset);
#else
  __local uint As[KT][TILE_M];
  __local uint Bs[KT][TILE_N];
  const int lid0 = (int)get_local_id(0);
  const int lid1 = (int)get_local_id(1);
  const int linear = lid1 * WG + lid0;
  const int group_p0 = (int)get_group_id(0) * TILE_N;
  const int group_o0 = (int)get_group_id(1) * TILE_M;
  for (int kb = 0; kb < Kw; kb += KT) {
    for (int index = linear; index < KT * TILE_M; index += WG * WG) {
      const int kk = index / TILE_M;
      const int col = index - kk * TILE_M;
      const int w = kb + kk;
      As[kk][col] = w < Kw ? filters[(ulong)w * (ulong)M_pad + (ulong)(group_o0 + col)] : 0u;
    }
    for (int index = linear; index < KT * TILE_N; index += WG * WG) {
      const int kk = index / TILE_N;
      const int col = index - kk * TILE_N;
      const int w = kb + kk;
      Bs[kk][col] = w < Kw ? patches[(ulong)w * (ulong)P_pad + (ulong)(group_p0 + col)] : 0u;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // Rows kk >= Kw - kb hold zeros (they would add nothing): skip them, so a small K (a 3-channel first
    // layer has Kw = 3) does not pay for KT words per step.
    const int steps = min(KT, Kw - kb);
    for (int kk = 0; kk < steps; ++kk) {
      uint a[TM];
      uint b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[kk][lid1 + i * WG];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[kk][lid0 + j * WG];
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += popcount(a[i] ^ b[j]);
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  store_block(y, acc, group_o0 + lid1, WG, group_p0 + lid0, WG, M, K, P, per_image, n0, OHW, row_offset);
#endif
}
