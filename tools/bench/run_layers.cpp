// SPDX-License-Identifier: Apache-2.0
// `xnorcl-bench layers`: every layer checked, then timed, binary and float interleaved.
//
// Order per layer: build every BinaryConvolution (one per pad_value) and the CLBlast baseline; check each
// once with the very object and buffers that are then timed; warm up; time `reps` rounds, each round running
// every binary object and then the float baseline; check each binary output again after the last round. A
// wrong result is reported as WRONG and its timings are dropped.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>

#include "bench.hpp"

namespace xnorcl_bench {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Describes the first difference of two float arrays that should be bitwise equal ("" when equal).
std::string compare_bitwise(const std::vector<float>& got, const std::vector<float>& expected) {
  if (got.size() != expected.size())
    return "size " + std::to_string(got.size()) + " != " + std::to_string(expected.size());
  if (std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)) == 0) return "";
  std::size_t first = 0, count = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &expected[i], sizeof(float)) != 0) {
      if (count++ == 0) first = i;
    }
  }
  char buf[200];
  std::snprintf(buf, sizeof buf, "%zu of %zu outputs differ; first at %zu: got %.9g, expected %.9g", count,
                got.size(), first, static_cast<double>(got[first]), static_cast<double>(expected[first]));
  return buf;
}

// Norm-wise relative error max|y - r| / max|r|. An element-wise one would flag outputs that cancel to
// near zero, whose float32 rounding error is set by the size of the terms, not of the result (K = 18432
// terms in the FC layer); a wrong index or a missing tap still shows as an error of order 1.
double max_relative_error(const std::vector<float>& y, const std::vector<float>& r) {
  if (y.size() != r.size()) return INFINITY;
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double e = std::fabs(static_cast<double>(y[i]) - r[i]);
    if (!(e <= worst)) worst = e;  // also catches NaN
    scale = std::max(scale, std::fabs(static_cast<double>(r[i])));
  }
  return scale > 0 ? worst / scale : worst;
}

// Which stage a kernel belongs to, by name: im2col_pack_* packs, xnor_gemm* multiplies, the rest is the
// epilogue. A BinaryConvolution has no epilogue kernel today (a pad_value other than +-1 is folded into the
// GEMM's border stores): its epilogue has no samples and the report says so.
enum class Stage { Packing, Gemm, Epilogue };
Stage stage_of(const std::string& kernel) {
  if (kernel.find("pack") != std::string::npos) return Stage::Packing;
  if (kernel.find("gemm") != std::string::npos) return Stage::Gemm;
  return Stage::Epilogue;
}

// One binary object under test, with its samples.
struct BinarySide {
  BinaryResult result;
  std::unique_ptr<xnorcl::BinaryConvolution> conv;
  cl::Buffer output;
  std::vector<float> expected;
  std::vector<double> wall, device, packing, gemm, epilogue;
  bool active() const { return result.status == "ok"; }
};

struct FloatSide {
  FloatResult result;
  std::unique_ptr<FloatBaseline> baseline;
  std::vector<float> expected;
  std::vector<double> wall, im2col, gemm;
  bool active() const { return result.status == "ok"; }
};

struct OnednnSide {
  FloatResult result;
  std::unique_ptr<OnednnBaseline> baseline;
  std::vector<float> expected;
  std::vector<double> wall;
  bool active() const { return result.status == "ok"; }
};

constexpr double kFloatTolerance = 1e-4;

std::vector<float> pad_values_for(const Layer& l, float main_value) {
  std::vector<float> values{main_value, 1.0f};
  // The example layer carries the pad_value target: 0 and 0.5 each against +1.
  if (l.origin == "example") {
    values.push_back(0.0f);
    values.push_back(0.5f);
  }
  std::vector<float> unique;
  for (float v : values) {
    if (std::find(unique.begin(), unique.end(), v) == unique.end()) unique.push_back(v);
  }
  return unique;
}

