// SPDX-License-Identifier: Apache-2.0
// Camera frames in: a model's float input taken as interleaved uint8 pixels (with_image_input, the
// ImageToTensor op), converted on the device. Every pixel format and channel order, per-channel mean and
// scale, batch > 1 and odd sizes, both variants: the converted tensor equals values computed here by the
// formula, bit for bit, and the model's outputs equal the host reference graph's. Refusals before any
// device work.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "device_checks.hpp"
#include "device_support.hpp"
#include "graph_case.hpp"

namespace xnorcl::test {
namespace {

using Ints = std::vector<std::int64_t>;

// A float convolution and a Relu over a 3-channel input "image" [N, 3, H, W].
Graph small_model(std::int64_t N, std::int64_t H, std::int64_t W, std::mt19937& rng) {
  Graph g;
  g.inputs = {{"image", {N, 3, H, W}}};
  g.constants["w"] = random_floats({4, 3, 3, 3}, rng, -0.05f, 0.05f);
  const std::string conv = add_node(g, "conv", "Convolution", {"image", "w"},
                                    {{"strides", Ints{1, 1}},
                                     {"dilations", Ints{1, 1}},
                                     {"pads_begin", Ints{1, 1}},
                                     {"pads_end", Ints{1, 1}}});
  g.outputs = {add_node(g, "relu", "Relu", {conv})};
  return g;
}

Tensor random_frame(const Dims& dims, std::mt19937& rng) {
  Tensor t;
  t.dims = dims;
  t.type = ElementType::UInt8;
  t.bytes.resize(static_cast<std::size_t>(dims_product(dims)));
  for (std::uint8_t& b : t.bytes) b = static_cast<std::uint8_t>(rng() & 0xff);
  return t;
}

// The converted tensor by the formula, written out independently of the op: the byte of colour `colour`
// (0 red, 1 green, 2 blue) sits at that place in an RGB(A) pixel and mirrored in a BGR(A) one.
std::vector<float> expected(const Tensor& frame, const ImageInput& image) {
  const std::int64_t N = frame.dims[0], H = frame.dims[1], W = frame.dims[2], K = frame.dims[3];
  const bool source_bgr = image.format == PixelFormat::BGR || image.format == PixelFormat::BGRA;
  std::vector<float> out(static_cast<std::size_t>(N * 3 * H * W));
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t c = 0; c < 3; ++c) {
      const std::int64_t colour = image.order == ChannelOrder::RGB ? c : 2 - c;
      const std::int64_t at = source_bgr ? 2 - colour : colour;
      for (std::int64_t p = 0; p < H * W; ++p) {
        const float byte = frame.bytes[static_cast<std::size_t>((n * H * W + p) * K + at)];
        const float centred = byte - image.mean[static_cast<std::size_t>(c)];
        out[static_cast<std::size_t>((n * 3 + c) * H * W + p)] =
            centred * image.scale[static_cast<std::size_t>(c)];
      }
    }
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

void every_format_and_order(Variant variant) {
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(61);
  int round = 0;
  for (PixelFormat format : {PixelFormat::RGB, PixelFormat::RGBA, PixelFormat::BGR, PixelFormat::BGRA})
    for (ChannelOrder order : {ChannelOrder::RGB, ChannelOrder::BGR}) {
      const std::int64_t N = 1 + round % 3, H = 1 + static_cast<std::int64_t>(rng() % 13),
                         W = 1 + static_cast<std::int64_t>(rng() % 70);
      ++round;
      ImageInput image;
      image.format = format;
      image.order = order;
      image.mean = {123.675f, 116.28f, 103.53f};
      image.scale = {1 / 58.395f, 1 / 57.12f, 1 / 57.375f};
      const Graph g = with_image_input(small_model(N, H, W, rng), "image", image);
      const std::int64_t K = format == PixelFormat::RGBA || format == PixelFormat::BGRA ? 4 : 3;
      INFO("format " << static_cast<int>(format) << " order " << static_cast<int>(order) << " frame [" << N
                     << ", " << H << ", " << W << ", " << K << "]");
      REQUIRE(g.validate().at("image").dims == Dims{N, H, W, K});
      const std::map<std::string, Tensor> inputs{{"image", random_frame({N, H, W, K}, rng)}};
      Model model(rt, g);
      CHECK(model.input_infos().at(0).second.type == ElementType::UInt8);
      const auto trace = model.run_trace(inputs);
      // The conversion: by the formula, bit for bit.
      const std::vector<float> want = expected(inputs.at("image"), image);
      CHECK(same_bits(trace.at("image/image").values, want));
      // The whole model against the host reference graph.
      const auto reference = reference_graph(g, inputs);
      CHECK(same_bits(reference.at("image/image").values, want));
      const auto out = model.run(inputs);
      CHECK(compare_tensors(out.at(g.outputs[0]), reference.at(g.outputs[0]), false, 1e-5).empty());
      // Negative control: the other channel order computes other values from the same frame.
      ImageInput swapped = image;
      swapped.order = order == ChannelOrder::RGB ? ChannelOrder::BGR : ChannelOrder::RGB;
      CHECK_FALSE(same_bits(expected(inputs.at("image"), swapped), want));
    }
}
XNORCL_VARIANT_TEST("image input: every pixel format and channel order, converted on the device", "[image]",
                    every_format_and_order)

// A model converted from TensorFlow takes NHWC images [N, H, W, 3]: the conversion writes NHWC floats.
void nhwc_model_input(Variant variant) {
  Runtime& rt = runtime_for(variant);
  std::mt19937 rng(64);
  const std::int64_t N = 2, H = 5, W = 19;
  Graph model;
  model.inputs = {{"image", {N, H, W, 3}}};
  model.constants["w"] = random_floats({4, 3, 3, 3}, rng, -0.05f, 0.05f);
  const std::string nchw = add_node(model, "nchw", "Transpose", {"image"}, {{"order", Ints{0, 3, 1, 2}}});
  model.outputs = {add_node(model, "conv", "Convolution", {nchw, "w"},
                            {{"strides", Ints{1, 1}},
                             {"dilations", Ints{1, 1}},
                             {"pads_begin", Ints{0, 0}},
                             {"pads_end", Ints{0, 0}}})};
  ImageInput image;
  image.format = PixelFormat::BGRA;
  image.mean = {10.5f, 20.25f, 30.125f};
  image.scale = {0.5f, 0.125f, 2.0f};
  const Graph g = with_image_input(model, "image", image);
  REQUIRE(g.validate().at("image").dims == Dims{N, H, W, 4});
  REQUIRE(g.validate().at("image/image").dims == Dims{N, H, W, 3});
  const std::map<std::string, Tensor> inputs{{"image", random_frame({N, H, W, 4}, rng)}};
  // The formula's NCHW values, laid out NHWC.
  const std::vector<float> planes = expected(inputs.at("image"), image);
  std::vector<float> want(planes.size());
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t c = 0; c < 3; ++c)
      for (std::int64_t p = 0; p < H * W; ++p)
        want[static_cast<std::size_t>((n * H * W + p) * 3 + c)] =
            planes[static_cast<std::size_t>((n * 3 + c) * H * W + p)];
  Model m(rt, g);
  const auto trace = m.run_trace(inputs);
  CHECK(same_bits(trace.at("image/image").values, want));
  const auto reference = reference_graph(g, inputs);
  CHECK(same_bits(reference.at("image/image").values, want));
  CHECK(compare_tensors(m.run(inputs).at(g.outputs[0]), reference.at(g.outputs[0]), false, 1e-5).empty());
}
XNORCL_VARIANT_TEST("image input: an NHWC model input gets NHWC floats", "[image]", nhwc_model_input)

TEST_CASE("image input: saved in the graph file (version 3) and loaded back, from memory too", "[image]") {
  Runtime& rt = runtime_for(Variant::Global);
  std::mt19937 rng(63);
  const Graph plain = small_model(2, 5, 7, rng);
  const auto version = [](const std::string& bytes) {
    return static_cast<int>(static_cast<unsigned char>(bytes.at(8)));
  };
  CHECK(version(serialize_graph(plain)) == 2);  // float inputs only: still readable by earlier releases
  ImageInput image;
  image.format = PixelFormat::BGR;
  image.mean = {1.5f, 2.5f, 3.5f};
  image.scale = {0.5f, 0.25f, 0.125f};
  const Graph g = with_image_input(plain, "image", image);
  const std::string bytes = serialize_graph(g);
  CHECK(version(bytes) == 3);
  const Graph loaded = load_graph(bytes.data(), bytes.size());
  REQUIRE(loaded.inputs.size() == 1);
  CHECK(loaded.inputs[0].type == ElementType::UInt8);
  CHECK(loaded.inputs[0].dims == Dims{2, 5, 7, 3});
  const std::map<std::string, Tensor> inputs{{"image", random_frame({2, 5, 7, 3}, rng)}};
  const auto want = Model(rt, g).run_trace(inputs);
  const auto got = Model(rt, loaded).run_trace(inputs);
  CHECK(same_bits(got.at("image/image").values, want.at("image/image").values));
  CHECK(same_bits(got.at("image/image").values, expected(inputs.at("image"), image)));
  // An input type other than f32 and u8 in a version-3 file is refused naming it.
  std::string bad = bytes;
  const std::size_t type_at = 16 + 4 + std::string("image").size();
  REQUIRE(bad.at(type_at) == 2);
  bad[type_at] = 7;
  try {
    load_graph(bad.data(), bad.size());
    FAIL("a u32 type of 7 was accepted");
  } catch (const InvalidArgument& e) {
    CHECK(std::string(e.what()).find("input 'image' has type 7") != std::string::npos);
  }
}

TEST_CASE("image input: bad images and graphs are refused before any device work", "[image]") {
  Runtime& rt = runtime_for(Variant::Global);
  std::mt19937 rng(62);
  const Graph base = small_model(1, 4, 5, rng);
  const auto refuses = [](auto&& f, const std::string& fragment) {
    try {
      f();
      FAIL("accepted; expected a refusal containing: " << fragment);
    } catch (const InvalidArgument& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(fragment) != std::string::npos);
    }
  };
  refuses([&] { with_image_input(base, "frame", {}); }, "'frame' is no graph input");
  Graph four_channels = base;
  four_channels.inputs[0].dims = {1, 4, 4, 5};
  refuses([&] { with_image_input(four_channels, "image", {}); },
          "f32 [1, 4, 4, 5]; an image becomes f32 [N, 3, H, W] or [N, H, W, 3]");
  ImageInput nan_mean;
  nan_mean.mean[1] = std::nanf("");
  refuses([&] { with_image_input(base, "image", nan_mean); }, "mean[1]");

