// SPDX-License-Identifier: Apache-2.0
// What the float convolution family (Convolution, GroupConvolution, MatMul) shares: OpenVINO's convolution
// attributes and geometry, the epilogue that absorbs a following per-channel Multiply, Add and Relu, and the
// device step that runs one of their kernels.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ops/op.hpp"
#include "runtime/tuning.hpp"
#include "xnorcl/binary_convolution.hpp"
#include "xnorcl/pool.hpp"

namespace xnorcl::ops {

// strides, pads_begin, pads_end, dilations (defaults 1,1 / 0,0 / 0,0 / 1,1) and auto_pad of a node.
BinaryConvolution::Attributes conv_attributes(const NodeView& node);
// The resolved geometry of one group: input [N, C/G, H, W] and filter [O, C/G, KH, KW] (O all output
// channels). Refusals are BinaryConvolution::validate's, prefixed with the node, and an output or a tiled
// weight array of more elements than the kernels index (2^31 - 1).
ConvGeometry conv_geometry(const NodeView& node, const Shape& group_input, const Shape& filter,
                           std::int64_t groups);
// Refuses `count` elements of `what` above 2^31 - 1 (the kernels index with int).
void check_indexable(const NodeView& node, std::int64_t count, const std::string& what);

// Host reference of a grouped convolution in double, rounded once per output: x [N, G*Cg, H, W], w
// [O, Cg, KH, KW] with O = G*Og; output o reads the Cg input channels of its group o / Og.
std::vector<float> reference_convolution(const std::vector<float>& x, const std::vector<float>& w,
                                         const ConvGeometry& g, const BinaryConvolution::Attributes& a,
                                         std::int64_t groups);

// A fused [Multiply] [Add] [Relu] tail, per output channel: y = relu?(fma(acc, scale, bias)). Without a
// Multiply the scale is 1 (acc * 1 + bias rounds once, as the Add alone does); without an Add the bias is 0.
struct Epilogue {
  std::vector<float> scale, bias;
  bool scaled = false, biased = false, relu = false;  // which nodes it absorbed
  std::string describe() const;                       // "", " + scale, bias, relu", ...
};

// Whether `next` continues the tail `fused` (in the order Multiply, Add, Relu; each at most once) on an
// output of the given dims whose channels are axis 1: a Multiply or Add by a constant f32 of one value or
// one per channel (numpy broadcast that leaves the output's dims unchanged), or a Relu.
bool epilogue_accepts(const std::vector<NodeView>& fused, const NodeView& next, const Dims& output);
Epilogue epilogue_of(const std::vector<NodeView>& fused, std::int64_t channels);

// A copy of the input that a kernel reads instead of x, made by another kernel of the same file just before
// it (convolution_split's padded, phase-split copy): kernel(x, copy, params...) over `total` work-items.
struct InputCopy {
  const char* kernel = "";
  std::vector<std::int32_t> params;
  std::size_t total = 0;
  std::size_t floats = 0;  // the copy's size
};

// One launch of a kernel of `file` over `total` work-items (or work-groups: work_group_per_item) with the
// program's fixed local size, 1-D, and the arguments (x, weights, scale, bias, y, params..., relu); with
// `copy`, the kernel's first argument is the copy instead of x.
struct FloatLaunch {
  const char* file = "";
  const char* kernel = "";
  std::vector<float> weights;  // as the kernel reads them
  std::vector<std::int32_t> params;
  std::size_t total = 0;
  bool work_group_per_item = false;
  std::string description;
  std::string options;         // build options beyond the program's defaults (a tuned configuration), or ""
  std::size_t work_group = 0;  // the local size (a tuned configuration), or 0: the runtime program's
  std::optional<detail::TuningPoint> tuning;
  std::optional<InputCopy> copy;
};
// A 1x1 window without pads, at any stride: convolution.cl's pointwise kernel, tiles along the whole output
// plane.
bool is_pointwise(const ConvGeometry& g);
// The kernels of convolution.cl: tiles of 8 channels x 8 or 16 columns; 16 channels in vector lanes x
// detail::kFloatConvLaneColumns columns; 6 channels x 16 columns in vector lanes on a padded, phase-split
// copy of the input (windowed shapes whose weights are all finite), or x 16 positions on the input plane
// itself (1x1 windows without pads at stride 1) or on a copy of its strided pixels (at a stride):
// split_allowed.
enum class FloatConvKernel { Tiles, Lanes, Split };
// Whether the Split kernels may run the convolution: convolution_split for a window other than 1x1 without
// pads whose weights are all finite (its copy's zero pads add w * 0 where the others skip the tap);
// convolution_1x1_split for a 1x1 window without pads whose output plane holds 32 positions or more.
bool split_allowed(const ConvGeometry& g, const BinaryConvolution::Attributes& a, const std::vector<float>& w,
                   std::int64_t groups);
// Whether a MaxPool after a convolution (and its epilogue) runs in the convolution's step: a 3x3 window at
// stride 2 whose pads before are 1, 1 (a ResNet stem's pool). Every device: where the kernel cannot pool
// in its epilogue, the step runs the pool's own kernel after it.
bool fuses_max_pool(const PoolAttributes& attributes, const PoolGeometry& geometry);
// Whether convolution_split's max-pooling kernel can run such a pool (a window other than 1x1 without
// pads, its copy within int).
bool pools_in_kernel(const ConvGeometry& g, const BinaryConvolution::Attributes& a, std::int64_t groups,
                     const PoolGeometry& pool);
// The most pooled rows a work-item of convolution_split_maxpool takes (its band), and the default band; each
// band computes one convolution row twice (its first, the band above's last). See convolution.cpp.
constexpr int kMaxPoolBand = 8;
constexpr int kDefaultPoolBand = 4;
static_assert(kMaxPoolBand <= 8, "the kernel's rows of `left` hold bands of POOL_BAND_MAX (8) pooled rows");
static_assert(kDefaultPoolBand >= 1 && kDefaultPoolBand <= kMaxPoolBand,
              "the default is a band the kernel takes");
// The launch of convolution.cl's kernel (convolution.cpp) for a grouped convolution with weights w
// [O, Cg, KH, KW] (O = groups * Og); `columns`: the tiles' column count (8 or 16) or the lanes'
// (detail::kFloatConvLaneColumns); convolution_split's are fixed. `rows`: convolution_split's output rows
// per work-item (1 or 2); the other kernels take 1. With `pool` (Split where pools_in_kernel), the kernel
// also max-pools its outputs and writes the pooled tensor, each work-item a band of `band` pooled rows (1 to
// kMaxPoolBand).
FloatLaunch convolution_launch(const ConvGeometry& g, const BinaryConvolution::Attributes& a,
                               const std::vector<float>& w, std::int64_t groups, FloatConvKernel kernel,
                               int columns, int rows = 1, const PoolGeometry* pool = nullptr,
                               int band = kDefaultPoolBand);
// A max-pool fused after the epilogue (fuses_max_pool).
struct FusedMaxPool {
  PoolAttributes attributes;
  PoolGeometry geometry;
};
// The step of a grouped convolution (not depthwise) in its tuned kernel configuration (the tuning table's,
// else the device's default: detail::float_conv_lanes_by_default), with its fused max-pool if any.
std::unique_ptr<DeviceStep> plan_convolution(const Runtime& runtime, const ConvGeometry& g,
                                             const BinaryConvolution::Attributes& a,
                                             const std::vector<float>& w, std::int64_t groups,
                                             const Epilogue& epilogue,
                                             const std::optional<FusedMaxPool>& pool = std::nullopt);
// after_epilogue: what the description adds after the epilogue's part (a pool in the same launch).
std::unique_ptr<DeviceStep> make_float_step(const Runtime& runtime, FloatLaunch launch,
                                            const Epilogue& epilogue, const std::string& after_epilogue = "");
// The same at the tuning table's work-group size for "work-group <what>" (what: the launch geometry), for a
// kernel whose work-items each compute their own outputs.
std::unique_ptr<DeviceStep> make_work_group_tuned_step(const Runtime& runtime, FloatLaunch launch,
                                                       const Epilogue& epilogue, const std::string& what);
// A convolution's geometry as tuning classes name it: shapes, kernel, stride, dilation, groups.
std::string convolution_class(const ConvGeometry& g, const BinaryConvolution::Attributes& a,
                              std::int64_t groups);

}  // namespace xnorcl::ops