void run_binary(xnorcl::Runtime& rt, BinarySide& b, const cl::Buffer& input, bool record) {
  cl::CommandQueue queue = rt.queue();
  const auto t0 = Clock::now();
  b.conv->enqueue(input, b.output);
  queue.finish();
  const double wall = ms_since(t0);
  if (!record) return;
  b.wall.push_back(wall);
  double sums[3] = {0, 0, 0};
  double total = 0;
  bool epilogue = false;
  for (const auto& s : b.conv->last_stage_times()) {
    sums[static_cast<int>(stage_of(s.kernel))] += s.milliseconds;
    epilogue = epilogue || stage_of(s.kernel) == Stage::Epilogue;
    total += s.milliseconds;
    if (std::find(b.result.kernels.begin(), b.result.kernels.end(), s.kernel) == b.result.kernels.end()) {
      b.result.kernels.push_back(s.kernel);
    }
  }
  if (rt.profiling_enabled()) {
    b.device.push_back(total);
    b.packing.push_back(sums[0]);
    b.gemm.push_back(sums[1]);
    if (epilogue) b.epilogue.push_back(sums[2]);
  }
}

void run_float(xnorcl::Runtime& rt, FloatSide& f, bool record) {
  cl::CommandQueue queue = rt.queue();
  const auto t0 = Clock::now();
  f.baseline->enqueue();
  queue.finish();
  const double wall = ms_since(t0);
  if (!record) return;
  f.wall.push_back(wall);
  if (rt.profiling_enabled()) {
    double i = 0, g = 0;
    f.baseline->stage_times(i, g);
    f.im2col.push_back(i);
    f.gemm.push_back(g);
  }
}

void run_onednn(OnednnSide& d, bool record) {
  const auto t0 = Clock::now();
  d.baseline->run();
  const double wall = ms_since(t0);
  if (record) d.wall.push_back(wall);
}

std::vector<float> read(xnorcl::Runtime& rt, const cl::Buffer& buffer, std::size_t count) {
  std::vector<float> y(count);
  rt.queue().enqueueReadBuffer(buffer, CL_TRUE, 0, count * sizeof(float), y.data());
  return y;
}

// Runs f; any exception becomes status "error" with its message (the layer goes on without that side).
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

// A layer's seeded inputs (runs are repeatable): 0/1 values for the binary side; the same filter bits as +-1
// floats and uniform [-1, 1] activations for the float side (so its check is not a count of integers).
struct LayerInputs {
  std::vector<float> x_bits, x_float, w_float;
  xnorcl::Filter filter;
};

LayerInputs make_inputs(const Layer& layer) {
  std::mt19937 rng(static_cast<unsigned>(std::hash<std::string>{}(layer.describe())));
  const auto& in = layer.input;
  const std::size_t x_count = static_cast<std::size_t>(in[0] * in[1] * in[2] * in[3]);
  const auto& fs = layer.filter;
  const std::size_t w_count = static_cast<std::size_t>(fs[0] * fs[1] * fs[2] * fs[3]);
  std::vector<float> x_bits(x_count);
  for (auto& v : x_bits) v = static_cast<float>(rng() & 1u);
  std::vector<std::uint8_t> filter_bytes((w_count + 7) / 8);
  for (auto& b : filter_bytes) b = static_cast<std::uint8_t>(rng());
  LayerInputs inputs{std::move(x_bits), std::vector<float>(x_count), std::vector<float>(w_count),
                     xnorcl::Filter::from_packed(filter_bytes.data(), filter_bytes.size(), layer.filter,
                                                 xnorcl::BitOrder::MsbFirst)};
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (auto& v : inputs.x_float) v = dist(rng);
  for (std::size_t i = 0; i < w_count; ++i)
    inputs.w_float[i] = inputs.filter.bit(static_cast<std::int64_t>(i)) ? 1.0f : -1.0f;
  return inputs;
}

// The relative error of a float output; marks r WRONG where it is above the tolerance.
double check_float(FloatResult& r, const std::vector<float>& got, const std::vector<float>& expected,
                   const std::string& when) {
  const double e = max_relative_error(got, expected);
  if (!(e <= kFloatTolerance)) {
    r.status = "WRONG";
    char text[96];
    std::snprintf(text, sizeof text, ": relative error %.3g above %.3g", e, kFloatTolerance);
    r.message = when + text;
  }
  return e;
}

