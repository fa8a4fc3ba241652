// SPDX-License-Identifier: Apache-2.0
// xnorcl-bench network [--model vehicle|bireal18|resnet18|FILE.xnn]: a whole graph on the device
// (xnorcl::Model), checked against the host reference graph, then timed beside its float32 twin (float_twin:
// the same layers with float ops, run by a Model on the same queue, binary and float taking turns): per step
// (fused nodes shown as one step), the whole network's device and wall time, the perfect float32 network at
// the measured FMA peak and the share of that peak each step reaches, and the targets.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "bench.hpp"
#include "cli.hpp"
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
// N*K*M for MatMul and BinaryFullyConnected. Binary ops count bit MACs.
std::int64_t node_macs(const xnorcl::Graph& g, const std::map<std::string, xnorcl::TensorInfo>& infos,
                       const xnorcl::Node& n) {
  const std::int64_t outputs = dims_product(infos.at(n.outputs[0]).dims);
  if (n.op == "MatMul") return outputs * infos.at(n.inputs[0]).dims.back();
  if (n.op == "BinaryFullyConnected") {
    const xnorcl::Dims& in = infos.at(n.inputs[0]).dims;
    return outputs * dims_product(in) / in[0];
  }
  if (n.op != "BinaryConvolution" && n.op != "Convolution" && n.op != "GroupConvolution") return 0;
  const xnorcl::Dims& w = g.constants.at(n.inputs[1]).dims;
  if (n.op == "GroupConvolution") return outputs * w[2] * w[3] * w[4];
  return outputs * w[1] * w[2] * w[3];
}

struct StepRow {
  std::string name, description;
  bool binary = false;  // the step computes a binary convolution or fully-connected layer
  std::int64_t macs = 0;
  std::vector<double> device_ms;  // per repetition
  Stats device;
};

// The graph and the input it is timed on.
struct Workload {
  xnorcl::Graph graph;
  std::map<std::string, xnorcl::Tensor> inputs;
};

// Uniform values in [-1, 1] for every graph input (the models built in code take normalized pixels).
std::map<std::string, xnorcl::Tensor> random_inputs(const xnorcl::Graph& g) {
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
  return inputs;
}

