// SPDX-License-Identifier: Apache-2.0
// `xnorcl-bench peak`: the device's xor-popcount and FMA peak rates. The layer figures
// (% of peak, time of a perfect float convolution) are measured against these.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>

#include "bench.hpp"
#include "bench_kernels.hpp"

namespace xnorcl_bench {

namespace {

struct WordType {
  const char* name;
  bool is_float;
  std::size_t bytes;  // sizeof the OpenCL type
  int lanes;
};

const WordType kXorTypes[] = {{"uint", false, 4, 1},   {"uint2", false, 8, 2},   {"uint4", false, 16, 4},
                              {"ulong", false, 8, 1},  {"ulong2", false, 16, 2}, {"ulong4", false, 32, 4},
                              {"ulong8", false, 64, 8}};
const WordType kFmaTypes[] = {
    {"float", true, 4, 1}, {"float4", true, 16, 4}, {"float8", true, 32, 8}, {"float16", true, 64, 16}};

constexpr int kInputWords = 4096;  // the kernels index their operands modulo this
constexpr int kRepetitions = 5;    // best of 5
constexpr cl_int kBlockSteps = 8;  // block kernels: steps per round (peak.cl)

double event_ms(const cl::Event& e) {
  const auto start = e.getProfilingInfo<CL_PROFILING_COMMAND_START>();
  const auto end = e.getProfilingInfo<CL_PROFILING_COMMAND_END>();
  return static_cast<double>(end - start) * 1e-6;
}

// The two kernel shapes of peak.cl: 8 accumulators updated from registers (xor_T / fma_T), and the GEMM's
// 4 x 4 register block fed by loads every iteration (xorblk_T / fmablk_T). Each type's figure is the faster.
struct KernelShape {
  const char* name;        // as printed
  const char* xor_prefix;  // kernel name prefix
  const char* fma_prefix;
  int updates;         // accumulator updates per iteration
  int steps_per_arg2;  // iterations per unit of kernel argument 2 (block kernels: rounds of kBlockSteps)
  bool has_step_arg;
};
const KernelShape kShapes[] = {{"acc8", "xor_", "fma_", 8, 1, true},
                               {"block4x4", "xorblk_", "fmablk_", 16, kBlockSteps, false}};

// Operations one launch performs: binary MACs (one per bit of an xor-popcount) or flops (2 per FMA lane).
double launch_ops(const WordType& t, const KernelShape& s, std::size_t work_items, int iterations) {
  const double per_iteration =
      (t.is_float ? 2.0 * t.lanes * s.updates : 8.0 * t.bytes * s.updates) * s.steps_per_arg2;
  return per_iteration * static_cast<double>(work_items) * iterations;
}

class PeakRunner {
 public:
  PeakRunner(const xnorcl::Runtime& rt, bool quick, bool progress)
      : rt_(rt), quick_(quick), progress_(progress), queue_(rt.queue()) {
    const auto& info = rt.device_info();
    // At least 2^14 work-items; more on wide devices so every compute unit has several groups.
    work_items_ = std::clamp<std::size_t>(info.compute_units * info.max_work_group_size * 4,
                                          std::size_t{1} << 14, std::size_t{1} << 20);
    std::vector<std::uint8_t> bits(kInputWords * 64);
    std::mt19937 rng(12345);
    for (auto& b : bits) b = static_cast<std::uint8_t>(rng());
    xor_input_ = cl::Buffer(rt.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bits.size(), bits.data());
    std::vector<float> values(kInputWords * 16);
    std::uniform_real_distribution<float> dist(0.5f, 1.0f);
    for (auto& v : values) v = dist(rng);
    fma_input_ =
        cl::Buffer(rt.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, values.size() * 4, values.data());
    output_ = cl::Buffer(rt.context(), CL_MEM_WRITE_ONLY, work_items_ * 64);
  }

  // Builds a program of peak.cl; a failure (e.g. no 64-bit integers) leaves the program null.
  cl::Program build(const std::string& options, std::string& log) {
    cl::Program program(rt_.context(), kernel_source("peak.cl"));
    try {
      // No fast-math options: the FMA kernel must measure fma() as written.
      program.build(std::vector<cl::Device>{rt_.device()}, (options + kNoWarnings).c_str());
    } catch (const cl::Error&) {
      log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(rt_.device());
      return cl::Program();
    }
    return program;
  }

  // The best of every kernel shape for type t.
  PeakEntry measure(const cl::Program& program, const WordType& t) {
    PeakEntry best;
    for (const KernelShape& shape : kShapes) {
      PeakEntry e = measure(program, t, shape);
      best.kernels.emplace_back(shape.name, e.ops_per_s);
      if (e.ops_per_s > best.ops_per_s) {
        auto kernels = std::move(best.kernels);
        best = e;
        best.kernels = std::move(kernels);
      }
    }
    return best;
  }