// One BinaryConvolution per pad value, each checked once with the very object and buffers that are then
// timed.
std::vector<BinarySide> binary_sides(xnorcl::Runtime& rt, const Layer& layer, const Options& o,
                                     const LayerInputs& inputs, const cl::Buffer& input,
                                     std::size_t y_count) {
  std::vector<BinarySide> sides;
  for (float v : pad_values_for(layer, o.pad_value)) {
    BinarySide b;
    b.result.pad_value = v;
    guarded(b.result, [&] {
      const auto attributes = layer.attributes(v);
      b.conv = std::make_unique<xnorcl::BinaryConvolution>(rt, attributes, layer.input, inputs.filter);
      b.result.plan = b.conv->plan();
      b.output = cl::Buffer(rt.context(), CL_MEM_READ_WRITE, y_count * sizeof(float));
      b.expected =
          xnorcl::reference_binary_convolution(inputs.x_bits.data(), layer.input, inputs.filter, attributes);
      run_binary(rt, b, input, false);
      const std::string diff = compare_bitwise(read(rt, b.output, y_count), b.expected);
      if (!diff.empty()) {
        b.result.status = "WRONG";
        b.result.message = "before timing: " + diff;
      }
    });
    sides.push_back(std::move(b));
  }
  return sides;
}

// The CLBlast baseline, checked against the host convolution before timing.
FloatSide float_side(xnorcl::Runtime& rt, const Layer& layer, const LayerInputs& inputs) {
  FloatSide f;
  if (!FloatBaseline::available()) {
    f.result.message = "built without CLBlast (Debian: libclblast-dev)";
    return f;
  }
  f.result.status = "ok";
  guarded(f.result, [&] {
    f.baseline = std::make_unique<FloatBaseline>(rt, layer, inputs.x_float, inputs.w_float);
    f.expected = host_float_convolution(layer, inputs.x_float, inputs.w_float);
    f.baseline->enqueue();
    rt.queue().finish();
    f.result.max_rel_error = check_float(f.result, f.baseline->read_output(), f.expected, "before timing");
  });
  return f;
}

// oneDNN on the host CPU (the stretch target), only where the device is that CPU; checked before timing.
OnednnSide onednn_side(xnorcl::Runtime& rt, const Layer& layer, const LayerInputs& inputs,
                       const FloatSide& f) {
  OnednnSide d;
  if (rt.device_info().type != "CPU") {
    d.result.message = "the device is not a CPU";
    return d;
  }
  if (!OnednnBaseline::available()) {
    d.result.message = "built without oneDNN (Debian: libdnnl-dev)";
    return d;
  }
  d.result.status = "ok";
  guarded(d.result, [&] {
    d.baseline = std::make_unique<OnednnBaseline>(layer, inputs.x_float, inputs.w_float);
    d.result.implementation = "oneDNN " + OnednnBaseline::version() + " " + d.baseline->implementation();
    d.expected =
        f.expected.empty() ? host_float_convolution(layer, inputs.x_float, inputs.w_float) : f.expected;
    d.baseline->run();
    d.result.max_rel_error = check_float(d.result, d.baseline->read_output(), d.expected, "before timing");
  });
  return d;
}

// Warm-up, then the timed rounds: each round runs every binary side (taking turns at going first, so that the
// pad_value sides' ratios do not depend on which one finds the caches as the float side or another side left
// them), then the float baseline. oneDNN in a block of its own: its OpenMP threads spin after each call and
// PoCL's worker threads would compete with them for the same cores if the rounds were interleaved.
void time_rounds(xnorcl::Runtime& rt, std::vector<BinarySide>& sides, FloatSide& f, OnednnSide& d,
                 const cl::Buffer& input, const Options& o) {
  for (int rep = -o.warmup; rep < o.reps; ++rep) {
    const bool record = rep >= 0;
    const std::size_t first = static_cast<std::size_t>(rep + o.warmup) % sides.size();
    for (std::size_t k = 0; k < sides.size(); ++k) {
      auto& b = sides[(first + k) % sides.size()];
      if (b.active()) guarded(b.result, [&] { run_binary(rt, b, input, record); });
    }
    if (f.active()) guarded(f.result, [&] { run_float(rt, f, record); });
  }
  for (int rep = -o.warmup; rep < o.reps; ++rep) {
    if (d.active()) guarded(d.result, [&] { run_onednn(d, rep >= 0); });
  }
}