Workload build_model(const Options& o) {
  xnorcl::ModelOptions m;
  m.batch = o.batch;
  if (o.model == "vehicle") {
    // The paper's classifier takes pixels 0..255: it is timed on the first of its calibration pictures
    // (at least 8, so that the medians of its fully-connected outputs cut a batch of one too).
    const int pictures = std::max(o.batch, 8);
    const xnorcl::VehicleClassifier v = xnorcl::vehicle_classifier(kVehicleSeed, o.batch, pictures);
    Workload w{xnorcl::network_graph(v.spec), {}};
    xnorcl::Tensor x;
    x.dims = {o.batch, 3, 96, 96};
    x.values.assign(v.calibration_input.begin(),
                    v.calibration_input.begin() + static_cast<std::ptrdiff_t>(dims_product(x.dims)));
    w.inputs["input"] = x;
    return w;
  }
  xnorcl::Graph g = o.model == "bireal18"   ? xnorcl::bireal18(m)
                    : o.model == "resnet18" ? xnorcl::resnet18_binary(m)
                                            : xnorcl::load_graph(o.model);
  auto inputs = random_inputs(g);
  return {std::move(g), std::move(inputs)};
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

// Each step of a float twin from the device's own inputs (floats within rounding).
Check check_twin_steps(xnorcl::Model& twin, const std::map<std::string, xnorcl::Tensor>& inputs) {
  Check c;
  auto got = twin.run_trace(inputs);
  got.insert(inputs.begin(), inputs.end());
  check_steps(twin, got, c);
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
    for (const std::string& n : step.fused) {
      const xnorcl::Node& node = *by_name.at(n);
      r.macs += node_macs(g, infos, node);
      r.binary = r.binary || node.op == "BinaryConvolution" || node.op == "BinaryFullyConnected";
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

// One kernel's device time in a run, summed over the steps that run it, per repetition.
struct KernelRow {
  int steps = 0;                  // that run it
  std::vector<double> device_ms;  // per repetition
  Stats device;
};

// One network's timings: its steps, its kernels and its whole-run device and wall times per repetition.
struct Timed {
  std::vector<StepRow> rows;
  std::map<std::string, KernelRow> kernels;
  std::vector<double> wall, device;
  Stats wall_stats, device_stats;
  std::int64_t macs() const {
    std::int64_t m = 0;
    for (const StepRow& r : rows) m += r.macs;
    return m;
  }
};

// The kernel a stage time names: "step kernel", or the step alone where the step runs one launch, whose
// kernel is then the first word of the step's description ("maxpool_f32_runs 1x64x56x56 ...").
std::string kernel_of_stage(const std::string& stage, const std::vector<StepRow>& rows) {
  const std::size_t space = stage.find(' ');
  if (space != std::string::npos) return stage.substr(space + 1);
  for (const StepRow& r : rows)
    if (r.name == stage) return r.description.substr(0, r.description.find(' '));
  return stage;
}

void run_and_record(xnorcl::Model& model, const std::map<std::string, xnorcl::Tensor>& inputs, Timed& t) {
  const auto t0 = Clock::now();
  model.run(inputs);
  t.wall.push_back(seconds_since(t0) * 1e3);
  double total = 0;
  std::map<std::string, double> per_step;
  struct KernelInRun {
    std::set<std::string> steps;
    double ms = 0;
  };
  std::map<std::string, KernelInRun> per_kernel;
  for (const xnorcl::StageTime& s : model.last_stage_times()) {
    const std::string step = s.kernel.substr(0, s.kernel.find(' '));
    per_step[step] += s.milliseconds;
    KernelInRun& k = per_kernel[kernel_of_stage(s.kernel, t.rows)];
    k.steps.insert(step);
    k.ms += s.milliseconds;
    total += s.milliseconds;
  }
  for (StepRow& r : t.rows) r.device_ms.push_back(per_step[r.name]);
  for (const auto& [name, k] : per_kernel) {
    KernelRow& row = t.kernels[name];
    row.steps = static_cast<int>(k.steps.size());
    row.device_ms.push_back(k.ms);
  }
  t.device.push_back(total);
}

void summarize_timings(Timed& t) {
  for (StepRow& r : t.rows) r.device = summarize(r.device_ms);
  for (auto& [name, k] : t.kernels) k.device = summarize(k.device_ms);
  t.wall_stats = summarize(t.wall);
  t.device_stats = summarize(t.device);
}

// The networks take turns (turn_order: the binary network, its float twin, the binary network in its
// default configurations where some steps are tuned), so that all see the same machine.
void time_together(const Options& o, const std::vector<std::pair<xnorcl::Model*, Timed*>>& runs,
                   const std::map<std::string, xnorcl::Tensor>& inputs) {
  for (int i = 0; i < o.warmup; ++i)
    for (const auto& [model, timed] : runs) model->run(inputs);
  for (int i = 0; i < o.reps; ++i)
    for (std::size_t k : turn_order(i, runs.size())) run_and_record(*runs[k].first, inputs, *runs[k].second);
  for (const auto& [model, timed] : runs) summarize_timings(*timed);
}

std::size_t tuned_steps(const xnorcl::GraphPlan& plan) {
  return static_cast<std::size_t>(std::count_if(plan.steps.begin(), plan.steps.end(), [](const auto& s) {
    return s.tuning.find("tuned") != std::string::npos;
  }));
}

// The configuration a step's tuning text names: "tuned wg=8 tm=8 tn=4 kt=8" -> "wg=8 tm=8 tn=4 kt=8".
std::string configuration_of(const std::string& tuning) {
  const std::size_t space = tuning.find(' ');
  return space == std::string::npos ? tuning : tuning.substr(space + 1);
}

// The tuned steps beside the same steps in their default configurations, and the whole network. Steps
// whose tuning kept the default run the same kernels in both: listed, but not counted in the gains.
void print_tuning(const xnorcl::GraphPlan& plan, const xnorcl::GraphPlan& default_plan, const Timed& tuned,
                  const Timed& defaults) {
  std::printf("\ntuned steps against the same steps in their default configurations (interleaved runs):\n");
  std::vector<double> gains;  // default time over tuned time, per step that runs another configuration
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    if (plan.steps[i].tuning.find("tuned") == std::string::npos) continue;
    const double before = defaults.rows[i].device.median, after = tuned.rows[i].device.median;
    const bool same =
        configuration_of(plan.steps[i].tuning) == configuration_of(default_plan.steps[i].tuning);
    if (!same) gains.push_back(before / std::max(1e-9, after));
    std::printf("  %-60s %8.3f -> %8.3f ms %5.2fx  [%s]\n", plan.steps[i].node.c_str(), before, after,
                before / std::max(1e-9, after), same ? "kept the default" : plan.steps[i].tuning.c_str());
  }
  std::sort(gains.begin(), gains.end());
  if (!gains.empty())
    std::printf(
        "per step that runs another configuration, default over tuned: median %.2fx, best %.2fx, worst "
        "%.2fx (%zu steps)\n",
        gains[gains.size() / 2], gains.back(), gains.front(), gains.size());
  std::printf("whole network, device time: %.3f ms default, %.3f ms tuned (%.2fx)\n",
              defaults.device_stats.median, tuned.device_stats.median,
              defaults.device_stats.median / std::max(1e-9, tuned.device_stats.median));
}

void print_steps(const char* title, const std::vector<StepRow>& rows, const Peak& peak) {
  // Step names are never cut: the column is as wide as the longest.
  int name_width = 4;
  for (const StepRow& r : rows) name_width = std::max(name_width, static_cast<int>(r.name.size()));
  std::printf("\n%s\n%-*s %12s %10s %10s %10s  %s\n", title, name_width, "step", "MACs", "min ms",
              "median ms", "max ms", "share of peak");
  for (const StepRow& r : rows) {
    std::string share = "-";
    if (r.macs > 0 && r.device.median > 0) {
      const double rate = (r.binary ? 1.0 : 2.0) * static_cast<double>(r.macs) / (r.device.median * 1e-3);
      const double of = r.binary ? peak.binary_ops_per_s : peak.float_flops_per_s;
      char buf[64];
      std::snprintf(buf, sizeof buf, "%5.1f%% of %s peak", 100.0 * rate / of,
                    r.binary ? "xor-popcount" : "FMA");
      share = buf;
    }
    std::printf("%-*s %12lld %10.3f %10.3f %10.3f  %s\n", name_width, r.name.c_str(),
                static_cast<long long>(r.macs), r.device.min, r.device.median, r.device.max, share.c_str());
  }
}

// A network's kernels, the largest median first.
std::vector<std::pair<std::string, const KernelRow*>> kernels_by_time(const Timed& t) {
  std::vector<std::pair<std::string, const KernelRow*>> sorted;
  for (const auto& [name, k] : t.kernels) sorted.emplace_back(name, &k);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.second->device.median > b.second->device.median; });
  return sorted;
}

