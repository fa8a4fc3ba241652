// SPDX-License-Identifier: Apache-2.0
// One convolution test configuration (shapes, attributes, bit order, input type, data, seed), its full
// description for failure messages, and a seeded generator of random configurations.
#pragma once

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "xnorcl/xnorcl.hpp"

namespace xnorcl::test {

using xnorcl::to_string;

// What the input values look like (all go through the same "x > t_c" rule).
enum class InputKind {
  Binary,        // 0 and 1 (the OpenVINO convention)
  SmallInteger,  // -3 .. 3
  PlusMinusOne,  // -1 and +1
  Floats,        // random floats with -0.0, subnormals, NaN, +-inf and threshold values themselves
};

inline const char* to_string(InputKind k) {
  switch (k) {
    case InputKind::Binary:
      return "binary 0/1";
    case InputKind::SmallInteger:
      return "small integers";
    case InputKind::PlusMinusOne:
      return "+-1";
    case InputKind::Floats:
      return "random (floats with specials; any byte for uint8)";
  }
  return "?";
}

// A small deterministic generator (same sequence on every platform, unlike std:: distributions).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int uniform(int lo, int hi) {  // inclusive
    return lo + static_cast<int>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  bool chance(int percent) { return uniform(0, 99) < percent; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<std::size_t>(uniform(0, static_cast<int>(v.size()) - 1))];
  }
  float unit() { return static_cast<float>(next() >> 40) / static_cast<float>(1 << 24); }  // [0, 1)

 private:
  std::uint64_t state_;
};

inline float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline std::string float_text(float f) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g (%a)", static_cast<double>(f), static_cast<double>(f));
  return buf;
}

struct ConvCase {
  std::string name;
  std::uint64_t seed = 0;
  Shape input{1, 1, 1, 1};
  Shape filter{1, 1, 1, 1};
  BinaryConvolution::Attributes attributes;
  BitOrder order = BitOrder::MsbFirst;
  bool uint8_input = false;
  InputKind kind = InputKind::Binary;
  std::vector<float> x_f32;
  std::vector<std::uint8_t> x_u8;
  std::vector<std::uint8_t> filter_bytes;  // packed in `order`

  Filter make_filter() const {
    return Filter::from_packed(filter_bytes.data(), filter_bytes.size(), filter, order);
  }
  std::int64_t input_size() const { return input[0] * input[1] * input[2] * input[3]; }
  std::int64_t filter_size() const { return filter[0] * filter[1] * filter[2] * filter[3]; }
  std::vector<float> reference() const {
    const Filter f = make_filter();
    return uint8_input ? reference_binary_convolution(x_u8.data(), input, f, attributes)
                       : reference_binary_convolution(x_f32.data(), input, f, attributes);
  }
};

inline std::string describe(const ConvCase& c) {
  std::ostringstream o;
  const auto& a = c.attributes;
  o << "case '" << c.name << "' seed " << c.seed << ": X " << to_string(c.input) << " ("
    << (c.uint8_input ? "uint8" : "float32") << ", " << to_string(c.kind) << "), F " << to_string(c.filter)
    << " (" << to_string(c.order) << ", " << c.filter_bytes.size() << " bytes), strides " << a.strides[0]
    << "," << a.strides[1] << ", dilations " << a.dilations[0] << "," << a.dilations[1] << ", auto_pad "
    << to_string(a.auto_pad) << ", pads_begin " << a.pads_begin[0] << "," << a.pads_begin[1] << ", pads_end "
    << a.pads_end[0] << "," << a.pads_end[1] << ", pad_value " << float_text(a.pad_value) << ", mode "
    << a.mode << ", thresholds ";
  if (a.input_thresholds.empty()) {
    o << "(empty)";
  } else {
    for (std::size_t i = 0; i < a.input_thresholds.size(); ++i) {
      if (i == 8 && a.input_thresholds.size() > 10) {
        o << " ... (" << a.input_thresholds.size() << " in all)";
        break;
      }
      o << (i ? ", " : "") << float_text(a.input_thresholds[i]);
    }
  }
  try {
    const ConvGeometry g = BinaryConvolution::validate(a, c.input, c.filter);
    o << "; resolved pads " << g.pads_begin[0] << "," << g.pads_begin[1] << " / " << g.pads_end[0] << ","
      << g.pads_end[1] << ", Y " << to_string(g.output)
      << (g.has_pad_taps ? ", has pad taps" : ", no pad taps");
  } catch (const std::exception& e) {
    o << "; validate throws: " << e.what();
  }
  return o.str();
}

