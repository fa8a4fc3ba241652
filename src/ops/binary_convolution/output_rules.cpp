// SPDX-License-Identifier: Apache-2.0
#include "ops/binary_convolution/output_rules.hpp"

#include "ops/binary_convolution/conv_layout.hpp"
#include "ops/layer_common.hpp"

namespace xnorcl::detail {

GemmChoice choose_gemm(const BinaryConvolution::Output& output, bool max_pool, const XnorGemmLauncher& gemm,
                       int C_OUT, bool clamped, bool also_packed) {
  using Kind = BinaryConvolution::Output::Kind;
  GemmChoice choice;
  // xnor_gemm_bits reads the 32 filter rows of each output word: M_pad a multiple of 32 as well.
  const bool packed_kernel = output.kind == Kind::Packed && (!gemm.packs_in_fused() || max_pool);
  choice.M_pad = static_cast<int>(round_up(C_OUT, packed_kernel ? gemm.packed_m_multiple() : gemm.tile_m()));
  if (output.kind == Kind::ScaleBias || (output.kind == Kind::Float && (clamped || also_packed))) {
    choice.kernel = GemmKernel::Fused;
  } else if (output.kind == Kind::Packed) {
    choice.kernel = packed_kernel ? GemmKernel::Packed : GemmKernel::Fused;
  }
  return choice;
}

const char* gemm_kernel_name(GemmKernel kernel) {
  return kernel == GemmKernel::Fused    ? XnorGemmLauncher::fused_kernel_name()
         : kernel == GemmKernel::Packed ? XnorGemmLauncher::packed_kernel_name()
                                        : XnorGemmLauncher::kernel_name();
}

KeyInterval key_interval(const Threshold& rule) {
  const cl_uint t = float_order_key(rule.value);
  KeyInterval i;
  switch (rule.mode) {
    case ThresholdMode::Greater:
      i.lo = t + 1;  // t <= key(+inf) = 0xff800000: no wrap
      i.count = 0xffffffffu - t;
      break;
    case ThresholdMode::Less:
      i.count = t - 1;  // t >= key(-inf) = 0x007fffff: no wrap
      break;
    case ThresholdMode::AlwaysOne:
      i.count = 0xffffffffu;
      break;
    case ThresholdMode::AlwaysZero:
      break;
  }
  return i;
}

Threshold clamped_rule(const Threshold& rule, float low, float high) {
  switch (rule.mode) {
    case ThresholdMode::Greater:
      if (low > rule.value) return {0.0f, ThresholdMode::AlwaysOne};
      if (high <= rule.value) return {0.0f, ThresholdMode::AlwaysZero};
      return rule;
    case ThresholdMode::Less:
      if (high < rule.value) return {0.0f, ThresholdMode::AlwaysOne};
      if (low >= rule.value) return {0.0f, ThresholdMode::AlwaysZero};
      return rule;
    case ThresholdMode::AlwaysOne:
    case ThresholdMode::AlwaysZero:
      break;
  }
  return rule;
}

IntInterval integer_interval(KeyInterval keys, int K_bits) {
  // The keys of float(G) increase with G, so the accepted G are found by binary search.
  const std::int64_t K = K_bits;
  auto key_of = [](std::int64_t g) { return float_order_key(static_cast<float>(g)); };
  const cl_uint lo = keys.lo, count = keys.count;
  std::int64_t first = K + 1, last = -K - 1;
  if (count > 0) {
    const std::uint64_t top = std::uint64_t(lo) + count - 1;  // <= 0xffffffff
    std::int64_t a = -K, b = K + 1;                           // first g with key >= lo
    while (a < b) {
      const std::int64_t mid = a + (b - a) / 2;
      if (key_of(mid) >= lo)
        b = mid;
      else
        a = mid + 1;
    }
    first = a;
    a = -K - 1, b = K;  // last g with key <= top
    while (a < b) {
      const std::int64_t mid = b - (b - a) / 2;
      if (std::uint64_t(key_of(mid)) <= top)
        a = mid;
      else
        b = mid - 1;
    }
    last = a;
  }
  if (first > last) return {};
  return {static_cast<cl_int>(first), static_cast<cl_uint>(last - first + 1)};
}

std::uint64_t OutputRules::bytes() const {
  return (scale.size() + bias.size()) * 4 +
         (keys.size() + modes.size() + int_lo.size() + int_count.size()) * 4;
}

OutputRules output_rules(const BinaryConvolution::Output& output, int K, int M_pad,
                         const std::vector<Threshold>& also_packed) {
  using Kind = BinaryConvolution::Output::Kind;
  OutputRules r;
  for (const Threshold& rule : also_packed) {
    const KeyInterval keys = key_interval(rule);
    r.keys.push_back(keys.lo);
    r.modes.push_back(keys.count);
  }
  if (output.kind == Kind::ScaleBias) {
    r.scale.assign(output.scale.begin(), output.scale.end());
    r.bias.assign(output.bias.begin(), output.bias.end());
    r.mode = 1;
  } else if (output.kind == Kind::Packed) {
    for (const Threshold& rule : output.thresholds) {
      const KeyInterval keys = key_interval(rule);
      const IntInterval ints = integer_interval(keys, K);
      r.keys.push_back(keys.lo);
      r.modes.push_back(keys.count);
      r.int_lo.push_back(ints.lo);
      r.int_count.push_back(ints.count);
    }
    r.int_lo.resize(std::size_t(M_pad), 0);
    r.int_count.resize(std::size_t(M_pad), 0);
    r.mode = 2;
  }
  return r;
}

std::vector<cl_uint> input_threshold_keys(const std::vector<float>& thresholds, int C_IN) {
  std::vector<cl_uint> keys(static_cast<std::size_t>(C_IN), float_order_key(0.0f));
  if (!thresholds.empty()) {
    for (int c = 0; c < C_IN; ++c) keys[c] = float_order_key(thresholds[c]);
  }
  return keys;
}

}  // namespace xnorcl::detail