  PeakEntry measure(const cl::Program& program, const WordType& t, const KernelShape& shape) {
    PeakEntry e;
    e.type = t.name;
    e.kernel = shape.name;
    e.work_items = work_items_;
    cl::Kernel kernel(program,
                      (std::string(t.is_float ? shape.fma_prefix : shape.xor_prefix) + t.name).c_str());
    kernel.setArg(0, t.is_float ? fma_input_ : xor_input_);
    kernel.setArg(1, output_);
    if (!shape.has_step_arg) {
      kernel.setArg(3, kBlockSteps);
      kernel.setArg(4, cl_int{4});
      // b_stride (argument 5), 4 * the local size, is set below
    } else {
      if (t.is_float) {
        kernel.setArg(3, 0.999f);
      } else {
        kernel.setArg(3, cl_uint{0x9E3779B9u});  // odd: b walks through every value
      }
    }
    const std::size_t kernel_max = kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(rt_.device());
    std::size_t local = 64;
    while (local > kernel_max) local /= 2;
    local_ = local;
    if (!shape.has_step_arg) kernel.setArg(5, static_cast<cl_int>(4 * local));

    // Calibrate the iteration count so one launch takes about target_ms: about as long as a layer's GEMM
    // stage (0.3-3 ms), long enough to dwarf launch overhead and timer resolution. Longer launches
    // under-measure on a shared machine: with load ~5 on 2 cores a 20 ms launch is preempted where a GEMM
    // stage often is not (PoCL ulong: 270 G binMAC/s at 20 ms, 740 at 2 ms, in the same minute).
    const double target_ms = quick_ ? 1.0 : 2.0;
    int iterations = 64;
    launch(kernel, iterations);  // first launch: PoCL finishes compiling for this local size here
    for (int round = 0; round < 4; ++round) {
      const double ms = launch(kernel, iterations);
      const double wanted = iterations * target_ms / std::max(ms, 1e-3);
      const int next = static_cast<int>(std::clamp(wanted, 16.0, 1e7));
      if (next < 2 * iterations && next > iterations / 2) break;
      iterations = next;
    }
    e.iterations = iterations * shape.steps_per_arg2;
    double best = 1e300;
    for (int r = 0; r < kRepetitions; ++r) best = std::min(best, launch(kernel, iterations));
    e.best_ms = best;
    e.ops_per_s = launch_ops(t, shape, work_items_, iterations) / (best * 1e-3);
    // Progress as dots (the figures are printed once, in the peak table on stdout).
    if (progress_) std::fputc('.', stderr);
    return e;
  }

 private:
  double launch(cl::Kernel& kernel, int iterations) {
    kernel.setArg(2, iterations);
    cl::Event event;
    const auto t0 = std::chrono::steady_clock::now();
    queue_.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(work_items_), cl::NDRange(local_), nullptr,
                                &event);
    event.wait();
    const auto t1 = std::chrono::steady_clock::now();
    if (rt_.profiling_enabled()) return event_ms(event);
    return std::chrono::duration<double, std::milli>(t1 - t0).count();
  }

  const xnorcl::Runtime& rt_;
  bool quick_, progress_;
  cl::CommandQueue queue_;
  std::size_t work_items_ = 0, local_ = 64;
  cl::Buffer xor_input_, fma_input_, output_;
};

void set_maxima(Peak& peak) {
  peak.binary_ops_per_s = peak.float_flops_per_s = 0;
  for (const auto& e : peak.xor_popcount) {
    if (e.available && e.ops_per_s > peak.binary_ops_per_s) {
      peak.binary_ops_per_s = e.ops_per_s;
      peak.binary_type = e.type;
    }
  }
  for (const auto& e : peak.fma) {
    if (e.available && e.ops_per_s > peak.float_flops_per_s) {
      peak.float_flops_per_s = e.ops_per_s;
      peak.float_type = e.type;
    }
  }
}

}  // namespace

Peak best_of(const Peak& a, const Peak& b) {
  Peak p = a;
  for (std::size_t i = 0; i < p.xor_popcount.size() && i < b.xor_popcount.size(); ++i) {
    if (b.xor_popcount[i].ops_per_s > p.xor_popcount[i].ops_per_s) p.xor_popcount[i] = b.xor_popcount[i];
  }
  for (std::size_t i = 0; i < p.fma.size() && i < b.fma.size(); ++i) {
    if (b.fma[i].ops_per_s > p.fma[i].ops_per_s) p.fma[i] = b.fma[i];
  }
  p.measurements = a.measurements + b.measurements;
  set_maxima(p);
  return p;
}