// Where a network's device time goes by kernel: each kernel's time summed over the steps that run it in a
// run (medians over the runs, so the shares need not add up to 100%).
void print_kernels(const Timed& t) {
  std::printf(
      "\nbinary network by kernel (each kernel's time in a run summed over the steps that run it; medians "
      "over the runs):\n");
  std::printf("%-36s %6s %10s  %s\n", "kernel", "steps", "median ms", "share of device time");
  for (const auto& [name, k] : kernels_by_time(t))
    std::printf("%-36s %6d %10.3f  %5.1f%%\n", name.c_str(), k->steps, k->device.median,
                100.0 * k->device.median / std::max(1e-9, t.device_stats.median));
}

// The whole-network figures the targets and the files share.
struct Figures {
  double perfect_ms = 0;    // 2 * MACs / FMA peak
  double over_perfect = 0;  // binary device / perfect
  double twin_speedup = 0;  // twin wall / binary wall
  NoMacSteps no_mac;
  double memory_ratio = 0;  // activation bytes / largest live pair
};

Figures figures_of(const Timed& b, const Timed& f, const Peak& peak, const xnorcl::GraphPlan& plan) {
  Figures x;
  x.perfect_ms = 2.0 * static_cast<double>(b.macs()) / peak.float_flops_per_s * 1e3;
  x.over_perfect = b.device_stats.median / x.perfect_ms;
  x.twin_speedup = f.wall_stats.median / b.wall_stats.median;
  x.no_mac = no_mac_steps(b.rows);
  x.memory_ratio = static_cast<double>(plan.activation_bytes) /
                   std::max<double>(1.0, double(plan.largest_live_pair_bytes));
  return x;
}

