// SPDX-License-Identifier: Apache-2.0
// The bench's output: a table per layer, a summary with the targets, JSON (schema 1) and CSV.
// Every derived figure comes from the functions at the top, so the table, the files and the targets agree.
#include <cmath>
#include <cstdio>
#include <sstream>

#include "bench.hpp"
#include "cli.hpp"
#include "json.hpp"

namespace xnorcl_bench {

// ---- derived figures -------------------------------------------------------------------------------------

double perfect_float_ms(const Layer& layer, const Peak& peak) {
  if (peak.float_flops_per_s <= 0) return NAN;
  return 2.0 * static_cast<double>(layer.macs()) / peak.float_flops_per_s * 1e3;
}

double gemm_percent_of_peak(const Layer& layer, const BinaryResult& b, const Peak& peak) {
  if (b.status != "ok" || b.gemm.count == 0 || b.gemm.median <= 0 || peak.binary_ops_per_s <= 0) return NAN;
  return 100.0 * static_cast<double>(layer.macs()) / (b.gemm.median * 1e-3) / peak.binary_ops_per_s;
}

double binary_ms(const BinaryResult& b) {
  if (b.status != "ok") return NAN;
  if (b.device.count > 0) return b.device.median;
  return b.wall.count > 0 ? b.wall.median : NAN;
}

double gbinmac_per_s(const Layer& layer, const BinaryResult& b) {
  return static_cast<double>(layer.macs()) / (binary_ms(b) * 1e-3) * 1e-9;
}

namespace {

double float_gflops(const Layer& layer, const FloatResult& f) {
  if (f.status != "ok" || f.wall.count == 0) return NAN;
  return 2.0 * static_cast<double>(layer.macs()) / (f.wall.median * 1e-3) * 1e-9;
}

// Speed-up of the binary side (pad_value given on the command line) over CLBlast, by wall medians.
double speedup_over_float(const LayerResult& r) {
  if (r.binary.empty() || r.binary[0].status != "ok" || r.floating.status != "ok") return NAN;
  return r.floating.wall.median / r.binary[0].wall.median;
}

// Speed-up of the binary side over oneDNN on the host CPU, by wall medians (both enqueue/call to finish).
double speedup_over_onednn(const LayerResult& r) {
  if (r.binary.empty() || r.binary[0].status != "ok" || r.onednn.status != "ok") return NAN;
  return r.onednn.wall.median / r.binary[0].wall.median;
}

const BinaryResult* binary_at(const LayerResult& r, float v) {
  for (const auto& b : r.binary) {
    if (b.pad_value == v) return &b;
  }
  return nullptr;
}

// Binary time at pad_value v over the time at +1, or NaN.
double pad_ratio(const LayerResult& r, float v) {
  const BinaryResult* a = binary_at(r, v);
  const BinaryResult* one = binary_at(r, 1.0f);
  if (!a || !one || a->status != "ok" || one->status != "ok") return NAN;
  return binary_ms(*a) / binary_ms(*one);
}

std::string fmt(const char* format, double v) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string pad_label(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%g", v > 0 ? "+" : "", static_cast<double>(v));
  return buf;
}

void print_stats_row(const char* side, const char* stage, const Stats& s) {
  if (s.count == 0) {
    std::printf("  %-14s %-20s %10s %10s %10s\n", side, stage, "n/a", "n/a", "n/a");
    return;
  }
  std::printf("  %-14s %-20s %10.3f %10.3f %10.3f\n", side, stage, s.min, s.median, s.max);
}

}  // namespace

// ---- the per-layer table ---------------------------------------------------------------------------------

void print_layer_table(const RunInfo& run, const LayerResult& r) {
  const Layer& l = r.layer;
  const double macs = static_cast<double>(l.macs());
  std::printf("== %s [%s]: %s -> %s, %.2f M binary MACs, K = %lld\n", l.name.c_str(), l.origin.c_str(),
              l.describe().c_str(), xnorcl::to_string(r.output).c_str(), macs * 1e-6,
              static_cast<long long>(l.filter[1] * l.filter[2] * l.filter[3]));
  if (!r.binary.empty() && r.binary[0].status == "ok") {
    const auto& p = r.binary[0].plan;
    std::printf("  plan: %s, tile %dx%d, %d words/patch, %d chunk(s), scratch %zu bytes, kernels:",
                xnorcl::to_string(p.variant).c_str(), p.tile_m, p.tile_n, p.words_per_patch, p.chunks,
                p.scratch_bytes);
    for (const auto& k : r.binary[0].kernels) std::printf(" %s", k.c_str());
    std::printf("\n");
  }
  std::printf("  %-14s %-20s %10s %10s %10s   (ms, %zu reps)\n", "", "", "min", "median", "max",
              run.options.reps > 0 ? static_cast<std::size_t>(run.options.reps) : 0);
  for (const auto& b : r.binary) {
    const std::string side = "binary v=" + pad_label(b.pad_value);
    if (b.status != "ok") {
      std::printf("  %-14s %s: %s\n", side.c_str(), b.status.c_str(), b.message.c_str());
      continue;
    }
    const bool main_side = &b == &r.binary[0];
    if (main_side) {
      print_stats_row(side.c_str(), "packing", b.packing);
      print_stats_row("", "gemm", b.gemm);
      if (b.epilogue.count == 0) {
        std::printf("  %-14s %-20s %s\n", "", "epilogue",
                    "none: no kernel after the GEMM (pad_value in its stores)");
      } else {
        print_stats_row("", "epilogue", b.epilogue);
      }
      print_stats_row("", "device (stage sum)", b.device);
      print_stats_row("", "wall enqueue-finish", b.wall);
    } else {
      print_stats_row(side.c_str(), "wall enqueue-finish", b.wall);
    }
  }
  const auto& f = r.floating;
  if (f.status != "ok") {
    std::printf("  %-14s %s: %s\n", "float CLBlast", f.status.c_str(), f.message.c_str());
  } else {
    print_stats_row("float CLBlast", "im2col", f.im2col);
    print_stats_row("", "gemm (last kernel)", f.gemm);
    print_stats_row("", "wall enqueue-finish", f.wall);
  }
  const auto& d = r.onednn;
  if (d.status == "ok") {
    print_stats_row("float oneDNN", "wall (host CPU)", d.wall);
  } else if (d.status != "unavailable") {
    std::printf("  %-14s %s: %s\n", "float oneDNN", d.status.c_str(), d.message.c_str());
  }
  const double perfect = perfect_float_ms(l, run.peak);
  const BinaryResult* main_b = r.binary.empty() ? nullptr : &r.binary[0];
  const bool ok = main_b && main_b->status == "ok";
  std::printf("  perfect float32 conv at the FMA peak (%.1f GFLOP/s): %s ms\n",
              run.peak.float_flops_per_s * 1e-9, fmt("%.3f", perfect).c_str());
  if (ok) {
    std::printf(
        "  binary (v=%s) %s ms device, %s ms wall: %sx faster than CLBlast (wall); perfect float / binary = "
        "%sx device, %sx wall (above 1: faster than a perfect float32 conv)\n",
        pad_label(main_b->pad_value).c_str(), fmt("%.3f", binary_ms(*main_b)).c_str(),
        fmt("%.3f", main_b->wall.median).c_str(), fmt("%.2f", speedup_over_float(r)).c_str(),
        fmt("%.3f", perfect / binary_ms(*main_b)).c_str(),
        fmt("%.3f", perfect / main_b->wall.median).c_str());
    std::printf("  %s G binMAC/s in all; GEMM stage %s G binMAC/s = %s %% of the xor-popcount peak\n",
                fmt("%.1f", gbinmac_per_s(l, *main_b)).c_str(),
                fmt("%.1f", main_b->gemm.count ? macs / (main_b->gemm.median * 1e-3) * 1e-9 : NAN).c_str(),
                fmt("%.1f", gemm_percent_of_peak(l, *main_b, run.peak)).c_str());
  }
  if (f.status == "ok") {
    const double gf = float_gflops(l, f);
    std::printf(
        "  CLBlast: %s GFLOP/s = %s %% of the float32 FMA peak; checked: relative error %.2g (max-norm)\n",
        fmt("%.2f", gf).c_str(), fmt("%.1f", 100 * gf * 1e9 / run.peak.float_flops_per_s).c_str(),
        f.max_rel_error);
  }
  if (d.status == "ok") {
    std::printf("  %s: %s GFLOP/s; checked: relative error %.2g; oneDNN wall / binary wall = %sx\n",
                d.implementation.c_str(), fmt("%.2f", float_gflops(l, d)).c_str(), d.max_rel_error,
                fmt("%.2f", speedup_over_onednn(r)).c_str());
  }
  for (float v : {0.0f, 0.5f}) {
    const double ratio = pad_ratio(r, v);
    if (std::isfinite(ratio) && v != 1.0f) {
      std::printf("  pad_value %s / pad_value +1 (device medians): %.3f\n", pad_label(v).c_str(), ratio);
    }
  }
  std::printf("\n");
}

// ---- targets ---------------------------------------------------------------------------------------------

std::vector<Target> evaluate_targets(const RunInfo& run) {
  std::vector<Target> targets;
  auto add = [&](const std::string& id, const std::string& desc, const std::string& layer, double measured,
                 double required, const char* unit, bool pass, const std::string& note = "") {
    Target t;
    t.id = id;
    t.description = desc;
    t.layer = layer;
    t.measured = measured;
    t.required = required;
    t.unit = unit;
    t.status = !std::isfinite(measured) ? "MISS" : pass ? "PASS" : "MISS";
    t.note = note;
    if (!std::isfinite(measured) && note.empty())
      t.note = "no valid measurement (wrong, failed or unavailable)";
    targets.push_back(t);
  };
  const bool on_cpu = run.device.find("Portable Computing Language") != std::string::npos;
  bool measured_onednn = false;
  for (const auto& r : run.layers) {
    const std::string& o = r.layer.origin;
    const bool resnet = o == "resnet", conv2 = o == "paper conv2", example = o == "example",
               conv1 = o == "paper conv1";
    const BinaryResult* b = r.binary.empty() ? nullptr : &r.binary[0];
    const double binary = b ? binary_ms(*b) : NAN;
    if (resnet || conv2 || example) {
      const double perfect = perfect_float_ms(r.layer, run.peak);
      const double ratio = perfect / binary;  // > 1: faster than a perfect float conv
      add("faster_than_perfect_float", "binary device time < 2*MACs / float32 FMA peak", r.layer.name, ratio,
          1.0, "x", ratio > 1.0);
    }
    if (resnet || conv2 || conv1 || example) {
      const double need = (resnet || conv2) ? 10.0 : 4.0;
      const double s = speedup_over_float(r);
      std::string note =
          on_cpu ? "on PoCL this mostly measures CLBlast's untuned kernels; decisive on GPUs" : "";
      if (r.floating.status == "unavailable") note = "CLBlast unavailable";
      add(need == 10 ? "speedup_vs_clblast_10x" : "speedup_vs_clblast_4x",
          "binary at least " + fmt("%.0f", need) + "x faster than CLBlast float32", r.layer.name, s, need,
          "x", s >= need, note);
    }
    // The stretch target names conv2 and the 1x256x14x14 layer.
    if (r.onednn.status != "unavailable" && (conv2 || r.layer.name == "resnet_256x14")) {
      const double s = speedup_over_onednn(r);
      add("stretch_beat_onednn_on_cpu", "on a CPU device, faster than oneDNN's float32 convolution (wall)",
          r.layer.name, s, 1.0, "x", s > 1.0, r.onednn.implementation);
      measured_onednn = true;
    }
    if (resnet || example) {
      const double pct = b ? gemm_percent_of_peak(r.layer, *b, run.peak) : NAN;
      add("gemm_50pct_of_peak", "GEMM stage at >= 50% of the xor-popcount peak", r.layer.name, pct, 50.0, "%",
          pct >= 50.0);
    }
    if (example) {
      for (float v : {0.0f, 0.5f}) {
        const double ratio = pad_ratio(r, v);
        add("pad_value_" + fmt("%g", v) + "_vs_plus1", "pad_value " + fmt("%g", v) + " within 1.10x of +1",
            r.layer.name, ratio, 1.10, "x", ratio <= 1.10);
      }
    }
  }
  if (run.noise.noisy) {
    for (Target& t : targets) {
      if (t.status == "N/A") continue;
      t.status = kNotJudged;
      t.note = "not judged (noisy run)" + (t.note.empty() ? "" : "; " + t.note);
    }
  }
  if (!targets.empty()) {
    Target t;
    t.id = "startup_warm_10x_cold";
    t.description = "warm start at least 10x faster than cold (fresh processes)";
    t.status = "N/A";
    t.note = "measured by `xnorcl-bench startup`, not by `layers`";
    t.measured = NAN;
    t.required = 10;
    t.unit = "x";
    targets.push_back(t);
    if (!measured_onednn) {
      t.id = "stretch_beat_onednn_on_cpu";
      t.description = "on a CPU device, faster than oneDNN's float32 convolution";
      t.note =
          "not measured: needs a CPU device and a bench built with oneDNN (Debian libdnnl-dev), and "
          "paper_conv2 or resnet_256x14 in the run";
      t.required = NAN;
      targets.push_back(t);
    }
  }
  return targets;
}

// ---- summary ---------------------------------------------------------------------------------------------

void print_summary(const RunInfo& run) {
  std::printf("== Summary: %s, variant %s, medians of %d reps\n", run.device.c_str(), run.variant.c_str(),
              run.options.reps);
  std::printf("  %-20s %10s %10s %10s %9s %10s %10s %10s %8s  %s\n", "layer", "binary dev", "binary wall",
              "float wall", "speed-up", "perfect", "vs perfect", "GbinMAC/s", "GEMM %pk", "status");
  for (const auto& r : run.layers) {
    const BinaryResult* b = r.binary.empty() ? nullptr : &r.binary[0];
    const bool ok = b && b->status == "ok";
    const double perfect = perfect_float_ms(r.layer, run.peak);
    std::string status = b ? b->status : "none";
    if (r.floating.status != "ok") status += ", float " + r.floating.status;
    std::printf("  %-20s %10s %10s %10s %9s %10s %10s %10s %8s  %s\n", r.layer.name.c_str(),
                fmt("%.3f", ok ? binary_ms(*b) : NAN).c_str(), fmt("%.3f", ok ? b->wall.median : NAN).c_str(),
                fmt("%.3f", r.floating.status == "ok" ? r.floating.wall.median : NAN).c_str(),
                fmt("%.2fx", speedup_over_float(r)).c_str(), fmt("%.3f", perfect).c_str(),
                fmt("%.2fx", ok ? perfect / binary_ms(*b) : NAN).c_str(),
                fmt("%.1f", ok ? gbinmac_per_s(r.layer, *b) : NAN).c_str(),
                fmt("%.1f", ok ? gemm_percent_of_peak(r.layer, *b, run.peak) : NAN).c_str(), status.c_str());
  }
  std::printf(
      "  times in ms. binary dev: the sum of its kernels' profiling events; wall: enqueue to clFinish on "
      "the\n"
      "  host. speed-up: CLBlast wall / binary wall. perfect: 2*MACs / FMA peak. vs perfect: perfect / "
      "binary\n"
      "  dev (above 1: faster than a perfect float32 conv). GbinMAC/s from binary dev; GEMM %%pk: the GEMM\n"
      "  stage against the xor-popcount peak.\n");

  const auto targets = evaluate_targets(run);
  if (targets.empty()) {
    std::printf("\nTargets: none of the target layers is in this run\n");
  } else {
    int pass = 0, miss = 0;
    std::printf(
        "\n== Targets (variant %s%s%s)\n", run.variant.c_str(),
        run.requested_variant != "auto" ? ", forced: the targets are meant for the variant Auto picks" : "",
        run.options.reps < 20 ? "; fewer than 20 reps: indicative only" : "");
    for (const auto& t : targets) {
      if (t.status == "PASS") ++pass;
      if (t.status == "MISS") ++miss;
      std::string measured = fmt(t.unit == "%" ? "%.1f" : "%.2f", t.measured);
      if (std::isfinite(t.measured)) measured += t.unit;
      std::string required =
          (t.id.rfind("pad_value", 0) == 0 ? "<= " : ">= ") + fmt("%.2f", t.required) + t.unit;
      if (t.id == "faster_than_perfect_float" || t.id == "stretch_beat_onednn_on_cpu") required = "> 1.00x";
      const bool shown = t.status != "N/A";
      std::printf("  %-4s %-27s %-15s measured %-10s need %-9s %s%s%s\n",
                  t.status == kNotJudged ? "-" : t.status.c_str(), t.id.c_str(), t.layer.c_str(),
                  shown ? measured.c_str() : "-", shown ? required.c_str() : "-", t.description.c_str(),
                  t.note.empty() ? "" : "; ", t.note.c_str());
    }
    if (run.noise.noisy) {
      std::printf("  targets not judged: noisy run\n");
    } else {
      std::printf("  %d PASS, %d MISS\n", pass, miss);
    }
  }
  print_noise(run.noise);
  print_invalid(run);
}

bool invalid_run(const RunInfo& run) {
  return !run.invalid.empty() && !run.options.quick;
}

void print_invalid(const RunInfo& run) {
  if (run.invalid.empty()) return;
  if (run.options.quick) {
    // A smoke run's peak kernels are short, so the peak is often measured low: not a failure there.
    std::printf(
        "\nnote: measured above 100%% of the peak, which a --quick run's short peak kernels often measure "
        "too low; its percentages mean nothing (run without --quick to measure):\n");
  } else {
    std::printf("\nRUN INVALID: measured above 100%% of the peak (the peak was mismeasured):\n");
  }
  for (const auto& s : run.invalid) std::printf("  %s\n", s.c_str());
}

void print_noise(const NoiseVerdict& noise) {
  if (!noise.judged) {
    std::printf("\nnoise: not checked: %s\n", noise.why_not_judged.c_str());
  } else if (!noise.noisy) {
    std::printf(
        "\nnoise: quiet run (peaks moved %.0f%% during the run, limit %.0f%%; widest middle half of a "
        "timed series %.2fx, limit %.2fx)\n",
        100 * noise.peak_drift, 100 * kPeakDriftLimit, noise.worst_spread, kSpreadLimit);
  } else {
    std::printf(
        "\nNOISY RUN: other work on this machine disturbed the measurements, so the targets are not "
        "judged (exit status %d):\n",
        kExitNoisy);
    for (const auto& r : noise.reasons) std::printf("  %s\n", r.c_str());
    std::printf("  Run again when the machine is quiet; --quiet-check waits for that before measuring.\n");
  }
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
      .value("q1", s.q1)
      .value("q3", s.q3)
      .value("count", s.count);
  j.end_object();
}

void json_shape(JsonWriter& j, const char* key, const xnorcl::Shape& s) {
  j.begin_array(key);
  for (auto d : s) j.value(nullptr, static_cast<std::int64_t>(d));
  j.end_array();
}

void json_pair(JsonWriter& j, const char* key, const std::array<int, 2>& p) {
  j.begin_array(key).value(nullptr, p[0]).value(nullptr, p[1]).end_array();
}

void json_peak_entries(JsonWriter& j, const char* key, const std::vector<PeakEntry>& entries) {
  j.begin_array(key);
  for (const auto& e : entries) {
    j.begin_object().value("type", e.type).value("available", e.available);
    if (e.available) {
      j.value("gops_per_s", e.ops_per_s * 1e-9).value("best_ms", e.best_ms).value("work_items", e.work_items);
      j.value("iterations", e.iterations).value("kernel", e.kernel);
      j.begin_object("kernels");
      for (const auto& k : e.kernels) j.value(k.first.c_str(), k.second * 1e-9);
      j.end_object();
    } else {
      j.value("note", e.note);
    }
    j.end_object();
  }
  j.end_array();
}

}  // namespace

