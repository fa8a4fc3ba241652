// SPDX-License-Identifier: Apache-2.0
#include "ops/binary_convolution/layer_dims.hpp"

#include <climits>
#include <string>

#include "xnorcl/error.hpp"

namespace xnorcl::detail {
namespace {

int to_int(std::int64_t value, const char* what) {
  if (value < 0 || value > INT_MAX) {
    throw InvalidArgument(std::string(what) + " = " + std::to_string(value) +
                          " is beyond what the kernels index with 32-bit integers (at most " +
                          std::to_string(INT_MAX) + ")");
  }
  return static_cast<int>(value);
}

}  // namespace

LayerDims layer_dims(const ConvGeometry& g, const BinaryConvolution::Attributes& a, int word_bits,
                     bool input_packed) {
  LayerDims d;
  d.N = to_int(g.input[0], "N");
  d.C_IN = to_int(g.input[1], "C_IN");
  d.H = to_int(g.input[2], "H");
  d.W = to_int(g.input[3], "W");
  d.C_OUT = to_int(g.filter[0], "C_OUT");
  d.KH = to_int(g.filter[2], "KH");
  d.KW = to_int(g.filter[3], "KW");
  d.stride_y = a.strides[0];
  d.stride_x = a.strides[1];
  d.dilation_y = a.dilations[0];
  d.dilation_x = a.dilations[1];
  d.pad_top = g.pads_begin[0];
  d.pad_left = g.pads_begin[1];
  d.OH = to_int(g.output[2], "OH");
  d.OW = to_int(g.output[3], "OW");
  d.K = to_int(g.input[1] * g.filter[2] * g.filter[3], "C_IN*KH*KW");
  choose_packing(d, word_bits, input_packed);
  return d;
}

FusedPool fused_pool(const PoolAttributes& a, const Shape& conv_output, Shape& pooled) {
  PoolGeometry pg;
  try {
    pg = validate_pool(a, conv_output);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string("BinaryConvolution: Options::max_pool on the output ") +
                          xnorcl::to_string(conv_output) + ": " + e.what());
  }
  const FusedPool pool = {a.kernel[0],
                          a.kernel[1],
                          a.strides[0],
                          a.strides[1],
                          pg.pads_begin[0],
                          pg.pads_begin[1],
                          to_int(pg.output[2], "pooled OH"),
                          to_int(pg.output[3], "pooled OW")};
  pooled = pg.output;
  return pool;
}

}  // namespace xnorcl::detail
