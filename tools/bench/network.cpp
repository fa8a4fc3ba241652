// SPDX-License-Identifier: Apache-2.0
// `xnorcl-bench network`: the paper's vehicle classifier as xnorcl::Network, checked bitwise against the host
// reference network, then timed beside its float32 equivalent (FloatNetwork) on the same queue. Order: build
// both; check each once with the very objects and buffers that are then timed; warm up; time `reps` rounds,
// binary then float in each; check both again after the last round. A wrong result is reported as WRONG and
// its timings dropped.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>

#include "network.hpp"

namespace xnorcl_bench {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint64_t kSeed = 2024;  // the network's weights (the device tests' seed)
constexpr double kFloatTolerance = 1e-4;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string dims(const xnorcl::Shape& s) {  // "3x96x96" (C x H x W; the batch is printed once)
  return std::to_string(s[1]) + "x" + std::to_string(s[2]) + "x" + std::to_string(s[3]);
}

// The table's rows, from the spec: a convolution is two rows (im2col, gemm) as in the paper's Table 2, every
// other layer one. `row_of` maps (layer, part) to the row index. The paper's GTX1080 figures go beside the
// rows that have a counterpart (its conv1, pool1, conv2, pool2 and FC 18432->100).
std::vector<NetworkRow> make_rows(const xnorcl::NetworkSpec& spec,
                                  std::map<std::pair<std::size_t, int>, std::size_t>& row_of) {
  struct Paper {
    double f, b;
  };
  const Paper conv_paper[2][2] = {{{21.63, 3.17}, {37.54, 8.61}}, {{65.41, 5.50}, {69.28, 8.10}}};
  const Paper pool_paper[2] = {{5.22, 8.26}, {5.38, 2.66}};
  const Paper fc_paper = {200.03, 6.28};
  std::vector<NetworkRow> rows;
  int convs = 0, thresholds = 0, pools = 0, fcs = 0;
  xnorcl::Shape in = spec.input;
  for (std::size_t i = 0; i < spec.layers.size(); ++i) {
    auto add = [&](const std::string& name, const std::string& description, int part, Paper paper) {
      NetworkRow r;
      r.name = name;
      r.description = description;
      r.layer = i;
      r.part = part;
      r.paper_float_us = paper.f;
      r.paper_binary_us = paper.b;
      row_of[{i, part}] = rows.size();
      rows.push_back(r);
    };
    const auto& layer = spec.layers[i];
    if (const auto* c = std::get_if<xnorcl::ConvolutionLayer>(&layer)) {
      const auto& f = c->filter.shape();
      const auto out = xnorcl::BinaryConvolution::validate(c->attributes, in, f).output;
      const int k = convs++;
      const std::string name = "conv" + std::to_string(k + 1);
      add(name + " im2col",
          dims(in) + " -> K=" + std::to_string(f[1] * f[2] * f[3]) +
              " x P=" + std::to_string(out[2] * out[3]),
          0, k < 2 ? conv_paper[k][0] : Paper{0, 0});
      add(name + " gemm",
          std::to_string(f[0]) + "@" + std::to_string(f[2]) + "x" + std::to_string(f[3]) + " p" +
              std::to_string(c->attributes.pads_begin[0]) + " -> " + dims(out),
          1, k < 2 ? conv_paper[k][1] : Paper{0, 0});
      in = out;
    } else if (std::get_if<xnorcl::ThresholdLayer>(&layer)) {
      add("threshold" + std::to_string(++thresholds), dims(in) + ", batch-norm + sign", 0, {0, 0});
    } else if (const auto* p = std::get_if<xnorcl::MaxPoolLayer>(&layer)) {
      const auto out = xnorcl::validate_pool(p->attributes, in).output;
      const int k = pools++;
      add("pool" + std::to_string(k + 1),
          dims(in) + " -> " + dims(out) + ", " + std::to_string(p->attributes.kernel[0]) + "x" +
              std::to_string(p->attributes.kernel[1]),
          0, k < 2 ? pool_paper[k] : Paper{0, 0});
      in = out;
    } else if (const auto* fc = std::get_if<xnorcl::FullyConnectedLayer>(&layer)) {
      const auto& w = fc->weights.shape();
      const int k = fcs++;
      add("fc" + std::to_string(k + 1), std::to_string(w[1] * w[2] * w[3]) + " -> " + std::to_string(w[0]), 0,
          k == 0 ? fc_paper : Paper{0, 0});
      in = {in[0], w[0], 1, 1};
    } else {
      add(xnorcl::layer_name(layer), dims(in), 0, {0, 0});
    }
  }
  return rows;
}

// The binary network's stage names are "<layer index>:<layer> <what>[ <kernel>]". In a convolution, the
// packing kernels (im2col_pack_*, and the unpack_bits before a convolution of packed input) are the im2col
// row; the GEMM and its epilogue the gemm row.
std::pair<std::size_t, int> binary_row_key(const xnorcl::NetworkSpec& spec, const std::string& stage) {
  const std::size_t layer = std::stoul(stage.substr(0, stage.find(':')));
  const bool conv = std::holds_alternative<xnorcl::ConvolutionLayer>(spec.layers.at(layer));
  const bool packing = stage.find("pack") != std::string::npos;
  return {layer, conv && !packing ? 1 : 0};
}

// Per table row: each kernel's name in launch order and its per-repetition times.
struct KernelSamples {
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> samples;
  // Adds one repetition's times per kernel, in launch order (a kernel launched per image counts once,
  // summed).
  using Rep = std::vector<std::pair<std::string, double>>;
  static void accumulate(Rep& rep, const std::string& name, double ms) {
    for (auto& [n, t] : rep) {
      if (n == name) {
        t += ms;
        return;
      }
    }
    rep.emplace_back(name, ms);
  }
  void add(const Rep& rep) {
    for (const auto& [name, ms] : rep) {
      if (!samples.count(name)) order.push_back(name);
      samples[name].push_back(ms);
    }
  }
  std::vector<std::pair<std::string, Stats>> summary() const {
    std::vector<std::pair<std::string, Stats>> out;
    for (const auto& name : order) out.emplace_back(name, summarize(samples.at(name)));
    return out;
  }
};

template <typename Result>
bool guarded(Result& r, const std::function<void()>& f) {
  try {
    f();
    return true;
  } catch (const cl::Error& e) {
    r.status = "error";
    r.message = std::string(e.what()) + " failed with " + xnorcl::cl_error_name(e.err());
  } catch (const std::exception& e) {
    r.status = "error";
    r.message = e.what();
  }
  return false;
}

std::string compare_bitwise(const std::vector<float>& got, const std::vector<float>& expected) {
  if (got.size() != expected.size())
    return "size " + std::to_string(got.size()) + " != " + std::to_string(expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &expected[i], sizeof(float)) != 0) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "output %zu of %zu: got %.9g, expected %.9g", i, got.size(),
                    static_cast<double>(got[i]), static_cast<double>(expected[i]));
      return buf;
    }
  }
  return "";
}

}  // namespace

