// SPDX-License-Identifier: Apache-2.0
// Runs the network layers' kernels under the Oclgrind simulator, on both variants:
//
//   oclgrind --data-races --uninitialized --check-api xnorcl_oclgrind_network
//
// The small layer chain of every layer kind (tests/network_case.hpp) as a graph run by a Model (threshold
// rules in a convolution's packing and in its epilogue, binary_maxpool, maxpool_f32, threshold_pack,
// binary_fc and BinaryConvolution's kernels) plus a BinaryFullyConnected with packed output, each required
// bitwise equal to its host reference; CTest fails the test when Oclgrind reports anything. Only buffers
// that live until the process leaves: Oclgrind 21.10 reuses a released buffer's uninitialized-value shadow
// at its old size (see oclgrind_runner.cpp). Leaves with std::_Exit, as the runner does.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "graph/model_access.hpp"
#include "network_case.hpp"
#include "ops/float_conv_common.hpp"
#include "runtime/runtime_state.hpp"
#include "xnorcl/xnorcl.hpp"

namespace {

using namespace xnorcl;
using namespace xnorcl::test;

[[noreturn]] void leave(int status) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(status);
}

struct Kept {
  std::vector<std::unique_ptr<Model>> models;
  std::vector<std::unique_ptr<BinaryFullyConnected>> layers;
  std::vector<std::unique_ptr<MaxPool>> pools;
  std::vector<cl::Buffer> buffers;
};

template <class T>
cl::Buffer upload(Kept& kept, const Runtime& rt, const std::vector<T>& v) {
  kept.buffers.emplace_back(rt.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, v.size() * sizeof(T),
                            const_cast<T*>(v.data()));
  return kept.buffers.back();
}

cl::Buffer scratch(Kept& kept, const Runtime& rt, std::size_t bytes) {
  kept.buffers.emplace_back(rt.context(), CL_MEM_READ_WRITE, bytes);
  return kept.buffers.back();
}

template <class T>
std::vector<T> download(const Runtime& rt, const cl::Buffer& b, std::size_t count, const cl::Event& after) {
  std::vector<T> v(count);
  const std::vector<cl::Event> wait(1, after);
  rt.queue().enqueueReadBuffer(b, CL_TRUE, 0, count * sizeof(T), v.data(), &wait);
  return v;
}

// A one-node graph from input "x" of `dims` (values multiples of 1/4 in [-2, 2]) to "y", run by a Model and
// compared with the reference graph within `tolerance` (absolute). The input is a graph output too, so that
// its buffer is its own (see run). Returns 1 on a mismatch, 0 otherwise, after printing one line.
int check_one_node(Kept& kept, const Runtime& rt, Rng& rng, Graph g, const Dims& dims, float tolerance,
                   const std::string& what) {
  g.inputs = {{"x", dims}};
  g.outputs = {"y", "x"};
  Tensor t;
  t.dims = dims;
  for (std::int64_t i = 0; i < dims[0] * dims[1] * dims[2] * dims[3]; ++i)
    t.values.push_back(static_cast<float>(rng.uniform(-8, 8)) * 0.25f);
  kept.models.push_back(std::make_unique<Model>(rt, g));
  const std::vector<float> got = kept.models.back()->run({{"x", t}}).at("y").values;
  const std::vector<float> want = reference_graph(g, {{"x", t}}).at("y").values;
  bool ok = got.size() == want.size();
  for (std::size_t i = 0; ok && i < got.size(); ++i) ok = std::fabs(got[i] - want[i]) <= tolerance;
  std::cout << what << " (" << kept.models.back()->plan().steps[0].description << ") "
            << (ok ? "matches the reference" : "FAILED") << "\n";
  return ok ? 0 : 1;
}

// The tuning classes of the one-node graph g (input "x" of `dims`, output "y"), from a plan kept alive (see
// Kept), so that a test can set a configuration on them before check_one_node.
std::vector<std::string> shape_classes(Kept& kept, const Runtime& rt, Graph g, const Dims& dims) {
  g.inputs = {{"x", dims}};
  g.outputs = {"y"};
  kept.models.push_back(std::make_unique<Model>(rt, g));
  std::vector<std::string> classes;
  for (const auto& step : detail::ModelAccess::tuning_points(*kept.models.back()))
    for (const detail::TuningPoint& p : step) classes.push_back(p.shape_class);
  return classes;
}

