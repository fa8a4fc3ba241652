// SPDX-License-Identifier: Apache-2.0
// Random small layers for the host tests of BinaryConvolution's construction steps: the geometry validate()
// resolves, the LayerDims the kernels take (in the layout choose_packing picks), and a random filter.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "conv_case.hpp"
#include "ops/binary_convolution/layer_dims.hpp"
#include "xnorcl/xnorcl.hpp"

namespace xnorcl::test {

inline Filter one_bit_filter() {
  const float one = 1.0f;
  return Filter::from_values(&one, {1, 1, 1, 1});
}

struct LayerCase {
  BinaryConvolution::Attributes attributes;
  ConvGeometry g;
  detail::LayerDims d;
  Filter filter = one_bit_filter();
  std::string text;  // for failure messages
};

inline detail::LayerDims dims_of(const ConvGeometry& g, const BinaryConvolution::Attributes& a, int word_bits,
                                 bool packed_input) {
  return detail::layer_dims(g, a, word_bits, packed_input);
}

// max_channels: C_IN and C_OUT up to this many (a few layers take many channels, for channel-packed and
// multi-word layouts).
inline LayerCase random_layer(Rng& rng, int word_bits, bool packed_input = false, int max_channels = 70) {
  for (;;) {
    LayerCase c;
    BinaryConvolution::Attributes& a = c.attributes;
    const bool wide = rng.chance(30);
    const Shape input{rng.uniform(1, 3), rng.uniform(1, wide ? max_channels : 5), rng.uniform(1, 12),
                      rng.uniform(1, 12)};
    const Shape filter{rng.uniform(1, wide ? max_channels : 9), input[1], rng.uniform(1, 5),
                       rng.uniform(1, 5)};
    a.strides = {rng.uniform(1, 3), rng.uniform(1, 3)};
    a.dilations = {rng.uniform(1, 2), rng.uniform(1, 2)};
    a.pads_begin = {rng.uniform(0, 3), rng.uniform(0, 3)};
    a.pads_end = {rng.uniform(0, 3), rng.uniform(0, 3)};
    a.pad_value = rng.pick(std::vector<float>{0.0f, 1.0f, -1.0f, 0.5f, -2.0f});
    try {
      c.g = BinaryConvolution::validate(a, input, filter);
    } catch (const InvalidArgument&) {
      continue;  // kernel larger than the padded input, pads beyond the kernel: draw again
    }
    c.d = dims_of(c.g, a, word_bits, packed_input);
    const std::int64_t bits = filter[0] * filter[1] * filter[2] * filter[3];
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>((bits + 7) / 8));
    for (std::uint8_t& b : bytes) b = static_cast<std::uint8_t>(rng.next());
    c.filter = Filter::from_packed(bytes.data(), bytes.size(), filter, BitOrder::MsbFirst);
    std::ostringstream o;
    o << "X " << to_string(c.g.input) << " F " << to_string(c.g.filter) << " Y " << to_string(c.g.output)
      << " strides " << a.strides[0] << "," << a.strides[1] << " dilations " << a.dilations[0] << ","
      << a.dilations[1] << " pads " << c.g.pads_begin[0] << "," << c.g.pads_begin[1] << " / "
      << c.g.pads_end[0] << "," << c.g.pads_end[1] << ", " << word_bits << "-bit words "
      << (c.d.unit_packed      ? "unit-packed"
          : c.d.channel_packed ? "channel-packed"
          : c.d.bit_rows       ? "dense from bit rows"
                               : "dense bit by bit")
      << ", Kw " << c.d.Kw;
    c.text = o.str();
    return c;
  }
}

}  // namespace xnorcl::test