// The whole-network goals: the device time against a perfect float32 network (at most 0.40 of it for
// Bi-Real Net-18 and 0.50 for the binary ResNet-18, the release goals for those architectures; below 1,
// faster than any float32 code could be, for every other network), the share of steps without MACs, the
// speed-up over the float32 twin (the paper's whole-network 7.4x), and the memory of the activations.
std::vector<Target> network_targets(const Options& o, const Figures& x, const NoiseVerdict& noise) {
  std::vector<Target> targets;
  auto add = [&](const char* id, const std::string& description, double measured, double required, bool pass,
                 const char* unit) {
    Target t;
    t.id = id;
    t.description = description;
    t.layer = o.model;
    t.measured = measured;
    t.required = required;
    t.unit = unit;
    t.status = !std::isfinite(measured) ? "MISS" : pass ? "PASS" : "MISS";
    if (noise.noisy) t.status = kNotJudged;
    targets.push_back(t);
  };
  const double limit = o.model == "bireal18" ? 0.40 : o.model == "resnet18" ? 0.50 : 1.0;
  add("device_over_perfect_float32", "device time / perfect float32 network", x.over_perfect, limit,
      limit < 1.0 ? x.over_perfect <= limit : x.over_perfect < limit, "");
  add("no_mac_share", "share of device time in steps without MACs", 100 * x.no_mac.share, 10,
      x.no_mac.share <= 0.10, "%");
  add("speedup_vs_float32_twin", "float32 twin wall / binary wall", x.twin_speedup, 7.4,
      x.twin_speedup >= 7.4, "x");
  add("activation_memory", "activation buffers / largest live pair", x.memory_ratio, 1.5,
      x.memory_ratio <= 1.5, "x");
  return targets;
}