void json_noise(JsonWriter& j, const NoiseVerdict& noise) {
  j.begin_object("noise").value("judged", noise.judged).value("noisy", noise.noisy);
  if (!noise.judged) j.value("why_not_judged", noise.why_not_judged);
  if (noise.judged)
    j.value("peak_drift", noise.peak_drift).value("worst_quartile_spread", noise.worst_spread);
  j.value("peak_drift_limit", kPeakDriftLimit).value("quartile_spread_limit", kSpreadLimit);
  j.begin_array("reasons");
  for (const auto& r : noise.reasons) j.value(nullptr, r);
  j.end_array();
  j.end_object();
}

void write_json(const RunInfo& run, const std::string& path) {
  std::ostringstream out;
  JsonWriter j(out);
  j.begin_object();
  j.value("schema", 1).value("tool", "xnorcl-bench layers").value("library_version", run.library_version);
  j.value("device", run.device).value("platform", run.platform).value("device_version", run.device_version);
  j.value("driver", run.driver).value("variant", run.variant).value("variant_reason", run.variant_reason);
  j.value("native_popcount", run.native_popcount);
  j.value("requested_variant", run.requested_variant);
  j.begin_object("settings")
      .value("warmup", run.options.warmup)
      .value("reps", run.options.reps)
      .value("pad_value", static_cast<double>(run.options.pad_value))
      .value("quick", run.options.quick)
      .value("timing",
             "wall: enqueue to clFinish on the host; stages: OpenCL profiling events; binary_ms: median "
             "of the stage sum (headline, G binMAC/s, pad_value ratios); speed-up vs CLBlast: wall / wall")
      .end_object();
  j.begin_object("peak");
  json_peak_entries(j, "xor_popcount", run.peak.xor_popcount);
  json_peak_entries(j, "fma", run.peak.fma);
  j.value("binary_gops_per_s", run.peak.binary_ops_per_s * 1e-9).value("binary_type", run.peak.binary_type);
  j.value("float_gflops_per_s", run.peak.float_flops_per_s * 1e-9).value("float_type", run.peak.float_type);
  j.value("launches_per_type", 5 * run.peak.measurements);
  j.end_object();

  j.begin_array("layers");
  for (const auto& r : run.layers) {
    const Layer& l = r.layer;
    j.begin_object().value("name", l.name).value("origin", l.origin).value("description", l.describe());
    json_shape(j, "input", l.input);
    json_shape(j, "filter", l.filter);
    json_shape(j, "output", r.output);
    json_pair(j, "strides", l.strides);
    json_pair(j, "pads_begin", l.pads);
    json_pair(j, "pads_end", l.pads);
    json_pair(j, "dilations", l.dilations);
    j.value("binary_macs", static_cast<std::int64_t>(l.macs()));
    j.value("float_flops", 2.0 * static_cast<double>(l.macs()));
    j.value("perfect_float_ms", perfect_float_ms(l, run.peak));
    j.value("speedup_vs_clblast", speedup_over_float(r));
    j.begin_array("binary");
    for (const auto& b : r.binary) {
      j.begin_object().value("pad_value", static_cast<double>(b.pad_value)).value("status", b.status);
      if (!b.message.empty()) j.value("message", b.message);
      if (b.status == "ok") {
        j.value("plan", b.plan.to_string()).value("plan_variant", xnorcl::to_string(b.plan.variant));
        j.begin_array("kernels");
        for (const auto& k : b.kernels) j.value(nullptr, k);
        j.end_array();
        json_stats(j, "wall_ms", b.wall);
        json_stats(j, "device_ms", b.device);
        json_stats(j, "packing_ms", b.packing);
        json_stats(j, "gemm_ms", b.gemm);
        json_stats(j, "epilogue_ms", b.epilogue);
        j.value("gbinmac_per_s", gbinmac_per_s(l, b));
        j.value("gemm_percent_of_xor_peak", gemm_percent_of_peak(l, b, run.peak));
        j.value("binary_ms", binary_ms(b));
        j.value("perfect_float_over_binary", perfect_float_ms(l, run.peak) / binary_ms(b));
        j.value("perfect_float_over_binary_wall", perfect_float_ms(l, run.peak) / b.wall.median);
        j.value("ratio_vs_pad_plus1", pad_ratio(r, b.pad_value));
      }
      j.end_object();
    }
    j.end_array();
    const auto& f = r.floating;
    j.begin_object("float").value("library", "CLBlast Im2col + Gemm").value("status", f.status);
    if (!f.message.empty()) j.value("message", f.message);
    if (f.status == "ok") {
      j.value("max_rel_error", f.max_rel_error);
      json_stats(j, "wall_ms", f.wall);
      json_stats(j, "im2col_ms", f.im2col);
      json_stats(j, "gemm_last_kernel_ms", f.gemm);
      const double gf = float_gflops(l, f);
      j.value("gflops_per_s", gf).value("percent_of_float_peak", 100 * gf * 1e9 / run.peak.float_flops_per_s);
    }
    j.end_object();
    const auto& d = r.onednn;
    j.begin_object("onednn")
        .value("library", "oneDNN convolution_forward (host CPU)")
        .value("status", d.status);
    if (!d.message.empty()) j.value("message", d.message);
    if (d.status == "ok") {
      j.value("implementation", d.implementation).value("max_rel_error", d.max_rel_error);
      json_stats(j, "wall_ms", d.wall);
      j.value("gflops_per_s", float_gflops(l, d)).value("binary_speedup_wall", speedup_over_onednn(r));
    }
    j.end_object();
    j.end_object();
  }
  j.end_array();

  j.begin_array("targets");
  for (const auto& t : evaluate_targets(run)) {
    j.begin_object().value("id", t.id).value("description", t.description).value("layer", t.layer);
    j.value("measured", t.measured)
        .value("required", t.required)
        .value("unit", t.unit)
        .value("status", t.status);
    if (!t.note.empty()) j.value("note", t.note);
    j.end_object();
  }
  j.end_array();
  json_noise(j, run.noise);
  j.value("valid", run.invalid.empty());
  j.begin_array("invalid_reasons");
  for (const auto& s : run.invalid) j.value(nullptr, s);
  j.end_array();
  j.end_object();
  xnorcl_cli::write_output_file(path, out.str());
}

