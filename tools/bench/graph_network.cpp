// SPDX-License-Identifier: Apache-2.0
// xnorcl-bench network --model bireal18|resnet18|FILE.xnn: a whole graph on the device (xnorcl::Model),
// checked against the host reference graph, then timed: per step (fused nodes shown as one step), the whole
// network's device and wall time, beside the perfect float32 network at the measured FMA peak and the share
// of that peak each float step reaches.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>

#include "bench.hpp"
#include "json.hpp"
#include "xnorcl/xnorcl.hpp"

namespace xnorcl_bench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::int64_t dims_product(const xnorcl::Dims& d) {
  std::int64_t n = 1;
  for (std::int64_t v : d) n *= v;
  return n;
}

// Multiply-accumulates of a node (0 for ops without a dot product): N*O*OH*OW*(C/G)*KH*KW for convolutions,
// N*K*M for MatMul. Binary convolutions count bit MACs.
std::int64_t node_macs(const xnorcl::Graph& g, const std::map<std::string, xnorcl::TensorInfo>& infos,
                       const xnorcl::Node& n) {
  if (n.op != "BinaryConvolution" && n.op != "Convolution" && n.op != "GroupConvolution" && n.op != "MatMul")
    return 0;
  const xnorcl::Dims& w = g.constants.at(n.inputs[1]).dims;
  const std::int64_t outputs = dims_product(infos.at(n.outputs[0]).dims);
  if (n.op == "MatMul") return outputs * infos.at(n.inputs[0]).dims.back();
  if (n.op == "GroupConvolution") return outputs * w[2] * w[3] * w[4];
  return outputs * w[1] * w[2] * w[3];
}

struct StepRow {
  std::string name, description;
  bool binary = false;  // the step's head is a binary op
  std::int64_t macs = 0;
  std::vector<double> device_ms;  // per repetition
  Stats device;
};

xnorcl::Graph build_model(const Options& o) {
  xnorcl::ModelOptions m;
  m.batch = o.batch;
  if (o.model == "bireal18") return xnorcl::bireal18(m);
  if (o.model == "resnet18") return xnorcl::resnet18_binary(m);
  return xnorcl::load_graph(o.model);
}

struct Check {
  // Step by step: each step's outputs against the host reference of its nodes computed from the device's
  // own inputs of that step. Exact for packed tensors; floats within rounding.
  std::int64_t step_tensors = 0, step_differing_bits = 0;
  double step_rel_error = 0;
  std::string worst_step;
  // End to end: the device's tensors against the host reference graph run from the same input. A float
  // within rounding of a threshold (the float stages round differently on the device) may flip a bit that
  // later layers carry on: counted, not hidden.
  double max_rel_error = 0;
  bool same_top1 = true;
  std::int64_t packed_tensors = 0, differing_bits = 0;
  double ones_min = 1, ones_max = 0;
  bool wrong() const { return step_differing_bits > 0 || step_rel_error > 1e-4; }
};

std::int64_t differing_bits(const xnorcl::Tensor& a, const xnorcl::Tensor& b) {
  std::int64_t bits = 0;
  for (std::size_t i = 0; i < a.words.size() && i < b.words.size(); ++i)
    bits += __builtin_popcount(a.words[i] ^ b.words[i]);
  return bits + 32 * static_cast<std::int64_t>(std::max(a.words.size(), b.words.size()) -
                                               std::min(a.words.size(), b.words.size()));
}

// Max-norm error of `got` relative to the largest magnitude of `want` (absolute where want is all zeros).
double relative_error(const xnorcl::Tensor& got, const xnorcl::Tensor& want) {
  if (got.values.size() != want.values.size()) return INFINITY;
  double scale = 0, worst = 0;
  for (float v : want.values) scale = std::max(scale, std::fabs(double(v)));
  for (std::size_t i = 0; i < want.values.size(); ++i) {
    const double d = std::fabs(double(got.values[i]) - want.values[i]);
    worst = std::max(worst, std::isnan(d) ? INFINITY : d);
  }
  return scale > 0 ? worst / scale : worst;
}