// Average pools and float convolutions over rows of several runs or tiles of 16 (the Global variant's
// vector loads at strides 1 and 2 inside the row, runs cut by its ends, a row's last run or tile
// overlapping the one before it), as graphs (AvgPool and Convolution
// are graph ops). Average pools within 2e-5 of the reference, which sums in double; the convolutions exact
// (sums of multiples of 1/32 well inside float's exact range: every order gives the same value).
int one_node_graphs(Kept& kept, const Runtime& rt, Rng& rng, Variant variant) {
  int failures = 0;
  using Ints = std::vector<std::int64_t>;
  for (const std::int64_t stride : {1, 2}) {
    const auto avg_pool = [stride](std::int64_t kernel, std::int64_t pad) {
      Graph g;
      g.nodes.push_back(Node{"pool",
                             "AvgPool",
                             {"x"},
                             {"y"},
                             {{"kernel", Ints{kernel, kernel}},
                              {"strides", Ints{stride, stride}},
                              {"pads_begin", Ints{pad, pad}},
                              {"pads_end", Ints{pad, pad}},
                              {"exclude-pad", std::string("true")}}});
      return g;
    };
    failures += check_one_node(kept, rt, rng, avg_pool(3, 1), {1, 3, 5, 70}, 2e-5f,
                               to_string(variant) + ": average pool, stride " + std::to_string(stride));
    // Rows narrower than a run (12 and 6 outputs, no pad).
    failures += check_one_node(
        kept, rt, rng, avg_pool(2, 0), {2, 3, 6, 13}, 2e-5f,
        to_string(variant) + ": average pool over narrow rows, stride " + std::to_string(stride));
    const std::int64_t k = stride == 1 ? 3 : 7;
    Graph conv;
    std::vector<float> weights(static_cast<std::size_t>(19 * 3 * k * k));
    for (float& v : weights) v = static_cast<float>(rng.uniform(-4, 4)) * 0.125f;
    conv.constants["w"] = Constant::f32({19, 3, k, k}, weights);
    conv.nodes.push_back(Node{"conv",
                              "Convolution",
                              {"x", "w"},
                              {"y"},
                              {{"strides", Ints{stride, stride}},
                               {"pads_begin", Ints{k / 2, k / 2}},
                               {"pads_end", Ints{k / 2, k / 2}},
                               {"dilations", Ints{1, 1}}}});
    // 90 columns: tiles inside the row, the last overlapping, the columns beside them 4 at a time. 12: at
    // stride 1 that for 8-column tiles only, the rest tiled from column 0 and cut by the row's ends. The
    // lanes' blocks of 6 columns: unchecked inside the row, checked at its ends.
    for (const std::int64_t width : {90, 12}) {
      const Dims dims{1, 3, 9, width};
      const std::string what = to_string(variant) + ": float convolution, stride " + std::to_string(stride) +
                               ", " + std::to_string(width) + " columns";
      failures += check_one_node(kept, rt, rng, conv, dims, 0.0f, what);
      // Every kernel configuration (tiles of 8 or 16 columns, channels in vector lanes, columns in vector
      // lanes on the input's padded phase-split copy, one or two output rows per work-item: 19 channels end
      // in a block of one, 90 and 12 columns in a partial block of 16, 9 and 5 output rows in a pair
      // without its second row), set through the tuning table: the default picks one per device.
      const std::vector<std::string> classes = shape_classes(kept, rt, conv, dims);
      // "cols=8 wg=64": the GPUs' default, whose work-group this CPU-type device does not take by default.
      for (const std::string config :
           {"cols=8", "cols=16", "lanes=6", "split=16", "split=16 rows=2", "cols=8 wg=64"}) {
        for (const std::string& c : classes) rt.state()->tuning.set(c, config);
        failures += check_one_node(kept, rt, rng, conv, dims, 0.0f, what + ", " + config);
        for (const std::string& c : classes) rt.state()->tuning.erase(c);
        if (classes.size() != 1 || kept.models.back()->plan().steps[0].tuning != "tuned " + config) {
          std::cout << "FAILED: " << config << " did not run (" << kept.models.back()->plan().steps[0].tuning
                    << ")\n";
          ++failures;
        }
      }
    }
  }
  // A 7x7/2 convolution with a 3x3/2 max-pool (pads before 1, 1) in its step, exact: in convolution_split's
  // epilogue (one or two output rows per work-item; 19 channels end in a block of one) where the device
  // compares floats exactly, else the pool's own launch. 35 x 90 pixels: an 18 x 45 output pools to 9 x 23
  // (three bands of the default's 4 pooled rows, two of 8; each band after the first computes its first row
  // again; three blocks of 8 pooled columns, the last cut). 29 x 12 with ceil rounding and pads after of 2: a
  // 15 x 6 output pools to 9 x 4, whose last band (row 8, at 4 or 8 rows a band) is pads alone (its first
  // row past the output). Then in bands of 8, 3 and 1 pooled rows.
  for (const auto& [height, width, rounding, pad_end] :
       {std::tuple<std::int64_t, std::int64_t, const char*, std::int64_t>{35, 90, "floor", 1},
        {29, 12, "ceil", 2}}) {
    const Dims dims{1, 3, height, width};
    Graph g;
    std::vector<float> weights(static_cast<std::size_t>(19 * 3 * 7 * 7));
    for (float& v : weights) v = static_cast<float>(rng.uniform(-4, 4)) * 0.125f;
    g.constants["w"] = Constant::f32({19, 3, 7, 7}, weights);
    g.nodes.push_back(Node{"conv",
                           "Convolution",
                           {"x", "w"},
                           {"c"},
                           {{"strides", Ints{2, 2}}, {"pads_begin", Ints{3, 3}}, {"pads_end", Ints{3, 3}}}});
    g.nodes.push_back(Node{"pool",
                           "MaxPool",
                           {"c"},
                           {"y"},
                           {{"kernel", Ints{3, 3}},
                            {"strides", Ints{2, 2}},
                            {"pads_begin", Ints{1, 1}},
                            {"pads_end", Ints{pad_end, pad_end}},
                            {"rounding_type", std::string(rounding)}}});
    const std::vector<std::string> classes = shape_classes(kept, rt, g, dims);
    // Bands of 8, 3 and 1 pooled rows (where the kernel pools) as well as the default's 4.
    const bool bands = rt.state()->floats_compare_exactly;
    for (const std::string config : {"split=16", "split=16 rows=2", "cols=8", "split=16 band=8",
                                     "split=16 band=3", "split=16 rows=2 band=1"}) {
      if (!bands && config.find("band=") != std::string::npos) continue;
      for (const std::string& c : classes) rt.state()->tuning.set(c, config);
      const std::string what = to_string(variant) + ": float convolution and max-pool, " +
                               std::to_string(width) + " columns, " + config;
      failures += check_one_node(kept, rt, rng, g, dims, 0.0f, what);
      for (const std::string& c : classes) rt.state()->tuning.erase(c);
      const bool in_kernel = config != "cols=8" && rt.state()->floats_compare_exactly;
      const GraphPlan::Step& step = kept.models.back()->plan().steps[0];
      const std::string& description = step.description;
      // Both cases pool to 9 rows: every band here is the configuration's, else the default's 4.
      const std::size_t at = config.find("band=");
      const std::string band =
          "in bands of " +
          (at == std::string::npos ? std::to_string(ops::kDefaultPoolBand) : config.substr(at + 5)) +
          " pooled row";
      if (step.node != "conv+pool" || step.tuning != "tuned " + config ||
          (description.rfind("convolution_split_maxpool", 0) == 0) != in_kernel ||
          (in_kernel && description.find(band) == std::string::npos)) {
        std::cout << "FAILED: " << config << " planned " << step.node << " (" << step.tuning
                  << "): " << description << "\n";
        ++failures;
      }
    }
  }
  // A 1x1 convolution of 3 to 19 channels at `strides`, as the default runs it and in each configuration
  // named (set through the tuning table). Exact, as the convolutions above.
  const auto pointwise_case = [&](const Dims& dims, const Ints& strides,
                                  const std::vector<std::string>& configs) {
    Graph pointwise;
    std::vector<float> weights(19 * 3);
    for (float& v : weights) v = static_cast<float>(rng.uniform(-4, 4)) * 0.125f;
    pointwise.constants["w"] = Constant::f32({19, 3, 1, 1}, weights);
    pointwise.nodes.push_back(
        Node{"conv", "Convolution", {"x", "w"}, {"y"}, {{"strides", strides}, {"dilations", Ints{1, 1}}}});
    const std::string what = to_string(variant) + ": 1x1 convolution at strides " +
                             std::to_string(strides[0]) + "x" + std::to_string(strides[1]) + " on " +
                             to_string(dims);
    failures += check_one_node(kept, rt, rng, pointwise, dims, 0.0f, what);
    const std::string shape_class = shape_classes(kept, rt, pointwise, dims).at(0);
    for (const std::string& config : configs) {
      rt.state()->tuning.set(shape_class, config);
      failures += check_one_node(kept, rt, rng, pointwise, dims, 0.0f, what + ", " + config);
      rt.state()->tuning.erase(shape_class);
      if (kept.models.back()->plan().steps[0].tuning != "tuned " + config) {
        std::cout << "FAILED: " << config << " did not run (" << kept.models.back()->plan().steps[0].tuning
                  << ")\n";
        ++failures;
      }
    }
  };
  // At stride 2 (the pointwise kernel): tiles inside one output row read one run of the input row (80
  // columns), the others gather their pixels (7-wide output rows: tiles across row ends; a 3x3 output: a
  // plane narrower than a tile). The 1x19 input plane is no larger than the 19 output channels, so its lanes
  // blocks (two of positions) go position blocks first; the others channel blocks first. Configurations: 8x8
  // or 8x16 tiles (convolution_1x1), 16 channels in lanes x 6 positions (convolution_1x1_lanes, whose last
  // block overlaps the one before it), and on output planes of 32 positions or more the positions kernel on
  // a copy of the strided pixels (pointwise_sample; split=16): 40-wide output rows as vectors of 16, the last
  // overlapping, and 7-wide ones in a batch of 2, one column at a time.
  const Ints s2 = {2, 2};
  const std::vector<std::string> strided = {"cols=8", "cols=16", "lanes=6", "cols=8 wg=64"};
  std::vector<std::string> strided_split = strided;
  strided_split.insert(strided_split.end(), {"split=16", "split=16 rows=2"});
  for (const Dims& dims : {Dims{1, 3, 9, 80}, Dims{2, 3, 14, 14}}) pointwise_case(dims, s2, strided_split);
  for (const Dims& dims : {Dims{1, 3, 5, 5}, Dims{2, 3, 1, 19}}) pointwise_case(dims, s2, strided);
  // The copy's loads at their limit: rows of 2 * OW - 1 columns, whose last load at stride 2 ends on the
  // last column (vectors of 16 from 79 columns, of 8 from 29); at a row stride of 2 and a column stride of 1,
  // whole rows as vectors of 16 and of 8, the last overlapping (20 and 11 columns).
  for (const auto& [dims, strides] : {std::pair<Dims, Ints>{{1, 3, 9, 79}, s2},
                                      {{1, 3, 9, 29}, s2},
                                      {{1, 3, 7, 20}, {2, 1}},
                                      {{1, 3, 9, 11}, {2, 1}}})
    pointwise_case(dims, strides, {"split=16", "split=16 rows=2"});
  // At stride 1 the split configurations read the plane in place (convolution_1x1_split, the default on CPU
  // devices: 6 channels x one or two runs of 16 positions, 19 channels ending in a block of one): planes of
  // exactly two runs (32 positions), one position more (the last block overlapping the one before it by 15
  // or 31) and 49 positions in a batch of 2.
  for (const Dims& dims : {Dims{1, 3, 4, 8}, Dims{1, 3, 3, 11}, Dims{2, 3, 7, 7}})
    pointwise_case(dims, {1, 1}, {"split=16", "split=16 rows=2", "lanes=6", "cols=8"});
  // A binary convolution whose batch-norm and residual Add run in its epilogue (pad_value 0: the pad fold),
  // on 20-wide rows (the Global variant's blocks of 4 columns lie in one row: xnor_gemm_fused_runs) and
  // 17-wide ones (blocks across rows and, at 102 positions per image, across images in a batch of 2: the
  // general store; in a batch of 1 the runs kernel again, its last block overlapping the one before it).
  // Exact: integer sums, and scale, bias and inputs are multiples of 1/8.
  for (const auto& [width, batch] :
       std::vector<std::pair<std::int64_t, std::int64_t>>{{20, 2}, {17, 2}, {17, 1}})
    for (const double pad_value : {0.0, 1.0}) {
      const std::int64_t C = 5;
      Graph bc;
      std::vector<std::uint8_t> bits((C * C * 9 + 7) / 8);
      for (auto& b : bits) b = static_cast<std::uint8_t>(rng.uniform(0, 255));
      std::vector<float> scale(C), bias(C);
      for (float& v : scale) v = static_cast<float>(rng.uniform(1, 16)) * 0.125f;
      for (float& v : bias) v = static_cast<float>(rng.uniform(-16, 16)) * 0.125f;
      bc.constants["w"] = Constant::u1({C, C, 3, 3}, bits);
      bc.constants["s"] = Constant::f32({1, C, 1, 1}, scale);
      bc.constants["b"] = Constant::f32({1, C, 1, 1}, bias);
      bc.nodes.push_back(Node{"conv",
                              "BinaryConvolution",
                              {"x", "w"},
                              {"c"},
                              {{"strides", Ints{1, 1}},
                               {"pads_begin", Ints{1, 1}},
                               {"pads_end", Ints{1, 1}},
                               {"dilations", Ints{1, 1}},
                               {"mode", std::string("xnor-popcount")},
                               {"pad_value", pad_value}}});
      bc.nodes.push_back(Node{"bn.scale", "Multiply", {"c", "s"}, {"m"}, {}});
      bc.nodes.push_back(Node{"bn.shift", "Add", {"m", "b"}, {"a"}, {}});
      bc.nodes.push_back(Node{"residual", "Add", {"a", "x"}, {"y"}, {}});
      const std::string shape = std::to_string(width) + "-wide rows, batch " + std::to_string(batch) +
                                ", pad_value " + std::to_string(static_cast<int>(pad_value));
      failures += check_one_node(kept, rt, rng, bc, {batch, C, 6, width}, 0.0f,
                                 to_string(variant) + ": binary convolution, " + shape +
                                     ", batch-norm and shortcut in its epilogue");
      if (kept.models.back()->plan().steps.size() != 1) {
        std::cout << "FAILED: the binary convolution's epilogue did not take the batch-norm and the Add\n";
        ++failures;
      }
      // The Global variant's 20-wide rows (120 positions per image) are whole blocks of 4 columns, and one
      // image's 102 positions whole blocks with the last one overlapping: the fused GEMM's run-only kernel;
      // everything else the general one.
      const bool want_runs = variant == Variant::Global && (width == 20 || batch == 1);
      const bool ran_runs =
          kept.models.back()->plan().steps[0].description.find("xnor_gemm_fused_runs") != std::string::npos;
      if (ran_runs != want_runs) {
        std::cout << "FAILED: expected " << (want_runs ? "xnor_gemm_fused_runs" : "xnor_gemm_fused") << "\n";
        ++failures;
      }
      // The Global variant again with blocks of 8 columns (PoCL's default where the CPU has a vector
      // popcount; this device's is 4), whose run epilogue stores 8 columns per vector.
      if (variant != Variant::Global) continue;
      const std::string config = "wg=8 tm=8 tn=8 kt=8";
      const std::vector<std::string> classes = shape_classes(kept, rt, bc, {batch, C, 6, width});
      for (const std::string& c : classes) rt.state()->tuning.set(c, config);
      failures +=
          check_one_node(kept, rt, rng, bc, {batch, C, 6, width}, 0.0f,
                         to_string(variant) + ": binary convolution, " + shape + ", epilogue, " + config);
      for (const std::string& c : classes) rt.state()->tuning.erase(c);
      const std::string& tuned = kept.models.back()->plan().steps[0].tuning;
      if (classes.empty() || tuned != "tuned " + config) {
        std::cout << "FAILED: " << config << " did not run (" << tuned << ")\n";
        ++failures;
      }
    }
  return failures;
}