// Each side's last timed output checked again, then its statistics.
BinaryResult finish(xnorcl::Runtime& rt, BinarySide& b, std::size_t y_count) {
  if (b.active()) {
    guarded(b.result, [&] {
      const std::string diff = compare_bitwise(read(rt, b.output, y_count), b.expected);
      if (!diff.empty()) {
        b.result.status = "WRONG";
        b.result.message = "after timing: " + diff;
      }
    });
  }
  if (b.active()) {
    b.result.wall = summarize(b.wall);
    b.result.device = summarize(b.device);
    b.result.packing = summarize(b.packing);
    b.result.gemm = summarize(b.gemm);
    b.result.epilogue = summarize(b.epilogue);
  }
  return std::move(b.result);
}

FloatResult finish(FloatSide& f) {
  if (f.active())
    guarded(f.result, [&] { check_float(f.result, f.baseline->read_output(), f.expected, "after timing"); });
  if (f.active()) {
    f.result.wall = summarize(f.wall);
    f.result.im2col = summarize(f.im2col);
    f.result.gemm = summarize(f.gemm);
  }
  return std::move(f.result);
}

FloatResult finish(OnednnSide& d) {
  if (d.active())
    guarded(d.result, [&] { check_float(d.result, d.baseline->read_output(), d.expected, "after timing"); });
  if (d.active()) d.result.wall = summarize(d.wall);
  return std::move(d.result);
}

LayerResult measure_layer(xnorcl::Runtime& rt, const Layer& layer, const Options& o, int index, int total) {
  LayerResult r;
  r.layer = layer;
  r.output = layer.output();
  const auto t_layer = Clock::now();
  std::fprintf(stderr, "[%d/%d] %s (%s): preparing and checking\n", index, total, layer.name.c_str(),
               layer.describe().c_str());
  LayerInputs inputs = make_inputs(layer);
  const std::size_t y_count = static_cast<std::size_t>(r.output[0] * r.output[1] * r.output[2] * r.output[3]);
  cl::Buffer input(rt.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                   inputs.x_bits.size() * sizeof(float), inputs.x_bits.data());
  std::vector<BinarySide> sides = binary_sides(rt, layer, o, inputs, input, y_count);
  FloatSide f = float_side(rt, layer, inputs);
  OnednnSide d = onednn_side(rt, layer, inputs, f);

  std::fprintf(stderr, "[%d/%d] %s: %d warm-up and %d timed rounds\n", index, total, layer.name.c_str(),
               o.warmup, o.reps);
  time_rounds(rt, sides, f, d, input, o);
  for (auto& b : sides) r.binary.push_back(finish(rt, b, y_count));
  r.floating = finish(f);
  r.onednn = finish(d);
  std::fprintf(stderr, "[%d/%d] %s: done in %.1f s\n", index, total, layer.name.c_str(),
               ms_since(t_layer) * 1e-3);
  return r;
}

// A stage faster than the peak means the peak was mismeasured: the run's percentages mean nothing then.
void check_against_peak(RunInfo& run, const LayerResult& r) {
  for (const auto& b : r.binary) {
    if (b.status != "ok" || b.gemm.count == 0) continue;
    const double pct = gemm_percent_of_peak(r.layer, b, run.peak);
    if (pct > 100.0) {
      run.invalid.push_back(r.layer.name + ": GEMM stage at " + std::to_string(pct) +
                            "% of the xor-popcount peak (pad_value " + std::to_string(b.pad_value) + ")");
    }
  }
  if (r.floating.status == "ok" && run.peak.float_flops_per_s > 0) {
    const double flops = 2.0 * static_cast<double>(r.layer.macs()) / (r.floating.wall.median * 1e-3);
    if (flops > run.peak.float_flops_per_s) {
      run.invalid.push_back(r.layer.name + ": CLBlast at " +
                            std::to_string(100 * flops / run.peak.float_flops_per_s) +
                            "% of the float32 FMA peak");
    }
  }
}

