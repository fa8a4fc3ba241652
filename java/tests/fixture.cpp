// SPDX-License-Identifier: Apache-2.0
// Writes the Java tests' models and their expected outputs into a directory (argv[1]); needs no device. For
// each model <m>: <m>.xnn, <m>.io (one line per input then output: "in|out <name> <type> <dims...>"),
// <m>.nodes (the graph's node names, one per line), and per tensor <m>.<tensor>.f32 (raw little-endian
// floats): the inputs, and the outputs computed by the C++ host reference on the graph loaded back from the
// file (bits outputs as the -1/+1 floats the Java API returns).
//   bireal   Bi-Real Net-18 reduced (32x32, channels / 8, 10 classes), a version-2 graph
//   vehicle  the vehicle classifier, a version-1 layer chain
//   tiny     two inputs a, b [1, 4, 2, 2]: outputs sum = a + b (f32) and sign = sign(a) (bits), for the runs
//            by name and the long loop
// With --bench DIRECTORY it times the C++ Model::run on tiny and vehicle instead (the Java tests print
// the same through JNI), to show the cost of the Java layer.
// Also, for bireal taken as an RGBA image: bireal.frame.logits.f32, the reference logits of the frame
// docs/java.md's example builds, and bireal.example.top, their top class.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "xnorcl/xnorcl.hpp"

