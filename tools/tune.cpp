// SPDX-License-Identifier: Apache-2.0
// xnorcl-tune: times the kernel configurations of each distinct step of a model on the device and keeps the
// fastest in the runtime's tuning file, which later runs on this device read (docs/tuning.md).
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>

#include "cli.hpp"
#include "xnorcl/xnorcl.hpp"

namespace {

const char* const kUsage =
    "usage: xnorcl-tune [options] MODEL.xnn\n"
    "       xnorcl-tune [options] --model bireal18|resnet18|vehicle\n"
    "\n"
    "Times the kernel configurations of each distinct step of the model on the OpenCL device and keeps the\n"
    "fastest (never one slower than the default) in the tuning file, which later runs read.\n"
    "\n"
    "  --model NAME     a built-in network instead of a file (bireal18 and resnet18 at --size)\n"
    "  --mode M         fast (the default: a handful of configurations per step), normal or exhaustive\n"
    "  --size S         bireal18 / resnet18 input height and width, 32 to 1024 (default 224)\n"
    "  --batch B        images per run of the built-in networks, 1 to 64 (default 1)\n"
    "  --reps N         timed runs per configuration, 1 to 1000 (default: 5 fast, 9 normal, 15 exhaustive)\n"
    "  --no-store       measure and report, but write no tuning file\n"
    "  --show           tune nothing: print the tuning file in use and which steps of the model it tunes\n"
    "  -h, --help       this text\n"
    "  --version        the version of xnorcl-tune and of the library\n"
    "\n"
    "Ctrl-C stops the search and keeps what was measured. The device is XNORCL_DEVICE's, else the first "
    "GPU,\n"
    "accelerator or CPU; the tuning file is XNORCL_TUNING_FILE, else one beside the program cache.\n";

struct Arguments {
  std::string model, file;
  xnorcl::TuneSearch search = xnorcl::TuneSearch::Fast;
  std::int64_t size = 224, batch = 1, reps = 0;
  bool store = true, show = false;
};

Arguments parse(int argc, char** argv) {
  Arguments a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw xnorcl_cli::UsageError(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--model") {
      a.model = value();
      if (a.model != "bireal18" && a.model != "resnet18" && a.model != "vehicle")
        throw xnorcl_cli::UsageError("--model takes bireal18, resnet18 or vehicle, not '" + a.model + "'");
    } else if (arg == "--mode") {
      const std::string m = value();
      const auto search = xnorcl::parse_tune_search(m);
      if (!search) throw xnorcl_cli::UsageError("--mode takes fast, normal or exhaustive, not '" + m + "'");
      a.search = *search;
    } else if (arg == "--size") {
      a.size = xnorcl_cli::parse_int("--size", value(), 32, 1024);
    } else if (arg == "--batch") {
      a.batch = xnorcl_cli::parse_int("--batch", value(), 1, 64);
    } else if (arg == "--reps") {
      a.reps = xnorcl_cli::parse_int("--reps", value(), 1, 1000);
    } else if (arg == "--no-store") {
      a.store = false;
    } else if (arg == "--show") {
      a.show = true;
    } else if (!arg.empty() && arg[0] == '-') {
      throw xnorcl_cli::UsageError("unknown option '" + arg + "'");
    } else if (a.file.empty()) {
      a.file = arg;
    } else {
      throw xnorcl_cli::UsageError("one model at a time: '" + a.file + "' and '" + arg + "'");
    }
  }
  if (a.model.empty() == a.file.empty())
    throw xnorcl_cli::UsageError("give a MODEL.xnn file or --model NAME");
  return a;
}

xnorcl::Graph model_graph(const Arguments& a) {
  if (!a.file.empty()) return xnorcl::load_graph(a.file);
  if (a.model == "vehicle") return xnorcl::network_graph(xnorcl::vehicle_classifier(1, a.batch).spec);
  xnorcl::ModelOptions m;
  m.batch = a.batch;
  m.height = m.width = a.size;
  return a.model == "bireal18" ? xnorcl::bireal18(m) : xnorcl::resnet18_binary(m);
}

