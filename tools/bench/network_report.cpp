// SPDX-License-Identifier: Apache-2.0
// The output of `xnorcl-bench network`: the per-layer table (the paper's Table 2 analog), the whole-network
// times beside the paper's Table 1, the network targets, JSON (schema 1) and CSV. Every derived
// figure comes from the functions at the top, so the table, the files and the targets agree.
#include <cmath>
#include <cstdio>
#include <fstream>

#include "json.hpp"
#include "network.hpp"

namespace xnorcl_bench {

namespace {

constexpr double kSpeedupTarget = 7.4;  // at least 7.4x on PoCL (the paper: 7.2x on a GTX1080)

std::string fmt(const char* format, double v) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

double median_or_nan(const Stats& s) {
  return s.count > 0 ? s.median : NAN;
}

// Whole-network speed-up by wall medians: CLBlast's Gemm and Gemv events cover only their last kernel, so
// the float network's event sum leaves out its helper kernels; wall time covers everything on both sides.
double speedup_wall(const NetworkRun& run) {
  if (run.binary.status != "ok" || run.floating.status != "ok") return NAN;
  return median_or_nan(run.floating.wall) / median_or_nan(run.binary.wall);
}
// By minima: on a shared, loaded machine other processes only ever add time, so the minima show what the
// device can do; informational (the target uses medians).
double speedup_wall_min(const NetworkRun& run) {
  if (run.binary.status != "ok" || run.floating.status != "ok" || run.binary.wall.count == 0 ||
      run.floating.wall.count == 0)
    return NAN;
  return run.floating.wall.min / run.binary.wall.min;
}
double speedup_device(const NetworkRun& run) {
  if (run.binary.status != "ok" || run.floating.status != "ok") return NAN;
  return median_or_nan(run.floating.device) / median_or_nan(run.binary.device);
}

// The binary time compared with the perfect float network: the median device time (sum of the events), as
// `layers` compares a layer with a perfect float convolution (a device figure); wall without profiling.
double binary_network_ms(const NetworkRun& run) {
  if (run.binary.status != "ok") return NAN;
  return run.binary.device.count > 0 ? run.binary.device.median : median_or_nan(run.binary.wall);
}

}  // namespace

double network_perfect_float_ms(const NetworkRun& run) {
  if (run.info.peak.float_flops_per_s <= 0) return NAN;
  return 2.0 * static_cast<double>(run.macs) / run.info.peak.float_flops_per_s * 1e3;
}

std::vector<NetworkTarget> evaluate_network_targets(const NetworkRun& run) {
  std::vector<NetworkTarget> targets;
  auto add = [&](const char* id, const std::string& description, double measured, double required, bool pass,
                 const std::string& note) {
    NetworkTarget t;
    t.id = id;
    t.description = description;
    t.measured = measured;
    t.required = required;
    t.status = std::isfinite(measured) && pass ? "PASS" : "MISS";
    t.note = std::isfinite(measured) ? note : "no valid measurement (wrong, failed or unavailable)";
    if (run.info.noise.noisy) {
      t.status = kNotJudged;
      t.note = "not judged (noisy run); " + t.note;
    }
    targets.push_back(t);
  };
  const double s = speedup_wall(run);
  add("network_speedup_vs_float32", "whole network at least 7.4x faster than its float32 equivalent", s,
      kSpeedupTarget, s >= kSpeedupTarget, "float32 wall / binary wall, medians");
  const double perfect = network_perfect_float_ms(run) / binary_network_ms(run);
  add("network_faster_than_perfect_float32",
      "binary network faster than 2 * MACs / float32 FMA peak (a perfect float32 network)", perfect, 1.0,
      perfect > 1.0,
      "perfect / binary device median; by wall median: " +
          fmt("%.2fx", network_perfect_float_ms(run) / median_or_nan(run.binary.wall)));
  return targets;
}

// ---- the report ------------------------------------------------------------------------------------------

void print_network_report(const NetworkRun& run) {
  const RunInfo& info = run.info;
  const Peak& peak = info.peak;
  print_peak_table(peak);
  std::printf(
      "\n== The vehicle classifier of the paper (Khan, Huttunen, Boutellier: \"Binarized Convolutional "
      "Neural Networks for Efficient Inference on GPUs\", EUSIPCO 2018), batch %lld: %.2f M MACs "
      "(convolutions and FCs)\n",
      static_cast<long long>(run.batch), static_cast<double>(run.macs) * 1e-6);
  std::printf("  binary: xnorcl::Network, variant %s; %s\n", info.variant.c_str(),
              run.binary.status == "ok"
                  ? "output bitwise equal to the host reference network before timing and after the last rep"
                  : (run.binary.status + ": " + run.binary.message).c_str());
  std::printf("          packed activations of the reference hold %.0f-%.0f%% ones\n",
              100 * run.binary_ones_min, 100 * run.binary_ones_max);
  std::printf(
      "  float32: CLBlast Im2col + Gemm, Gemv, and batch_norm_sign / max_pool kernels, same queue; %s\n",
      run.floating.status == "ok"
          ? ("every layer checked against the host before timing and after the last rep (max relative "
             "error " +
             fmt("%.2g", run.float_max_rel_error) + ", tolerance 1e-4)")
                .c_str()
          : (run.floating.status + ": " + run.floating.message).c_str());
  std::printf("  \"equivalent\": %s\n", run.equivalence.c_str());

  // Per layer, in microseconds like the paper's Table 2.
  std::printf("\n== Per layer: device time from profiling events, medians of %d reps, microseconds\n",
              info.options.reps);
  std::printf("  %-15s %-28s %11s %11s %9s | %-23s\n", "layer", "", "float32", "binary", "speed-up",
              "paper GTX1080 cuDNN/BCNN");
  double float_sum = 0, binary_sum = 0;
  for (const auto& r : run.rows) {
    const double f = median_or_nan(r.floating) * 1e3, b = median_or_nan(r.binary) * 1e3;
    if (std::isfinite(f)) float_sum += f;
    if (std::isfinite(b)) binary_sum += b;
    std::string paper = "";
    if (r.paper_float_us > 0) {
      paper = fmt("%.2f", r.paper_float_us) + " / " + fmt("%.2f", r.paper_binary_us) + " = " +
              fmt("%.2fx", r.paper_float_us / r.paper_binary_us);
    }
    // A layer the binary network fused into the convolution before it has no kernel of its own: its work is
    // in that convolution's gemm row.
    const bool fused = r.binary_kernels.empty() && run.binary.status == "ok";
    std::printf("  %-15s %-28s %11s %11s %9s | %s\n", r.name.c_str(), r.description.c_str(),
                fmt("%.1f", f).c_str(), fused ? "fused" : fmt("%.1f", b).c_str(),
                fused ? "-" : fmt("%.2fx", f / b).c_str(), paper.c_str());
  }
  std::printf("  %-15s %-28s %11s %11s %9s |\n", "sum", "", fmt("%.1f", float_sum).c_str(),
              fmt("%.1f", binary_sum).c_str(), fmt("%.2fx", float_sum / binary_sum).c_str());
  std::printf("  kernels per row, median us (float32 | binary):\n");
  auto list = [](const std::vector<std::pair<std::string, Stats>>& kernels) {
    std::string s;
    for (const auto& [name, stats] : kernels)
      s += (s.empty() ? "" : ", ") + name + " " + fmt("%.1f", median_or_nan(stats) * 1e3);
    return s;
  };
  for (const auto& r : run.rows) {
    std::printf("    %-15s %s | %s\n", r.name.c_str(), list(r.float_kernels).c_str(),
                r.binary_kernels.empty() && run.binary.status == "ok"
                    ? "(fused into the convolution's GEMM epilogue)"
                    : list(r.binary_kernels).c_str());
  }
  std::printf(
      "  (CLBlast's Gemm and Gemv events cover their last kernel only; the wall times below cover all)\n");

  // Whole network.
  std::printf("\n== Whole network, ms %26s %10s %10s\n", "min", "median", "max");
  auto row = [](const char* label, const NetworkSide& side, const Stats& s) {
    if (side.status != "ok") {
      std::printf("  %-36s %s: %s\n", label, side.status.c_str(), side.message.c_str());
    } else if (s.count == 0) {
      std::printf("  %-36s %10s %10s %10s\n", label, "n/a", "n/a", "n/a");
    } else {
      std::printf("  %-36s %10.3f %10.3f %10.3f\n", label, s.min, s.median, s.max);
    }
  };
  row("binary   wall enqueue-finish", run.binary, run.binary.wall);
  row("binary   device (event sum)", run.binary, run.binary.device);
  row("float32  wall enqueue-finish", run.floating, run.floating.wall);
  row("float32  device (event sum)", run.floating, run.floating.device);
  const double perfect = network_perfect_float_ms(run);
  std::printf("  perfect float32 network at the FMA peak (%.1f GFLOP/s, %s): 2 * %.2f M MACs = %s ms\n",
              peak.float_flops_per_s * 1e-9, peak.float_type.c_str(), static_cast<double>(run.macs) * 1e-6,
              fmt("%.3f", perfect).c_str());
  std::printf(
      "  SPEED-UP binary over float32: %s (wall medians), %s (device event sum medians); by wall minima %s\n",
      fmt("%.2fx", speedup_wall(run)).c_str(), fmt("%.2fx", speedup_device(run)).c_str(),
      fmt("%.2fx", speedup_wall_min(run)).c_str());
  std::printf(
      "  perfect float32 / binary: %s (device median), %s (wall median); above 1: faster than a "
      "perfect float32 network\n",
      fmt("%.2fx", perfect / binary_network_ms(run)).c_str(),
      fmt("%.2fx", perfect / median_or_nan(run.binary.wall)).c_str());
  std::printf(
      "  paper (Table 1, batch 1): GTX1080 7.2x with binarized input (BCNN 55.63 us vs cuDNN 401.83 us;\n"
      "    3.9x without: BCNN 102.39 us); Mali-T860 1.7x (Arm CL 29.61 ms vs BCNN 17.58 ms); Tegra X2 5.5x\n"
      "    (cuDNN 2.27 ms vs BCNN 0.41 ms). xnorcl's conv1 thresholds its input: the binarized-input "
      "case.\n");

  // Targets.
  std::printf("\n== Targets (variant %s%s%s)\n", info.variant.c_str(),
              info.requested_variant != "auto" ? ", forced: the targets judge the variant Auto picks" : "",
              info.options.reps < 20 ? "; fewer than 20 reps: indicative only" : "");
  int pass = 0, miss = 0;
  for (const auto& t : evaluate_network_targets(run)) {
    pass += t.status == "PASS";
    miss += t.status == "MISS";
    std::printf("  %-4s %-36s measured %-8s need %s%-6s %s; %s\n",
                t.status == kNotJudged ? "-" : t.status.c_str(), t.id.c_str(),
                fmt("%.2fx", t.measured).c_str(), t.id == "network_speedup_vs_float32" ? ">= " : "> ",
                fmt("%.2fx", t.required).c_str(), t.description.c_str(), t.note.c_str());
  }
  if (info.noise.noisy) {
    std::printf("  targets not judged: noisy run\n");
  } else {
    std::printf("  %d PASS, %d MISS\n", pass, miss);
  }
  print_noise(info.noise);
  print_invalid(info);
}

// ---- JSON ------------------------------------------------------------------------------------------------

namespace {

void json_stats(JsonWriter& j, const char* key, const Stats& s) {
  if (s.count == 0) {
    j.null(key);
    return;
  }
  j.begin_object(key)
      .value("min", s.min)
      .value("median", s.median)
      .value("max", s.max)
      .value("count", s.count);
  j.end_object();
}

void json_side(JsonWriter& j, const char* key, const NetworkSide& s, const char* what) {
  j.begin_object(key).value("implementation", what).value("status", s.status);
  if (!s.message.empty()) j.value("message", s.message);
  json_stats(j, "wall_ms", s.wall);
  json_stats(j, "device_ms", s.device);
  j.end_object();
}

void json_kernels(JsonWriter& j, const char* key, const std::vector<std::pair<std::string, Stats>>& kernels) {
  j.begin_array(key);
  for (const auto& [name, stats] : kernels) {
    j.begin_object().value("kernel", name);
    json_stats(j, "ms", stats);
    j.end_object();
  }
  j.end_array();
}

void json_strings(JsonWriter& j, const char* key, const std::vector<std::string>& v) {
  j.begin_array(key);
  for (const auto& s : v) j.value(nullptr, s);
  j.end_array();
}

}  // namespace

void write_network_json(const NetworkRun& run, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  const RunInfo& info = run.info;
  JsonWriter j(out);
  j.begin_object();
  j.value("schema", 1).value("tool", "xnorcl-bench network").value("library_version", info.library_version);
  j.value("device", info.device)
      .value("platform", info.platform)
      .value("device_version", info.device_version);
  j.value("driver", info.driver).value("variant", info.variant).value("variant_reason", info.variant_reason);
  j.value("requested_variant", info.requested_variant);
  j.begin_object("settings")
      .value("warmup", info.options.warmup)
      .value("reps", info.options.reps)
      .value("batch", static_cast<std::int64_t>(run.batch))
      .value("quick", info.options.quick)
      .value("timing",
             "wall: enqueue to clFinish on the host; per layer: OpenCL profiling events (CLBlast's Gemm and "
             "Gemv: last kernel only); speed-up: float32 wall / binary wall medians; perfect float32 vs the "
             "binary device median")
      .end_object();
  j.begin_object("peak");
  for (const auto* entries : {&info.peak.xor_popcount, &info.peak.fma}) {
    j.begin_array(entries == &info.peak.fma ? "fma" : "xor_popcount");
    for (const auto& e : *entries) {
      j.begin_object().value("type", e.type).value("available", e.available);
      if (e.available) j.value("gops_per_s", e.ops_per_s * 1e-9).value("best_ms", e.best_ms);
      j.end_object();
    }
    j.end_array();
  }
  j.value("binary_gops_per_s", info.peak.binary_ops_per_s * 1e-9).value("binary_type", info.peak.binary_type);
  j.value("float_gflops_per_s", info.peak.float_flops_per_s * 1e-9).value("float_type", info.peak.float_type);
  j.end_object();

  j.begin_object("network")
      .value("name", "vehicle_classifier")
      .value("batch", static_cast<std::int64_t>(run.batch))
      .value("macs", run.macs)
      .value("float_flops", 2.0 * static_cast<double>(run.macs))
      .value("perfect_float_ms", network_perfect_float_ms(run))
      .value("float_equivalent", run.equivalence)
      .value("float_max_rel_error", run.float_max_rel_error)
      .value("ones_fraction_min", run.binary_ones_min)
      .value("ones_fraction_max", run.binary_ones_max);
  json_side(j, "binary", run.binary, "xnorcl::Network");
  json_side(j, "float", run.floating, "CLBlast Im2col + Gemm, Gemv; batch_norm_sign and max_pool kernels");
  j.value("speedup_wall", speedup_wall(run)).value("speedup_device", speedup_device(run));
  j.value("speedup_wall_min", speedup_wall_min(run));
  j.value("perfect_float_over_binary", network_perfect_float_ms(run) / binary_network_ms(run));
  j.value("perfect_float_over_binary_wall", network_perfect_float_ms(run) / median_or_nan(run.binary.wall));
  j.end_object();

  j.begin_array("layers");
  for (const auto& r : run.rows) {
    j.begin_object().value("name", r.name).value("description", r.description);
    j.value("layer_index", r.layer).value("part", r.part);
    json_stats(j, "float_ms", r.floating);
    json_stats(j, "binary_ms", r.binary);
    j.value("speedup", median_or_nan(r.floating) / median_or_nan(r.binary));
    json_kernels(j, "float_kernels", r.float_kernels);
    json_kernels(j, "binary_kernels", r.binary_kernels);
    if (r.paper_float_us > 0) {
      j.value("paper_gtx1080_cudnn_us", r.paper_float_us).value("paper_gtx1080_bcnn_us", r.paper_binary_us);
    }
    j.end_object();
  }
  j.end_array();

  j.begin_object("paper")
      .value("gtx1080_cudnn_us", 401.83)
      .value("gtx1080_bcnn_us", 102.39)
      .value("gtx1080_bcnn_binarized_input_us", 55.63)
      .value("gtx1080_speedup_binarized_input", 401.83 / 55.63)
      .value("mali_t860_armcl_ms", 29.61)
      .value("mali_t860_bcnn_binarized_input_ms", 17.58)
      .value("mali_t860_speedup", 29.61 / 17.58)
      .end_object();

  j.begin_array("targets");
  for (const auto& t : evaluate_network_targets(run)) {
    j.begin_object().value("id", t.id).value("description", t.description);
    j.value("measured", t.measured)
        .value("required", t.required)
        .value("unit", "x")
        .value("status", t.status);
    j.value("note", t.note);
    j.end_object();
  }
  j.end_array();
  json_noise(j, info.noise);
  j.value("valid", info.invalid.empty());
  json_strings(j, "invalid_reasons", info.invalid);
  j.end_object();
  if (!out) throw std::runtime_error("writing " + path + " failed");
}

// ---- CSV -------------------------------------------------------------------------------------------------

void write_network_csv(const NetworkRun& run, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << "row,description,side,measure,status,min_ms,median_ms,max_ms,reps,batch,device,variant\n";
  auto line = [&](const std::string& name, const std::string& description, const char* side,
                  const char* measure, const std::string& status, const Stats& s) {
    out << name << ",\"" << description << "\"," << side << "," << measure << "," << status << ",";
    if (s.count) {
      out << fmt("%.6f", s.min) << "," << fmt("%.6f", s.median) << "," << fmt("%.6f", s.max) << ","
          << s.count;
    } else {
      out << ",,,0";
    }
    out << "," << run.batch << ",\"" << run.info.device << "\"," << run.info.variant << "\n";
  };
  for (const auto& r : run.rows) {
    line(r.name, r.description, "float32", "device", run.floating.status, r.floating);
    line(r.name, r.description, "binary", "device", run.binary.status, r.binary);
  }
  line("network", "whole network", "float32", "wall", run.floating.status, run.floating.wall);
  line("network", "whole network", "float32", "device", run.floating.status, run.floating.device);
  line("network", "whole network", "binary", "wall", run.binary.status, run.binary.wall);
  line("network", "whole network", "binary", "device", run.binary.status, run.binary.device);
  if (!out) throw std::runtime_error("writing " + path + " failed");
}

}  // namespace xnorcl_bench