void print_summary(const Options& o, const Timed& b, const Timed& f, const Figures& x, const Check& check,
                   const Check& twin_check, const xnorcl::GraphPlan& plan, const Peak& peak) {
  std::printf("\nwhole network: wall %.3f ms, device %.3f ms (medians of %d)\n", b.wall_stats.median,
              b.device_stats.median, o.reps);
  std::printf(
      "float32 twin (the same layers with float ops, run by xnorcl): wall %.3f ms, device %.3f ms; binary is "
      "%.2fx faster by wall time, %.2fx by device time\n",
      f.wall_stats.median, f.device_stats.median, x.twin_speedup,
      f.device_stats.median / b.device_stats.median);
  std::printf(
      "steps without MACs (thresholds, pools, copies, elementwise): %d of %zu steps, %.3f ms = %.1f%% of the "
      "steps' device time\n",
      x.no_mac.count, b.rows.size(), x.no_mac.ms, 100.0 * x.no_mac.share);
  std::printf(
      "perfect float32 network: 2 x %lld MACs at the FMA peak %.1f GFLOP/s = %.3f ms; device time / perfect "
      "float32 = %.2f\n",
      static_cast<long long>(b.macs()), peak.float_flops_per_s * 1e-9, x.perfect_ms, x.over_perfect);
  std::printf(
      "check, step by step (each step from the device's own inputs): %lld tensors, %lld bits differ, floats "
      "within %.2g relative%s%s; float32 twin: %lld tensors within %.2g relative%s%s\n",
      static_cast<long long>(check.step_tensors), static_cast<long long>(check.step_differing_bits),
      check.step_rel_error, check.wrong() ? ": WRONG at step " : "",
      check.wrong() ? check.worst_step.c_str() : "", static_cast<long long>(twin_check.step_tensors),
      twin_check.step_rel_error, twin_check.wrong() ? ": WRONG at step " : "",
      twin_check.wrong() ? twin_check.worst_step.c_str() : "");
  std::printf(
      "check, end to end (the host reference graph from the same input): output within %.2g relative, top-1 "
      "%s; %lld packed tensors stored, %lld bits differ",
      check.max_rel_error, check.same_top1 ? "the same" : "DIFFERS",
      static_cast<long long>(check.packed_tensors), static_cast<long long>(check.differing_bits));
  if (check.packed_tensors > 0) std::printf(", ones fraction %.3f..%.3f", check.ones_min, check.ones_max);
  std::printf("\n");
  if (!check.wrong() && (check.differing_bits > 0 || !check.same_top1))
    std::printf(
        "  (every step is exact from its own inputs: the end-to-end differences start where a float value "
        "lies within rounding of a threshold and its bit flips)\n");
  std::printf("device memory: activations %.1f MB (largest live pair %.1f MB), weights %.1f MB\n",
              plan.activation_bytes / 1e6, plan.largest_live_pair_bytes / 1e6, plan.weight_bytes / 1e6);
}

void print_targets(const std::vector<Target>& targets) {
  std::printf("\ntargets:\n");
  for (const Target& t : targets)
    std::printf("  %-10s %-45s %8.2f%s (%s %.2f%s)\n", t.status.c_str(), t.description.c_str(), t.measured,
                t.unit.c_str(), t.id == "speedup_vs_float32_twin" ? "at least" : "at most", t.required,
                t.unit.c_str());
}

void write_steps(JsonWriter& j, const char* key, const std::vector<StepRow>& rows) {
  j.begin_array(key);
  for (const StepRow& r : rows) {
    j.begin_object().value("step", r.name).value("description", r.description).value("binary", r.binary);
    j.value("macs", r.macs).value("device_median_ms", r.device.median).value("device_min_ms", r.device.min);
    j.value("device_max_ms", r.device.max).end_object();
  }
  j.end_array();
}

// The network's kernels as print_kernels lists them.
void write_kernels(JsonWriter& j, const Timed& t) {
  j.begin_array("kernels");
  for (const auto& [name, k] : kernels_by_time(t))
    j.begin_object()
        .value("kernel", name)
        .value("steps", k->steps)
        .value("device_median_ms", k->device.median)
        .end_object();
  j.end_array();
}

struct Report {
  const Options& o;
  const RunInfo& info;
  const Timed &binary, &twin;
  const Figures& figures;
  const Check &check, &twin_check;
  const xnorcl::GraphPlan& plan;
  const std::vector<Target>& targets;
  const Timed* default_configs;  // the network in its default configurations, where steps are tuned
};

