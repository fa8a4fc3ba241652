// SPDX-License-Identifier: Apache-2.0
#include "ops/binary_convolution/launch_plan.hpp"

#include <sstream>
#include <string>

namespace xnorcl {

std::string Plan::to_string() const {
  std::ostringstream out;
  out << "variant " << xnorcl::to_string(variant) << " (" << build_options << "), tile " << tile_m << "x"
      << tile_n << ", K = " << patch_bits << " bits in " << words_per_patch << " " << word_bits
      << "-bit words per "
      << (channel_packed ? "channel-packed"
          : bit_rows     ? "dense (from bit rows)"
                         : "dense (bit by bit)")
      << " patch" << (input_packed ? " (packed input)" : "") << ", output " << output << ", " << chunks
      << (chunks == 1 ? " chunk" : " chunks") << ", scratch " << scratch_bytes << " bytes, "
      << (tuned ? "tuned" : "default") << " configuration " << configuration;
  for (const Launch& l : launches) {
    out << "\n  " << l.kernel << " global " << l.global[0] << "x" << l.global[1] << " local " << l.local[0]
        << "x" << l.local[1];
  }
  return out.str();
}

namespace detail {

Plan describe_plan(Variant variant, const Im2colPackLauncher& pack, const XnorGemmLauncher& gemm,
                   const LayerDims& d, const std::vector<Chunk>& chunks,
                   const BinaryConvolution::Options& options, const GemmChoice& gemm_choice,
                   const Epilogue& epilogue, const FusedPool& pool, std::uint64_t scratch_bytes) {
  using Kind = BinaryConvolution::Output::Kind;
  Plan p;
  p.variant = variant;
  p.build_options = gemm.config().build_options();
  p.configuration = to_text(gemm.config());
  p.tile_m = gemm.tile_m();
  p.tile_n = gemm.tile_n();
  p.words_per_patch = d.Kw;
  p.word_bits = d.word_bits;
  p.channel_packed = d.channel_packed;
  p.bit_rows = d.bit_rows;
  p.patch_bits = d.K;
  p.chunks = static_cast<int>(chunks.size());
  p.input_packed = options.input_packed;
  const char* gemm_name = gemm_choice.kernel == GemmKernel::Fused
                              ? gemm.fused_kernel_for(d, chunks.front(), epilogue)
                              : gemm_kernel_name(gemm_choice.kernel);
  p.output =
      options.output.kind == Kind::Float
          ? (gemm_choice.kernel != GemmKernel::Plain ? std::string("float32 (") + gemm_name + ")"
                                                     : std::string("float32"))
      : options.output.kind == Kind::ScaleBias
          ? std::string(options.add_shortcut ? "scale_bias+shortcut (" : "scale_bias (") + gemm_name + ")"
      : options.max_pool ? std::string("packed, max-pooled (") + gemm_name + ")"
                         : std::string("packed (") + gemm_name + ")";
  if (options.clamped()) {
    std::ostringstream clamp;
    clamp.precision(9);
    clamp << ", clamped to [" << options.clamp_low << ", " << options.clamp_high << "] first";
    p.output += clamp.str();
  }
  if (!options.also_packed.empty())
    p.output += gemm.packs_in_fused() ? ", and its bits packed (in __local memory)"
                                      : ", and its bits packed (threshold_pack after the GEMM)";
  for (const Plan::Launch& l :
       pack.launches(d, chunks.front(), options.input_packed ? InputType::Packed : InputType::F32))
    p.launches.push_back(l);
  p.launches.push_back(gemm_choice.kernel == GemmKernel::Packed
                           ? gemm.packed_launch(chunks.front(), d, pool)
                           : gemm.launch(gemm_choice.M_pad, chunks.front()));
  p.launches.back().kernel = gemm_name;
  p.scratch_bytes = static_cast<std::size_t>(scratch_bytes);
  return p;
}

}  // namespace detail
}  // namespace xnorcl
