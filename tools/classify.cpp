// SPDX-License-Identifier: Apache-2.0
// xnorcl-classify: the vehicle classifier of Khan, Huttunen and Boutellier, "Binarized Convolutional Neural
// Networks for Efficient Inference on GPUs" (EUSIPCO 2018), end to end on the device, in one command.
//
//   xnorcl-classify [--weights FILE] [--seed S] IMAGE.pgm|IMAGE.ppm
//       classifies a binary PGM (P5) or PPM (P6) image (maxval <= 255). The network takes 96x96 pixels: an
//       image of another size is resized to 96x96 (nearest neighbour, aspect ratio not kept), and says so; a
//       grey image feeds all three channels. Without --weights the network is built from random weights
//       (seed S, default 1), calibrated as xnorcl::vehicle_classifier does: a first run needs no file at all.
//   xnorcl-classify --write-random-weights FILE [--seed S]
//       writes that random network to FILE (docs/weights_format.md).
//
// Prints the logits of bus, normal, truck and van, the winning class, and checks the device's logits bitwise
// against the host reference network. With random weights the class means nothing; the run shows the path.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "xnorcl/xnorcl.hpp"

namespace {

const char* const kUsage =
    "usage: xnorcl-classify [--weights FILE] [--seed S] IMAGE.pgm|IMAGE.ppm\n"
    "       xnorcl-classify --write-random-weights FILE [--seed S]\n"
    "\n"
    "Classifies a binary PGM (P5) or PPM (P6) image with the vehicle classifier on the OpenCL device and\n"
    "checks the logits bitwise against the host reference. Images that are not 96x96 are resized to 96x96\n"
    "(nearest neighbour; the aspect ratio is not kept). An image file holds at most 8192x8192 colour pixels\n"
    "(192 MiB).\n"
    "\n"
    "  --weights FILE               the network's weights (docs/weights_format.md); default: random weights\n"
    "  --seed S                     seed of the random weights, 0 to 18446744073709551615 (default 1)\n"
    "  --write-random-weights FILE  write the random network to FILE and exit\n"
    "  -h, --help                   this text\n"
    "  --version                    the version of xnorcl-classify and of the library\n"
    "\n"
    "The device is XNORCL_DEVICE's, else the first GPU, accelerator or CPU.\n";

// Skips whitespace and # comments of a PNM header, then reads a decimal number.
long pnm_number(std::istream& in) {
  int c = in.peek();
  while (c == '#' || std::isspace(c)) {
    if (c == '#') {
      std::string line;
      std::getline(in, line);
    } else {
      in.get();
    }
    c = in.peek();
  }
  long v = -1;
  if (!(in >> v)) throw std::runtime_error("malformed PNM header");
  return v;
}

// A binary PGM or PPM of at most 8192 x 8192 colour pixels (it is resized to 96 x 96 anyway).
constexpr std::uint64_t kMaxImageBytes = 8192ull * 8192ull * 3ull + 4096ull;

// The image as float NCHW [1, 3, 96, 96], pixel values 0..255.
std::vector<float> read_image(const std::string& path) {
  const std::string bytes = xnorcl_cli::read_input_file(path, kMaxImageBytes);
  std::istringstream in(bytes);
  std::string magic(2, '\0');
  in.read(&magic[0], 2);
  if (magic != "P5" && magic != "P6") throw std::runtime_error(path + ": not a binary PGM (P5) or PPM (P6)");
  const int channels = magic == "P6" ? 3 : 1;
  const long W = pnm_number(in), H = pnm_number(in), maxval = pnm_number(in);
  if (W < 1 || H < 1 || W > 65535 || H > 65535 || maxval < 1 || maxval > 255) {
    throw std::runtime_error(path + ": size " + std::to_string(W) + "x" + std::to_string(H) + " maxval " +
                             std::to_string(maxval) + " not supported (maxval at most 255)");
  }
  in.get();  // the single whitespace after maxval
  // The header's size is checked against the bytes there are before anything of that size is allocated.
  const std::uint64_t count = std::uint64_t(W) * std::uint64_t(H) * std::uint64_t(channels);
  const std::streamoff at = in.tellg();
  if (at < 0 || count > bytes.size() - static_cast<std::uint64_t>(at)) {
    throw std::runtime_error(path + ": the pixel data is truncated (" + std::to_string(W) + "x" +
                             std::to_string(H) + " needs " + std::to_string(count) + " bytes)");
  }
  std::vector<unsigned char> pixels(static_cast<std::size_t>(count));
  if (!in.read(reinterpret_cast<char*>(pixels.data()), static_cast<std::streamsize>(pixels.size()))) {
    throw std::runtime_error(path + ": the pixel data is truncated");
  }
  constexpr int S = 96;
  if (W != S || H != S) {
    std::cout << path << " is " << W << "x" << H << ": resized to 96x96 (nearest neighbour)\n";
  }
  std::vector<float> x(3 * S * S);
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < S; ++y)
      for (int xx = 0; xx < S; ++xx) {
        const long sy = y * H / S, sx = xx * W / S;
        const int sc = channels == 3 ? c : 0;
        x[(c * S + y) * S + xx] =
            static_cast<float>(pixels[(sy * W + sx) * channels + sc]) * 255.0f / static_cast<float>(maxval);
      }
  return x;
}