void write_json(const std::string& path, const Report& r) {
  std::ostringstream out;
  JsonWriter j(out);
  j.begin_object();
  j.value("schema", 1).value("command", "network").value("model", r.o.model);
  j.value("library_version", r.info.library_version).value("device", r.info.device);
  j.value("driver", r.info.driver).value("variant", r.info.variant).value("batch", r.o.batch);
  j.value("native_popcount", r.info.native_popcount);
  j.value("fma_peak_gflops", r.info.peak.float_flops_per_s * 1e-9);
  j.value("xor_popcount_peak_gbinops", r.info.peak.binary_ops_per_s * 1e-9);
  j.value("wall_median_ms", r.binary.wall_stats.median)
      .value("device_median_ms", r.binary.device_stats.median);
  j.value("no_mac_share", r.figures.no_mac.share);
  j.value("perfect_float32_ms", r.figures.perfect_ms);
  j.value("device_over_perfect_float32", r.figures.over_perfect);
  j.value("float32_twin_wall_median_ms", r.twin.wall_stats.median);
  j.value("float32_twin_device_median_ms", r.twin.device_stats.median);
  j.value("speedup_vs_float32_twin", r.figures.twin_speedup);
  j.value("step_tensors", r.check.step_tensors).value("step_differing_bits", r.check.step_differing_bits);
  j.value("step_rel_error", r.check.step_rel_error).value("twin_step_rel_error", r.twin_check.step_rel_error);
  j.value("max_rel_error", r.check.max_rel_error).value("same_top1", r.check.same_top1);
  j.value("packed_tensors", r.check.packed_tensors).value("differing_bits", r.check.differing_bits);
  j.value("ones_fraction_min", r.check.ones_min).value("ones_fraction_max", r.check.ones_max);
  j.value("activation_bytes", r.plan.activation_bytes).value("weight_bytes", r.plan.weight_bytes);
  j.value("largest_live_pair_bytes", r.plan.largest_live_pair_bytes);
  j.begin_object("noise").value("judged", r.info.noise.judged).value("noisy", r.info.noise.noisy);
  j.value("peak_drift", r.info.noise.peak_drift)
      .value("worst_spread", r.info.noise.worst_spread)
      .end_object();
  j.begin_array("targets");
  for (const Target& t : r.targets)
    j.begin_object()
        .value("id", t.id)
        .value("measured", t.measured)
        .value("required", t.required)
        .value("status", t.status)
        .end_object();
  j.end_array();
  j.value("tuned_steps", tuned_steps(r.plan));
  if (r.default_configs) j.value("default_configs_device_median_ms", r.default_configs->device_stats.median);
  write_steps(j, "steps", r.binary.rows);
  write_steps(j, "float32_twin_steps", r.twin.rows);
  write_kernels(j, r.binary);
  j.end_object();
  out << "\n";
  xnorcl_cli::write_output_file(path, out.str());
}

void write_csv(const std::string& path, const Timed& binary, const Timed& twin) {
  std::ostringstream out;
  out << "network,step,binary,macs,device_min_ms,device_median_ms,device_max_ms\n";
  for (const auto* t : {&binary, &twin})
    for (const StepRow& r : t->rows)
      out << (t == &binary ? "binary" : "float32_twin") << ",\"" << r.name << "\"," << (r.binary ? 1 : 0)
          << ',' << r.macs << ',' << r.device.min << ',' << r.device.median << ',' << r.device.max << "\n";
  xnorcl_cli::write_output_file(path, out.str());
}

RunInfo run_info(const xnorcl::Runtime& rt) {
  RunInfo info;
  info.library_version = xnorcl::version();
  info.device = rt.device_name();
  info.driver = rt.device_info().driver_version;
  info.variant = xnorcl::to_string(rt.variant());
  info.native_popcount = rt.native_popcount();
  return info;
}

xnorcl::Model plan_model(const xnorcl::Runtime& rt, const xnorcl::Graph& g) {
  const auto t0 = Clock::now();
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
  return model;
}

void tune_model(const xnorcl::Runtime& rt, const xnorcl::Graph& g, xnorcl::TuneSearch search) {
  xnorcl::TuneOptions t;
  t.search = search;
  t.progress = [](const xnorcl::TuneProgress& p) {
    std::fprintf(stderr, "\rtuning: %zu/%zu %-40s", p.done, p.total, p.what.c_str());
  };
  const xnorcl::TuneReport r = xnorcl::tune(rt, g, t);
  std::fprintf(stderr, "\ntuned %zu step classes in %.1f s%s\n", r.classes.size(), r.seconds,
               r.file.empty() ? "" : (", stored in " + r.file).c_str());
}

}  // namespace