int run_network(const Options& o) {
  xnorcl::Runtime rt = make_runtime(o);
  NetworkRun run;
  RunInfo& info = run.info;
  info.options = o;
  info.library_version = xnorcl::version();
  info.device = rt.device_name();
  info.platform = rt.device_info().platform_name;
  info.driver = rt.device_info().driver_version;
  info.device_version = rt.device_info().device_version;
  info.variant = xnorcl::to_string(rt.variant());
  info.variant_reason = rt.variant_reason();
  const char* env_variant = std::getenv("XNORCL_VARIANT");
  info.requested_variant =
      o.variant_given ? xnorcl::to_string(o.variant) : (env_variant && *env_variant ? env_variant : "auto");
  run.batch = o.batch;
  std::printf("xnorcl-bench network: xnorcl %s on %s (%s), variant %s (%s)\n", info.library_version.c_str(),
              info.device.c_str(), info.driver.c_str(), info.variant.c_str(), info.variant_reason.c_str());
  if (!rt.profiling_enabled()) std::printf("note: the queue has no profiling: per-layer times unavailable\n");
  if (o.quick || o.reps < 20) std::printf("note: %d repetitions (fewer than 20): not a target run\n", o.reps);

  if (o.quiet_check) wait_for_quiet(rt);
  std::fputs("measuring the peak rates ", stderr);
  info.peak = measure_peak(rt, o.quick, true);

  // The network and its input: batch images taken in turn from the builder's calibration pictures (0..255).
  std::fprintf(stderr, "building the vehicle classifier (seed %llu, batch %lld) and its reference\n",
               static_cast<unsigned long long>(kSeed), static_cast<long long>(o.batch));
  const xnorcl::VehicleClassifier v = xnorcl::vehicle_classifier(kSeed, o.batch);
  const xnorcl::NetworkSpec& spec = v.spec;
  const std::size_t image = static_cast<std::size_t>(3 * 96 * 96);
  std::vector<float> x(static_cast<std::size_t>(o.batch) * image);
  for (std::size_t n = 0; n < static_cast<std::size_t>(o.batch); ++n) {
    const std::size_t from = n % static_cast<std::size_t>(v.calibration_shape[0]);
    std::copy_n(v.calibration_input.begin() + static_cast<std::ptrdiff_t>(from * image), image,
                x.begin() + static_cast<std::ptrdiff_t>(n * image));
  }
  const std::vector<xnorcl::Activation> reference = xnorcl::reference_network(spec, x.data());
  const std::vector<float>& expected = reference.back().values;
  run.binary_ones_min = 1;
  for (const auto& a : reference) {
    if (!a.packed) continue;
    run.binary_ones_min = std::min(run.binary_ones_min, a.ones_fraction());
    run.binary_ones_max = std::max(run.binary_ones_max, a.ones_fraction());
  }
  run.macs = network_macs(spec);
  std::map<std::pair<std::size_t, int>, std::size_t> row_of;
  run.rows = make_rows(spec, row_of);
  run.equivalence =
      "same layers and shapes; convolution and FC weights are the binary filters' bits as +-1 floats; input "
      "the same 0..255 pixels, unthresholded (the binary conv1 thresholds them per channel: the paper's "
      "binarized input); convolutions zero-padded (CLBlast Im2col; the binary ones pad with -1); thresholds "
      "are float batch-norm + sign, fma(1, y, -t) > 0 ? +1 : -1, t the float network's own per-channel "
      "medians over the calibration batch; activations float32 +-1 after each sign";

  // --- binary: check with the very object and buffers that are then timed
  std::unique_ptr<xnorcl::Network> net;
  cl::Buffer input, output;
  cl::CommandQueue queue = rt.queue();
  std::vector<std::vector<double>> binary_rows(run.rows.size()), float_rows(run.rows.size());
  std::vector<KernelSamples> binary_kernels(run.rows.size()), float_kernels(run.rows.size());
  std::vector<double> binary_wall, binary_device, float_wall, float_device;
  auto read_binary = [&] {
    std::vector<float> y(expected.size());
    queue.enqueueReadBuffer(output, CL_TRUE, 0, y.size() * sizeof(float), y.data());
    return y;
  };
  guarded(run.binary, [&] {
    net = std::make_unique<xnorcl::Network>(rt, spec);
    if (net->output_packed())
      throw std::runtime_error("the network's output is packed, expected float logits");
    input =
        cl::Buffer(rt.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, x.size() * sizeof(float), x.data());
    output = cl::Buffer(rt.context(), CL_MEM_READ_WRITE, net->output_bytes());
    net->enqueue(input, output);
    queue.finish();
    const std::string diff = compare_bitwise(read_binary(), expected);
    if (!diff.empty()) {
      run.binary.status = "WRONG";
      run.binary.message = "before timing: " + diff;
    }
  });

  // --- float: every layer checked against the host before timing
  std::unique_ptr<FloatNetwork> fnet;
  if (!FloatNetwork::available()) {
    run.floating.status = "unavailable";
    run.floating.message = "built without CLBlast (Debian: libclblast-dev)";
  } else {
    guarded(run.floating, [&] {
      fnet = std::make_unique<FloatNetwork>(rt, spec, x, v.calibration_input, v.calibration_shape);
      fnet->enqueue();
      queue.finish();
      const std::string problem = fnet->check(kFloatTolerance, run.float_max_rel_error);
      if (!problem.empty()) {
        run.floating.status = "WRONG";
        run.floating.message = "before timing: " + problem;
      }
    });
  }

  // --- warm-up, then the timed rounds, binary and float interleaved
  std::fprintf(stderr, "%d warm-up and %d timed rounds\n", o.warmup, o.reps);
  for (int rep = -o.warmup; rep < o.reps; ++rep) {
    const bool record = rep >= 0;
    if (run.binary.status == "ok") {
      guarded(run.binary, [&] {
        const auto t0 = Clock::now();
        net->enqueue(input, output);
        queue.finish();
        const double wall = ms_since(t0);
        if (!record) return;
        binary_wall.push_back(wall);
        if (!rt.profiling_enabled()) return;
        std::vector<double> sums(run.rows.size(), 0.0);
        std::vector<KernelSamples::Rep> per_kernel(run.rows.size());
        double total = 0;
        for (const auto& s : net->last_stage_times()) {
          const std::size_t row = row_of.at(binary_row_key(spec, s.kernel));
          sums[row] += s.milliseconds;
          total += s.milliseconds;
          // "3:convolution binary_convolution xnor_gemm" -> "xnor_gemm" (the row says which layer).
          KernelSamples::accumulate(per_kernel[row], s.kernel.substr(s.kernel.rfind(' ') + 1),
                                    s.milliseconds);
        }
        for (std::size_t r = 0; r < sums.size(); ++r) {
          binary_rows[r].push_back(sums[r]);
          binary_kernels[r].add(per_kernel[r]);
        }
        binary_device.push_back(total);
      });
    }
    if (run.floating.status == "ok") {
      guarded(run.floating, [&] {
        const auto t0 = Clock::now();
        fnet->enqueue();
        queue.finish();
        const double wall = ms_since(t0);
        if (!record) return;
        float_wall.push_back(wall);
        if (!rt.profiling_enabled()) return;
        std::vector<double> sums(run.rows.size(), 0.0);
        std::vector<KernelSamples::Rep> per_kernel(run.rows.size());
        double total = 0;
        for (const auto& s : fnet->last_stage_times()) {
          const std::size_t row = row_of.at({s.layer, s.part});
          sums[row] += s.milliseconds;
          total += s.milliseconds;
          KernelSamples::accumulate(per_kernel[row], s.kernel, s.milliseconds);
        }
        for (std::size_t r = 0; r < sums.size(); ++r) {
          float_rows[r].push_back(sums[r]);
          float_kernels[r].add(per_kernel[r]);
        }
        float_device.push_back(total);
      });
    }
  }

  // --- the last timed round checked again, then the statistics
  if (run.binary.status == "ok") {
    guarded(run.binary, [&] {
      const std::string diff = compare_bitwise(read_binary(), expected);
      if (!diff.empty()) {
        run.binary.status = "WRONG";
        run.binary.message = "after timing: " + diff;
      }
    });
  }
  if (run.floating.status == "ok") {
    guarded(run.floating, [&] {
      double worst = 0;
      const std::string problem = fnet->check(kFloatTolerance, worst);
      run.float_max_rel_error = std::max(run.float_max_rel_error, worst);
      if (!problem.empty()) {
        run.floating.status = "WRONG";
        run.floating.message = "after timing: " + problem;
      }
    });
  }
  if (run.binary.status == "ok") {
    run.binary.wall = summarize(binary_wall);
    run.binary.device = summarize(binary_device);
    for (std::size_t r = 0; r < run.rows.size(); ++r) {
      run.rows[r].binary = summarize(binary_rows[r]);
      run.rows[r].binary_kernels = binary_kernels[r].summary();
    }
  }
  if (run.floating.status == "ok") {
    run.floating.wall = summarize(float_wall);
    run.floating.device = summarize(float_device);
    for (std::size_t r = 0; r < run.rows.size(); ++r) {
      run.rows[r].floating = summarize(float_rows[r]);
      run.rows[r].float_kernels = float_kernels[r].summary();
    }
  }
  if (o.quick) {
    info.noise = not_judged("a --quick run (3 repetitions, short peak kernels) is a smoke run");
  } else {
    // Measured again: on a shared machine a single measurement may catch a busy moment (as `layers`).
    std::fputs("measuring the peak rates again ", stderr);
    const Peak after = measure_peak(rt, o.quick, true);
    std::vector<TimedSeries> series;
    if (run.binary.status == "ok") {
      series.push_back({"binary network device", run.binary.device});
      series.push_back({"binary network wall", run.binary.wall});
    }
    if (run.floating.status == "ok") series.push_back({"float32 network wall", run.floating.wall});
    info.noise = judge_noise(rates_of(info.peak), rates_of(after), series);
    info.peak = best_of(info.peak, after);
  }

  // A whole network faster than the peak means the peak was mismeasured: its ratios mean nothing then.
  if (run.floating.status == "ok" && info.peak.float_flops_per_s > 0 &&
      2.0 * static_cast<double>(run.macs) / (run.floating.wall.median * 1e-3) > info.peak.float_flops_per_s) {
    info.invalid.push_back("the float network ran above the float32 FMA peak");
  }
  if (run.binary.status == "ok" && run.binary.device.count > 0 && info.peak.binary_ops_per_s > 0 &&
      static_cast<double>(run.macs) / (run.binary.device.median * 1e-3) > info.peak.binary_ops_per_s) {
    info.invalid.push_back("the binary network ran above the xor-popcount peak");
  }

  print_network_report(run);
  if (!o.json_path.empty()) write_network_json(run, o.json_path);
  if (!o.csv_path.empty()) write_network_csv(run, o.csv_path);
  // Failures make the exit status non-zero; a missed target does not (it is a measurement, reported).
  const bool failed = run.binary.status != "ok" || run.floating.status == "WRONG" ||
                      run.floating.status == "error" || invalid_run(info);
  return failed ? 1 : info.noise.noisy ? kExitNoisy : 0;
}

}  // namespace xnorcl_bench