Peak measure_peak(const xnorcl::Runtime& runtime, bool quick, bool progress) {
  try {
    PeakRunner runner(runtime, quick, progress);
    Peak peak;
    std::string log32, log64;
    const std::string native = runtime.native_popcount() ? " -DNATIVE_POPCOUNT" : "";
    const cl::Program p32 = runner.build("-cl-std=CL1.2" + native, log32);
    const cl::Program p64 = runner.build("-cl-std=CL1.2 -DPEAK_ULONG" + native, log64);
    if (!p32()) throw std::runtime_error("peak kernels do not build:\n" + log32);
    for (const WordType& t : kXorTypes) {
      const bool wide = t.name[1] == 'l';  // ulong*
      if (wide && !p64()) {
        PeakEntry e;
        e.type = t.name;
        e.available = false;
        e.note = "64-bit integer kernels do not build on this device";
        peak.xor_popcount.push_back(e);
        continue;
      }
      peak.xor_popcount.push_back(runner.measure(wide ? p64 : p32, t));
    }
    for (const WordType& t : kFmaTypes) peak.fma.push_back(runner.measure(p32, t));
    if (progress) std::fputc('\n', stderr);  // ends the line of dots
    set_maxima(peak);
    return peak;
  } catch (const cl::Error& e) {
    throw std::runtime_error(std::string("peak: ") + e.what() + " failed with " +
                             xnorcl::cl_error_name(e.err()));
  }
}

void print_peak_table(const Peak& peak) {
  std::printf(
      "Peak (best of %d launches per kernel%s; %s work-items; kernels: acc8 = 8 accumulators,\n"
      "  block4x4 = the GEMM's 4x4 register block fed by loads; each type's best kernel is in brackets)\n",
      kRepetitions * peak.measurements, peak.measurements > 1 ? ": 5 before the layers, 5 after" : "",
      peak.xor_popcount.empty() ? "?" : std::to_string(peak.xor_popcount[0].work_items).c_str());
  std::printf("  %-9s %-22s %12s %10s %11s   %s\n", "type", "kernel", "G ops/s", "best ms", "iterations",
              "every kernel (G ops/s)");
  auto all_kernels = [](const PeakEntry& e) {
    std::string s;
    char buffer[64];
    for (const auto& k : e.kernels) {
      std::snprintf(buffer, sizeof buffer, "%s%s %.1f", s.empty() ? "" : ", ", k.first.c_str(),
                    k.second * 1e-9);
      s += buffer;
    }
    return s;
  };
  for (const auto& e : peak.xor_popcount) {
    if (!e.available) {
      std::printf("  %-9s %-22s %12s  (%s)\n", e.type.c_str(), "xor-popcount", "n/a", e.note.c_str());
      continue;
    }
    std::printf("  %-9s %-22s %12.2f %10.3f %11d   %s\n", e.type.c_str(),
                ("xor-popcount [" + e.kernel + "]").c_str(), e.ops_per_s * 1e-9, e.best_ms, e.iterations,
                all_kernels(e).c_str());
  }
  for (const auto& e : peak.fma) {
    std::printf("  %-9s %-22s %12.2f %10.3f %11d   %s\n", e.type.c_str(), ("fma [" + e.kernel + "]").c_str(),
                e.ops_per_s * 1e-9, e.best_ms, e.iterations, all_kernels(e).c_str());
  }
  std::printf("  xor-popcount peak: %.2f G binMAC/s (%s)\n", peak.binary_ops_per_s * 1e-9,
              peak.binary_type.c_str());
  std::printf("  float32 FMA peak:  %.2f GFLOP/s (%s)\n", peak.float_flops_per_s * 1e-9,
              peak.float_type.c_str());
  if (peak.float_flops_per_s > 0) {
    std::printf("  ratio: %.1f binary MACs per flop\n", peak.binary_ops_per_s / peak.float_flops_per_s);
  }
}

void wait_for_quiet(const xnorcl::Runtime& runtime) {
  const auto start = std::chrono::steady_clock::now();
  PeakRates last = rates_of(measure_peak(runtime, false, false));
  for (int round = 2;; ++round) {
    const PeakRates now = rates_of(measure_peak(runtime, false, false));
    const double moved = std::max(drift(last.binary_ops_per_s, now.binary_ops_per_s),
                                  drift(last.float_flops_per_s, now.float_flops_per_s));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (moved <= kPeakDriftLimit) {
      std::fprintf(stderr,
                   "quiet check: two peak measurements in a row within %.0f%% (%.0f%%) after %.0f s\n",
                   100 * kPeakDriftLimit, 100 * moved, seconds);
      return;
    }
    if (seconds > 120) {
      std::fprintf(stderr,
                   "quiet check: the peaks still move %.0f%% between measurements after %.0f s; measuring "
                   "anyway (the run may be judged noisy)\n",
                   100 * moved, seconds);
      return;
    }
    std::fprintf(stderr, "quiet check %d: the peaks moved %.0f%%; measuring again\n", round, 100 * moved);
    last = now;
  }
}

}  // namespace xnorcl_bench