// Each step from the device's own inputs (`device`: the graph inputs and every step's outputs).
void check_steps(const xnorcl::Model& model, const std::map<std::string, xnorcl::Tensor>& device, Check& c) {
  const xnorcl::Graph& g = model.graph();
  std::map<std::string, const xnorcl::Node*> by_name;
  for (const xnorcl::Node& n : g.nodes) by_name[n.name] = &n;
  for (const xnorcl::GraphPlan::Step& step : model.plan().steps) {
    std::map<std::string, xnorcl::Tensor> local;  // the step's own tensors, computed on the host
    for (const std::string& name : step.fused) {
      const xnorcl::Node& node = *by_name.at(name);
      std::map<std::string, xnorcl::Tensor> inputs;
      for (const std::string& in : node.inputs) {
        if (local.count(in))
          inputs[in] = local.at(in);
        else if (device.count(in))
          inputs[in] = device.at(in);
      }
      local[node.outputs[0]] = xnorcl::reference_node(g, node, inputs)[0];
    }
    for (const auto& [name, want] : local) {
      const auto got = device.find(name);
      if (got == device.end()) continue;  // inside the step: never stored
      ++c.step_tensors;
      if (want.type == xnorcl::ElementType::Bits) {
        const std::int64_t bits = differing_bits(got->second, want);
        if (bits > 0 && c.step_differing_bits == 0) c.worst_step = step.node;
        c.step_differing_bits += bits;
      } else {
        const double e = relative_error(got->second, want);
        if (e > c.step_rel_error && c.step_differing_bits == 0) c.worst_step = step.node;
        c.step_rel_error = std::max(c.step_rel_error, e);
      }
    }
  }
}

Check check_against_reference(xnorcl::Model& model, const xnorcl::Graph& g,
                              const std::map<std::string, xnorcl::Tensor>& inputs) {
  Check c;
  std::fprintf(stderr, "computing the host reference graph (minutes at full size on a slow host)\n");
  const auto t0 = Clock::now();
  const auto want = xnorcl::reference_graph(g, inputs);
  std::fprintf(stderr, "host reference: %.1f s\n", seconds_since(t0));
  auto got = model.run_trace(inputs);
  for (const auto& [name, t] : got) {
    if (t.type != xnorcl::ElementType::Bits) continue;
    ++c.packed_tensors;
    c.ones_min = std::min(c.ones_min, t.ones_fraction());
    c.ones_max = std::max(c.ones_max, t.ones_fraction());
    c.differing_bits += differing_bits(t, want.at(name));
  }
  const xnorcl::Tensor& y = got.at(g.outputs[0]);
  const xnorcl::Tensor& r = want.at(g.outputs[0]);
  c.max_rel_error = relative_error(y, r);
  const std::int64_t classes = r.dims.back();
  for (std::size_t n = 0; n < r.values.size() / static_cast<std::size_t>(classes); ++n) {
    const auto row = [&](const std::vector<float>& v) {
      return std::max_element(v.begin() + n * classes, v.begin() + (n + 1) * classes) - v.begin();
    };
    c.same_top1 = c.same_top1 && row(y.values) == row(r.values);
  }
  std::fprintf(stderr, "checking every step from the device's own inputs\n");
  got.insert(inputs.begin(), inputs.end());
  check_steps(model, got, c);
  return c;
}

// The steps without multiply-accumulates (thresholds, pools, copies, elementwise): how many, their median
// device time, and its share of all steps' median device time.
struct NoMacSteps {
  int count = 0;
  double ms = 0, share = 0;
};
NoMacSteps no_mac_steps(const std::vector<StepRow>& rows) {
  NoMacSteps n;
  double total = 0;
  for (const StepRow& r : rows) {
    total += r.device.median;
    if (r.macs > 0) continue;
    n.ms += r.device.median;
    ++n.count;
  }
  n.share = n.ms / std::max(1e-9, total);
  return n;
}