// Every op whose work-group size is tuned (elementwise, activation, max and average pools over floats,
// packing, the binary max-pool and fully connected layer, concat, transpose, depthwise convolution, a camera
// frame's conversion, the last also against the reference), run at
// each size the exhaustive search tries, all classes at once through the tuning table; each run bitwise
// equal to the default sizes' run.
int work_group_sizes(Kept& kept, const Runtime& rt, Rng& rng, Variant variant) {
  using Ints = std::vector<std::int64_t>;
  const std::int64_t C = 5, H = 4, W = 34;
  const auto floats = [&](std::size_t n, int range) {
    std::vector<float> v(n);
    for (float& f : v) f = static_cast<float>(rng.uniform(-range, range)) * 0.125f;
    return v;
  };
  Graph g;
  g.inputs = {{"x", {2, C, H, W}}};
  g.constants["shift"] = Constant::f32({1, C, 1, 1}, floats(C, 4));
  g.constants["slope"] = Constant::f32({C}, floats(C, 4));
  g.constants["dw"] = Constant::f32({C, 1, 1, 3, 3}, floats(C * 9, 8));
  g.constants["t"] = Constant::f32({1, C, 1, 1}, floats(C, 2));
  g.constants["lo"] = Constant::f32({1}, {-1.0f});
  g.constants["hi"] = Constant::f32({1}, {1.0f});
  std::vector<std::uint8_t> fc((7 * C * H * W + 7) / 8);
  for (auto& b : fc) b = static_cast<std::uint8_t>(rng.uniform(0, 255));
  g.constants["fc.w"] = Constant::u1({7, C * H * W}, fc);
  const Ints one{1, 1}, two{2, 2}, none{0, 0};
  const auto node = [&](const std::string& name, const std::string& op, std::vector<std::string> in,
                        Attributes a = {}) {
    g.nodes.push_back(Node{name, op, std::move(in), {name}, std::move(a)});
  };
  node("shifted", "Add", {"x", "shift"});
  node("a", "PRelu", {"shifted", "slope"});
  node("max", "MaxPool", {"a"},
       {{"kernel", Ints{3, 3}}, {"strides", one}, {"pads_begin", one}, {"pads_end", one}});
  node("avg", "AvgPool", {"a"}, {{"kernel", two}, {"strides", two}, {"exclude-pad", std::string("true")}});
  node("cat", "Concat", {"a", "x"}, {{"axis", std::int64_t{1}}});
  node("nhwc", "Transpose", {"a"}, {{"order", Ints{0, 2, 3, 1}}});
  node("depthwise", "GroupConvolution", {"a", "dw"},
       {{"strides", one}, {"dilations", one}, {"pads_begin", one}, {"pads_end", one}});
  node("bits", "FakeQuantize", {"x", "t", "t", "lo", "hi"}, {{"levels", std::int64_t{2}}});
  node("bits_max", "MaxPool", {"bits"},
       {{"kernel", two}, {"strides", two}, {"pads_begin", none}, {"pads_end", none}});
  node("fc", "BinaryFullyConnected", {"bits", "fc.w"});
  // A camera frame (BGRA bytes into an RGB model), converted by ImageToTensor.
  g.inputs.push_back({"frame", {2, H, W, 4}, ElementType::UInt8});
  node("pixels", "ImageToTensor", {"frame"},
       {{"format", std::string("bgra")},
        {"mean", std::vector<double>{120.5, 3, 250}},
        {"scale", std::vector<double>{0.017, -1, 0.25}}});
  node("pixels_nhwc", "ImageToTensor", {"frame"},
       {{"format", std::string("rgba")}, {"order", std::string("bgr")}, {"layout", std::string("nhwc")}});
  g.outputs = {"max",      "avg", "cat",    "nhwc",        "depthwise", "bits",
               "bits_max", "fc",  "pixels", "pixels_nhwc", "x",         "frame"};
  std::map<std::string, Tensor> inputs;
  inputs["x"].dims = {2, C, H, W};
  inputs["x"].values = floats(static_cast<std::size_t>(2 * C * H * W), 16);
  Tensor& frame = inputs["frame"];
  frame.dims = {2, H, W, 4};
  frame.type = ElementType::UInt8;
  for (std::int64_t i = 0; i < 2 * H * W * 4; ++i)
    frame.bytes.push_back(static_cast<std::uint8_t>(rng.uniform(0, 255)));
  kept.models.push_back(std::make_unique<Model>(rt, g));
  const Model& base = *kept.models.back();
  const std::map<std::string, Tensor> want = kept.models.back()->run(inputs);
  const std::map<std::string, Tensor> reference = reference_graph(g, inputs);
  bool pixels_ok = true;
  for (const char* name : {"pixels", "pixels_nhwc"}) {
    const std::vector<float>& r = reference.at(name).values;
    pixels_ok = pixels_ok && r.size() == want.at(name).values.size() &&
                std::memcmp(r.data(), want.at(name).values.data(), r.size() * 4) == 0;
  }
  std::cout << to_string(variant)
            << ": a BGRA frame into an RGB model (NCHW) and an RGBA frame into a BGR one (NHWC) "
            << (pixels_ok ? "bitwise equal to the reference" : "FAILED") << "\n";
  std::vector<std::string> classes;
  for (const auto& step : detail::ModelAccess::tuning_points(base))
    for (const detail::TuningPoint& p : step)
      if (p.shape_class.rfind("work-group ", 0) == 0) classes.push_back(p.shape_class);
  int failures = pixels_ok ? 0 : 1;
  if (classes.size() != 12) {
    std::cout << "FAILED: " << classes.size() << " work-group classes, not 12\n";
    ++failures;
  }
  const detail::RuntimeState& s = *rt.state();
  for (std::size_t size :
       detail::linear_work_group_candidates(TuneSearch::Exhaustive, 64, s.work_group_cap)) {
    for (const std::string& c : classes) s.tuning.set(c, detail::work_group_config(size));
    kept.models.push_back(std::make_unique<Model>(rt, g));
    const std::map<std::string, Tensor> got = kept.models.back()->run(inputs);
    for (const std::string& c : classes) s.tuning.erase(c);
    bool ok = true;
    for (const auto& [name, t] : want)
      ok = ok && t.words == got.at(name).words && t.bytes == got.at(name).bytes &&
           t.values.size() == got.at(name).values.size() &&
           std::memcmp(t.values.data(), got.at(name).values.data(), t.values.size() * sizeof(float)) == 0;
    std::size_t tuned = 0;
    for (const GraphPlan::Step& step : kept.models.back()->plan().steps)
      tuned += step.tuning.find("tuned " + detail::work_group_config(size)) != std::string::npos;
    ok = ok && tuned == classes.size();
    std::cout << to_string(variant) << ": one-dimensional ops at work-groups of " << size << " (" << tuned
              << " steps tuned) " << (ok ? "bitwise equal to the default" : "FAILED") << "\n";
    failures += ok ? 0 : 1;
  }
  return failures;
}