// Every timed series a target reads: each binary side's device and wall times and the float baselines'.
std::vector<TimedSeries> timed_series(const std::vector<LayerResult>& layers) {
  std::vector<TimedSeries> series;
  for (const auto& r : layers) {
    for (const auto& b : r.binary) {
      if (b.status != "ok") continue;
      char pad[32];
      std::snprintf(pad, sizeof pad, "%g", static_cast<double>(b.pad_value));
      const std::string side = r.layer.name + " binary v=" + pad;
      series.push_back({side + " device", b.device});
      series.push_back({side + " wall", b.wall});
    }
    if (r.floating.status == "ok") series.push_back({r.layer.name + " CLBlast wall", r.floating.wall});
    if (r.onednn.status == "ok") series.push_back({r.layer.name + " oneDNN wall", r.onednn.wall});
  }
  return series;
}

// The run's options, library, device and variant (and the variant asked for), as the report shows them.
RunInfo describe_run(const xnorcl::Runtime& rt, const Options& o) {
  RunInfo run;
  run.options = o;
  run.library_version = xnorcl::version();
  const auto& info = rt.device_info();
  run.device = rt.device_name();
  run.platform = info.platform_name;
  run.driver = info.driver_version;
  run.device_version = info.device_version;
  run.variant = xnorcl::to_string(rt.variant());
  run.variant_reason = rt.variant_reason();
  run.native_popcount = rt.native_popcount();
  const char* env_variant = std::getenv("XNORCL_VARIANT");
  run.requested_variant =
      o.variant_given ? xnorcl::to_string(o.variant) : (env_variant && *env_variant ? env_variant : "auto");
  return run;
}

}  // namespace

int run_layers(const Options& o) {
  std::vector<Layer> layers;
  if (o.layer_specs.empty()) {
    layers = default_layers();
  } else {
    for (const auto& s : o.layer_specs) layers.push_back(parse_layer(s));
  }
  xnorcl::Runtime rt = make_runtime(o);
  RunInfo run = describe_run(rt, o);
  std::printf("xnorcl-bench layers: xnorcl %s on %s (%s), variant %s (%s)\n", run.library_version.c_str(),
              run.device.c_str(), run.driver.c_str(), run.variant.c_str(), run.variant_reason.c_str());
  print_popcount_note(rt);
  if (!rt.profiling_enabled()) std::printf("note: the queue has no profiling: stage times unavailable\n");
  if (o.quick || o.reps < 20) std::printf("note: %d repetitions (fewer than 20): not a target run\n", o.reps);

  if (o.quiet_check) wait_for_quiet(rt);
  std::fputs("measuring the peak rates ", stderr);
  run.peak = measure_peak(rt, o.quick, true);

  int index = 0;
  for (const auto& layer : layers) {
    run.layers.push_back(measure_layer(rt, layer, o, ++index, static_cast<int>(layers.size())));
  }
  if (o.quick) {
    run.noise = not_judged("a --quick run (3 repetitions, short peak kernels) is a smoke run");
  } else {
    // Measured again once the layers are done: on a shared machine one measurement may catch a busy moment.
    // Both measurements also tell whether the machine stayed quiet enough to judge the targets.
    std::fputs("measuring the peak rates again ", stderr);
    const Peak after = measure_peak(rt, o.quick, true);
    run.noise = judge_noise(rates_of(run.peak), rates_of(after), timed_series(run.layers));
    run.peak = best_of(run.peak, after);
  }
  print_peak_table(run.peak);
  std::printf("\n");
  for (const auto& r : run.layers) {
    check_against_peak(run, r);
    print_layer_table(run, r);
  }
  print_summary(run);
  if (!o.json_path.empty()) write_json(run, o.json_path);
  if (!o.csv_path.empty()) write_csv(run, o.csv_path);

  // Failures make the exit status non-zero; a missed target does not (it is a measurement, reported). A noisy
  // run exits with 3: measured and checked, but its targets not judged.
  bool failed = invalid_run(run);
  for (const auto& r : run.layers) {
    for (const auto& b : r.binary) failed |= b.status != "ok";
    failed |= r.floating.status == "WRONG" || r.floating.status == "error";
    failed |= r.onednn.status == "WRONG" || r.onednn.status == "error";
  }
  return failed ? 1 : run.noise.noisy ? kExitNoisy : 0;
}

}  // namespace xnorcl_bench
