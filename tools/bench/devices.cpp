// SPDX-License-Identifier: Apache-2.0
// `xnorcl-bench devices`: every OpenCL device with the facts that drive xnorcl's variant choice.
#include <cstdio>

#include "bench.hpp"

namespace xnorcl_bench {

namespace {

// How the kernels count bits on a device with DeviceInfo::native_popcount, when they use it.
constexpr const char* kNativePopcount =
    "AVX-512 VPOPCNTDQ, spelled out in the kernels (XNORCL_NATIVE_POPCOUNT=off runs the portable code)";

std::string bytes(std::size_t n) {
  char buf[32];
  if (n >= (std::size_t{1} << 30)) {
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(n) / (1u << 30));
  } else if (n >= (std::size_t{1} << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(n) / (1u << 20));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(n) / 1024);
  }
  return buf;
}

}  // namespace

xnorcl::Runtime make_runtime(const Options& o, std::optional<xnorcl::TuningMode> tuning) {
  xnorcl::RuntimeOptions options;
  options.tuning = tuning;
  if (o.device) options.device = *o.device;  // unset fields fall back to XNORCL_DEVICE / XNORCL_VARIANT
  if (o.variant_given) options.variant = o.variant;
  // Says why a first start is slow; not in `startup`'s timed child processes, whose output it reads.
  if (o.command != "first-output") options.log = xnorcl_cli::compile_notice("xnorcl-bench");
  return xnorcl::Runtime::create(options);
}

void print_popcount_note(const xnorcl::Runtime& rt) {
  if (!rt.device_info().native_popcount) return;
  std::printf("popcount: %s\n",
              rt.native_popcount()
                  ? kNativePopcount
                  : "the portable code (XNORCL_NATIVE_POPCOUNT=off), not the CPU's VPOPCNTDQ");
}

int run_devices(const Options&) {
  const auto devices = xnorcl::list_devices();
  std::printf("xnorcl %s: %zu OpenCL device(s); select one with --device P:D or a name substring\n",
              xnorcl::version(), devices.size());
  for (const auto& d : devices) {
    std::printf("\n%d:%d  %s\n", d.platform_index, d.device_index, d.label().c_str());
    std::printf("  type %s, %s, driver %s\n", d.type.c_str(), d.device_version.c_str(),
                d.driver_version.c_str());
    std::printf("  compute units %u, max work-group size %zu\n", d.compute_units, d.max_work_group_size);
    std::printf("  local memory %s (%s), global memory %s, max allocation %s\n",
                bytes(d.local_mem_size).c_str(),
                d.local_mem_is_local ? "CL_LOCAL: on-chip" : "CL_GLOBAL: ordinary global memory",
                bytes(d.global_mem_size).c_str(), bytes(d.max_mem_alloc_size).c_str());
    std::printf("  variant Auto picks: %s (%s)\n", xnorcl::to_string(d.auto_variant).c_str(),
                d.auto_reason.c_str());
    if (d.native_popcount) std::printf("  popcount: %s\n", kNativePopcount);
  }
  return 0;
}

int run_peak(const Options& o) {
  xnorcl::Runtime rt = make_runtime(o);
  std::printf("xnorcl-bench peak: %s (%s)\n", rt.device_name().c_str(),
              rt.device_info().driver_version.c_str());
  print_popcount_note(rt);
  std::fputs("measuring ", stderr);
  const Peak peak = measure_peak(rt, o.quick, true);
  print_peak_table(peak);
  return 0;
}

}  // namespace xnorcl_bench