int run(Variant variant, Kept& kept) {
  RuntimeOptions o;
  o.cache_dir = "off";
  o.variant = variant;
  const Runtime rt = Runtime::create(o);
  if (rt.device().getInfo<CL_DEVICE_NAME>() != "Oclgrind Simulator") {
    std::cerr << "FAILED: the device is '" << rt.device_name() << "', not the Oclgrind Simulator\n";
    return 1;
  }
  int failures = 0;
  Rng rng(900);
  const NetworkSpec spec = small_network(rng);
  const std::vector<float> x = small_network_input(rng);
  const std::vector<Activation> want = reference_network(spec, x.data());
  // The input is a graph output too, so that its buffer is its own. Oclgrind 21.10 keeps a host write's
  // size as the extent of the buffer's initialized shadow: once the input's 2880 bytes are written into a
  // buffer that a later step's 4224-byte output shares, that step's correct stores past byte 2880 read back
  // as uninitialized (reproduced with two MaxPool layers: a partial clEnqueueWriteBuffer, a kernel writing
  // the whole buffer, a kernel reading it).
  Graph g = network_graph(spec);
  g.outputs.push_back("input");
  kept.models.push_back(std::make_unique<Model>(rt, g));
  Tensor input;
  input.dims = Dims(spec.input.begin(), spec.input.end());
  input.values = x;
  const std::vector<float> y = kept.models.back()->run({{"input", input}}).at("output").values;
  const bool network_ok = y.size() == want.back().values.size() &&
                          std::memcmp(y.data(), want.back().values.data(), y.size() * sizeof(float)) == 0;
  std::cout << to_string(variant) << ": small network " << (network_ok ? "bitwise equal" : "FAILED") << "\n";
  failures += network_ok ? 0 : 1;

  // Float max-pools over rows of several runs of 16 outputs (the Global variant's vector loads: stride 1
  // and 2, runs cut by the row's ends, a row's last run overlapping the one before it, inside the row at
  // stride 2 and cut by its end at stride 1), and over rows narrower than a run (11 and 7 outputs, no pad:
  // the spare lanes read on into the next rows, the tensor's last rows lane by lane).
  struct PoolCase {
    int stride, kernel_x, pad_x;
    Shape input;
    bool narrow;
  };
  // Both kernels over runs: order keys and float compares (RuntimeState::floats_compare_exactly).
  const bool device_compares_floats = rt.state()->floats_compare_exactly;
  for (const bool compare_floats : {false, true})
    for (const PoolCase& c :
         {PoolCase{1, 3, 1, {1, 3, 5, 70}, false}, PoolCase{2, 3, 1, {1, 3, 5, 70}, false},
          PoolCase{1, 3, 0, {2, 3, 4, 13}, true}, PoolCase{2, 2, 0, {2, 3, 4, 14}, true}}) {
      rt.state()->floats_compare_exactly = compare_floats;
      const Shape& pool_in = c.input;
      PoolAttributes pa;
      pa.kernel = {3, c.kernel_x};
      pa.strides = {c.stride, c.stride};
      pa.pads_begin = {1, c.pad_x};
      pa.pads_end = {1, c.pad_x};
      std::vector<float> values(static_cast<std::size_t>(pool_in[0] * pool_in[1] * pool_in[2] * pool_in[3]));
      for (float& v : values) {
        const int r = rng.uniform(0, 19);
        v = r == 0   ? std::numeric_limits<float>::quiet_NaN()
            : r == 1 ? -std::numeric_limits<float>::infinity()
                     : static_cast<float>(rng.uniform(-8, 8)) * 0.25f;
      }
      kept.pools.push_back(std::make_unique<MaxPool>(rt, pa, pool_in));
      MaxPool& pool = *kept.pools.back();
      const Shape pool_out = pool.output_shape();
      const std::size_t n = static_cast<std::size_t>(pool_out[0] * pool_out[1] * pool_out[2] * pool_out[3]);
      const cl::Buffer pool_y = scratch(kept, rt, n * 4);
      const std::vector<float> got =
          download<float>(rt, pool_y, n, pool.enqueue(upload(kept, rt, values), pool_y));
      const std::vector<float> want = reference_maxpool(values.data(), pool_in, pa);
      const bool pool_ok = got.size() == want.size() && std::memcmp(got.data(), want.data(), n * 4) == 0;
      std::cout << to_string(variant) << ": float max-pool" << (c.narrow ? " over narrow rows" : "")
                << ", stride " << c.stride << " (" << pool.kernel() << ") "
                << (pool_ok ? "bitwise equal" : "FAILED") << "\n";
      failures += pool_ok ? 0 : 1;
    }
  rt.state()->floats_compare_exactly = device_compares_floats;

  failures += one_node_graphs(kept, rt, rng, variant);
  failures += work_group_sizes(kept, rt, rng, variant);

  // Packed output of a fully-connected layer (its ThresholdPack after binary_fc).
  const Shape in{2, 33, 3, 2};
  std::vector<float> values(static_cast<std::size_t>(2 * 33 * 3 * 2));
  for (float& v : values) v = rng.chance(50) ? 1.0f : -1.0f;
  const std::vector<std::uint32_t> words = pack_activations(values.data(), in);
  const Filter w = random_network_filter(rng, Shape{41, 33, 3, 2});
  std::vector<float> t(41);
  for (float& v : t) v = static_cast<float>(rng.uniform(-6, 6));
  const std::vector<Threshold> rules = greater_than(t);
  kept.layers.push_back(std::make_unique<BinaryFullyConnected>(rt, in, w, rules));
  const Shape out_shape{2, 41, 1, 1};
  const cl::Buffer fc_out = scratch(kept, rt, static_cast<std::size_t>(packed_word_count(out_shape)) * 4);
  const std::vector<std::uint32_t> got =
      download<std::uint32_t>(rt, fc_out, static_cast<std::size_t>(packed_word_count(out_shape)),
                              kept.layers.back()->enqueue(upload(kept, rt, words), fc_out));
  const std::vector<float> fc_want = reference_binary_fully_connected(words.data(), in, w);
  const bool fc_ok = got == pack_activations(fc_want.data(), out_shape, rules);
  std::cout << to_string(variant) << ": fully-connected with packed output "
            << (fc_ok ? "bitwise equal" : "FAILED") << "\n";
  failures += fc_ok ? 0 : 1;
  return failures;
}

}  // namespace

int main() {
  int status = 1;
  try {
    static Kept kept;  // never released (see above)
    const int failures = run(Variant::Local, kept) + run(Variant::Global, kept);
    std::cout << failures << " failed\n";
    status = failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "FAILED: " << e.what() << "\n";
  }
  leave(status);
}