std::atomic<bool> interrupted{false};

// A bar on stderr, redrawn in place: "[#####.....] 12/40 round 3 of 7: 5 candidates".
void draw(const xnorcl::TuneProgress& p) {
  constexpr std::size_t kWidth = 30;
  const std::size_t filled = p.total ? p.done * kWidth / p.total : kWidth;
  std::fprintf(stderr, "\r[%s%s] %zu/%zu %-50s", std::string(filled, '#').c_str(),
               std::string(kWidth - filled, '.').c_str(), p.done, p.total, p.what.c_str());
  std::fflush(stderr);
}

void print_report(const xnorcl::TuneReport& r) {
  std::printf("%-10s %-10s %-24s %s\n", "default ms", "tuned ms", "configuration", "shape class (steps)");
  for (const xnorcl::TunedStep& t : r.classes) {
    std::string steps;
    for (const std::string& s : t.steps) steps += (steps.empty() ? "" : ", ") + s;
    std::printf("%10.3f %10.3f %-24s %s (%s)\n", t.default_ms, t.best_ms,
                (t.best_config == t.default_config ? "default " + t.best_config : t.best_config).c_str(),
                t.shape_class.c_str(), steps.c_str());
  }
  std::printf("whole model: %.3f ms default, %.3f ms tuned (median device time per run)\n", r.default_ms,
              r.tuned_ms);
  std::printf("tuned in %.1f s%s\n", r.seconds, r.stopped ? " (stopped early: Ctrl-C)" : "");
  if (!r.file.empty())
    std::printf("results stored in %s\n", r.file.c_str());
  else
    std::printf("results not stored (--no-store, or no tuning file: the program cache is off)\n");
}

// The model's plan on this runtime: each tunable step and the configuration it runs, tuned or default.
void show(const xnorcl::Runtime& rt, const xnorcl::Graph& graph) {
  const std::string file = xnorcl::tuning_file(rt);
  std::printf("tuning file: %s\n", file.empty() ? "none (the program cache is off)" : file.c_str());
  const xnorcl::Model model(rt, graph);
  std::size_t tuned = 0, tunable = 0;
  for (const xnorcl::GraphPlan::Step& s : model.plan().steps) {
    if (s.tuning.empty()) continue;
    ++tunable;
    tuned += s.tuning.rfind("tuned ", 0) == 0;
    std::printf("  %-34s %s\n", s.node.c_str(), s.tuning.c_str());
  }
  std::printf("%zu of %zu tunable steps run a tuned configuration\n", tuned, tunable);
}

}  // namespace

int main(int argc, char** argv) {
  if (xnorcl_cli::answered_help_or_version(argc, argv, "xnorcl-tune", kUsage)) return 0;
  Arguments args;
  try {
    args = parse(argc, argv);
  } catch (const xnorcl_cli::UsageError& e) {
    return xnorcl_cli::report_usage_error("xnorcl-tune", e);
  }
  try {
    const xnorcl::Graph graph = model_graph(args);
    xnorcl::RuntimeOptions options;
    options.log = xnorcl_cli::compile_notice("xnorcl-tune");
    const xnorcl::Runtime rt = xnorcl::Runtime::create(options);
    std::printf("device %s, variant %s, %s search\n", rt.device_name().c_str(),
                xnorcl::to_string(rt.variant()).c_str(), xnorcl::to_string(args.search).c_str());
    std::fflush(stdout);
    if (args.show) {
      show(rt, graph);
      return 0;
    }
    std::signal(SIGINT, [](int) { interrupted = true; });
    xnorcl::TuneOptions t;
    t.search = args.search;
    t.repetitions = static_cast<int>(args.reps);
    t.store = args.store;
    t.progress = draw;
    t.stop_requested = [] { return interrupted.load(); };
    const xnorcl::TuneReport report = xnorcl::tune(rt, graph, t);
    std::fprintf(stderr, "\n");
    print_report(report);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "\nxnorcl-tune: " << e.what() << "\n";
    return 1;
  }
}