  const Graph g = with_image_input(base, "image", {});
  Model model(rt, g);
  refuses([&] { model.run({{"image", random_frame({1, 4, 5, 3}, rng)}}); }, "must be u8 [1, 4, 5, 4]");
  Tensor floats;
  floats.dims = {1, 4, 5, 4};
  floats.values.assign(80, 0.0f);
  refuses([&] { model.run({{"image", floats}}); }, "it is f32");
  Tensor short_frame = random_frame({1, 4, 5, 4}, rng);
  short_frame.bytes.pop_back();
  refuses([&] { model.run({{"image", short_frame}}); }, "with 79 bytes");

  // Image bytes feed ImageToTensor alone, and its attributes are checked.
  Graph concat;
  concat.inputs = {{"frame", {1, 4, 5, 3}, ElementType::UInt8}};
  concat.outputs = {add_node(concat, "cat", "Concat", {"frame", "frame"}, {{"axis", std::int64_t{1}}})};
  refuses([&] { concat.validate(); }, "only ImageToTensor reads images");
  Graph wrong;
  wrong.inputs = {{"frame", {1, 4, 5, 3}, ElementType::UInt8}};
  wrong.outputs = {add_node(wrong, "convert", "ImageToTensor", {"frame"}, {{"format", std::string("rgba")}})};
  refuses([&] { wrong.validate(); }, "has 4 bytes per pixel");
  wrong.nodes[0].attributes["format"] = std::string("yuv");
  refuses([&] { wrong.validate(); }, "format 'yuv'");
  wrong.nodes[0].attributes["format"] = std::string("bgr");
  wrong.nodes[0].attributes["layout"] = std::string("chw");
  refuses([&] { wrong.validate(); }, "layout 'chw'");
  wrong.nodes[0].attributes.erase("layout");
  wrong.nodes[0].attributes["scale"] = std::vector<double>{1, 2};
  refuses([&] { wrong.validate(); }, "scale takes 1 or 3 values");
  Graph bits;
  bits.inputs = {{"frame", {1, 4, 5, 3}, ElementType::Bits}};
  bits.outputs = {"frame"};
  refuses([&] { bits.validate(); }, "graph inputs are f32, or u8 images");
}

}  // namespace
}  // namespace xnorcl::test
