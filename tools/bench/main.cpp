// SPDX-License-Identifier: Apache-2.0
// xnorcl-bench: the device benchmarking CLI. This file parses the command line and dispatches; each
// subcommand lives in its own file.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <string>

#include "bench.hpp"

namespace xnorcl_bench {
namespace {

const char* const kUsage = R"(usage: xnorcl-bench <command> [options]

commands:
  devices          every OpenCL platform and device, the facts behind the variant choice, and the choice
  peak             the device's xor-popcount and float32 FMA peak rates, per word type
  layers           check, then time, binary layers beside CLBlast float32 (and oneDNN on a CPU device) and
                   the peaks: the default set (the layers of the vehicle classifier of Khan et al., "Binarized
                   Convolutional Neural Networks for Efficient Inference on GPUs" (EUSIPCO 2018), the
                   README example's 1x3x224x224 layer, three ResNet layers)
                   unless --layer is given, with the performance targets
  network          check, then time, a whole network (--model; default the vehicle classifier) beside
                   its float32 twin (the same layers with float ops) on the same queue: per step and
                   whole network, against a perfect float32 network at the FMA peak, with the targets
  startup          process start to first correct output of the example layer in fresh processes, cold
                   (empty program cache) against warm, with PoCL's own cache off

options:
  --device D       "P:D" (platform:device indices) or a substring of "<platform> / <device>"
                   (default: XNORCL_DEVICE, else the first GPU, accelerator, CPU)
  --variant V      auto | local | global (default: XNORCL_VARIANT, else auto)
  --layer LAYER    NxCxHxW:OxKHxKW[:sS][:pP][:dD], S/P/D a number or YxX; repeatable; replaces the
                   default set; at most 2^26 elements per tensor. Example: --layer 1x64x56x56:64x3x3:s1:p1
  --warmup N       untimed rounds per layer (default 3)
  --reps N         timed rounds per layer, binary and float interleaved (default 20; targets need 20)
  --pad-value V    binary pad_value of the main measurement (default 0, as the float baseline's zero
                   padding); +1 is always timed beside it, 0 and 0.5 too on the example layer
  --json FILE      write every figure as JSON (schema 1); tools/plot_bench.py charts it
  --csv FILE       write the timings as CSV
  --quick          1 warm-up, 3 reps, short peak kernels: a smoke run, not a measurement
  --quiet-check    layers, network: before measuring, wait (up to 2 minutes) until two peak measurements
                   in a row agree within 15%
  --batch N        network: images per run of a built-in network, 1 to 64 (default 1)
  --model M        network: vehicle (the default), bireal18, resnet18 (built in code, seeded) or a
                   .xnn file
  --tune M         network: tune the model first (fast | normal | exhaustive; see xnorcl-tune) and
                   keep the results in the tuning file. Tuned steps are timed beside the same model in
                   the default configurations either way
  --runs N         startup: fresh processes per cache state (default 3)
  -h, --help       this text
  --version        the version of xnorcl-bench and of the library

A run is noisy when its peaks, measured before and after the layers, differ by more than 15%, or when the
middle half of a timed series (upper over lower quartile) spans more than 2x: its targets are then not
judged. Exit status: 0 measured (targets met or missed), 1 a wrong result or an error, 2 bad usage,
3 noisy run.
)";

// A usage error says what is wrong in one line and where the rest is, not the whole help.
const char* const kTryHelp = "Run 'xnorcl-bench --help' for the commands and options.\n";

int parse_count(const std::string& name, const std::string& v, int minimum) {
  return static_cast<int>(xnorcl_cli::parse_int(name, v, minimum, 1000000));
}

float parse_pad_value(const std::string& v) {
  const double d = xnorcl_cli::parse_finite("--pad-value", v);
  const float f = static_cast<float>(d);
  // The library refuses these too, but only after building a runtime: fail fast with the usage.
  if (!std::isfinite(f) || (f != 0 && std::fpclassify(f) == FP_SUBNORMAL)) {
    throw UsageError("--pad-value needs a finite, normal float32 number, not '" + v + "'");
  }
  return f;
}

// The options each command reads; any other is refused rather than silently ignored.
bool command_takes(const std::string& command, const std::string& option) {
  static const std::map<std::string, std::set<std::string>> kTaken = {
      {"devices", {}},
      {"peak", {"--device", "--variant", "--quick"}},
      {"layers",
       {"--device", "--variant", "--layer", "--warmup", "--reps", "--pad-value", "--json", "--csv", "--quick",
        "--quiet-check"}},
      {"network",
       {"--device", "--variant", "--warmup", "--reps", "--json", "--csv", "--quick", "--quiet-check",
        "--batch", "--model", "--tune"}},
      {"startup", {"--device", "--variant", "--runs"}},
      {"first-output", {"--device", "--variant"}}};
  return kTaken.at(command).count(option) > 0;
}

// Images per run of a network: its activations and the host reference grow with it, so far fewer than any
// other count.
constexpr int kMaxBatch = 64;

Options parse(int argc, char** argv) {
  Options o;
  if (argc < 2) throw UsageError("no command given");
  o.command = argv[1];
  if (o.command == "-h" || o.command == "--help" || o.command == "--version") return o;
  if (o.command != "devices" && o.command != "peak" && o.command != "layers" && o.command != "network" &&
      o.command != "startup" && o.command != "first-output") {
    throw UsageError(o.command.rfind('-', 0) == 0
                         ? "unknown option '" + o.command + "' (a command comes first)"
                         : "unknown command '" + o.command + "'");
  }
  bool reps_given = false, warmup_given = false;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i], value;
    const bool flag =
        arg == "--quick" || arg == "--quiet-check" || arg == "-h" || arg == "--help" || arg == "--version";
    static const char* const kValueOptions[] = {"--device", "--variant",   "--layer", "--warmup",
                                                "--reps",   "--pad-value", "--json",  "--csv",
                                                "--batch",  "--runs",      "--model", "--tune"};
    const std::string name = arg.substr(0, arg.find('='));
    if (!flag && std::none_of(std::begin(kValueOptions), std::end(kValueOptions),
                              [&](const char* known) { return name == known; })) {
      throw UsageError(arg.rfind("-", 0) == 0 ? "unknown option '" + name + "'"
                                              : "unexpected argument '" + arg + "'");
    }
    if (!flag) {
      const auto eq = arg.find('=');
      if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        throw UsageError(arg.rfind("--", 0) == 0 ? arg + " needs a value"
                                                 : "unexpected argument '" + arg + "'");
      }
    }
    if (arg != "-h" && arg != "--help" && arg != "--version" && !command_takes(o.command, arg))
      throw UsageError(arg + " is not an option of the " + o.command + " command");
    if (arg == "-h" || arg == "--help" || arg == "--version") {
      o.command = arg == "--version" ? arg : "--help";
    } else if (arg == "--quick") {
      o.quick = true;
    } else if (arg == "--quiet-check") {
      o.quiet_check = true;
    } else if (arg == "--device") {
      o.device = value;
    } else if (arg == "--variant") {
      if (value == "auto") {
        o.variant = xnorcl::Variant::Auto;
      } else if (value == "local") {
        o.variant = xnorcl::Variant::Local;
      } else if (value == "global") {
        o.variant = xnorcl::Variant::Global;
      } else {
        throw UsageError("--variant is auto, local or global, not '" + value + "'");
      }
      o.variant_given = true;
    } else if (arg == "--layer") {
      (void)parse_layer(value);  // refuse a bad layer now, before any device work
      o.layer_specs.push_back(value);
    } else if (arg == "--warmup") {
      o.warmup = parse_count(arg, value, 0);
      warmup_given = true;
    } else if (arg == "--reps") {
      o.reps = parse_count(arg, value, 1);
      reps_given = true;
    } else if (arg == "--pad-value") {
      o.pad_value = parse_pad_value(value);
    } else if (arg == "--json") {
      xnorcl_cli::check_output_path(arg, value);  // now, not after a run of minutes
      o.json_path = value;
    } else if (arg == "--csv") {
      xnorcl_cli::check_output_path(arg, value);
      o.csv_path = value;
    } else if (arg == "--batch") {
      o.batch = static_cast<int>(xnorcl_cli::parse_int(arg, value, 1, kMaxBatch));
      o.batch_given = true;
    } else if (arg == "--model") {
      o.model = value;
    } else if (arg == "--tune") {
      o.tune = xnorcl::parse_tune_search(value);
      if (!o.tune) throw UsageError("--tune takes fast, normal or exhaustive, not '" + value + "'");
    } else if (arg == "--runs") {
      o.startup_runs = parse_count(arg, value, 1);
    } else {
      throw UsageError("unknown option '" + arg + "'");
    }
  }
  if (o.batch_given && !builtin_model(o.model))
    throw UsageError("--batch sets the built-in networks' batch; the model file " + o.model + " has its own");
  if (o.quick) {
    if (!reps_given) o.reps = 3;
    if (!warmup_given) o.warmup = 1;
  }
  return o;
}

}  // namespace
}  // namespace xnorcl_bench

int main(int argc, char** argv) {
  using namespace xnorcl_bench;
  // Whole lines: when stdout and stderr go to one file, a progress line never lands inside a table line.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "xnorcl-bench: %s\n%s", e.what(), kTryHelp);
    return 2;
  }
  if (o.command == "--help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (o.command == "--version") {
    std::printf("%s\n", xnorcl_cli::version_line("xnorcl-bench").c_str());
    return 0;
  }
  try {
    if (o.command == "devices") return run_devices(o);
    if (o.command == "peak") return run_peak(o);
    if (o.command == "layers") return run_layers(o);
    if (o.command == "network") return run_graph_network(o);
    if (o.command == "startup") return run_startup(o, argv[0]);
    return run_first_output(o);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "xnorcl-bench: %s\n%s", e.what(), kTryHelp);
    return 2;
  } catch (const cl::Error& e) {
    std::fprintf(stderr, "xnorcl-bench: error: %s failed with %s\n", e.what(),
                 xnorcl::cl_error_name(e.err()).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xnorcl-bench: error: %s\n", e.what());
  }
  return 1;
}