// Packs filter bits (true = +1) in the given order.
inline std::vector<std::uint8_t> pack_bits(const std::vector<bool>& bits, BitOrder order) {
  std::vector<std::uint8_t> bytes((bits.size() + 7) / 8, 0);
  for (std::size_t i = 0; i < bits.size(); ++i) {
    if (!bits[i]) continue;
    const int shift = order == BitOrder::MsbFirst ? 7 - static_cast<int>(i % 8) : static_cast<int>(i % 8);
    bytes[i / 8] |= static_cast<std::uint8_t>(1u << shift);
  }
  return bytes;
}

// Fills the input (for kind and type) and the filter bytes of a case whose shapes and attributes are set.
inline void fill_data(ConvCase& c, Rng& rng) {
  const std::int64_t n = c.input_size();
  const std::int64_t C = c.input[1], plane = c.input[2] * c.input[3];
  const auto& t = c.attributes.input_thresholds;
  if (c.uint8_input) {
    c.x_u8.resize(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      switch (c.kind) {
        case InputKind::Binary:
          c.x_u8[i] = static_cast<std::uint8_t>(rng.uniform(0, 1));
          break;
        case InputKind::SmallInteger:
          c.x_u8[i] = static_cast<std::uint8_t>(rng.uniform(0, 6));
          break;
        default:
          c.x_u8[i] = static_cast<std::uint8_t>(rng.uniform(0, 255));
          break;
      }
    }
  } else {
    c.x_f32.resize(static_cast<std::size_t>(n));
    const std::vector<float> specials = {-0.0f,
                                         0.0f,
                                         from_bits(0x00000001u),
                                         from_bits(0x80000001u),
                                         from_bits(0x007fffffu),
                                         from_bits(0x807fffffu),
                                         std::numeric_limits<float>::quiet_NaN(),
                                         from_bits(0xffc00001u),
                                         std::numeric_limits<float>::infinity(),
                                         -std::numeric_limits<float>::infinity(),
                                         std::numeric_limits<float>::min(),
                                         -std::numeric_limits<float>::min(),
                                         1.0f,
                                         -1.0f,
                                         0.5f,
                                         -0.25f};
    for (std::int64_t i = 0; i < n; ++i) {
      float v = 0;
      switch (c.kind) {
        case InputKind::Binary:
          v = static_cast<float>(rng.uniform(0, 1));
          break;
        case InputKind::SmallInteger:
          v = static_cast<float>(rng.uniform(-3, 3));
          break;
        case InputKind::PlusMinusOne:
          v = rng.chance(50) ? 1.0f : -1.0f;
          break;
        case InputKind::Floats: {
          const int r = rng.uniform(0, 9);
          if (r < 3) {
            v = rng.pick(specials);
          } else if (r < 4 && !t.empty()) {
            v = t[static_cast<std::size_t>((i / plane) % C)];  // exactly the threshold: -1
          } else {
            v = (rng.unit() * 4.0f - 2.0f) * (rng.chance(20) ? 1e-3f : 1.0f);
          }
          break;
        }
      }
      c.x_f32[i] = v;
    }
  }
  std::vector<bool> bits(static_cast<std::size_t>(c.filter_size()));
  for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = rng.chance(50);
  c.filter_bytes = pack_bits(bits, c.order);
  // Extra bytes and the unused bits of the last byte must be ignored: fill them with noise.
  if (bits.size() % 8) {
    const int unused = 8 - static_cast<int>(bits.size() % 8);
    const std::uint8_t noise = static_cast<std::uint8_t>(rng.uniform(0, 255));
    const std::uint8_t mask = c.order == BitOrder::MsbFirst
                                  ? static_cast<std::uint8_t>((1u << unused) - 1)
                                  : static_cast<std::uint8_t>(0xffu << (8 - unused));
    c.filter_bytes.back() |= noise & mask;
  }
  if (rng.chance(20)) c.filter_bytes.push_back(static_cast<std::uint8_t>(rng.uniform(0, 255)));
}

