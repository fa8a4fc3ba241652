// SPDX-License-Identifier: Apache-2.0
// ImageToTensor: a camera frame into a network. Its input is a graph input of interleaved uint8 pixels
// [N, H, W, K], NHWC as cameras and bitmaps hold them: `format` rgb or bgr (K 3), rgba or bgra (K 4, the
// fourth byte dropped). Its output is float NCHW [N, 3, H, W] (`layout` nchw, the default) or NHWC
// [N, H, W, 3] (`layout` nhwc, as models converted from TensorFlow take) in the model's channel `order`,
// each value (pixel - mean[c]) * scale[c] with mean and scale per model channel (one value: all three), as
// floats, rounded after the subtraction and after the product. No resizing: the frame has the model's size.
// On the device (image_to_tensor.cl), so only the frame's bytes cross from the host.
#include <array>
#include <cmath>

#include "ops/float_step.hpp"
#include "ops/layer_common.hpp"
#include "xnorcl/error.hpp"

namespace xnorcl::ops {

namespace {

struct Conversion {
  std::int64_t bytes_per_pixel = 3;
  std::array<int, 3> source{0, 1, 2};  // the byte of a pixel that holds each model channel
  std::array<float, 3> mean{0, 0, 0}, scale{1, 1, 1};
  bool nhwc = false;
};

std::array<float, 3> per_channel(const NodeView& v, const std::string& name, float fallback) {
  const std::vector<double> values = v.reals(name, {fallback});
  if (values.size() != 1 && values.size() != 3)
    throw InvalidArgument(v.where() + ": " + name + " takes 1 or 3 values (one per channel), it has " +
                          std::to_string(values.size()));
  std::array<float, 3> out{};
  for (std::size_t c = 0; c < 3; ++c) {
    const double d = values[values.size() == 1 ? 0 : c];
    if (!std::isfinite(d) || std::fabs(d) > 3.0e38)
      throw InvalidArgument(v.where() + ": " + name + "[" + std::to_string(c) + "] = " + std::to_string(d) +
                            " is not a finite float");
    out[c] = static_cast<float>(d);
  }
  return out;
}

// Refusals name no node: graph validation puts the node in front.
Conversion conversion(const NodeView& v) {
  const PixelFormat format = parse_pixel_format(v.text("format"));
  const ChannelOrder order = parse_channel_order(v.text("order", "rgb"));
  Conversion c;
  c.bytes_per_pixel = format == PixelFormat::RGBA || format == PixelFormat::BGRA ? 4 : 3;
  const bool source_bgr = format == PixelFormat::BGR || format == PixelFormat::BGRA;
  const bool model_bgr = order == ChannelOrder::BGR;
  // Model channel k holds colour k of its order; the pixel holds that colour at the same place when the
  // orders agree, mirrored (0 <-> 2) when they differ.
  for (int k = 0; k < 3; ++k) c.source[static_cast<std::size_t>(k)] = source_bgr == model_bgr ? k : 2 - k;
  const std::string layout = v.text("layout", "nchw");
  if (layout != "nchw" && layout != "nhwc")
    throw InvalidArgument("layout '" + layout + "' is neither nchw nor nhwc");
  c.nhwc = layout == "nhwc";
  c.mean = per_channel(v, "mean", 0.0f);
  c.scale = per_channel(v, "scale", 1.0f);
  return c;
}

class ImageToTensorStep final : public LinearStep {
 public:
  ImageToTensorStep(const Runtime& rt, const NodeView& v, const Conversion& c)
      : ImageToTensorStep(rt, v, c,
                          "image_to_tensor " + to_string(v.inputs[0].dims) + (c.nhwc ? " nhwc" : " nchw")) {}
  // The description names the launch geometry, so it is the tuning class too.
  ImageToTensorStep(const Runtime& rt, const NodeView& v, const Conversion& c, const std::string& what)
      : LinearStep(rt, "image_to_tensor.cl", what, what),
        c_(c),
        pixels_(product(v.inputs[0].dims) / c.bytes_per_pixel),
        hw_(v.inputs[0].dims[1] * v.inputs[0].dims[2]),
        kernel_(kernel("image_to_tensor")) {}

  cl::Event enqueue(const std::vector<const cl::Buffer*>& in, const std::vector<const cl::Buffer*>& out,
                    const std::vector<cl::Event>& wait) override {
    begin();
    detail::set_args(kernel_, "image_to_tensor", *in[0], *out[0], int_arg(hw_), int_arg(c_.bytes_per_pixel),
                     cl_int(c_.source[0]), cl_int(c_.source[1]), cl_int(c_.source[2]), c_.mean[0], c_.mean[1],
                     c_.mean[2], c_.scale[0], c_.scale[1], c_.scale[2], cl_int(c_.nhwc ? 1 : 0),
                     int_arg(pixels_));
    return launch(kernel_, "image_to_tensor", static_cast<std::size_t>(pixels_), wait);
  }

 private:
  Conversion c_;
  std::int64_t pixels_, hw_;
  cl::Kernel kernel_;
};

class ImageToTensorOp final : public Op {
 public:
  const char* name() const override { return "ImageToTensor"; }

  std::vector<TensorInfo> infer(const NodeView& v) const override {
    v.check_attributes({"format", "order", "mean", "scale", "layout"});
    v.check_input_count(1, 1);
    const TensorInfo& x = v.activation(0, ElementType::UInt8, 4);
    const Conversion c = conversion(v);
    if (x.dims[3] != c.bytes_per_pixel)
      throw InvalidArgument(v.where() + ": format '" + v.text("format") + "' has " +
                            std::to_string(c.bytes_per_pixel) + " bytes per pixel, the input " +
                            to_string(x.dims) + " has " + std::to_string(x.dims[3]));
    check_int_elements(v, x.dims, "the input");
    const Dims out =
        c.nhwc ? Dims{x.dims[0], x.dims[1], x.dims[2], 3} : Dims{x.dims[0], 3, x.dims[1], x.dims[2]};
    check_int_elements(v, out, "the output");
    return {{out, ElementType::Float32}};
  }

  std::vector<Tensor> reference(const NodeView& v, const std::vector<const Tensor*>& in) const override {
    const Conversion c = conversion(v);
    const Dims& d = in[0]->dims;
    const std::int64_t N = d[0], HW = d[1] * d[2];
    Tensor out;
    out.dims = c.nhwc ? Dims{N, d[1], d[2], 3} : Dims{N, 3, d[1], d[2]};
    out.values.resize(static_cast<std::size_t>(N * 3 * HW));
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t p = 0; p < HW; ++p)
        for (std::size_t k = 0; k < 3; ++k) {
          const std::uint8_t byte =
              in[0]->bytes[static_cast<std::size_t>((n * HW + p) * c.bytes_per_pixel + c.source[k])];
          const float centred = static_cast<float>(byte) - c.mean[k];  // rounded once, as on the device
          const auto channel = static_cast<std::int64_t>(k);
          out.values[static_cast<std::size_t>(c.nhwc ? (n * HW + p) * 3 + channel
                                                     : (n * 3 + channel) * HW + p)] = centred * c.scale[k];
        }
    return {out};
  }

  std::unique_ptr<DeviceStep> plan(const Runtime& rt, const NodeView& v,
                                   const std::vector<NodeView>& /*fused*/) const override {
    return std::make_unique<ImageToTensorStep>(rt, v, conversion(v));
  }
};

}  // namespace

const Op& image_to_tensor_op() {
  static const ImageToTensorOp op;
  return op;
}

}  // namespace xnorcl::ops