struct Arguments {
  std::string weights, image, write_to;
  std::uint64_t seed = 1;
};

Arguments parse(int argc, char** argv) {
  Arguments a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool takes_value = arg == "--weights" || arg == "--seed" || arg == "--write-random-weights";
    if (takes_value && i + 1 >= argc) throw xnorcl_cli::UsageError(arg + " needs a value");
    if (arg == "--weights") {
      a.weights = argv[++i];
    } else if (arg == "--seed") {
      a.seed = xnorcl_cli::parse_uint64("--seed", argv[++i]);
    } else if (arg == "--write-random-weights") {
      a.write_to = argv[++i];
      xnorcl_cli::check_output_path(arg, a.write_to);
    } else if (!arg.empty() && arg[0] == '-') {
      throw xnorcl_cli::UsageError("unknown option '" + arg + "'");
    } else if (!a.image.empty()) {
      throw xnorcl_cli::UsageError("one image at a time: '" + a.image + "' and '" + arg + "' given");
    } else {
      a.image = arg;
    }
  }
  if (a.image.empty() && a.write_to.empty()) throw xnorcl_cli::UsageError("no image given");
  if (!a.image.empty() && !a.write_to.empty()) {
    throw xnorcl_cli::UsageError("--write-random-weights takes no image ('" + a.image + "' given)");
  }
  return a;
}

// 2^24 elements (64 MiB as float32) per tensor.
constexpr std::int64_t kMaxTensorElements = std::int64_t(1) << 24;

