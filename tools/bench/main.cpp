// xnorcl-bench: the device benchmarking CLI (SPEC section 5). This file parses the command line and
// dispatches; each subcommand lives in its own file.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "bench.hpp"

namespace xnorcl_bench {
namespace {

const char* const kUsage = R"(usage: xnorcl-bench <command> [options]

commands:
  devices          every OpenCL platform and device, the facts behind the variant choice, and the choice
  peak             the device's xor-popcount and float32 FMA peak rates, per word type
  layers           check, then time, binary layers beside CLBlast float32 and the peaks (SPEC 5's set
                   unless --layer is given), with SPEC 6's targets
  network          check, then time, the paper's vehicle classifier (xnorcl::Network) beside a float32
                   network of the same layers (CLBlast) on the same queue: per layer and whole network
  startup          process start to first correct output of the spec's layer in fresh processes, cold
                   (empty program cache) against warm, with PoCL's own cache off

options:
  --device D       "P:D" (platform:device indices) or a substring of "<platform> / <device>"
                   (default: XNORCL_DEVICE, else the first GPU, accelerator, CPU)
  --variant V      auto | local | global (default: XNORCL_VARIANT, else auto)
  --layer SPEC     NxCxHxW:OxKHxKW[:sS][:pP][:dD], S/P/D a number or YxX; repeatable; replaces the
                   default set. Example: --layer 1x64x56x56:64x3x3:s1:p1
  --warmup N       untimed rounds per layer (default 3)
  --reps N         timed rounds per layer, binary and float interleaved (default 20; targets need 20)
  --pad-value V    binary pad_value of the main measurement (default 0, as the float baseline's zero
                   padding); +1 is always timed beside it, 0 and 0.5 too on the spec's layer
  --json FILE      write every figure as JSON (schema 1); tools/plot_bench.py charts it
  --csv FILE       write the timings as CSV
  --quick          1 warm-up, 3 reps, short peak kernels: a smoke run, not a measurement
  --batch N        network: images per run (default 1)
  --model M        network: vehicle (the default: the chain network beside its CLBlast float32 twin),
                   bireal18, resnet18 (graphs built in code, seeded) or a .xnn graph file
  --runs N         startup: fresh processes per cache state (default 3)
  -h, --help       this text
)";

int parse_int(const std::string& name, const std::string& v, int minimum) {
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0 || n < minimum || n > 1000000) {
    throw UsageError(name + " needs an integer of at least " + std::to_string(minimum) + ", not '" + v + "'");
  }
  return static_cast<int>(n);
}

float parse_pad_value(const std::string& v) {
  char* end = nullptr;
  const float f = std::strtof(v.c_str(), &end);
  // The library refuses these too, but only after building a runtime: fail fast with the usage.
  if (v.empty() || *end != '\0' || !std::isfinite(f) || (f != 0 && std::fpclassify(f) == FP_SUBNORMAL)) {
    throw UsageError("--pad-value needs a finite, normal number, not '" + v + "'");
  }
  return f;
}

Options parse(int argc, char** argv) {
  Options o;
  if (argc < 2) throw UsageError("no command given");
  o.command = argv[1];
  if (o.command == "-h" || o.command == "--help") return o;
  if (o.command != "devices" && o.command != "peak" && o.command != "layers" && o.command != "network" &&
      o.command != "startup" && o.command != "first-output") {
    throw UsageError("unknown command '" + o.command + "'");
  }
  bool reps_given = false, warmup_given = false;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i], value;
    const bool flag = arg == "--quick" || arg == "-h" || arg == "--help";
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
    if (arg == "-h" || arg == "--help") {
      o.command = "--help";
    } else if (arg == "--quick") {
      o.quick = true;
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
      o.warmup = parse_int(arg, value, 0);
      warmup_given = true;
    } else if (arg == "--reps") {
      o.reps = parse_int(arg, value, 1);
      reps_given = true;
    } else if (arg == "--pad-value") {
      o.pad_value = parse_pad_value(value);
    } else if (arg == "--json") {
      o.json_path = value;
    } else if (arg == "--csv") {
      o.csv_path = value;
    } else if (arg == "--batch") {
      o.batch = parse_int(arg, value, 1);
    } else if (arg == "--model") {
      o.model = value;
    } else if (arg == "--runs") {
      o.startup_runs = parse_int(arg, value, 1);
    } else {
      throw UsageError("unknown option '" + arg + "'");
    }
  }
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
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "xnorcl-bench: %s\n\n%s", e.what(), kUsage);
    return 2;
  }
  if (o.command == "--help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  try {
    if (o.command == "devices") return run_devices(o);
    if (o.command == "peak") return run_peak(o);
    if (o.command == "layers") return run_layers(o);
    if (o.command == "network") return o.model == "vehicle" ? run_network(o) : run_graph_network(o);
    if (o.command == "startup") return run_startup(o, argv[0]);
    return run_first_output(o);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "xnorcl-bench: %s\n\n%s", e.what(), kUsage);
    return 2;
  } catch (const cl::Error& e) {
    std::fprintf(stderr, "xnorcl-bench: error: %s failed with %s\n", e.what(),
                 xnorcl::cl_error_name(e.err()).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xnorcl-bench: error: %s\n", e.what());
  }
  return 1;
}
