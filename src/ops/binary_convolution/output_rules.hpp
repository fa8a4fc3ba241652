// SPDX-License-Identifier: Apache-2.0
// The output choice (Options::output) is applied in the GEMM's epilogue, not by a later pass: this picks the
// GEMM kernel that writes it and turns its rules into the tables the kernels test, so that the kernels need
// no float comparisons and no branches per rule (cl_kernels/xnor_gemm.cl, fused_rule_bit and
// xnor_gemm_bits). The input thresholds become the same order keys for the packing kernels.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/binary_convolution/xnor_gemm.hpp"
#include "xnorcl/binary_convolution.hpp"

namespace xnorcl::detail {

// Float runs xnor_gemm; ScaleBias xnor_gemm_fused; Packed xnor_gemm_fused where the Local variant's tile
// covers whole words (XnorGemmLauncher::packs_in_fused) and nothing is max-pooled, else xnor_gemm_bits.
enum class GemmKernel { Plain, Fused, Packed };

struct GemmChoice {
  GemmKernel kernel = GemmKernel::Plain;
  int M_pad = 0;  // C_OUT padded to the GEMM's tile of rows (xnor_gemm_bits: to whole words as well)
};

// A clamp (Options::clamp_low/high) with Float output runs xnor_gemm_fused as well (mode 0, clamped).
// So does a layer that also packs its float output (Options::also_packed: xnor_gemm_fused's side words).
GemmChoice choose_gemm(const BinaryConvolution::Output& output, bool max_pool, const XnorGemmLauncher& gemm,
                       int C_OUT, bool clamped = false, bool also_packed = false);

const char* gemm_kernel_name(GemmKernel kernel);

// A threshold rule as the interval of order keys it accepts: key(y) - lo < count in unsigned arithmetic.
// NaN's key 0 is inside no rule's interval.
struct KeyInterval {
  cl_uint lo = 1, count = 0;
};
KeyInterval key_interval(const Threshold& rule);

// The rule whose bit for y is the bit of `rule` for y clamped to [low, high] (OpenVINO Clamp; low <= high,
// neither NaN): exact, since clamp is monotone. Greater t: 1 where low > t, 0 where high <= t, else the rule
// itself (low <= t < high: clamp(y) > t exactly when y > t); Less t the mirror image. NaN stays 0 under
// every rule (clamp keeps NaN, and no rule accepts it).
Threshold clamped_rule(const Threshold& rule, float low, float high);

// The same rule over the GEMM's integer results G in [-K, K] (exact floats, K <= 2^24): the G it accepts
// form one interval [lo, lo + count) (count 0: none), which xnor_gemm_bits tests without converting G.
struct IntInterval {
  cl_int lo = 0;
  cl_uint count = 0;
};
IntInterval integer_interval(KeyInterval keys, int K);

// The epilogue's host tables: mode 0 float (no tables), 1 scale-and-bias ([C_OUT] each), 2 packed (key
// intervals [C_OUT] as keys = lo and modes = count; integer intervals [M_pad], the rows from C_OUT on empty
// so that xnor_gemm_bits tests all 32 channels of a word as vectors without a bound check).
struct OutputRules {
  int mode = 0;
  std::vector<cl_float> scale, bias;
  std::vector<cl_uint> keys, modes, int_count;
  std::vector<cl_int> int_lo;
  std::uint64_t bytes() const;
};
// `output` validated (validate_options); K: bits per patch. With `also_packed` rules (a Float or ScaleBias
// output that is also packed) keys and modes hold those rules' key intervals, tested on the stored floats.
OutputRules output_rules(const BinaryConvolution::Output& output, int K, int M_pad,
                         const std::vector<Threshold>& also_packed = {});

// The input thresholds as order keys, one per input channel (key(0) for each where none are given).
std::vector<cl_uint> input_threshold_keys(const std::vector<float>& thresholds, int C_IN);

}  // namespace xnorcl::detail