// Thresholds for a case: empty, or C_IN values of the kinds the input kind makes interesting.
inline std::vector<float> random_thresholds(Rng& rng, std::int64_t C, bool uint8_input, InputKind kind) {
  if (rng.chance(30)) return {};
  std::vector<float> t(static_cast<std::size_t>(C));
  for (auto& v : t) {
    const int r = rng.uniform(0, 9);
    if (uint8_input) {
      static const std::vector<float> wide = {0.0f, -0.0f,  0.5f,   -1.0f,  1.0f,
                                              2.5f, 127.0f, 254.5f, 255.0f, 300.0f};
      if (kind == InputKind::Floats) {
        v = rng.pick(wide);
      } else {
        v = r < 3 ? 0.0f : r < 5 ? 0.5f : static_cast<float>(rng.uniform(-1, 6)) + (r < 8 ? 0.0f : 0.25f);
      }
    } else {
      switch (r) {
        case 0:
          v = 0.0f;
          break;
        case 1:
          v = -0.0f;
          break;
        case 2:
          v = 0.5f;
          break;
        case 3:
          v = -0.25f;
          break;
        case 4:
          v = static_cast<float>(rng.uniform(-3, 3));
          break;
        case 5:
          v = from_bits(0x00000001u);
          break;  // smallest subnormal
        case 6:
          v = rng.chance(50) ? std::numeric_limits<float>::infinity()
                             : -std::numeric_limits<float>::infinity();
          break;
        default:
          v = rng.unit() * 2.0f - 1.0f;
          break;
      }
    }
  }
  return t;
}

// A random configuration whose work (N*C_OUT*OH*OW*K) stays below max_work, so hundreds run in seconds.
inline ConvCase random_case(std::uint64_t seed, double max_work = 1.5e7) {
  Rng rng(seed);
  static const std::vector<std::int64_t> c_in_choices = {1,  2,  3,   31,  32,  33,  63,
                                                         64, 65, 127, 128, 129, 256, 257};
  static const std::vector<std::int64_t> c_out_special = {1,  2,  3,  7,   31,  32,  33,
                                                          63, 64, 65, 127, 128, 129, 130};
  static const std::vector<float> pad_values = {-1.0f, 0.0f, 1.0f, 0.5f, -0.25f, 0.1f};
  for (int attempt = 0;; ++attempt) {
    ConvCase c;
    c.seed = seed;
    c.name = "random " + std::to_string(seed);
    const std::int64_t C = rng.pick(c_in_choices);
    const std::int64_t O = rng.chance(50) ? rng.pick(c_out_special) : rng.uniform(1, 130);
    const int KH = rng.uniform(1, 7), KW = rng.chance(60) ? KH : rng.uniform(1, 7);
    auto& a = c.attributes;
    a.strides = {rng.uniform(1, 3), rng.uniform(1, 3)};
    a.dilations = {rng.chance(50) ? 1 : rng.uniform(1, 3), rng.chance(50) ? 1 : rng.uniform(1, 3)};
    const int mode = rng.uniform(0, 9);
    a.auto_pad = mode < 5   ? AutoPad::Explicit
                 : mode < 7 ? AutoPad::SameUpper
                 : mode < 9 ? AutoPad::SameLower
                            : AutoPad::Valid;
    // Explicit pads may be anything; with auto_pad they are ignored (so put noise there).
    a.pads_begin = {rng.uniform(0, 3), rng.uniform(0, 3)};
    a.pads_end = {rng.uniform(0, 3), rng.uniform(0, 3)};
    a.pad_value = rng.pick(pad_values);
    if (rng.chance(10)) a.mode = "XNOR-Popcount";
    const std::int64_t N = rng.uniform(1, 3);
    std::int64_t dims[2];
    for (int d = 0; d < 2; ++d) {
      const std::int64_t k = d == 0 ? KH : KW;
      const std::int64_t dk = (k - 1) * a.dilations[d] + 1;
      std::int64_t pads = a.auto_pad == AutoPad::Explicit ? a.pads_begin[d] + a.pads_end[d] : 0;
      if (a.auto_pad == AutoPad::SameUpper || a.auto_pad == AutoPad::SameLower) pads = dk;  // any size works
      const std::int64_t lo = std::max<std::int64_t>(1, dk - pads);
      dims[d] = lo + (rng.chance(25) ? rng.uniform(0, 40) : rng.uniform(0, 9));
    }
    c.input = {N, C, dims[0], dims[1]};
    c.filter = {O, C, KH, KW};
    c.uint8_input = rng.chance(25);
    if (c.uint8_input) {
      const int kind = rng.uniform(0, 2);  // no +-1 in uint8
      c.kind = kind == 0 ? InputKind::Binary : kind == 1 ? InputKind::SmallInteger : InputKind::Floats;
    } else {
      c.kind = static_cast<InputKind>(rng.uniform(0, 3));
    }
    a.input_thresholds = random_thresholds(rng, C, c.uint8_input, c.kind);
    c.order = rng.chance(50) ? BitOrder::MsbFirst : BitOrder::LsbFirst;

    ConvGeometry g;
    try {
      g = BinaryConvolution::validate(a, c.input, c.filter);
    } catch (const InvalidArgument&) {
      continue;  // e.g. a strided window that does not fit: draw again
    }
    const double work =
        double(N) * double(O) * double(g.output[2]) * double(g.output[3]) * double(C * KH * KW);
    if (work > max_work && attempt < 1000) continue;
    fill_data(c, rng);
    return c;
  }
}