// ---- CSV -------------------------------------------------------------------------------------------------

void write_csv(const RunInfo& run, const std::string& path) {
  std::ostringstream out;
  out << "layer,description,binary_macs,side,pad_value,stage,status,min_ms,median_ms,max_ms,reps,device,"
         "variant\n";
  auto row = [&](const LayerResult& r, const char* side, const std::string& pad, const char* stage,
                 const std::string& status, const Stats& s) {
    out << r.layer.name << ",\"" << r.layer.describe() << "\"," << r.layer.macs() << "," << side << "," << pad
        << "," << stage << "," << status << ",";
    if (s.count) {
      out << fmt("%.6f", s.min) << "," << fmt("%.6f", s.median) << "," << fmt("%.6f", s.max) << ","
          << s.count;
    } else {
      out << ",,,0";
    }
    out << ",\"" << run.device << "\"," << run.variant << "\n";
  };
  for (const auto& r : run.layers) {
    for (const auto& b : r.binary) {
      const std::string pad = fmt("%g", b.pad_value);
      row(r, "binary", pad, "wall", b.status, b.wall);
      row(r, "binary", pad, "device", b.status, b.device);
      row(r, "binary", pad, "packing", b.status, b.packing);
      row(r, "binary", pad, "gemm", b.status, b.gemm);
      row(r, "binary", pad, "epilogue", b.status, b.epilogue);
    }
    row(r, "float", "0", "wall", r.floating.status, r.floating.wall);
    row(r, "float", "0", "im2col", r.floating.status, r.floating.im2col);
    row(r, "float", "0", "gemm_last_kernel", r.floating.status, r.floating.gemm);
    row(r, "onednn", "0", "wall", r.onednn.status, r.onednn.wall);
  }
  xnorcl_cli::write_output_file(path, out.str());
}

}  // namespace xnorcl_bench