int run_graph_network(const Options& o) {
  // The model is built (or its file read) on the host before the device starts: a missing, unreadable or
  // malformed file is the error, not a device.
  std::fprintf(stderr, "building %s (batch %d; calibrating its thresholds on the host)\n", o.model.c_str(),
               o.batch);
  const auto t0 = Clock::now();
  const Workload w = build_model(o);
  std::fprintf(stderr, "built in %.1f s\n", seconds_since(t0));
  xnorcl::Runtime rt = make_runtime(o);
  RunInfo info = run_info(rt);
  std::printf("xnorcl-bench network --model %s: xnorcl %s on %s (%s), variant %s (%s)\n", o.model.c_str(),
              info.library_version.c_str(), info.device.c_str(), info.driver.c_str(), info.variant.c_str(),
              rt.variant_reason().c_str());
  print_popcount_note(rt);
  if (o.quick || o.reps < 20) std::printf("note: %d repetitions (fewer than 20): not a target run\n", o.reps);
  if (o.tune) tune_model(rt, w.graph, *o.tune);
  std::fprintf(stderr, "planning it and its float32 twin on the device\n");
  xnorcl::Model model = plan_model(rt, w.graph);
  xnorcl::Model twin(rt, float_twin(w.graph));
  // With tuned steps, the same network in its default configurations (a runtime that ignores the file).
  std::optional<xnorcl::Runtime> default_rt;
  std::optional<xnorcl::Model> defaults;
  if (tuned_steps(model.plan()) > 0) {
    default_rt = make_runtime(o, xnorcl::TuningMode::Ignore);
    defaults.emplace(*default_rt, w.graph);
  }

  if (o.quiet_check) wait_for_quiet(rt);
  std::fputs("measuring the peak rates ", stderr);
  info.peak = measure_peak(rt, o.quick, true);
  const Check check = check_against_reference(model, w.graph, w.inputs);
  std::fprintf(stderr, "checking every step of the float32 twin from the device's own inputs\n");
  const Check twin_check = check_twin_steps(twin, w.inputs);

  Timed binary, floating, default_configs;
  binary.rows = make_rows(model);
  floating.rows = make_rows(twin);
  default_configs.rows = make_rows(model);
  std::vector<std::pair<xnorcl::Model*, Timed*>> runs = {{&model, &binary}, {&twin, &floating}};
  if (defaults) runs.emplace_back(&*defaults, &default_configs);
  time_together(o, runs, w.inputs);
  // Other processes slow some repetitions and some peak measurements: measure the peaks again and judge.
  std::fputs("measuring the peak rates again ", stderr);
  const Peak after = measure_peak(rt, o.quick, true);
  info.noise = o.quick ? not_judged("a --quick run")
                       : judge_noise(rates_of(info.peak), rates_of(after),
                                     {{o.model + " device", binary.device_stats},
                                      {o.model + " wall", binary.wall_stats},
                                      {o.model + " float32 twin wall", floating.wall_stats}});
  info.peak = best_of(info.peak, after);

  const Figures figures = figures_of(binary, floating, info.peak, model.plan());
  const std::vector<Target> targets = network_targets(o, figures, info.noise);
  print_steps("binary network:", binary.rows, info.peak);
  print_steps("float32 twin:", floating.rows, info.peak);
  print_kernels(binary);
  print_summary(o, binary, floating, figures, check, twin_check, model.plan(), info.peak);
  if (defaults)
    print_tuning(model.plan(), defaults->plan(), binary, default_configs);
  else
    std::printf("no step is tuned on this device (xnorcl-tune, or --tune, tunes them)\n");
  print_targets(targets);
  print_noise(info.noise);
  const Report report{o,     info,       binary,       floating, figures,
                      check, twin_check, model.plan(), targets,  defaults ? &default_configs : nullptr};
  if (!o.json_path.empty()) write_json(o.json_path, report);
  if (!o.csv_path.empty()) write_csv(o.csv_path, binary, floating);
  if (check.wrong() || twin_check.wrong()) return 1;
  return info.noise.noisy ? kExitNoisy : 0;
}

}  // namespace xnorcl_bench