// The classifier to run: the random one, or a file (a version-1 layer chain, run with batch 1, or a graph),
// checked before anything is built: a valid file of another network may be huge to run.
xnorcl::Graph classifier_graph(const std::string& weights, std::uint64_t seed) {
  xnorcl::Graph g;
  if (weights.empty()) {
    std::cout << "no --weights: random weights (seed " << seed << "), so the class is meaningless\n";
    g = xnorcl::network_graph(xnorcl::vehicle_classifier(seed).spec);
  } else if (xnorcl::network_file_version(weights) == 1) {
    xnorcl::NetworkSpec spec = xnorcl::load_network(weights);
    spec.input[0] = 1;
    g = xnorcl::network_graph(spec);
  } else {
    g = xnorcl::load_graph(weights);
  }
  const auto infos = g.validate();
  if (g.inputs.size() != 1)
    throw xnorcl::InvalidArgument("the network takes " + std::to_string(g.inputs.size()) +
                                  " inputs; xnorcl-classify feeds one 1x3x96x96 image");
  if (g.inputs[0].dims != xnorcl::Dims{1, 3, 96, 96})
    throw xnorcl::InvalidArgument("the network takes " + xnorcl::to_string(g.inputs[0].dims) +
                                  "; xnorcl-classify feeds 1x3x96x96 images");
  // The paper's network holds about a megabyte per tensor: a file whose layers grow a tensor far past that
  // (a padded convolution can make a 96x96 input 30000x30000) is refused before the device or the host
  // reference would hold it.
  for (const auto& [name, info] : infos) {
    std::int64_t elements = 1;
    for (std::int64_t d : info.dims) elements *= d;
    if (elements > kMaxTensorElements)
      throw xnorcl::InvalidArgument("the network's tensor '" + name + "' is " + xnorcl::to_string(info.dims) +
                                    "; xnorcl-classify runs networks whose tensors hold at most " +
                                    std::to_string(kMaxTensorElements) + " elements");
  }
  const xnorcl::TensorInfo& out = infos.at(g.outputs.at(0));
  std::int64_t count = 1;
  for (std::int64_t d : out.dims) count *= d;
  if (g.outputs.size() != 1 || out.type != xnorcl::ElementType::Float32 || count != 4 || out.dims[0] != 1)
    throw xnorcl::InvalidArgument("the network's output is " + xnorcl::to_string(out.dims) + " " +
                                  xnorcl::to_string(out.type) +
                                  "; xnorcl-classify needs 4 float32 logits (bus, normal, truck, van)");
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  if (xnorcl_cli::answered_help_or_version(argc, argv, "xnorcl-classify", kUsage)) return 0;
  Arguments args;
  try {
    args = parse(argc, argv);
  } catch (const xnorcl_cli::UsageError& e) {
    return xnorcl_cli::report_usage_error("xnorcl-classify", e);
  }
  const std::uint64_t seed = args.seed;
  const std::string &weights = args.weights, &image = args.image, &write_to = args.write_to;
  try {
    if (!write_to.empty()) {
      xnorcl::save_network(xnorcl::vehicle_classifier(seed).spec, write_to);
      std::cout << "wrote the vehicle classifier with random weights (seed " << seed << ") to " << write_to
                << "\n";
      return 0;
    }
    const xnorcl::Graph graph = classifier_graph(weights, seed);
    const std::vector<float> x = read_image(image);
    xnorcl::RuntimeOptions options;
    options.log = xnorcl_cli::compile_notice("xnorcl-classify");
    xnorcl::Runtime rt = xnorcl::Runtime::create(options);
    std::cout << "device " << rt.device_name() << ", variant " << xnorcl::to_string(rt.variant()) << "\n";
    xnorcl::Model model(rt, graph);
    xnorcl::Tensor input;
    input.dims = {1, 3, 96, 96};
    input.values = x;
    const std::map<std::string, xnorcl::Tensor> inputs = {{graph.inputs[0].name, input}};
    const xnorcl::Tensor y = model.run(inputs).at(graph.outputs[0]);
    const xnorcl::Tensor want = xnorcl::reference_graph(graph, inputs).at(graph.outputs[0]);
    const bool equal = std::memcmp(y.values.data(), want.values.data(), 4 * sizeof(float)) == 0;
    static const char* classes[4] = {"bus", "normal", "truck", "van"};
    int best = 0;
    for (int i = 0; i < 4; ++i) {
      std::cout << "  " << classes[i] << " " << y.values[i] << "\n";
      if (y.values[i] > y.values[best]) best = i;
    }
    std::cout << "class: " << classes[best] << "\n";
    std::cout << "device logits " << (equal ? "bitwise equal to" : "DIFFER from") << " the host reference\n";
    for (const xnorcl::StageTime& s : model.last_stage_times()) {
      std::cout << "  " << s.kernel << " " << s.milliseconds << " ms\n";
    }
    return equal ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "xnorcl-classify: " << e.what() << "\n";
    return 1;
  }
}