namespace {

using namespace xnorcl;

std::string dir;

std::int64_t count(const Dims& dims) {
  std::int64_t n = 1;
  for (std::int64_t d : dims) n *= d;
  return n;
}

void write_floats(const std::string& file, const std::vector<float>& v) {
  // The host is little-endian on every supported target (xnorcl/packed.hpp), so the bytes are written as is.
  std::ofstream out(dir + "/" + file, std::ios::binary);
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  if (!out) throw Error("cannot write " + dir + "/" + file);
}

std::vector<float> as_floats(const Tensor& t) {
  if (t.type == ElementType::Float32) return t.values;
  Shape s{1, 1, 1, 1};
  for (std::size_t i = 0; i < t.dims.size() && i < 4; ++i) s[i] = t.dims[i];
  std::vector<float> v;
  for (std::int64_t n = 0; n < s[0]; ++n)
    for (std::int64_t c = 0; c < s[1]; ++c)
      for (std::int64_t y = 0; y < s[2]; ++y)
        for (std::int64_t x = 0; x < s[3]; ++x)
          v.push_back(packed_bit(t.words.data(), s, n, c, y, x) ? 1 : -1);
  return v;
}

// Writes the .io and .nodes files, the inputs and the reference outputs of the model saved as <name>.xnn.
std::map<std::string, Tensor> describe(const std::string& name, const std::map<std::string, Tensor>& inputs) {
  const Graph g = load_graph(dir + "/" + name + ".xnn");
  const std::map<std::string, TensorInfo> infos = g.validate();
  std::ofstream io(dir + "/" + name + ".io");
  for (const GraphInput& in : g.inputs) {
    io << "in " << in.name << " f32";
    for (std::int64_t d : in.dims) io << ' ' << d;
    io << '\n';
    write_floats(name + "." + in.name + ".f32", inputs.at(in.name).values);
  }
  std::map<std::string, Tensor> all = reference_graph(g, inputs);
  for (const std::string& out : g.outputs) {
    io << "out " << out << ' ' << to_string(infos.at(out).type);
    for (std::int64_t d : infos.at(out).dims) io << ' ' << d;
    io << '\n';
    write_floats(name + "." + out + ".f32", as_floats(all.at(out)));
  }
  std::ofstream nodes(dir + "/" + name + ".nodes");
  for (const Node& n : g.nodes) nodes << n.name << '\n';
  return all;
}

Tensor random_tensor(const Dims& dims, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  Tensor t;
  t.dims = dims;
  t.values.resize(static_cast<std::size_t>(count(dims)));
  for (float& v : t.values) v = d(rng);
  return t;
}

void bireal(std::mt19937& rng) {
  ModelOptions o;
  o.height = o.width = 32;
  o.width_divisor = 8;
  o.calibration_size = 32;
  o.classes = 10;
  o.seed = 9;
  save_graph(bireal18(o), dir + "/bireal.xnn");
  describe("bireal", {{"input", random_tensor({1, 3, 32, 32}, rng, -1, 1)}});
  // docs/java.md's example and ImageTest: an RGBA frame, byte i = (i * 7) mod 256, into the model's input
  // taken as an image with mean 127.5 and scale 1 / 127.5 (as Java computes it: one float division).
  ImageInput image;
  image.format = PixelFormat::RGBA;
  image.mean = {127.5f, 127.5f, 127.5f};
  image.scale = {1 / 127.5f, 1 / 127.5f, 1 / 127.5f};
  const Graph g = with_image_input(load_graph(dir + "/bireal.xnn"), "input", image);
  Tensor frame;
  frame.dims = {1, 32, 32, 4};
  frame.type = ElementType::UInt8;
  for (int i = 0; i < 32 * 32 * 4; ++i) frame.bytes.push_back(static_cast<std::uint8_t>(i * 7));
  const std::vector<float> logits = reference_graph(g, {{"input", frame}}).at("logits").values;
  write_floats("bireal.frame.logits.f32", logits);
  std::ofstream(dir + "/bireal.example.top")
      << std::max_element(logits.begin(), logits.end()) - logits.begin() << '\n';
}

void vehicle(std::mt19937& rng) {
  save_network(vehicle_classifier(3).spec, dir + "/vehicle.xnn");
  describe("vehicle", {{"input", random_tensor({1, 3, 96, 96}, rng, 0, 255)}});
}

void tiny(std::mt19937& rng) {
  Graph g;
  g.inputs = {{"a", {1, 4, 2, 2}}, {"b", {1, 4, 2, 2}}};
  g.nodes.push_back(Node{"add", "Add", {"a", "b"}, {"sum"}, {}});
  g.constants["t"] = Constant::f32({1, 4, 1, 1}, {0.0f, 0.25f, -0.25f, 0.5f});
  g.constants["lo"] = Constant::f32({1}, {-1.0f});
  g.constants["hi"] = Constant::f32({1}, {1.0f});
  g.nodes.push_back(
      Node{"sign", "FakeQuantize", {"a", "t", "t", "lo", "hi"}, {"sign"}, {{"levels", std::int64_t{2}}}});
  g.outputs = {"sum", "sign"};
  save_graph(g, dir + "/tiny.xnn");
  describe("tiny",
           {{"a", random_tensor({1, 4, 2, 2}, rng, -1, 1)}, {"b", random_tensor({1, 4, 2, 2}, rng, -1, 1)}});
}

std::vector<float> read_floats(const std::string& file) {
  std::ifstream in(dir + "/" + file, std::ios::binary | std::ios::ate);
  std::vector<float> v(static_cast<std::size_t>(in.tellg()) / sizeof(float));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  return v;
}

void bench() {
  Runtime rt = Runtime::create();
  std::cout << rt.device_name() << '\n';
  for (const std::string name : {"tiny", "vehicle"}) {
    Model model(rt, load_graph(dir + "/" + name + ".xnn"));
    std::map<std::string, Tensor> inputs;
    for (const auto& [input, dims] : model.input_dims()) {
      Tensor t;
      t.dims = dims;
      t.values = read_floats(name + "." + input + ".f32");
      inputs[input] = std::move(t);
    }
    const int n = name == "tiny" ? 2000 : 300;
    std::vector<double> us;
    for (int i = 0; i < n + 100; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      model.run(inputs);
      const auto t1 = std::chrono::steady_clock::now();
      if (i >= 100) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    std::sort(us.begin(), us.end());
    std::cout << "c++ " << name << ": median " << us[us.size() / 2] << " us per Model::run\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool timing = argc == 3 && std::string(argv[1]) == "--bench";
  if (argc != 2 && !timing) {
    std::cerr << "usage: " << argv[0] << " [--bench] DIRECTORY\n";
    return 2;
  }
  dir = argv[argc - 1];
  if (timing) {
    bench();
    return 0;
  }
  try {
    std::filesystem::create_directories(dir);
    std::mt19937 rng(11);
    bireal(rng);
    vehicle(rng);
    tiny(rng);
  } catch (const std::exception& e) {
    std::cerr << "java fixture: " << e.what() << '\n';
    return 1;
  }
  std::cout << "java fixture: models written to " << dir << '\n';
  return 0;
}
