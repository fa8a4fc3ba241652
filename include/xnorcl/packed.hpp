// SPDX-License-Identifier: Apache-2.0
// Packed binary activations: the layout every xnorcl layer that reads or writes bits agrees on, and the
// per-channel threshold rules (folded batch-norm + sign) that turn float activations into those bits.
//
// The packed layout (a contract; kernels, host helpers and file formats all use it):
//   - Words are 32-bit unsigned integers (std::uint32_t on the host, uint in OpenCL C), in the device's
//     (= the host's, little-endian on every supported target) byte order.
//   - Logical shape [N, C, H, W] (the NCHW shape of the float tensor it binarizes).
//   - Memory layout [N][H][W][Cw] words with Cw = ceil(C / 32): channel-packed, pixel-major (the natural
//     input of an implicit xnor GEMM: one pixel's channels are Cw consecutive words).
//   - Bit order: channel c of pixel (n, y, x) is bit (c % 32) (LSB = bit 0) of word
//     ((n*H + y)*W + x)*Cw + c/32.
//   - Tail bits (channels C .. 32*Cw - 1 of the last word of each pixel) are 0. Every xnorcl kernel writes
//     them as 0 and may rely on them being 0 in its input.
//   - Bit 1 is the real value +1, bit 0 is -1.
#pragma once

#include <cstdint>
#include <vector>

#include "xnorcl/shape.hpp"

namespace xnorcl {

// Words per pixel and in a whole packed tensor.
inline std::int64_t packed_words_per_pixel(std::int64_t channels) noexcept {
  return (channels + 31) / 32;
}
inline std::int64_t packed_word_count(const Shape& s) noexcept {
  return s[0] * s[2] * s[3] * packed_words_per_pixel(s[1]);
}

// How one channel turns a float y into a bit. Comparisons are exact IEEE comparisons made on order keys of
// the bit patterns (as the convolution's input_bit): -0 == +0, subnormals count as themselves even on devices
// that flush them. NaN gives bit 0 under every rule.
//   Greater:   bit = y > value    (y == value gives 0)
//   Less:      bit = y < value    (y == value gives 0)
//   AlwaysZero / AlwaysOne: the bit does not depend on y (value is ignored), except that NaN gives 0.
enum class ThresholdMode : std::uint8_t { Greater, Less, AlwaysZero, AlwaysOne };

struct Threshold {
  float value = 0.0f;
  ThresholdMode mode = ThresholdMode::Greater;
};

// The bit of y under a rule.
bool threshold_bit(float y, const Threshold& rule) noexcept;

// Every channel `y > t[c]`. Throws InvalidArgument for a NaN threshold (+-inf is allowed).
std::vector<Threshold> greater_than(const std::vector<float>& t);

// Folded batch-norm followed by sign: y' = scale*y + bias, bit = y' > 0, folded into one rule per channel:
//   scale > 0: Greater with t = -bias/scale (one float division, rounded to nearest);
//   scale < 0: Less    with t = -bias/scale;
//   scale == 0 (either sign): AlwaysOne if bias > 0, else AlwaysZero.
// The folded rule is the definition: at y == t the bit is 0 (sign(0) = -1), whatever scale*y + bias would
// have rounded to. Throws InvalidArgument (naming the channel and values) if the sizes differ, are empty, or
// a scale or bias is NaN or infinite.
std::vector<Threshold> fold_batch_norm(const std::vector<float>& scale, const std::vector<float>& bias);

// Host helpers (the references of the device's threshold_pack and unpack kernels).
// Packs a float NCHW tensor: bit(n, c, y, x) = threshold_bit(y, rules[c]); rules empty means Greater 0 for
// every channel. Throws InvalidArgument for a null pointer, a bad shape or rules.size() not 0 or C.
std::vector<std::uint32_t> pack_activations(const float* y, const Shape& shape,
                                            const std::vector<Threshold>& rules = {});
// The bit of (n, c, y, x) of a packed tensor of the given logical shape.
bool packed_bit(const std::uint32_t* words, const Shape& shape, std::int64_t n, std::int64_t c,
                std::int64_t y, std::int64_t x) noexcept;
// Unpacks to float NCHW, 1.0f for bit 1 and 0.0f for bit 0 (the OpenVINO 0/1 convention; with the default
// threshold 0 a BinaryConvolution reads them back as the same bits). Throws InvalidArgument for a null
// pointer or a bad shape.
std::vector<float> unpack_activations(const std::uint32_t* words, const Shape& shape);

// Float32 folded batch-norm without the sign: out = fmaf(scale[c], y, bias[c]) (one rounding). The host
// reference of ScaleBias; throws like fold_batch_norm (NaN/inf refused) and for a null pointer.
std::vector<float> reference_scale_bias(const float* y, const Shape& shape, const std::vector<float>& scale,
                                        const std::vector<float>& bias);

}  // namespace xnorcl