std::vector<StepRow> make_rows(const xnorcl::Model& model) {
  const xnorcl::Graph& g = model.graph();
  const auto infos = g.validate();
  std::map<std::string, const xnorcl::Node*> by_name;
  for (const xnorcl::Node& n : g.nodes) by_name[n.name] = &n;
  std::vector<StepRow> rows;
  for (const auto& step : model.plan().steps) {
    StepRow r{step.node, step.description, false, 0, {}, {}};
    for (const std::string& n : step.fused) r.macs += node_macs(g, infos, *by_name.at(n));
    const std::string& op = by_name.at(step.fused[0])->op;
    r.binary = op == "BinaryConvolution" || op == "FakeQuantize" || op == "BinaryFullyConnected";
    rows.push_back(std::move(r));
  }
  return rows;
}

void record_step_times(const xnorcl::Model& model, std::vector<StepRow>& rows, std::vector<double>& device) {
  double total = 0;
  std::map<std::string, double> per_step;
  for (const xnorcl::StageTime& t : model.last_stage_times()) {
    per_step[t.kernel.substr(0, t.kernel.find(' '))] += t.milliseconds;
    total += t.milliseconds;
  }
  for (StepRow& r : rows) r.device_ms.push_back(per_step[r.name]);
  device.push_back(total);
}

void write_json(const std::string& path, const RunInfo& info, const Options& o,
                const std::vector<StepRow>& rows, const Stats& wall, const Stats& device, double perfect_ms,
                const Check& c, const xnorcl::GraphPlan& plan) {
  std::ofstream out(path);
  JsonWriter j(out);
  j.begin_object();
  j.value("schema", 1).value("command", "network").value("model", o.model);
  j.value("library_version", info.library_version).value("device", info.device).value("driver", info.driver);
  j.value("variant", info.variant).value("batch", o.batch);
  j.value("fma_peak_gflops", info.peak.float_flops_per_s * 1e-9);
  j.value("xor_popcount_peak_gbinops", info.peak.binary_ops_per_s * 1e-9);
  j.value("wall_median_ms", wall.median).value("device_median_ms", device.median);
  j.value("no_mac_share", no_mac_steps(rows).share);
  j.value("perfect_float32_ms", perfect_ms).value("device_over_perfect_float32", device.median / perfect_ms);
  j.value("step_tensors", c.step_tensors).value("step_differing_bits", c.step_differing_bits);
  j.value("step_rel_error", c.step_rel_error);
  j.value("max_rel_error", c.max_rel_error).value("same_top1", c.same_top1);
  j.value("packed_tensors", c.packed_tensors).value("differing_bits", c.differing_bits);
  j.value("ones_fraction_min", c.ones_min).value("ones_fraction_max", c.ones_max);
  j.value("activation_bytes", plan.activation_bytes).value("weight_bytes", plan.weight_bytes);
  j.value("largest_live_pair_bytes", plan.largest_live_pair_bytes);
  j.begin_object("noise").value("judged", info.noise.judged).value("noisy", info.noise.noisy);
  j.value("peak_drift", info.noise.peak_drift).value("worst_spread", info.noise.worst_spread).end_object();
  j.begin_array("steps");
  for (const StepRow& r : rows) {
    j.begin_object().value("step", r.name).value("description", r.description).value("binary", r.binary);
    j.value("macs", r.macs).value("device_median_ms", r.device.median).value("device_min_ms", r.device.min);
    j.value("device_max_ms", r.device.max).end_object();
  }
  j.end_array().end_object();
  out << "\n";
}

void write_csv(const std::string& path, const std::vector<StepRow>& rows) {
  std::ofstream out(path);
  out << "step,binary,macs,device_min_ms,device_median_ms,device_max_ms\n";
  for (const StepRow& r : rows)
    out << '"' << r.name << "\"," << (r.binary ? 1 : 0) << ',' << r.macs << ',' << r.device.min << ','
        << r.device.median << ',' << r.device.max << "\n";
}

}  // namespace