// Bitwise comparison; on a difference, a message naming the first differing element (else empty).
inline std::string bitwise_difference(const std::vector<float>& got, const std::vector<float>& want,
                                      const Shape& y_shape) {
  if (got.size() != want.size()) {
    return "sizes differ: " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
  }
  if (std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0) return "";
  std::size_t count = 0, first = got.size();
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) {
      if (first == got.size()) first = i;
      ++count;
    }
  }
  const std::int64_t plane = y_shape[2] * y_shape[3];
  const std::int64_t i = static_cast<std::int64_t>(first);
  std::ostringstream o;
  o << count << " of " << got.size() << " outputs differ; first at n=" << i / (y_shape[1] * plane)
    << " o=" << (i / plane) % y_shape[1] << " oy=" << (i % plane) / y_shape[3] << " ox=" << i % y_shape[3]
    << ": got " << float_text(got[first]) << ", reference " << float_text(want[first]);
  return o.str();
}

// Per output channel: a scale (some negative, some +-0, fractional) and a bias.
inline void random_scale_bias(Rng& rng, std::int64_t channels, std::vector<float>& scale,
                              std::vector<float>& bias) {
  scale.resize(static_cast<std::size_t>(channels));
  bias.resize(static_cast<std::size_t>(channels));
  for (std::size_t o = 0; o < scale.size(); ++o) {
    const int r = rng.uniform(0, 9);
    scale[o] = r == 0 ? 0.0f : r == 1 ? -0.0f : (rng.unit() * 4.0f - 2.0f) * (r < 5 ? 1.0f : 0.37f);
    bias[o] = r == 2 ? 0.0f : static_cast<float>(rng.uniform(-9, 9)) + (r < 6 ? 0.0f : rng.unit());
  }
}

// The fused GEMM (the one with an output epilogue) that a layer's plan names, derived here from the plan and
// shapes rather than asked from the library: the Global variant runs xnor_gemm_fused_runs where each
// work-item's tn columns are one run of an image's output positions (tn a multiple of 4 dividing the
// positions per image, or a batch of one image of at least tn positions, whose last block overlaps the one
// before it) and the output is floats; otherwise xnor_gemm_fused. A layer split into chunks of output rows
// is not predicted here (the rows per chunk are the planner's): either name.
inline bool is_fused_gemm_kernel(const std::string& kernel) {
  return kernel == "xnor_gemm_fused" || kernel == "xnor_gemm_fused_runs";
}
inline std::string fused_gemm_kernel(const BinaryConvolution& conv) {
  const Plan& p = conv.plan();
  if (p.chunks > 1) return is_fused_gemm_kernel(p.launches.back().kernel) ? p.launches.back().kernel : "?";
  const std::size_t at = p.configuration.find("tn=");
  const int tn = at == std::string::npos ? 0 : std::stoi(p.configuration.substr(at + 3));
  const Shape out = conv.output_shape();
  const bool floats = p.output.rfind("packed", 0) != 0;
  const std::int64_t per_image = out[2] * out[3];
  const bool whole_blocks = tn > 0 && (per_image % tn == 0 || (out[0] == 1 && per_image >= tn));
  const bool runs = p.variant == Variant::Global && tn > 0 && tn % 4 == 0 && whole_blocks && floats;
  return runs ? "xnor_gemm_fused_runs" : "xnor_gemm_fused";
}

}  // namespace xnorcl::test
