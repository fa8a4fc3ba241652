// SPDX-License-Identifier: Apache-2.0
// The host reference. It counts exactly what the kernels count (P, B and S as integers) and rounds once,
// so device and host agree bit for bit; it is written for clarity first and vectorizable inner loops second.
#include "xnorcl/reference.hpp"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <new>
#include <string>

#include "xnorcl/error.hpp"

namespace xnorcl {
namespace {

// Orders IEEE floats as unsigned integers (sign-magnitude to offset binary), with -0 equal to +0, so the
// comparison is exact even where the FPU flushes subnormals (DAZ). The kernels use the same key.
std::uint32_t order_key(float value) noexcept {
  std::uint32_t u;
  std::memcpy(&u, &value, sizeof u);
  if ((u & 0x7fffffffu) == 0) u = 0;
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

bool is_nan_bits(float value) noexcept {
  std::uint32_t u;
  std::memcpy(&u, &value, sizeof u);
  return (u & 0x7fffffffu) > 0x7f800000u;
}

// A host buffer of `count` values of the output or of the filter; more than the host can give is an Error
// naming the sizes, never a std::bad_alloc.
std::string decimal(unsigned __int128 v) {
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  } while (v != 0);
  return digits;
}

template <class V>
std::vector<V> host_buffer(unsigned __int128 count, const std::string& what) {
  const std::string sizes =
      what + ": " + decimal(count) + " values of " + std::to_string(sizeof(V)) + " bytes";
  if (count > std::vector<V>().max_size()) {
    throw Error("reference_binary_convolution: " + sizes + " are more than a host vector holds");
  }
  // Never asked of the allocator (some, sanitizers' among them, abort on absurd requests instead of
  // throwing).
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_size = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0 &&
      count * sizeof(V) > static_cast<unsigned __int128>(pages) * static_cast<unsigned __int128>(page_size)) {
    throw Error("reference_binary_convolution: " + sizes + " are more than this host's memory (" +
                decimal(static_cast<unsigned __int128>(pages) * static_cast<unsigned __int128>(page_size)) +
                " bytes)");
  }
  try {
    return std::vector<V>(static_cast<std::size_t>(count));
  } catch (const std::bad_alloc&) {
    throw Error("reference_binary_convolution: cannot allocate " + sizes);
  }
}

template <class T>
std::vector<float> reference(const T* x, const Shape& x_shape, const Filter& f,
                             const BinaryConvolution::Attributes& a) {
  if (!x) throw InvalidArgument("reference_binary_convolution: the input pointer is null");
  const ConvGeometry g = BinaryConvolution::validate(a, x_shape, f.shape());
  const std::int64_t N = x_shape[0], C = x_shape[1], H = x_shape[2], W = x_shape[3];
  const std::int64_t O = f.shape()[0], KH = f.shape()[2], KW = f.shape()[3];
  const std::int64_t OH = g.output[2], OW = g.output[3];
  const std::int64_t K = C * KH * KW;

  std::vector<std::uint32_t> threshold_keys(static_cast<std::size_t>(C), order_key(0.0f));
  for (std::int64_t c = 0; c < C && !a.input_thresholds.empty(); ++c) {
    threshold_keys[c] = order_key(a.input_thresholds[c]);
  }
  // Filter bits in the patch order k = (c*KH + ky)*KW + kx, one byte each.
  std::vector<std::uint8_t> w = host_buffer<std::uint8_t>(
      static_cast<unsigned __int128>(O) * static_cast<unsigned __int128>(K), "the filter bits");
  for (std::int64_t i = 0; i < O * K; ++i) w[i] = f.bit(i);

  std::vector<float> y = host_buffer<float>(static_cast<unsigned __int128>(N) * O * OH * OW,
                                            "the output " + to_string(g.output));
  std::vector<std::uint8_t> bit(static_cast<std::size_t>(K)), inside(static_cast<std::size_t>(K));
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t oy = 0; oy < OH; ++oy) {
      for (std::int64_t ox = 0; ox < OW; ++ox) {
        std::int64_t k = 0;
        for (std::int64_t c = 0; c < C; ++c) {
          for (std::int64_t ky = 0; ky < KH; ++ky) {
            const std::int64_t iy = oy * a.strides[0] - g.pads_begin[0] + ky * a.dilations[0];
            for (std::int64_t kx = 0; kx < KW; ++kx, ++k) {
              const std::int64_t ix = ox * a.strides[1] - g.pads_begin[1] + kx * a.dilations[1];
              const bool in = iy >= 0 && iy < H && ix >= 0 && ix < W;
              inside[k] = in;
              bit[k] = 0;
              if (in) {
                const float v = static_cast<float>(x[((n * C + c) * H + iy) * W + ix]);
                bit[k] = !is_nan_bits(v) && order_key(v) > threshold_keys[c];
              }
            }
          }
        }
        std::int64_t in_bounds = 0;
        for (std::int64_t i = 0; i < K; ++i) in_bounds += inside[i];
        for (std::int64_t o = 0; o < O; ++o) {
          const std::uint8_t* wo = &w[o * K];
          std::int64_t agree = 0, pad_sum = 0;  // P, and S = sum of w_real over pad taps
          for (std::int64_t i = 0; i < K; ++i) {
            agree += inside[i] & (1 ^ bit[i] ^ wo[i]);
            pad_sum += (1 - inside[i]) * (2 * wo[i] - 1);
          }
          y[((n * O + o) * OH + oy) * OW + ox] =
              std::fmaf(a.pad_value, static_cast<float>(pad_sum), static_cast<float>(2 * agree - in_bounds));
        }
      }
    }
  }
  return y;
}

}  // namespace

std::vector<float> reference_clamp(const std::vector<float>& y, float low, float high) {
  if (is_nan_bits(low) || is_nan_bits(high) || !(low <= high)) {
    throw InvalidArgument("reference_clamp: low " + std::to_string(low) + " and high " +
                          std::to_string(high) + " must be numbers with low <= high");
  }
  std::vector<float> out(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) out[i] = y[i] < low ? low : (y[i] > high ? high : y[i]);
  return out;
}

bool input_bit(float x, float threshold) noexcept {
  return !is_nan_bits(x) && order_key(x) > order_key(threshold);
}

std::vector<float> reference_binary_convolution(const float* x, const Shape& x_shape, const Filter& f,
                                                const BinaryConvolution::Attributes& a) {
  return reference(x, x_shape, f, a);
}

std::vector<float> reference_binary_convolution(const std::uint8_t* x, const Shape& x_shape, const Filter& f,
                                                const BinaryConvolution::Attributes& a) {
  return reference(x, x_shape, f, a);
}

}  // namespace xnorcl
