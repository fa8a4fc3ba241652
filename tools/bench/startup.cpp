// SPDX-License-Identifier: Apache-2.0
// `xnorcl-bench startup`: process start to the first correct output of the example layer, each in a
// fresh process, with PoCL's own kernel cache off so only xnorcl's program-binary cache differs:
// cold = empty cache directory, warm = the directory a previous process filled.
//
// The parent reads CLOCK_MONOTONIC (system-wide), spawns `xnorcl-bench first-output` and the child reports
// the CLOCK_MONOTONIC time at which its output is in host memory; the child checks that output against the
// reference afterwards (not timed) and exits non-zero when it is wrong.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <random>

#include "bench.hpp"

extern char** environ;

namespace xnorcl_bench {

namespace {

double monotonic_ms() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

Layer example_layer() {
  for (const auto& l : default_layers()) {
    if (l.origin == "example") return l;
  }
  throw std::logic_error("no example layer in the default set");
}

// Spawns `self first-output ...` with the given cache directory; returns the milliseconds from just before
// the spawn to the child's first output and sets `detail` to the child's phase breakdown, or returns a
// negative value and sets `detail` to what went wrong.
double time_child(const std::string& self, const Options& o, const std::string& cache_dir,
                  std::string& detail) {
  std::vector<std::string> args{self, "first-output"};
  if (o.device) args.insert(args.end(), {"--device", *o.device});
  if (o.variant_given) args.insert(args.end(), {"--variant", xnorcl::to_string(o.variant)});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, "POCL_KERNEL_CACHE=", 18) != 0 && std::strncmp(*e, "XNORCL_CACHE_DIR=", 17) != 0) {
      env_strings.push_back(*e);
    }
  }
  env_strings.push_back("POCL_KERNEL_CACHE=0");
  env_strings.push_back("XNORCL_CACHE_DIR=" + cache_dir);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  pid_t pid = 0;
  const double t0 = monotonic_ms();
  const int rc = posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw std::runtime_error("cannot start " + self + ": " + std::strerror(rc));
  }
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const auto at = out.find("first_output_ms ");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || at == std::string::npos) {
    detail = "child failed (status " + std::to_string(status) + "): " + out;
    return -1;
  }
  const auto phases = out.find("phases: ");
  detail = phases == std::string::npos ? "" : out.substr(phases + 8, out.find('\n', phases) - phases - 8);
  return std::strtod(out.c_str() + at + 16, nullptr) - t0;
}

}  // namespace

int run_first_output(const Options& o) {
  const Layer l = example_layer();
  // Inputs first: generating them is not start-up work a real app would do differently.
  std::mt19937 rng(7);
  const auto& in = l.input;
  std::vector<float> x(static_cast<std::size_t>(in[0] * in[1] * in[2] * in[3]));
  for (auto& v : x) v = static_cast<float>(rng() & 1u);
  std::vector<std::uint8_t> bytes(
      static_cast<std::size_t>((l.filter[0] * l.filter[1] * l.filter[2] * l.filter[3] + 7) / 8));
  for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());

  const double t0 = monotonic_ms();
  const xnorcl::Runtime rt = make_runtime(o);
  const double t_runtime = monotonic_ms();
  const xnorcl::Filter f =
      xnorcl::Filter::from_packed(bytes.data(), bytes.size(), l.filter, xnorcl::BitOrder::MsbFirst);
  xnorcl::BinaryConvolution conv(rt, l.attributes(0), l.input, f);
  const double t_conv = monotonic_ms();
  const std::vector<float> y = conv.run(x.data());
  const double done = monotonic_ms();

  const auto expected = xnorcl::reference_binary_convolution(x.data(), l.input, f, l.attributes(0));
  if (y.size() != expected.size() || std::memcmp(y.data(), expected.data(), y.size() * sizeof(float)) != 0) {
    std::printf("WRONG: the first output differs from the reference\n");
    return 1;
  }
  // Where the time went after main() began: Runtime::create (program builds or cache loads), the
  // BinaryConvolution (filter packing, plan), the first run (PoCL finishes kernels at first launch).
  std::printf("phases: Runtime::create %.1f ms, BinaryConvolution %.1f ms, first run %.1f ms\n",
              t_runtime - t0, t_conv - t_runtime, done - t_conv);
  std::printf("first_output_ms %.6f\n", done);
  return 0;
}

int run_startup(const Options& o, const char* argv0) {
  std::error_code ec;
  std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec || self.empty()) self = argv0;
  std::string dir_template = (std::filesystem::temp_directory_path() / "xnorcl-bench-cache-XXXXXX").string();
  if (!mkdtemp(dir_template.data())) throw std::runtime_error("mkdtemp failed");
  const std::filesystem::path dir = dir_template;

  std::printf(
      "xnorcl-bench startup: example layer %s, %d fresh process(es) per state, POCL_KERNEL_CACHE=0, "
      "XNORCL_CACHE_DIR=%s\n",
      example_layer().describe().c_str(), o.startup_runs, dir.c_str());
  std::vector<double> cold, warm;
  int status = 0;
  for (int i = 0; i < o.startup_runs && status == 0; ++i) {
    // Cold: an empty directory; warm: the entries that cold run wrote.
    for (const auto& e : std::filesystem::directory_iterator(dir)) std::filesystem::remove_all(e.path());
    std::fprintf(stderr, "startup %d/%d: cold\n", i + 1, o.startup_runs);
    std::string cold_phases, warm_phases;
    const double c = time_child(self, o, dir.string(), cold_phases);
    std::fprintf(stderr, "startup %d/%d: warm\n", i + 1, o.startup_runs);
    const double w = c < 0 ? -1 : time_child(self, o, dir.string(), warm_phases);
    if (c < 0 || w < 0) {
      std::printf("error: %s\n", (c < 0 ? cold_phases : warm_phases).c_str());
      status = 1;
      break;
    }
    cold.push_back(c);
    warm.push_back(w);
    std::printf("  run %d: cold %7.1f ms (%s)\n         warm %7.1f ms (%s)\n", i + 1, c, cold_phases.c_str(),
                w, warm_phases.c_str());
  }
  std::filesystem::remove_all(dir, ec);
  if (status != 0) return status;
  const Stats c = summarize(cold), w = summarize(warm);
  const double ratio = c.median / w.median;
  std::printf("  cold median %.1f ms (min %.1f, max %.1f); warm median %.1f ms (min %.1f, max %.1f)\n",
              c.median, c.min, c.max, w.median, w.min, w.max);
  std::printf("  %s startup_warm_10x_cold: cold/warm = %.2fx (need >= 10x)\n", ratio >= 10 ? "PASS" : "MISS",
              ratio);
  return 0;
}

}  // namespace xnorcl_bench