int run_graph_network(const Options& o) {
  xnorcl::Runtime rt = make_runtime(o);
  RunInfo info;
  info.library_version = xnorcl::version();
  info.device = rt.device_name();
  info.driver = rt.device_info().driver_version;
  info.variant = xnorcl::to_string(rt.variant());
  std::printf("xnorcl-bench network --model %s: xnorcl %s on %s (%s), variant %s (%s)\n", o.model.c_str(),
              info.library_version.c_str(), info.device.c_str(), info.driver.c_str(), info.variant.c_str(),
              rt.variant_reason().c_str());
  if (o.quick || o.reps < 20) std::printf("note: %d repetitions (fewer than 20): not a target run\n", o.reps);

  std::fprintf(stderr, "building %s (batch %d; calibrating its thresholds on the host)\n", o.model.c_str(),
               o.batch);
  auto t0 = Clock::now();
  const xnorcl::Graph g = build_model(o);
  std::fprintf(stderr, "built in %.1f s; planning it on the device\n", seconds_since(t0));
  t0 = Clock::now();
  xnorcl::Model model(rt, g);
  std::printf("plan (%.2f s to build):\n%s", seconds_since(t0), model.plan().to_string().c_str());
  std::size_t fused_steps = 0, side_steps = 0;
  for (const xnorcl::GraphPlan::Step& s : model.plan().steps) {
    fused_steps += s.fused.size() > 1;
    side_steps += s.node.find('&') != std::string::npos;
  }
  std::printf(
      "fusions: %zu nodes in %zu steps; %zu steps run several nodes (a+b: b in a's launch), %zu of them also "
      "write a second reader's output (a&b)\n",
      model.graph().nodes.size(), model.plan().steps.size(), fused_steps, side_steps);

  if (o.quiet_check) wait_for_quiet(rt);
  std::fputs("measuring the peak rates ", stderr);
  info.peak = measure_peak(rt, o.quick, true);

  std::mt19937 rng(7);
  std::uniform_real_distribution<float> pixel(-1.0f, 1.0f);
  std::map<std::string, xnorcl::Tensor> inputs;
  for (const xnorcl::GraphInput& in : g.inputs) {
    xnorcl::Tensor t;
    t.dims = in.dims;
    t.values.resize(static_cast<std::size_t>(dims_product(in.dims)));
    for (float& v : t.values) v = pixel(rng);
    inputs[in.name] = t;
  }
  const Check check = check_against_reference(model, g, inputs);

  std::vector<StepRow> rows = make_rows(model);
  std::vector<double> wall, device;
  for (int i = 0; i < o.warmup; ++i) model.run(inputs);
  for (int i = 0; i < o.reps; ++i) {
    const auto t = Clock::now();
    model.run(inputs);
    wall.push_back(seconds_since(t) * 1e3);
    record_step_times(model, rows, device);
  }
  for (StepRow& r : rows) r.device = summarize(r.device_ms);
  const Stats wall_stats = summarize(wall), device_stats = summarize(device);
  // Other processes slow some repetitions and some peak measurements: measure the peaks again and judge.
  std::fputs("measuring the peak rates again ", stderr);
  const Peak after = measure_peak(rt, o.quick, true);
  info.noise = o.quick ? not_judged("a --quick run")
                       : judge_noise(rates_of(info.peak), rates_of(after),
                                     {{o.model + " device", device_stats}, {o.model + " wall", wall_stats}});
  info.peak = best_of(info.peak, after);

  std::int64_t macs = 0;
  for (const StepRow& r : rows) macs += r.macs;
  const double fma_peak = info.peak.float_flops_per_s, xor_peak = info.peak.binary_ops_per_s;
  const double perfect_ms = 2.0 * static_cast<double>(macs) / fma_peak * 1e3;

  // Step names are never cut: the column is as wide as the longest.
  int name_width = 4;
  for (const StepRow& r : rows) name_width = std::max(name_width, static_cast<int>(r.name.size()));
  std::printf("\n%-*s %12s %10s %10s %10s  %s\n", name_width, "step", "MACs", "min ms", "median ms", "max ms",
              "share of peak");
  for (const StepRow& r : rows) {
    std::string share = "-";
    if (r.macs > 0 && r.device.median > 0) {
      const double rate = (r.binary ? 1.0 : 2.0) * static_cast<double>(r.macs) / (r.device.median * 1e-3);
      char buf[64];
      std::snprintf(buf, sizeof buf, "%5.1f%% of %s peak", 100.0 * rate / (r.binary ? xor_peak : fma_peak),
                    r.binary ? "xor-popcount" : "FMA");
      share = buf;
    }
    std::printf("%-*s %12lld %10.3f %10.3f %10.3f  %s\n", name_width, r.name.c_str(),
                static_cast<long long>(r.macs), r.device.min, r.device.median, r.device.max, share.c_str());
  }
  const xnorcl::GraphPlan& plan = model.plan();
  std::printf("\nwhole network: wall %.3f ms, device %.3f ms (medians of %d)\n", wall_stats.median,
              device_stats.median, o.reps);
  const NoMacSteps no_mac = no_mac_steps(rows);
  std::printf(
      "steps without MACs (thresholds, pools, copies, elementwise): %d of %zu steps, %.3f ms = %.1f%% of the "
      "steps' device time (target 10%% or less)\n",
      no_mac.count, rows.size(), no_mac.ms, 100.0 * no_mac.share);
  std::printf(
      "perfect float32 network: 2 x %lld MACs at the FMA peak %.1f GFLOP/s = %.3f ms; device time / "
      "perfect float32 = %.2f (target 0.50 or less)\n",
      static_cast<long long>(macs), fma_peak * 1e-9, perfect_ms, device_stats.median / perfect_ms);
  std::printf(
      "check, step by step (each step from the device's own inputs): %lld tensors, %lld bits differ, floats "
      "within %.2g relative%s%s\n",
      static_cast<long long>(check.step_tensors), static_cast<long long>(check.step_differing_bits),
      check.step_rel_error, check.wrong() ? ": WRONG at step " : "",
      check.wrong() ? check.worst_step.c_str() : "");
  std::printf(
      "check, end to end (the host reference graph from the same input): output within %.2g relative, top-1 "
      "%s; %lld packed tensors, %lld bits differ, ones fraction %.3f..%.3f\n",
      check.max_rel_error, check.same_top1 ? "the same" : "DIFFERS",
      static_cast<long long>(check.packed_tensors), static_cast<long long>(check.differing_bits),
      check.ones_min, check.ones_max);
  if (!check.wrong() && (check.differing_bits > 0 || !check.same_top1))
    std::printf(
        "  (every step is exact from its own inputs: the end-to-end differences start where a float value "
        "lies within rounding of a threshold and its bit flips)\n");
  std::printf(
      "device memory: activations %.1f MB (largest live pair %.1f MB: ratio %.2f, target 1.50 or less), "
      "weights %.1f MB\n",
      plan.activation_bytes / 1e6, plan.largest_live_pair_bytes / 1e6,
      static_cast<double>(plan.activation_bytes) / static_cast<double>(plan.largest_live_pair_bytes),
      plan.weight_bytes / 1e6);
  print_noise(info.noise);
  if (!o.json_path.empty())
    write_json(o.json_path, info, o, rows, wall_stats, device_stats, perfect_ms, check, plan);
  if (!o.csv_path.empty()) write_csv(o.csv_path, rows);
  if (check.wrong()) return 1;
  return info.noise.noisy ? kExitNoisy : 0;
}

}  // namespace xnorcl_bench
